// Running family binaries as child processes: a crash stays in the child.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gtb::driver {

struct ProcessResult {
  int exit_code = -1;   // valid when signal == 0
  int signal = 0;       // the signal that killed the child, 0 if it exited
  std::string error;    // set when the child could not be started
  bool ok() const { return error.empty() && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exited with code 3", "killed by signal 11 (Segmentation fault)"
};

// Runs `path args...` with stdout and stderr appended to `log_path`; waits for it. While it runs,
// SIGINT/SIGTERM received by this process are forwarded to the child.
// `tick`, when given, is called about every 200 ms while the child runs.
ProcessResult run_process(const std::string& path, const std::vector<std::string>& args, const std::string& log_path,
                          const std::function<void()>& tick = nullptr);

// True once SIGINT or SIGTERM reached the driver (handlers installed by install_interrupt_handlers).
bool interrupted();
int interrupt_signal();  // the signal that interrupted the driver (SIGINT or SIGTERM), 0 if none
void install_interrupt_handlers();

// Folder holding the running executable (from /proc/self/exe).
std::string self_dir();
// Last `lines` lines of a text file (for error messages).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace gtb::driver
