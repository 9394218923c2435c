// How the commands read their flags with CLI11: the same --help layout, and on a flag CLI11 refuses one
// line "gtb <command>: <message>" and exit 2.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>

#include "harness/driver/commands.h"

namespace gtb::driver {

// One rule for every command: an option that takes one value, given twice, keeps the last one (as
// most command lines do; CLI11 would refuse it). Each value given is still checked. Options that take
// a list keep every value, and flags already keep the last.
inline void last_value_wins(CLI::App& app) {
  for (CLI::Option* opt : app.get_options())
    if (opt->get_expected_max() == 1 && opt->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw)
      opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// Parses (with last_value_wins); an exit code when the command ends here: CLI11's help (exit 0), or
// kExitBadInput after one line "<command>: <CLI11's message> (usage: <command> --help)" on stderr.
inline std::optional<int> parse_cli(CLI::App& app, int argc, char** argv, const char* command) {
  last_value_wins(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << command << ": " << e.what() << " (usage: " << command << " --help)\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

// --format text|markdown|json (md for markdown), the format of the command's document
// (common/output.h reads it with parse_format).
// The default is the value `format` holds (text, or markdown for gtb report).
inline CLI::Option* add_format_option(CLI::App& app, std::string& format, const std::string& note = "") {
  const std::string formats = format == "markdown" ? "markdown (default), text or json" : "text (default), markdown or json";
  return app.add_option("--format", format, formats + (note.empty() ? "" : " " + note))
      ->check(CLI::IsMember({"text", "markdown", "md", "json"}));
}

// --format for a command that writes its document in text or JSON only.
inline CLI::Option* add_text_json_format_option(CLI::App& app, std::string& format) {
  return app.add_option("--format", format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
}

}  // namespace gtb::driver
