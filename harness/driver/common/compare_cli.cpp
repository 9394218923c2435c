// Command-line pieces shared by gtb compare and gtb ab: output and threshold flags, config, rendering.
#include "harness/driver/common/compare_cli.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/document/results.h"
#include "harness/driver/common/output.h"

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
  if (used == 0 || used != s.size()) throw std::runtime_error("not a number: " + s);
  if (percent) v /= 100.0;
  if (!(v > 0.0 && v < 1.0)) throw std::runtime_error("must be between 0 and 1 (or 0% and 100%)");
  return v;
}

void add_compare_output_options(CLI::App& app, CompareOutput& out) {
  add_format_option(app, out.format);
  app.add_option("--out", out.out_path, "Write the output to FILE (stdout gets a one-line summary)")->type_name("FILE");
  app.add_option("--config", out.config_path, "Thresholds per family / record glob, evidence settings (JSON)")
      ->type_name("FILE");
  app.add_option_function<std::string>(
         "--threshold", [&out](const std::string& s) { out.threshold = parse_threshold(s); },
         "Default threshold, 0.05 or 5% (default 5%)")
      ->type_name("X")
      ->check(CLI::Validator(
          [](std::string& s) {
            try {
              parse_threshold(s);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          ""));
  app.add_flag("--allow-different-machines", out.allow_machines, "Compare results of different GPUs or CPUs anyway");
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
  const std::string text = render(*parse_format(opt.format), {[&] { return compare::render_text(res); },
                                                               [&] { return compare::render_markdown(res); },
                                                               [&] { return compare::render_json(res).dump(2) + "\n"; }});
  if (write_document(text, opt.out_path))
    std::printf("%s: %zu regressions, %zu faster, %zu noisy of %zu records; %s written -> %s\n", command.c_str(),
                res.regressions(), res.count(compare::Verdict::faster), res.count(compare::Verdict::noisy),
                res.rows.size(), opt.out_path.c_str(), compare::outcome(res).c_str());
  return res.exit_code();
}

}  // namespace gtb::driver
