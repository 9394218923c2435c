// Plain-text tables of a results document (presentation only: reads records, never measures).
#include "harness/driver/report/render_summary.h"

#include "harness/document/format.h"
#include "harness/driver/run/health.h"

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

void print_summary(std::ostream& os, const json& doc) {
  os << "\nFamilies\n";
  for (const auto& f : doc.value("families", json::array())) {
    const std::string name = f.value("name", "?") + (f.contains("run") ? " #" + f["run"].dump() : "");
    os << "  " << std::left << std::setw(14) << name << std::setw(8) << f.value("status", "?")
       << std::right << std::setw(5) << f.value("records", 0) << (f.value("records", 0) == 1 ? " record  " : " records ") << std::fixed << std::setprecision(1)
       << std::setw(7) << f.value("seconds", 0.0) << " s";
    if (f.contains("error")) os << "  " << f["error"].get<std::string>();
    os << "\n";
  }
  os.unsetf(std::ios::fixed);
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

}  // namespace gtb::driver
