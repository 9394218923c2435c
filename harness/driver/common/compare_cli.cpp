// Command-line pieces shared by gtb compare and gtb ab: output and threshold flags, config, rendering.
#include "harness/driver/common/compare_cli.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/document/results.h"
#include "harness/driver/common/flags.h"

namespace gtb::driver {

namespace {

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

bool parse_compare_output_flag(int argc, char** argv, int& i, CompareOutput& out) {
  FlagArg arg(argc, argv, i);
  const std::string& a = arg.text();
  if (arg.is("--format")) {
    out.format = arg.value("--format");
    if (out.format == "md") out.format = "markdown";
    if (out.format != "text" && out.format != "markdown" && out.format != "json")
      throw std::runtime_error("--format must be text, markdown or json");
  } else if (arg.is("--out")) {
    out.out_path = arg.value("--out");
  } else if (arg.is("--config")) {
    out.config_path = arg.value("--config");
  } else if (arg.is("--threshold")) {
    out.threshold = parse_threshold(arg.value("--threshold"));
  } else if (a == "--allow-different-machines") {
    out.allow_machines = true;
  } else {
    return false;
  }
  return true;
}

compare::Config load_compare_config(const CompareOutput& opt) {
  compare::Config config;
  if (!opt.config_path.empty()) {
    try {
      config = compare::Config::from_json(read_json_file(opt.config_path));
    } catch (const std::exception& e) {
      throw std::runtime_error(opt.config_path + ": " + e.what());
    }
  }
  if (opt.threshold) config.settings.threshold = *opt.threshold;
  return config;
}

int emit_comparison(compare::Result& res, const CompareOutput& opt, const std::string& command) {
  res.machines_allowed = opt.allow_machines;
  if (!res.context.comparable && !opt.allow_machines) {
    for (const auto& p : res.context.problems) std::fprintf(stderr, "%s: machines differ: %s\n", command.c_str(), p.c_str());
    std::fprintf(stderr, "%s: refusing to compare results of different machines "
                         "(--allow-different-machines to compare anyway)\n", command.c_str());
  }
  std::string text;
  if (opt.format == "json")
    text = compare::render_json(res).dump(2) + "\n";
  else if (opt.format == "markdown")
    text = compare::render_markdown(res);
  else
    text = compare::render_text(res);
  if (opt.out_path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file_atomic(opt.out_path, text);
    std::printf("%s: %zu regressions, %zu faster, %zu noisy of %zu records; %s written -> %s\n", command.c_str(),
                res.regressions(), res.count(compare::Verdict::faster), res.count(compare::Verdict::noisy),
                res.rows.size(), opt.out_path.c_str(), compare::outcome(res).c_str());
  }
  return res.exit_code();
}

}  // namespace gtb::driver
