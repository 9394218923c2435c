// Child processes for the driver: a family binary in a process group of its own, its log, the
// driver's interrupt forwarded to it, the time limit (all through the runtime's process helper).
#include "harness/driver/common/process.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <deque>
#include <fstream>

namespace gtb::driver {

namespace {
std::atomic<int> g_signal{0};

// The wait loop forwards the signal: the children sit in process groups of their own, out of reach
// of the terminal's Ctrl-C, and only the loop knows which group is running and when to escalate.
void on_signal(int sig) { g_signal.store(sig); }
}  // namespace

bool interrupted() { return g_signal.load() != 0; }
int interrupt_signal() { return g_signal.load(); }

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

ProcessResult run_process(const std::string& path, const std::vector<std::string>& args, const std::string& log_path,
                          const std::function<void()>& tick, const ProcessLimits& limits) {
  if (interrupted()) {  // a Ctrl-C that arrived between two children starts no new one
    ProcessResult res;
    res.error = "interrupted";
    return res;
  }
  ProcessSpec spec;
  spec.program = path;
  spec.args = args;
  spec.set_env = limits.env;
  spec.in = Redirect::null();
  spec.out = Redirect::append(log_path);
  spec.err = Redirect::to_stdout();
  spec.own_group = true;
  spec.timeout_s = limits.timeout_s;
  spec.grace_s = limits.grace_s;
  spec.interrupt = interrupt_signal;
  spec.tick = tick;
  return gtb::run_process(spec);
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  const auto slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string tail_of_file(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}

}  // namespace gtb::driver
