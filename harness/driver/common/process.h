// Running family binaries as child processes: a crash stays in the child.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/runtime/process.h"

namespace gtb::driver {

using ProcessResult = gtb::ProcessResult;

struct ProcessLimits {
  double timeout_s = 0;  // wall-clock limit from the start; 0: none
  // After SIGTERM (a timeout) or a forwarded interrupt, how long the group has before SIGKILL.
  double grace_s = 5;
  std::vector<std::pair<std::string, std::string>> env;  // added to the child's environment
};

// Runs `path args...` in a process group of its own, with stdout and stderr appended to `log_path`;
// waits for it. The group is what gets signalled, so mpirun's ranks and any grandchild go with it.
// While it runs, SIGINT/SIGTERM received by this process are forwarded to the group; past
// `limits.timeout_s` the group gets SIGTERM. Either way whatever is left of the group after the
// grace gets SIGKILL, so a stopped family leaves no process behind.
// `tick`, when given, is called about every 200 ms while the child runs.
ProcessResult run_process(const std::string& path, const std::vector<std::string>& args, const std::string& log_path,
                          const std::function<void()>& tick = nullptr, const ProcessLimits& limits = {});

// True once SIGINT or SIGTERM reached the driver (handlers installed by install_interrupt_handlers).
bool interrupted();
int interrupt_signal();  // the signal that interrupted the driver (SIGINT or SIGTERM), 0 if none
void install_interrupt_handlers();

// Folder holding the running executable (from /proc/self/exe).
std::string self_dir();
// Last `lines` lines of a text file (for error messages).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace gtb::driver
