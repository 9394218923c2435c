// How the commands read their flags with CLI11: the same --help layout, and on a flag CLI11 refuses one
// line "gtb <command>: <message>" and exit 2.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>

#include "harness/driver/commands.h"

namespace gtb::driver {

// Parses; an exit code when the command ends here: CLI11's help (exit 0), or kExitBadInput after
// one line "<command>: <CLI11's message> (usage: <command> --help)" on stderr.
inline std::optional<int> parse_cli(CLI::App& app, int argc, char** argv, const char* command) {
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
inline CLI::Option* add_format_option(CLI::App& app, std::string& format, const std::string& note = "") {
  return app.add_option("--format", format, "text (default), markdown or json" + (note.empty() ? "" : " " + note))
      ->check(CLI::IsMember({"text", "markdown", "md", "json"}));
}

}  // namespace gtb::driver
