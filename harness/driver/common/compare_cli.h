// Command-line pieces shared by gtb compare and gtb ab: output and threshold flags, config, rendering.
#pragma once

#include <optional>
#include <string>

#include "harness/driver/common/cli11.h"
#include "harness/driver/common/compare_core.h"

namespace gtb::driver {

struct CompareOutput {
  std::string format = "text";  // text | markdown | json
  std::string out_path;
  std::string config_path;
  std::optional<double> threshold;
  bool allow_machines = false;
};

inline constexpr const char* kCompareExitHelp =
    "exit: 0 nothing regressed, 1 a regression (slower or broken), 2 bad input or different machines\n"
    "verdicts: faster, same, slower, noisy, missing, new, broken (ok -> failed/invalid),\n"
    "          unmeasured (skipped or not ok on a side), ignored (by the config)\n";

// Adds the flags compare and ab share: --format, --out, --config, --threshold, --allow-different-machines.
void add_compare_output_options(CLI::App& app, CompareOutput& out);
// "0.05" or "5%" -> 0.05; throws unless in (0, 1) (the message follows "--threshold: ").
double parse_threshold(std::string s);
// The --config file (if any) with --threshold applied; throws with the file named.
compare::Config load_compare_config(const CompareOutput& opt);
// Renders the result, writes it (stdout or --out, atomically) and returns the exit code.
int emit_comparison(compare::Result& res, const CompareOutput& opt, const std::string& command);

}  // namespace gtb::driver
