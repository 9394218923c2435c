// gtb compare BASE NEW: decides, record by record, whether NEW regressed against BASE (exit 1 if so).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "harness/driver/commands.h"
#include "harness/driver/compare_core.h"
#include "harness/results.h"

namespace gtb::driver {

namespace {

void compare_usage(std::FILE* f) {
  std::fprintf(f,
               "usage: gtb compare BASE.json NEW.json [options]\n"
               "  --format text|markdown|json  output format (default text)\n"
               "  --out FILE                   write the output to FILE (stdout gets a one-line summary)\n"
               "  --config FILE                thresholds per family / record glob, evidence settings (JSON)\n"
               "  --threshold X                default threshold, 0.05 or 5%% (default 5%%)\n"
               "  --allow-different-machines   compare files from different GPUs or CPUs anyway\n"
               "  --calibrate[=N]              also estimate the A/A false-alarm rate (N simulated compares\n"
               "                               per record, default 200)\n"
               "exit: 0 nothing regressed, 1 a regression (slower or broken), 2 bad input or different machines\n"
               "verdicts: faster, same, slower, noisy, missing, new, broken (ok -> failed/invalid),\n"
               "          unmeasured (skipped or not ok on a side), ignored (by the config)\n");
}

double parse_threshold(std::string s) {
  bool percent = false;
  if (!s.empty() && s.back() == '%') {
    percent = true;
    s.pop_back();
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw std::runtime_error("--threshold: not a number: " + s);
  if (percent) v /= 100.0;
  if (!(v > 0.0 && v < 1.0)) throw std::runtime_error("--threshold must be between 0 and 1 (or 0% and 100%)");
  return v;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty()) throw std::runtime_error(path + ": empty file");
  try {
    return json::parse(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  std::string base_path, new_path, format = "text", out_path, config_path;
  std::optional<double> threshold;
  bool allow_machines = false;
  int calibrate_trials = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&](const std::string& flag) -> std::string {
        if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) return a.substr(flag.size() + 1);
        if (i + 1 >= argc) throw std::runtime_error(flag + " needs a value");
        return argv[++i];
      };
      auto is = [&](const std::string& flag) { return a == flag || a.rfind(flag + "=", 0) == 0; };
      if (a == "-h" || a == "--help") {
        compare_usage(stdout);
        return kExitOk;
      } else if (is("--format")) {
        format = value("--format");
        if (format == "md") format = "markdown";
        if (format != "text" && format != "markdown" && format != "json")
          throw std::runtime_error("--format must be text, markdown or json");
      } else if (is("--out")) {
        out_path = value("--out");
      } else if (is("--config")) {
        config_path = value("--config");
      } else if (is("--threshold")) {
        threshold = parse_threshold(value("--threshold"));
      } else if (a == "--allow-different-machines") {
        allow_machines = true;
      } else if (a == "--calibrate") {
        calibrate_trials = 200;
      } else if (a.rfind("--calibrate=", 0) == 0) {
        const std::string v = a.substr(12);
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 10 || n > 100000)
          throw std::runtime_error("--calibrate=N needs N between 10 and 100000");
        calibrate_trials = static_cast<int>(n);
      } else if (!a.empty() && a[0] == '-') {
        throw std::runtime_error("unknown option " + a);
      } else if (base_path.empty()) {
        base_path = a;
      } else if (new_path.empty()) {
        new_path = a;
      } else {
        throw std::runtime_error("too many files: " + a);
      }
    }
    if (new_path.empty()) throw std::runtime_error("needs two results files, BASE and NEW");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb compare: %s\n", e.what());
    compare_usage(stderr);
    return kExitBadInput;
  }

  try {
    compare::Config config;
    if (!config_path.empty()) {
      try {
        config = compare::Config::from_json(read_json_file(config_path));
      } catch (const std::exception& e) {
        throw std::runtime_error(config_path + ": " + e.what());
      }
    }
    if (threshold) config.settings.threshold = *threshold;
    const json base = load_document(base_path);
    const json next = load_document(new_path);
    compare::Result res = compare::compare_documents(base, next, config);
    res.base.path = base_path;
    res.next.path = new_path;
    res.machines_allowed = allow_machines;
    if (!res.context.comparable && !allow_machines) {
      for (const auto& p : res.context.problems) std::fprintf(stderr, "gtb compare: machines differ: %s\n", p.c_str());
      std::fprintf(stderr, "gtb compare: refusing to compare results of different machines "
                           "(--allow-different-machines to compare anyway)\n");
    }
    if (calibrate_trials > 0) res.calibration = compare::calibrate(base, next, config, calibrate_trials);
    std::string text;
    if (format == "json")
      text = compare::render_json(res).dump(2) + "\n";
    else if (format == "markdown")
      text = compare::render_markdown(res);
    else
      text = compare::render_text(res);
    if (out_path.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      write_file_atomic(out_path, text);
      std::printf("gtb compare: %zu regressions, %zu faster, %zu noisy of %zu records; %s written (exit %d)\n",
                  res.regressions(), res.count(compare::Verdict::faster), res.count(compare::Verdict::noisy),
                  res.rows.size(), out_path.c_str(), res.exit_code());
    }
    return res.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb compare: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
