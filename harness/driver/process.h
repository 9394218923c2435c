// Running family binaries as child processes: a crash stays in the child.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gtb::driver {

struct ProcessResult {
  int exit_code = -1;   // valid when signal == 0
  int signal = 0;       // the signal that killed the child, 0 if it exited
  std::string error;    // set when the child could not be started
  bool timed_out = false;  // stopped at ProcessLimits::timeout_s, whatever its exit status says
  double limit_s = 0;      // the limit it ran under when it timed out
  bool ok() const { return error.empty() && !timed_out && signal == 0 && exit_code == 0; }
  // "exited with code 3", "killed by signal 11 (Segmentation fault)", "timed out after 600 s"
  std::string describe() const;
};

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
