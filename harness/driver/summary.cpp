// Plain-text tables of a results document (presentation only: reads records, never measures).
#include "harness/driver/summary.h"

#include "harness/driver/health.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <vector>
#include <sstream>

namespace gtb::driver {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt_num(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

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
std::string cut(const std::string& s, std::size_t w) { return s.size() <= w ? s : s.substr(0, w - 1) + "~"; }
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
          "rerun on an idle machine, or with gtb run --wait-idle):\n";
    for (const auto& w : warn) os << "  " << w << "\n";
    return;
  }
  bool any = false;
  for (const auto& f : doc.value("families", json::array())) any = any || (f.is_object() && f.contains("health"));
  if (any) os << "\nMeasurement health: no family saw other load, steal or throttling above the limits\n";
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
  os << "\n"
     << std::left << std::setw(44) << "record" << std::setw(34) << "parameters" << std::right << std::setw(10)
     << "value" << "  " << std::left << std::setw(10) << "unit" << "spread    status\n";
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
    os << std::left << std::setw(44) << cut(name, 43) << std::setw(34)
       << cut(short_params(r.value("params", json::object()), r.value("options", json::object())), 33);
    if (status == "ok" && r.contains("value")) {
      std::string spread = "-";
      if (r.contains("stats")) {
        const auto& s = r["stats"];
        const double med = s.value("median", 0.0);
        if (med > 0) spread = "±" + fmt_num(100.0 * s.value("iqr", 0.0) / 2.0 / med) + "%";
      }
      os << std::right << std::setw(10) << fmt_num(r["value"].get<double>()) << "  " << std::left << std::setw(10)
         << r.value("unit", "") << std::setw(10) << spread << (r.contains("suspect") ? "SUSPECT" : "ok") << "\n";
      if (r.contains("suspect") && r["suspect"].is_string())
        suspects.push_back({name + " " + short_params(r.value("params", json::object()), r.value("options", json::object())),
                            r["suspect"].get<std::string>()});
    } else {
      os << std::right << std::setw(10) << "-" << "  " << std::left << std::setw(10) << r.value("unit", "")
         << std::setw(10) << "-" << status << ": " << cut(r.value("status_detail", ""), 70) << "\n";
    }
  }
  for (const auto& key : order)
    os << "  " << count_of(std::size_t(grouped[key]), "record") << " " << cut(key, 110) << "\n";
  if (!suspects.empty()) {
    os << "\nSUSPECT: " << count_of(suspects.size(), "number") << " kept but not to be trusted\n";
    for (const auto& [name, why] : suspects) os << "  " << name << ": " << why << "\n";
  }
  const auto& cmp = doc.value("comparisons", json::array());
  if (!cmp.empty()) {
    os << "\nCPU vs GPU (gpu_over_cpu > 1: the GPU is better)\n";
    for (const auto& c : cmp) {
      os << "  " << std::left << std::setw(30) << cut(c.value("family", "") + "/" + c.value("workload", ""), 29)
         << std::setw(30) << cut(short_params(c.value("params", json::object()), json::object()), 29) << std::setw(22)
         << cut(c["cuda"].value("variant", ""), 21) << std::right << std::setw(9)
         << fmt_num(c.value("gpu_over_cpu", 0.0)) << "x  " << c.value("winner", "") << "\n";
    }
  } else {
    os << "\nCPU vs GPU: no pairs (no GPU record was measured)\n";
  }
}

}  // namespace gtb::driver
