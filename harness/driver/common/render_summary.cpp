// Plain-text tables of a results document (presentation only: reads records, never measures).
#include "harness/driver/common/render_summary.h"

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/driver/common/render_verdict.h"
#include "harness/driver/common/health.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <map>
#include <vector>
#include <sstream>

namespace gtb::driver {

using format::count_of;
using format::short_number;

namespace {
std::string size_text(long long v) {
  // Buffer sizes read better in binary units; the raw integer stays in the JSON.
  const char* units[] = {"", "Ki", "Mi", "Gi"};
  int u = 0;
  long long x = v;
  while (u < 3 && x >= 1024 && x % 1024 == 0) {
    x /= 1024;
    ++u;
  }
  return std::to_string(x) + units[u];
}
}  // namespace

std::string short_params(const json& params, const json& options) {
  std::string out;
  for (const json* o : {&params, &options}) {
    for (auto it = o->begin(); it != o->end(); ++it) {
      std::string v;
      if (it.value().is_number_integer()) {
        const long long x = it.value().get<long long>();
        v = (it.key().find("bytes") != std::string::npos) ? size_text(x) : std::to_string(x);
      } else if (it.value().is_string()) {
        v = it.value().get<std::string>();
      } else {
        v = it.value().dump();
      }
      out += (out.empty() ? "" : ",") + it.key() + "=" + v;
    }
  }
  return out;
}

void print_health(std::ostream& os, const json& doc) {
  const auto warn = health::warnings(doc);
  if (!warn.empty()) {
    os << "\nWARNING: measured on a busy machine; these numbers may be low (limits in docs/harness.md;\n"
          "rerun on an idle machine, or with gtb run --wait-idle; a speed that changed while a family ran is\n"
          "the host's: decide a change between two builds with gtb ab):\n";
    for (const auto& w : warn) os << "  " << w << "\n";
    return;
  }
  bool any = false;
  for (const auto& f : doc.value("families", json::array())) any = any || (f.is_object() && f.contains("health"));
  if (any) os << "\nMeasurement health: no family saw other load, steal or throttling above the limits\n";
}

// A ceiling that could not be measured takes every percent of it out of the file: say so, unless
// its records were all skipped (no GPU), which the table already counts.
void print_missing_ceilings(std::ostream& os, const json& doc) {
  const json* miss = nullptr;
  if (doc.contains("context") && doc["context"].is_object() && doc["context"].contains("ceilings_missing"))
    miss = &doc["context"]["ceilings_missing"];
  if (!miss || !miss->is_object()) return;
  std::vector<std::string> lines;
  for (auto it = miss->begin(); it != miss->end(); ++it) {
    const std::string why = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    if (why.rfind("skipped", 0) == 0) continue;
    lines.push_back(it.key() + ": " + why);
  }
  if (lines.empty()) return;
  os << "\nWARNING: " << count_of(lines.size(), "ceiling") << " not measured; records that divide by "
     << (lines.size() == 1 ? "it" : "them") << " carry no percent of a ceiling:\n";
  for (const auto& l : lines) os << "  " << l << "\n";
}

namespace {
// One line of the families table: name, status, records, seconds, and what went wrong.
std::string family_line(const std::string& name, const std::string& status, long long records, double seconds,
                        const std::string& tail) {
  std::ostringstream os;
  // A name as long as its column keeps a space after it (a 14-letter name, then " #1 ok").
  os << "  " << std::left << std::setw(14) << (name.size() < 14 ? name : name + " ") << std::setw(8) << status << std::right << std::setw(5) << records
     << (records == 1 ? " record  " : " records ") << std::fixed << std::setprecision(1) << std::setw(7) << seconds
     << " s" << (tail.empty() ? "" : "  " + tail);
  return os.str();
}
}  // namespace

void print_summary(std::ostream& os, const json& doc) {
  os << "\nFamilies\n";
  for (const auto& f : doc.value("families", json::array())) {
    const std::string name = f.value("name", "?") + (f.contains("run") ? " #" + f["run"].dump() : "");
    os << family_line(name, f.value("status", "?"), f.value("records", 0), f.value("seconds", 0.0),
                      f.contains("error") ? f["error"].get<std::string>() : "")
       << "\n";
  }
  print_health(os, doc);
  print_missing_ceilings(os, doc);
  // Columns as wide as their widest entry: a cut label can make two records read the same.
  struct Row {
    std::string name, params, value, unit, spread, status;
  };
  std::vector<Row> rows;
  // Records without a number that share a reason (e.g. every GPU record on a machine without a
  // GPU) are counted in one line each instead of filling the table.
  std::map<std::string, int> grouped;
  std::vector<std::string> order;
  std::vector<std::pair<std::string, std::string>> suspects;  // record, why
  for (const auto& r : doc.value("records", json::array())) {
    const std::string name = r.value("family", "") + "/" + r.value("workload", "") + "/" + r.value("variant", "") +
                             "/" + r.value("backend", "");
    const std::string status = r.value("status", "?");
    if (status == "skipped") {
      const std::string key = status + ": " + r.value("status_detail", "");
      if (grouped[key]++ == 0) order.push_back(key);
      continue;
    }
    Row row{name, short_params(r.value("params", json::object()), r.value("options", json::object())), "-",
            r.value("unit", ""), "-", status};
    if (status == "ok" && r.contains("value")) {
      if (r.contains("stats")) {
        const auto& st = r["stats"];
        const double med = st.value("median", 0.0);
        if (med > 0) row.spread = "±" + short_number(100.0 * st.value("iqr", 0.0) / 2.0 / med) + "%";
      }
      row.value = short_number(r["value"].get<double>());
      row.status = r.contains("suspect") ? "SUSPECT" : "ok";
      if (r.contains("suspect") && r["suspect"].is_string()) suspects.push_back({name + " " + row.params, r["suspect"].get<std::string>()});
    } else {
      row.status = status + ": " + r.value("status_detail", "");
    }
    rows.push_back(std::move(row));
  }
  std::size_t wn = 6, wp = 10, wv = 5, wu = 4;
  for (const auto& row : rows) {
    wn = std::max(wn, row.name.size());
    wp = std::max(wp, row.params.size());
    wv = std::max(wv, row.value.size());
    wu = std::max(wu, row.unit.size());
  }
  const int cn = int(wn) + 2, cp = int(wp) + 2, cv = int(wv), cu = int(wu) + 2;
  os << "\n" << std::left << std::setw(cn) << "record" << std::setw(cp) << "parameters" << std::right << std::setw(cv)
     << "value" << "  " << std::left << std::setw(cu) << "unit" << std::setw(10) << "spread" << "status\n";
  for (const auto& row : rows)
    os << std::left << std::setw(cn) << row.name << std::setw(cp) << row.params << std::right << std::setw(cv)
       << row.value << "  " << std::left << std::setw(cu) << row.unit << std::setw(10) << row.spread << row.status
       << "\n";
  for (const auto& key : order)
    os << "  " << count_of(std::size_t(grouped[key]), "record") << " " << key << "\n";
  if (!suspects.empty()) {
    os << "\nSUSPECT: " << count_of(suspects.size(), "number") << " kept but not to be trusted\n";
    for (const auto& [name, why] : suspects) os << "  " << name << ": " << why << "\n";
  }
  const auto& cmp = doc.value("comparisons", json::array());
  if (!cmp.empty()) {
    os << "\nCPU vs GPU (gpu_over_cpu > 1: the GPU is better)\n";
    std::vector<std::array<std::string, 3>> cols;
    std::size_t w0 = 0, w1 = 0, w2 = 0;
    for (const auto& c : cmp) {
      cols.push_back({c.value("family", "") + "/" + c.value("workload", ""),
                      short_params(c.value("params", json::object()), json::object()),
                      c.contains("cuda") ? c["cuda"].value("variant", "") : std::string()});
      w0 = std::max(w0, cols.back()[0].size()), w1 = std::max(w1, cols.back()[1].size()),
      w2 = std::max(w2, cols.back()[2].size());
    }
    for (std::size_t i = 0; i < cmp.size(); ++i) {
      const auto& c = cmp[i];
      os << "  " << std::left << std::setw(int(w0) + 2) << cols[i][0] << std::setw(int(w1) + 2) << cols[i][1]
         << std::setw(int(w2) + 2) << cols[i][2] << std::right << std::setw(9) << short_number(c.value("gpu_over_cpu", 0.0))
         << "x  " << c.value("winner", "") << "\n";
    }
  } else {
    os << "\nCPU vs GPU: no pairs (no GPU record was measured)\n";
  }
}

namespace {

// The columns a line takes on a terminal (UTF-8: one per character) and the rows it wraps into.
std::size_t columns_of(const std::string& line) {
  return std::size_t(std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
std::size_t rows_of(const std::string& line) { return std::max<std::size_t>(1, (columns_of(line) + kScreenColumns - 1) / kScreenColumns); }

// A line cut to one row, "..." at its end when cut: after its last whole word where one ends in the
// row's last quarter, never inside a UTF-8 character.
std::string one_row(const std::string& line) {
  if (columns_of(line) <= kScreenColumns) return line;
  std::size_t cols = 0, i = 0;
  for (; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (cols++ == kScreenColumns - 3) break;
  }
  const std::size_t space = line.rfind(' ', i);
  if (space != std::string::npos && space > i - kScreenColumns / 4) i = space;
  while (i > 0 && (line[i - 1] == ',' || line[i - 1] == ';' || line[i - 1] == ':' || line[i - 1] == ' ')) --i;
  return line.substr(0, i) + "...";
}

// The families as one line each: a family of several runs (gtb run --runs K) adds its runs' records
// and seconds up, and says how many runs ended how.
std::vector<std::string> family_lines(const json& doc) {
  struct Fam {
    std::string name;
    std::vector<const json*> runs;
  };
  std::vector<Fam> fams;
  for (const auto& f : json_read::array_at(doc, {"families"})) {
    if (!f.is_object()) continue;
    const std::string name = json_read::string_at(f, {"name"}, "?");
    auto it = std::find_if(fams.begin(), fams.end(), [&](const Fam& x) { return x.name == name; });
    if (it == fams.end()) it = fams.insert(fams.end(), {name, {}});
    it->runs.push_back(&f);
  }
  std::vector<std::string> out;
  for (const auto& fam : fams) {
    std::map<std::string, int> by_status;
    std::vector<std::string> statuses;
    long long records = 0;
    double seconds = 0;
    std::string error;
    for (const json* f : fam.runs) {
      const std::string st = json_read::string_at(*f, {"status"}, "?");
      if (by_status[st]++ == 0) statuses.push_back(st);
      records += static_cast<long long>(json_read::number_at(*f, {"records"}, 0.0));
      seconds += json_read::number_at(*f, {"seconds"}, 0.0);
      if (error.empty()) {
        error = json_read::string_at(*f, {"error"});
        if (!error.empty() && fam.runs.size() > 1) error = "run " + std::to_string(int(json_read::number_at(*f, {"run"}, 0.0))) + ": " + error;
      }
    }
    std::string status = statuses.size() == 1 ? statuses[0] : "mixed";
    std::string tail;
    if (fam.runs.size() > 1) {
      tail = std::to_string(fam.runs.size()) + " runs";
      if (statuses.size() > 1)
        for (const auto& st : statuses) tail += ", " + std::to_string(by_status[st]) + " " + st;
    }
    if (!error.empty()) tail += (tail.empty() ? "" : "; ") + error;
    out.push_back(one_row(family_line(fam.name, status, records, seconds, tail)));
  }
  return out;
}

// How the records ended, and the CPU vs GPU pairs.
std::vector<std::string> record_lines(const json& doc) {
  std::map<std::string, std::size_t> by_status;
  std::vector<std::string> statuses;
  std::size_t suspect = 0, all = 0;
  for (const auto& r : json_read::array_at(doc, {"records"})) {
    if (!r.is_object()) continue;
    ++all;
    const std::string st = json_read::string_at(r, {"status"}, "?");
    if (by_status[st]++ == 0) statuses.push_back(st);
    suspect += st == "ok" && r.contains("suspect");
  }
  std::string line = "Records: " + std::to_string(all);
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    line += (i ? ", " : ": ") + std::to_string(by_status[statuses[i]]) + " " + statuses[i];
    if (statuses[i] == "ok" && suspect > 0) line += " (" + std::to_string(suspect) + " of them suspect)";
  }
  std::vector<std::string> out{one_row(line)};
  const json& cmp = json_read::array_at(doc, {"comparisons"});
  if (cmp.empty()) {
    out.push_back("CPU vs GPU: no pairs (no GPU record was measured)");
  } else {
    const auto gpu = std::count_if(cmp.begin(), cmp.end(), [](const json& c) { return json_read::string_at(c, {"winner"}) == "cuda"; });
    out.push_back("CPU vs GPU: " + count_of(cmp.size(), "problem") + " measured on both, the GPU better in " +
                  std::to_string(gpu) + " (each ratio in the table)");
  }
  return out;
}

std::size_t rows_of(const std::vector<std::string>& lines) {
  std::size_t n = 0;
  for (const auto& l : lines) n += rows_of(l);
  return n;
}

}  // namespace

std::string summary_path(const std::string& out) {
  const std::string ext = ".json";
  const bool json_ext = out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0;
  return (json_ext ? out.substr(0, out.size() - ext.size()) : out) + "-summary.txt";
}

void print_short_summary(std::ostream& os, const json& doc, const std::string& table) {
  // Everything but the warnings first: the warnings get the rows that are left.
  std::vector<std::string> families = family_lines(doc);
  families.insert(families.begin(), {"", "Families"});
  std::ostringstream peaks_text;
  print_missing_ceilings(peaks_text, doc);
  std::istringstream peaks_in(peaks_text.str());
  std::vector<std::string> peaks;
  for (std::string l; std::getline(peaks_in, l);) peaks.push_back(one_row(l));
  std::vector<std::string> records = record_lines(doc);
  records.insert(records.begin(), "");
  std::vector<std::string> verdict{""};
  for (const auto& l : verdict::render_headline(doc)) verdict.push_back(one_row(l));
  std::vector<std::string> paths;
  if (!table.empty()) paths = {"", "table: " + table + " (every record, its value or why none)"};
  const std::size_t budget = kSummaryRows;
  const std::size_t used = rows_of(families) + rows_of(peaks) + rows_of(records) + rows_of(verdict) + rows_of(paths);
  std::vector<std::string> warn;
  if (const auto lines = health::warnings(doc); lines.empty()) {
    // An idle run says so too: a screen without a health line could be a run that read none.
    std::ostringstream idle;
    print_health(idle, doc);
    std::istringstream in(idle.str());
    for (std::string l; std::getline(in, l);) warn.push_back(l);
  } else {
    warn = {"", "WARNING: measured on a busy machine; the numbers may be low (docs/harness.md, gtb run --wait-idle):"};
    // The rows left, at least two: one warning (cut to a row if need be) and how many more.
    const std::size_t fixed = used + rows_of(warn);
    const std::size_t room = budget > fixed + 2 ? budget - fixed : 2;
    std::vector<std::string> all;
    for (const auto& l : lines) all.push_back("  " + l);
    if (rows_of(all) <= room) {
      warn.insert(warn.end(), all.begin(), all.end());
    } else {
      std::size_t shown = 0, rows = 0;
      for (; shown < all.size() && rows + rows_of(all[shown]) < room; ++shown) {
        rows += rows_of(all[shown]);
        warn.push_back(all[shown]);
      }
      if (shown == 0) warn.push_back(one_row(all[shown++]));
      warn.push_back("  and " + std::to_string(all.size() - shown) + " more: " +
                     (table.empty() ? std::string() : "in the table, and ") + "in gtb report's Measurement health");
    }
  }
  for (const auto* part : {&families, &warn, &peaks, &records, &verdict, &paths})
    for (const auto& l : *part) os << l << "\n";
}

}  // namespace gtb::driver
