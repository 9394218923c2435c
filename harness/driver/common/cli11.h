// How the commands built on CLI11 (gtb run, gtb list) end on --help and on a flag CLI11 refuses.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>

#include "harness/driver/commands.h"

namespace gtb::driver {

// Parses; an exit code when the command ends here: CLI11's help (exit 0), or kExitBadInput after
// "<command>: <CLI11's message>" on stderr.
inline std::optional<int> parse_cli(CLI::App& app, int argc, char** argv, const char* command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << command << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace gtb::driver
