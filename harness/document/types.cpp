// Records to and from JSON, record ids.
#include "harness/document/types.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace gtb {

std::vector<double> paired_run_differences(const Record& a, double scale_a, const Record& b, double scale_b) {
  std::vector<double> d;
  for (const RunStat& x : a.runs)
    for (const RunStat& y : b.runs)
      if (x.run == y.run && x.status == Status::ok && y.status == Status::ok && x.stats && y.stats &&
          x.stats->median > 0 && y.stats->median > 0)
        d.push_back(x.stats->median * scale_a - y.stats->median * scale_b);
  return d;
}

std::optional<PairedEstimate> paired_estimate(const Record& a, double scale_a, const Record& b, double scale_b) {
  auto rounds_of = [](const Record& x, const std::string& with) -> const PairedRounds* {
    for (const PairedRounds& p : x.paired)
      if (p.with == with && p.a_s.size() == p.b_s.size() && !p.a_s.empty()) return &p;
    return nullptr;
  };
  std::vector<double> da, db;  // a's and b's scaled seconds, round by round
  if (const PairedRounds* p = rounds_of(a, b.id)) {
    for (std::size_t i = 0; i < p->a_s.size(); ++i) da.push_back(p->a_s[i] * scale_a), db.push_back(p->b_s[i] * scale_b);
  } else if (const PairedRounds* q = rounds_of(b, a.id)) {  // measured with b as the A side
    for (std::size_t i = 0; i < q->a_s.size(); ++i) db.push_back(q->a_s[i] * scale_b), da.push_back(q->b_s[i] * scale_a);
  } else {
    return std::nullopt;
  }
  PairedEstimate e;
  e.rounds = int(da.size());
  std::vector<double> diff, ratio;
  for (std::size_t i = 0; i < da.size(); ++i) {
    diff.push_back(da[i] - db[i]);
    if (db[i] > 0) ratio.push_back(da[i] / db[i]);
  }
  e.difference = median(diff);
  e.interval = median_interval(diff);
  if (!ratio.empty()) e.ratio = median(ratio);
  if (ratio.size() == diff.size()) e.ratio_interval = median_interval(ratio);
  return e;
}

std::optional<ValueRatio> value_ratio(const Record& a, const Record& b) {
  if (!usable(a) || !usable(b) || *b.value == 0 || a.metric.kind != b.metric.kind) return std::nullopt;
  ValueRatio out;
  out.ratio = *a.value / *b.value;
  const bool rate = a.metric.kind == MetricKind::rate;
  if (rate && !(a.work_per_rep > 0 && b.work_per_rep > 0)) return out;
  // Rates: (work_a / t_a) / (work_b / t_b) = (work_a / work_b) x (t_b / t_a); times: t_a / t_b (the
  // metrics' scales, equal for one metric, cancel where they are).
  const auto e = rate ? paired_estimate(b, 1.0, a, 1.0) : paired_estimate(a, 1.0, b, 1.0);
  if (!e || !(e->ratio > 0)) return out;
  const double k = rate ? (a.work_per_rep / b.work_per_rep) * (b.metric.scale / a.metric.scale)
                        : b.metric.scale / a.metric.scale;
  out.ratio = e->ratio * k;
  out.rounds = e->rounds;
  if (e->ratio_interval) out.interval = MedianInterval{out.ratio, e->ratio_interval->low * k, e->ratio_interval->high * k};
  return out;
}

std::vector<std::vector<double>> sample_groups_of(const Record& r) {
  if (r.sample_groups.empty()) return {r.samples};
  std::vector<std::vector<double>> out;
  std::size_t at = 0;
  for (std::int64_t n : r.sample_groups) {
    const std::size_t end = std::min(r.samples.size(), at + static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    out.emplace_back(r.samples.begin() + static_cast<std::ptrdiff_t>(at), r.samples.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  return out;
}

double median_noise(const Record& r) { return median_noise_relative_halfwidth(sample_groups_of(r)); }

void add_sample_group(Record& r, const std::vector<double>& more, const std::vector<std::int64_t>& more_groups) {
  if (more.empty()) return;
  if (r.sample_groups.empty() && !r.samples.empty()) r.sample_groups.push_back(std::int64_t(r.samples.size()));
  if (more_groups.empty())
    r.sample_groups.push_back(std::int64_t(more.size()));
  else
    r.sample_groups.insert(r.sample_groups.end(), more_groups.begin(), more_groups.end());
  r.samples.insert(r.samples.end(), more.begin(), more.end());
  if (r.sample_groups.size() == 1) r.sample_groups.clear();  // one group: said by its absence
}

double Record::metric_of_seconds(double seconds) const {
  if (metric.kind == MetricKind::rate) return seconds > 0 ? work_per_rep / seconds / metric.scale : 0.0;
  return seconds / metric.scale;
}

namespace {
std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}
}  // namespace

std::string make_record_id(const std::string& family, const std::string& workload, const std::string& variant,
                           Backend backend, const json& params, const json& options) {
  std::ostringstream os;
  os << family << '/' << workload << '/' << variant << '/' << to_string(backend);
  bool first = true;
  for (const json* obj : {&params, &options}) {
    for (auto it = obj->begin(); it != obj->end(); ++it) {
      os << (first ? '/' : ',') << it.key() << '=' << scalar_text(it.value());
      first = false;
    }
  }
  return os.str();
}

namespace {
// A record's statistics say their unit first: seconds per repetition.
json stats_json(const Stats& s) {
  json j = {{"unit", "s"}};
  to_json(j, s);
  return j;
}
}  // namespace

json to_json(const Record& r) {
  json j;
  j["id"] = r.id;
  j["family"] = r.family;
  j["workload"] = r.workload;
  j["variant"] = r.variant;
  j["backend"] = to_string(r.backend);
  j["params"] = r.params;
  j["options"] = r.options;
  j["status"] = to_string(r.status);
  j["status_detail"] = r.status_detail;
  j["metric"] = r.metric.name;
  j["unit"] = r.metric.unit;
  j["better"] = to_string(r.metric.better());
  j["metric_kind"] = to_string(r.metric.kind);
  j["metric_scale"] = r.metric.scale;
  if (r.status == Status::ok && r.value && std::isfinite(*r.value)) j["value"] = *r.value;
  j["work_per_rep"] = r.work_per_rep;
  j["clock"] = to_string(r.clock);
  if (r.stats) {
    j["stats"] = stats_json(*r.stats);
    j["samples_s"] = r.samples;
    if (r.sample_groups.size() >= 2) j["sample_groups"] = r.sample_groups;
    j["reps_per_sample"] = r.reps_per_sample;
    j["warmup_samples"] = r.warmup_samples;
    j["stop_reason"] = r.stop_reason;
  }
  if (!r.paired.empty()) j["paired"] = r.paired;
  if (!r.ceiling.empty()) j["ceiling"] = r.ceiling;
  j["check"] = r.check;
  json counters = json::object();
  for (const auto& [name, c] : r.counters)
    if (std::isfinite(c.value)) counters[name] = c;
  j["counters"] = counters;
  j["info"] = r.info;
  if (!r.device_timing.empty()) j["device_timing"] = r.device_timing;
  if (!r.suspect.empty()) j["suspect"] = r.suspect;
  if (!r.runs.empty()) {
    json runs = json::array();
    for (const RunStat& x : r.runs) {
      json e = {{"run", x.run}, {"status", to_string(x.status)}};
      if (x.status == Status::ok && x.value && std::isfinite(*x.value)) e["value"] = *x.value;
      if (x.stats) e["stats"] = stats_json(*x.stats);
      runs.push_back(std::move(e));
    }
    j["runs"] = std::move(runs);
  }
  return j;
}

namespace {
const json& need(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(std::string("record lacks '") + key + "'");
  return j.at(key);
}
std::string need_string(const json& j, const char* key) {
  const json& v = need(j, key);
  if (!v.is_string()) throw std::runtime_error(std::string("record field '") + key + "' is not a string");
  return v.get<std::string>();
}
double need_number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw std::runtime_error(where + " lacks '" + key + "'");
  const json& v = j.at(key);
  if (!v.is_number()) throw std::runtime_error(where + " field '" + key + "' is not a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw std::runtime_error(where + " field '" + key + "' is not finite");
  return x;
}
// A count: a non-negative whole number that fits a 64-bit integer exactly (checked before the cast,
// which would be undefined behaviour for 1e300).
std::int64_t need_count(const json& j, const char* key, const std::string& where) {
  const double x = need_number(j, key, where);
  if (x < 0 || x > 9007199254740992.0 || x != std::floor(x))
    throw std::runtime_error(where + " field '" + key + "' is not a whole number in range");
  return static_cast<std::int64_t>(x);
}
Stats stats_from_json(const json& s, const std::string& where) {
  if (!s.is_object()) throw std::runtime_error(where + " is not an object");
  Stats st;
  // The required numbers, in the order written (the first one missing is the one named); stddev
  // came later and may be absent.
  static constexpr std::pair<const char*, double Stats::*> kRequired[] = {
      {"median", &Stats::median}, {"mean", &Stats::mean}, {"min", &Stats::min}, {"max", &Stats::max},
      {"q1", &Stats::q1},         {"q3", &Stats::q3},     {"iqr", &Stats::iqr}};
  for (const auto& [key, member] : kRequired) st.*member = need_number(s, key, where);
  st.stddev = s.contains("stddev") ? need_number(s, "stddev", where) : 0.0;
  st.cv = need_number(s, "cv", where);
  st.count = need_count(s, "count", where);
  return st;
}
}  // namespace

Record record_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("record is not an object");
  Record r;
  r.id = need_string(j, "id");
  const std::string where = "record '" + r.id + "'";
  try {
    r.family = need_string(j, "family");
    r.workload = need_string(j, "workload");
    r.variant = need_string(j, "variant");
    r.backend = backend_from_string(need_string(j, "backend"));
    r.params = need(j, "params");
    r.options = j.value("options", json::object());
    if (!r.params.is_object() || !r.options.is_object()) throw std::runtime_error("params/options must be objects");
    r.status = status_from_string(need_string(j, "status"));
    r.status_detail = j.value("status_detail", std::string());
    r.metric.name = need_string(j, "metric");
    r.metric.unit = need_string(j, "unit");
    const Better better = better_from_string(need_string(j, "better"));
    r.metric.kind = better == Better::higher ? MetricKind::rate : MetricKind::time;
    if (j.contains("metric_scale")) r.metric.scale = need_number(j, "metric_scale", where);
    if (r.metric.scale <= 0) throw std::runtime_error("metric_scale must be positive");
    if (j.contains("work_per_rep")) r.work_per_rep = need_number(j, "work_per_rep", where);
    if (j.contains("clock")) r.clock = clock_from_string(need_string(j, "clock"));
    if (r.status == Status::ok) r.value = need_number(j, "value", where);
    if (j.contains("stats")) r.stats = stats_from_json(j.at("stats"), where + " stats");
    if (j.contains("samples_s")) {
      const json& a = j.at("samples_s");
      if (!a.is_array()) throw std::runtime_error("samples_s is not an array");
      for (const auto& x : a) {
        if (!x.is_number()) throw std::runtime_error("samples_s holds a non-number");
        const double v = x.get<double>();
        if (!std::isfinite(v) || v < 0) throw std::runtime_error("samples_s holds a non-finite or negative value");
        r.samples.push_back(v);
      }
    }
    if (j.contains("sample_groups")) {
      const json& a = j.at("sample_groups");
      if (!a.is_array()) throw std::runtime_error("sample_groups is not an array");
      std::int64_t sum = 0;
      for (const auto& x : a) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < 1)
          throw std::runtime_error("sample_groups holds a count that is not a positive integer");
        r.sample_groups.push_back(x.get<std::int64_t>());
        sum += r.sample_groups.back();
      }
      if (sum != std::int64_t(r.samples.size()))
        throw std::runtime_error("sample_groups count " + std::to_string(sum) + " samples, samples_s holds " +
                                 std::to_string(r.samples.size()));
      if (r.sample_groups.size() == 1) r.sample_groups.clear();
    }
    if (j.contains("paired")) {
      const json& a = j.at("paired");
      if (!a.is_array()) throw std::runtime_error("paired is not an array");
      for (const auto& e : a) {
        PairedRounds p;
        if (!e.is_object() || !e.contains("with") || !e.at("with").is_string())
          throw std::runtime_error("paired[] needs the record id 'with'");
        p.with = e.at("with").get<std::string>();
        for (auto [key, into] : {std::pair{"a_s", &p.a_s}, std::pair{"b_s", &p.b_s}}) {
          if (!e.contains(key) || !e.at(key).is_array()) throw std::runtime_error(std::string("paired[].") + key + " is not an array");
          for (const auto& x : e.at(key)) {
            if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
              throw std::runtime_error(std::string("paired[].") + key + " holds a non-finite or negative value");
            into->push_back(x.get<double>());
          }
        }
        if (p.a_s.size() != p.b_s.size())
          throw std::runtime_error("paired[] with " + p.with + ": a_s and b_s differ in length");
        r.paired.push_back(std::move(p));
      }
    }
    if (j.contains("reps_per_sample")) r.reps_per_sample = need_count(j, "reps_per_sample", where);
    if (j.contains("warmup_samples")) r.warmup_samples = need_count(j, "warmup_samples", where);
    r.stop_reason = j.value("stop_reason", std::string());
    r.ceiling = j.value("ceiling", std::string());
    r.check = j.value("check", json::object());
    if (j.contains("counters")) {
      const json& c = j.at("counters");
      if (!c.is_object()) throw std::runtime_error("counters is not an object");
      for (auto it = c.begin(); it != c.end(); ++it) {
        Counter k;
        k.value = need_number(it.value(), "value", where + " counter '" + it.key() + "'");
        k.unit = it.value().value("unit", std::string());
        r.counters[it.key()] = k;
      }
    }
    r.info = j.value("info", json::object());
    r.device_timing = j.value("device_timing", json::object());
    if (!r.device_timing.is_object()) throw std::runtime_error("device_timing is not an object");
    if (j.contains("suspect")) {
      r.suspect = need_string(j, "suspect");
      if (r.suspect.empty()) throw std::runtime_error("'suspect' must say why (it is absent when nothing is suspect)");
    }
    if (j.contains("runs")) {
      const json& a = j.at("runs");
      if (!a.is_array()) throw std::runtime_error("runs is not an array");
      for (const auto& e : a) {
        const std::string w = where + " runs[" + std::to_string(r.runs.size()) + "]";
        if (!e.is_object()) throw std::runtime_error(w + " is not an object");
        RunStat x;
        const auto n = need_count(e, "run", w);
        if (n < 1 || n > 1000000) throw std::runtime_error(w + " field 'run' is out of range");
        x.run = static_cast<int>(n);
        x.status = status_from_string(need_string(e, "status"));
        if (x.status == Status::ok) x.value = need_number(e, "value", w);
        if (e.contains("stats")) x.stats = stats_from_json(e.at("stats"), w + " stats");
        r.runs.push_back(x);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  } catch (const std::invalid_argument& e) {  // an unknown enum name
    throw std::runtime_error(where + ": " + e.what());
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    if (msg.rfind(where, 0) == 0) throw;
    throw std::runtime_error(where + ": " + msg);
  }
  return r;
}

void median_counters(std::map<std::string, Counter>& into, const std::vector<std::map<std::string, Counter>>& each) {
  if (each.size() < 2) return;
  for (auto& [name, c] : into) {
    std::vector<double> v;
    for (const auto& one : each)
      if (auto f = one.find(name); f != one.end() && f->second.unit == c.unit) v.push_back(f->second.value);
    if (v.size() == each.size()) c.value = median(v);
  }
}

}  // namespace gtb
