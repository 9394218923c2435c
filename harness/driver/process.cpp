// Child processes for the driver: posix_spawn into a process group, log redirection, signal
// forwarding, the time limit.
#include "harness/driver/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>

extern char** environ;

namespace gtb::driver {

namespace {
std::atomic<int> g_signal{0};

// The wait loop forwards the signal: the children sit in process groups of their own, out of reach
// of the terminal's Ctrl-C, and only the loop knows which group is running and when to escalate.
void on_signal(int sig) { g_signal.store(sig); }

double steady_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// environ with `extra` set over it.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced = replaced || kv.rfind(k + "=", 0) == 0;
    if (!replaced) out.push_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
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
  if (timed_out) return "timed out after " + seconds_text(limit_s) + " s";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::string& path, const std::vector<std::string>& args, const std::string& log_path,
                          const std::function<void()>& tick, const ProcessLimits& limits) {
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
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by the child: its id is the child's pid
  std::vector<std::string> all{path};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child_environment(limits.env);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    res.error = "cannot start " + path + ": " + std::strerror(rc);
    return res;
  }
  const double t0 = steady_seconds();
  double next_tick = t0 + 0.2;
  double kill_at = 0;    // when what is left of the group gets SIGKILL; 0 while nobody asked it to stop
  double killed_at = 0;  // when it got SIGKILL; 0 before
  bool forwarded = false, reaped = false;
  int status = 0;
  while (true) {
    if (!reaped) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
      } else if (w < 0 && errno != EINTR) {
        res.error = std::string("waitpid: ") + std::strerror(errno);
        return res;
      }
    }
    if (reaped) {
      if (kill_at == 0) break;  // it ended by itself
      // Stopped on purpose: a member that outlives the leader (a rank, a grandchild) is stopped too.
      // The reaped leader's id stays the group's while any member is left, so it names no other.
      if (::kill(-pid, 0) != 0) break;
      // Killed members that nobody reaps (no init in a container) stay zombies: harmless, not waited for.
      if (killed_at > 0 && steady_seconds() - killed_at > 2) break;
    }
    const double now = steady_seconds();
    if (interrupted() && !forwarded) {
      ::kill(-pid, interrupt_signal());
      forwarded = true;
      if (kill_at == 0) kill_at = now + limits.grace_s;
    }
    if (limits.timeout_s > 0 && kill_at == 0 && now - t0 >= limits.timeout_s) {
      res.timed_out = true;
      res.limit_s = limits.timeout_s;
      ::kill(-pid, SIGTERM);
      kill_at = now + limits.grace_s;
    }
    if (kill_at > 0 && killed_at == 0 && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      killed_at = now;
    }
    if (tick && !reaped && now >= next_tick) {
      tick();
      next_tick = now + 0.2;
    }
    ::usleep(20 * 1000);
  }
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
