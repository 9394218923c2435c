// gtb list: families, workloads, variants, backends and axes, asked of each family binary; as text or
// JSON (--format, --json), to stdout or --out.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/families.h"
#include "harness/driver/common/output.h"
#include "harness/driver/common/process.h"
#include "harness/runtime/stopping.h"
#include "harness/document/types.h"

namespace gtb::driver {

namespace {
// The listing for a terminal: per family its cases, per workload its axes and options.
std::string list_text(const json& all) {
  std::ostringstream o;
  for (const auto& fam : all) {
    std::size_t cases = 0;
    for (const auto& w : fam["workloads"]) cases += w.value("cases", 0);
    o << fam.value("family", "?") << " (" << cases << " cases in the " << fam.value("suite", "?") << " suite)\n";
    for (const auto& w : fam["workloads"]) {
      o << "  " << w.value("workload", "") << "/" << w.value("variant", "") << " [" << w.value("backend", "") << "] "
        << w.value("metric", "") << " in " << w.value("unit", "") << ", " << w.value("cases", 0) << " cases\n";
      for (const auto& a : w["axes"]) {
        std::string vals;
        for (const auto& v : a["values"]) vals += (vals.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
        o << "      " << (a.value("kind", "") == "option" ? "option " : "axis   ") << a.value("name", "") << ": " << vals << "\n";
      }
      if (!w.value("description", "").empty()) o << "      " << w["description"].get<std::string>() << "\n";
    }
  }
  return o.str();
}
}  // namespace

int cmd_list(int argc, char** argv) {
  CLI::App app{"Show families, workloads and axes.", "gtb list"};
  std::string families_csv, format = "text", out;
  bool full = false;
  app.add_option("--family", families_csv, "Comma-separated families (default: all)");
  app.add_flag("--full", full, "Axes of the full suite (default: quick)");
  CLI::Option* format_opt = add_text_json_format_option(app, format);
  // The older spelling of --format json, kept: the same bytes.
  app.add_flag_callback("--json", [&format] { format = "json"; }, "Same as --format json")->excludes(format_opt);
  app.add_option("--out", out, "Write the listing there (atomically) instead of stdout")->type_name("FILE");
  if (const auto rc = parse_cli(app, argc, argv, "gtb list")) return *rc;
  std::vector<std::string> families;
  try {
    families = select_families(families_csv);
  } catch (const std::exception& e) {
    std::cerr << "gtb list: " << e.what() << "\n";
    return kExitBadInput;
  }
  namespace fs = std::filesystem;
  const std::string tmp = (fs::temp_directory_path() / ("gtb-list-" + std::to_string(::getpid()) + ".out")).string();
  json all = json::array();
  int rc = kExitOk;
  for (const auto& f : families) {
    std::error_code ec;
    fs::remove(tmp, ec);
    const ProcessResult pr =
        run_process(family_binary(f), {"--gtb_list", std::string("--gtb_suite=") + gtb::to_string(full ? Suite::full : Suite::quick)}, tmp);
    std::ifstream in(tmp);
    std::stringstream ss;
    ss << in.rdbuf();
    fs::remove(tmp, ec);
    if (!pr.ok()) {
      std::cerr << "gtb list: " << f << ": " << pr.describe() << "\n";
      rc = kExitBadInput;
      continue;
    }
    try {
      all.push_back(json::parse(ss.str()));
    } catch (const std::exception& e) {
      std::cerr << "gtb list: " << f << ": unreadable listing: " << e.what() << "\n";
      rc = kExitBadInput;
    }
  }
  // A listing that misses a family is not written to a file (it would read as complete).
  if (!out.empty() && rc != kExitOk) {
    std::cerr << "gtb list: " << out << " not written\n";
    return rc;
  }
  try {
    if (write_document(render(*parse_format(format), {[&] { return list_text(all); }, nullptr,
                                                      [&] { return all.dump(2) + "\n"; }}),
                       out))
      std::cout << "gtb list: " << out << " written\n";
  } catch (const std::exception& e) {
    std::cerr << "gtb list: " << e.what() << "\n";
    return kExitBadInput;
  }
  return rc;
}

}  // namespace gtb::driver
