// Assembling, checking, loading and atomically writing results documents.
#include "harness/document/results.h"

#include "harness/document/json_read.h"
#include "harness/document/plausibility.h"
#include "harness/document/published.h"
#include "harness/document/record_ids.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace gtb {

namespace {
std::string iso_now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

json make_comparisons(const std::vector<Record>& records) {
  // CPU candidates per (family, workload, params); a GPU record is paired with the best one whose
  // options agree on every option both sides have (a GPU fp32 GEMM is never set against the CPU's
  // bf16 one), options only one side has (the GPU's library, the CPU's store kind) do not matter.
  std::map<std::string, std::vector<const Record*>> cpu_by_key;
  auto key_of = [](const Record& r) { return r.family + '\n' + r.workload + '\n' + r.params.dump(); };
  auto better = [](const Record& a, const Record& b) {  // is a better than b?
    return a.metric.better() == Better::higher ? *a.value > *b.value : *a.value < *b.value;
  };
  auto options_agree = [](const Record& a, const Record& b) {
    if (!a.options.is_object() || !b.options.is_object()) return true;
    for (auto it = a.options.begin(); it != a.options.end(); ++it)
      if (b.options.contains(it.key()) && b.options[it.key()] != it.value()) return false;
    return true;
  };
  auto side = [](const Record& r) {  // one side of a pair, as the comparison names it
    return json{{"id", r.id}, {"variant", r.variant}, {"options", r.options}, {"value", *r.value}};
  };
  for (const Record& r : records)
    if (r.backend == Backend::cpu && r.status == Status::ok && r.value) cpu_by_key[key_of(r)].push_back(&r);
  json out = json::array();
  for (const Record& g : records) {
    if (g.backend != Backend::cuda || g.status != Status::ok || !g.value) continue;
    auto it = cpu_by_key.find(key_of(g));
    if (it == cpu_by_key.end()) continue;
    const Record* best = nullptr;
    for (const Record* c : it->second)
      if (options_agree(*c, g) && c->metric.unit == g.metric.unit && c->metric.better() == g.metric.better() &&
          (!best || better(*c, *best)))
        best = c;
    if (!best) continue;
    const Record& c = *best;
    const double cv = *c.value, gv = *g.value;
    if (!(cv > 0) || !(gv > 0)) continue;
    const double ratio = g.metric.better() == Better::higher ? gv / cv : cv / gv;
    const char* winner = std::fabs(ratio - 1.0) <= 0.01 ? "tie" : (ratio > 1 ? "cuda" : "cpu");
    out.push_back({{"family", g.family},
                   {"workload", g.workload},
                   {"params", g.params},
                   {"metric", g.metric.name},
                   {"unit", g.metric.unit},
                   {"better", to_string(g.metric.better())},
                   {"cpu", side(c)},
                   {"cuda", side(g)},
                   {"gpu_over_cpu", ratio},
                   {"winner", winner}});
  }
  return out;
}

std::string ceiling_unit(const std::string& name) {
  const std::string suffix = "_tflops";
  const bool compute = name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return compute ? "TFLOP/s" : "GB/s";
}

void apply_ceilings(std::vector<Record>& records, const json& context) {
  const json& ceil = json_read::object_at(context, {published::kCeilings});
  for (Record& r : records) {
    if (r.ceiling.empty() || r.status != Status::ok || !r.value) continue;
    const double c = json_read::number_at(ceil, {r.ceiling.c_str()});
    if (std::isnan(c)) continue;
    // A compute ceiling (..._tflops) divides the record's TFLOP/s, its primary metric or its counter
    // (a training step's metric is samples/s); a bandwidth ceiling divides GB/s.
    const std::string unit = ceiling_unit(r.ceiling);
    std::optional<double> rate;
    if (r.metric.unit == unit) rate = *r.value;
    else if (auto t = r.counters.find("tflops"); unit == "TFLOP/s" && t != r.counters.end() && t->second.unit == unit)
      rate = t->second.value;
    if (rate && c > 0) r.counters["pct_of_ceiling"] = {100.0 * *rate / c, "%"};
  }
}

const json* findings_data(const json& findings, const std::string& family) {
  const json* f = json_read::find(findings, family);
  if (!f || !f->is_object()) return nullptr;
  if (f->contains("sections")) {
    const json* data = json_read::find(*f, "data");
    return data && data->is_object() ? data : nullptr;
  }
  return f;
}

void apply_peaks(std::vector<Record>& records, const json& peaks) {
  if (!peaks.is_object()) return;
  for (Record& r : records) {
    auto t = r.counters.find("tflops");
    if (r.status != Status::ok || t == r.counters.end()) continue;
    const std::string precision = json_read::string_at(r.info, {"gemm_precision"});
    const json* b = precision.empty() ? nullptr : json_read::find(peaks, {to_string(r.backend), precision.c_str()});
    if (!b) continue;
    const double peak = b->is_object() ? json_read::number_at(*b, {"tflops"}, 0.0) : (b->is_number() ? b->get<double>() : 0.0);
    if (peak > 0) r.counters["pct_of_gemm_peak"] = {100.0 * t->second.value / peak, "%"};
  }
}

void apply_same_work(std::vector<Record>& records) {
  std::map<std::string, const Record*> by_id;
  for (const Record& r : records) by_id[r.id] = &r;
  std::vector<std::pair<std::size_t, std::pair<double, std::string>>> found;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const json* ids = json_read::find(r.info, "same_work_as");
    if (!ids || !ids->is_array() || r.status != Status::ok || !r.stats || !(r.stats->median > 0)) continue;
    for (const json& id : *ids) {
      if (!id.is_string()) continue;
      const auto it = by_id.find(id.get<std::string>());
      if (it == by_id.end() || it->second->status != Status::ok || !it->second->stats || !(it->second->stats->median > 0))
        continue;
      found.push_back({i, {r.stats->median / it->second->stats->median, it->first}});
      break;
    }
  }
  for (const auto& [i, v] : found) {
    records[i].counters["time_vs_same_work"] = {v.first, "x"};
    records[i].info["same_work_record"] = v.second;
  }
}

namespace {
// Who publishes what: (family, declaration) of each families entry that declares something. A document
// none of whose entries declares anything (written before the declarations) reads every family of its
// findings with the legacy declaration.
std::vector<std::pair<std::string, json>> publishers(const json& families, const json& findings) {
  std::vector<std::pair<std::string, json>> out;
  if (families.is_array())
    for (const auto& f : families)
      if (const json* p = json_read::find(f, "publishes"); p && p->is_object())
        out.emplace_back(json_read::string_at(f, {"name"}), *p);
  if (!out.empty() || !findings.is_object()) return out;
  for (auto it = findings.begin(); it != findings.end(); ++it) out.emplace_back(it.key(), published::legacy_declaration());
  return out;
}

// The value a family publishes as `what`, from its findings data; nullptr when absent.
const json* published_data(const json& findings, const std::string& family, const json& declaration,
                           const char* what) {
  const std::string key = json_read::string_at(declaration, {what});
  const json* data = key.empty() ? nullptr : findings_data(findings, family);
  return data ? json_read::find(*data, key) : nullptr;
}
}  // namespace

json make_document(const json& context, const std::string& suite, const json& families,
                   const std::vector<Record>& records, const json& findings, int runs) {
  std::vector<Record> recs = records;
  note_tf32_override(recs, context);
  flag_suspects(recs, context);
  json doc;
  doc["schema"] = kSchemaName;
  doc["schema_version"] = kSchemaVersion;
  doc["generated_at"] = iso_now_utc();
  doc["suite"] = suite;
  doc["runs"] = runs;
  doc["context"] = context;
  doc["families"] = families;
  json jr = json::array();
  for (const Record& r : recs) jr.push_back(to_json(r));
  doc["records"] = jr;
  doc["comparisons"] = make_comparisons(recs);
  doc["findings"] = findings.is_object() ? findings : json::object();
  if (!all_numbers_finite(doc)) throw std::runtime_error("internal error: a non-finite number reached the results");
  return doc;
}

void merge_family_context(json& merged, const json& family_context, const std::string& family) {
  if (merged.is_null()) {
    merged = family_context;
    return;
  }
  if (family_context.contains(family)) merged[family] = family_context[family];
  auto unexamined = [](const json& ctx) {
    const json* c = json_read::find(ctx, {"host", "blas", "coretype"});
    return !c || json_read::value_at(*c, {"examined"}) == json(false);
  };
  if (unexamined(merged) && !unexamined(family_context))
    merged["host"]["blas"]["coretype"] = family_context["host"]["blas"]["coretype"];
}

json make_merged_document(const json& context, const std::string& suite, const json& families,
                          const std::vector<Record>& records, const json& findings, int runs) {
  json ctx = context;
  const auto from = publishers(families, findings);
  for (const auto& [family, declaration] : from)
    for (const char* what : {published::kCeilings, published::kCeilingsMissing})
      if (const json* c = published_data(findings, family, declaration, what); c && c->is_object())
        for (auto it = c->begin(); it != c->end(); ++it) ctx[what][it.key()] = it.value();
  std::vector<Record> recs = records;
  apply_ceilings(recs, ctx);
  for (const auto& [family, declaration] : from)
    if (const json* p = published_data(findings, family, declaration, published::kPeaks)) apply_peaks(recs, *p);
  apply_same_work(recs);
  return make_document(ctx, suite, families, recs, findings, runs);
}

bool all_numbers_finite(const json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j)
      if (!all_numbers_finite(v)) return false;
  }
  return true;
}

void validate_document(const json& doc) {
  if (!doc.is_object()) throw std::runtime_error("not a JSON object");
  if (!doc.contains("schema") || doc["schema"] != kSchemaName)
    throw std::runtime_error(std::string("not a gtb results file (\"schema\" is not \"") + kSchemaName + "\")");
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer())
    throw std::runtime_error("\"schema_version\" is missing or not an integer");
  const auto v = doc["schema_version"].get<long long>();
  if (v < kOldestSchemaVersion || v > kSchemaVersion)
    throw std::runtime_error("schema version " + std::to_string(v) + " is not supported (this gtb reads versions " +
                             std::to_string(kOldestSchemaVersion) + " to " + std::to_string(kSchemaVersion) + ")");
  for (const char* k : {"context", "records"})
    if (!doc.contains(k)) throw std::runtime_error(std::string("\"") + k + "\" is missing");
  if (!doc["context"].is_object()) throw std::runtime_error("\"context\" is not an object");
  if (!doc["records"].is_array()) throw std::runtime_error("\"records\" is not an array");
  std::size_t i = 0;
  for (const auto& r : doc["records"]) {
    try {
      (void)record_from_json(r);
    } catch (const std::exception& e) {
      throw std::runtime_error("records[" + std::to_string(i) + "]: " + e.what());
    }
    ++i;
  }
  if (!all_numbers_finite(doc)) throw std::runtime_error("holds a non-finite number");
}

json load_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw std::runtime_error(path + ": empty file");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
  try {
    validate_document(doc);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return doc;
}

std::vector<Record> records_of(const json& doc) {
  std::vector<Record> out;
  for (const auto& r : doc.at("records")) out.push_back(record_from_json(r));
  for (Record& r : out) upgrade_record_id(r);  // a file written before a rename reads under the new ids
  return out;
}

namespace {
std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
std::string temp_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}
}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) throw std::runtime_error("output path is empty");
  const std::string dir = dir_of(path);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("cannot write to '" + dir + "' (" + std::strerror(errno) + ")");
  const std::string tmp = temp_name(path) + ".probe";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) throw std::runtime_error("cannot create a file in '" + dir + "' (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(tmp.c_str());
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = temp_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create '" + tmp + "' (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write '" + tmp + "' (" + err + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot flush '" + tmp + "' (" + err + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename onto '" + path + "' (" + err + ")");
  }
}

}  // namespace gtb
