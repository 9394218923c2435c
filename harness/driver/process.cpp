// Child processes for the driver: posix_spawn, log redirection, signal forwarding.
#include "harness/driver/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <fstream>

extern char** environ;

namespace gtb::driver {

namespace {
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_child{0};

void on_signal(int sig) {
  g_signal.store(sig);
  const pid_t c = g_child.load();
  if (c > 0) ::kill(c, sig);
}
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

std::string ProcessResult::describe() const {
  if (!error.empty()) return error;
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::string& path, const std::vector<std::string>& args, const std::string& log_path,
                          const std::function<void()>& tick) {
  ProcessResult res;
  if (interrupted()) {  // a Ctrl-C that arrived between two children starts no new one
    res.error = "interrupted";
    return res;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> all{path};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    res.error = "cannot start " + path + ": " + std::strerror(rc);
    return res;
  }
  g_child.store(pid);
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, tick ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      res.error = std::string("waitpid: ") + std::strerror(errno);
      g_child.store(0);
      return res;
    }
    if (w == 0) {
      tick();
      ::usleep(200 * 1000);
    }
  }
  g_child.store(0);
  if (WIFSIGNALED(status))
    res.signal = WTERMSIG(status);
  else
    res.exit_code = WEXITSTATUS(status);
  return res;
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
