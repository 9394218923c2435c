// Start-up hooks: what a family installs to run before any of its cases (e.g. OpenBLAS's core-type
// selection, which only the families that use OpenBLAS install). family_main runs them.
#pragma once

#include <functional>
#include <string>

namespace gtb {

struct Startup {
  std::string name;  // for messages, e.g. "openblas_core"
  // Runs first, before the flags are read: may take the process over (a probe mode) and return its
  // exit code, or return -1 to let family_main go on. May be empty.
  std::function<int(int argc, char** argv)> takeover;
  // Runs after the flags are read, before any case loads data or starts threads; may re-execute
  // the binary. May be empty.
  std::function<void(char** argv)> before_cases;
};

// Installs a hook (from a static initializer: `const bool k = gtb::add_startup({...});`); returns true.
bool add_startup(Startup hook);

// family_main's side: the first takeover that handles argv gives its exit code; -1 when none does.
int run_startup_takeover(int argc, char** argv);
// Every hook's before_cases, in the order they were installed.
void run_startup_before_cases(char** argv);

}  // namespace gtb
