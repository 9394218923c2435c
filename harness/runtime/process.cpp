// Child processes: posix_spawn with an environment and redirections, optionally into a process group
// of its own, a time limit and interrupt forwarding, and the decoded exit status.
#include "harness/runtime/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

extern char** environ;

namespace gtb {

namespace {

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

// Adds the file actions of one redirect of stream `fd`; false when the kind does not apply to it.
bool add_redirect(posix_spawn_file_actions_t& fa, int fd, const Redirect& r, int pipe_write) {
  switch (r.kind) {
    case Redirect::Kind::inherit: return true;
    case Redirect::Kind::null:
      posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
      return true;
    case Redirect::Kind::append:
    case Redirect::Kind::truncate:
      if (fd == STDIN_FILENO || r.path.empty()) return false;
      posix_spawn_file_actions_addopen(
          &fa, fd, r.path.c_str(), O_WRONLY | O_CREAT | (r.kind == Redirect::Kind::append ? O_APPEND : O_TRUNC), 0644);
      return true;
    case Redirect::Kind::to_stdout:
      if (fd != STDERR_FILENO) return false;
      posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
      return true;
    case Redirect::Kind::capture:
      if (fd != STDOUT_FILENO || pipe_write < 0) return false;
      posix_spawn_file_actions_adddup2(&fa, pipe_write, STDOUT_FILENO);
      return true;
  }
  return false;
}

// Reads what the pipe holds now (non-blocking); false at its end.
bool drain(int fd, std::string& out) {
  char buf[4096];
  while (true) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got > 0) {
      out.append(buf, std::size_t(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

// Starts spec.program with its arguments, environment and group; the file actions are the caller's.
// Returns posix_spawn's error number (0: started).
int spawn(const ProcessSpec& spec, const posix_spawn_file_actions_t& fa, pid_t& pid) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (spec.own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);  // a group led by the child: its id is the child's pid
  }
  std::vector<std::string> all{spec.program};
  all.insert(all.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child_environment(spec.set_env, spec.unset_env);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = spec.search_path
                     ? ::posix_spawnp(&pid, spec.program.c_str(), &fa, &attr, argv.data(), envp.data())
                     : ::posix_spawn(&pid, spec.program.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& set,
                                           const std::vector<std::string>& unset) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    bool drop = false;
    for (const auto& u : unset) drop = drop || name == u;
    for (const auto& [k, v] : set) drop = drop || name == k;
    if (!drop) out.push_back(kv);
  }
  for (const auto& [k, v] : set) out.push_back(k + "=" + v);
  return out;
}

std::string ProcessResult::describe() const {
  if (!error.empty()) return error;
  if (timed_out) return "timed out after " + seconds_text(limit_s) + " s";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

namespace {

// Starts spec.program with its redirections. A captured stdout is read from `read_fd` (non-blocking;
// -1 without capture). False, with res.error set, when the child could not be started.
bool start_child(const ProcessSpec& spec, ProcessResult& res, pid_t& pid, int& read_fd) {
  const bool capture = spec.out.kind == Redirect::Kind::capture;
  int fds[2] = {-1, -1};
  if (capture && ::pipe(fds) != 0) {
    res.error_number = errno;
    res.error = std::string("cannot create a pipe for ") + spec.program + ": " + std::strerror(errno);
    return false;
  }
  auto close_pipe = [&] {
    for (int& fd : fds)
      if (fd >= 0) ::close(fd), fd = -1;
  };
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const bool valid = add_redirect(fa, STDIN_FILENO, spec.in, -1) &&
                     (spec.in.kind == Redirect::Kind::inherit || spec.in.kind == Redirect::Kind::null) &&
                     add_redirect(fa, STDOUT_FILENO, spec.out, fds[1]) && add_redirect(fa, STDERR_FILENO, spec.err, -1);
  if (!valid) {
    posix_spawn_file_actions_destroy(&fa);
    close_pipe();
    throw std::invalid_argument("run_process: a redirect that its stream does not take (" + spec.program + ")");
  }
  if (capture) posix_spawn_file_actions_addclose(&fa, fds[0]);
  if (capture) posix_spawn_file_actions_addclose(&fa, fds[1]);
  const int rc = spawn(spec, fa, pid);
  posix_spawn_file_actions_destroy(&fa);
  if (capture) {
    ::close(fds[1]);
    fds[1] = -1;
  }
  if (rc != 0) {
    close_pipe();
    res.error_number = rc;
    res.error = "cannot start " + spec.program + ": " + std::strerror(rc);
    return false;
  }
  if (capture) ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  read_fd = fds[0];
  return true;
}

// The stopping of a running child: an interrupt forwarded once, the time limit (SIGTERM), SIGKILL
// after the grace period, and the caller's tick every 0.2 s.
struct ChildWatch {
  const ProcessSpec& spec;
  pid_t pid;
  pid_t target;  // what gets signalled: the whole group, or the child alone
  double t0 = steady_seconds();
  double next_tick = t0 + 0.2;
  double kill_at = 0;    // when what is left gets SIGKILL; 0 while nobody asked it to stop
  double killed_at = 0;  // when it got SIGKILL; 0 before
  bool forwarded = false;

  ChildWatch(const ProcessSpec& s, pid_t p) : spec(s), pid(p), target(s.own_group ? -p : p) {}

  // After the leader is reaped: whether the wait is over.
  bool over_after_reap() const {
    if (kill_at == 0 || !spec.own_group) return true;  // it ended by itself, or it was alone
    // Stopped on purpose: a member that outlives the leader (a rank, a grandchild) is stopped too.
    // The reaped leader's id stays the group's while any member is left, so it names no other.
    if (::kill(-pid, 0) != 0) return true;
    // Killed members that nobody reaps (no init in a container) stay zombies: harmless, not waited for.
    return killed_at > 0 && steady_seconds() - killed_at > 2;
  }

  void step(bool reaped, ProcessResult& res) {
    const double now = steady_seconds();
    if (spec.interrupt && !forwarded) {
      if (const int sig = spec.interrupt(); sig != 0) {
        ::kill(target, sig);
        forwarded = true;
        if (kill_at == 0) kill_at = now + spec.grace_s;
      }
    }
    if (spec.timeout_s > 0 && kill_at == 0 && now - t0 >= spec.timeout_s) {
      res.timed_out = true;
      res.limit_s = spec.timeout_s;
      ::kill(target, SIGTERM);
      kill_at = now + spec.grace_s;
    }
    if (kill_at > 0 && killed_at == 0 && now >= kill_at) {
      ::kill(target, SIGKILL);
      killed_at = now;
    }
    if (spec.tick && !reaped && now >= next_tick) {
      spec.tick();
      next_tick = now + 0.2;
    }
  }
};

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.program.empty()) throw std::invalid_argument("run_process: no program given");
  ProcessResult res;
  pid_t pid = 0;
  int out_fd = -1;  // the captured stdout's read end
  if (!start_child(spec, res, pid, out_fd)) return res;
  auto close_out = [&] {
    if (out_fd >= 0) ::close(out_fd), out_fd = -1;
  };
  // A child nobody watches but the wait itself is polled more often: it usually ends soon.
  const useconds_t pause_us = spec.tick || spec.interrupt || spec.timeout_s > 0 ? 20 * 1000 : 2 * 1000;
  ChildWatch watch(spec, pid);
  bool reaped = false;
  int status = 0;
  while (true) {
    if (out_fd >= 0 && !drain(out_fd, res.output)) close_out();
    if (!reaped) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
      } else if (w < 0 && errno != EINTR) {
        res.error_number = errno;
        res.error = std::string("waitpid: ") + std::strerror(errno);
        close_out();
        return res;
      }
    }
    if (reaped && watch.over_after_reap()) break;
    watch.step(reaped, res);
    ::usleep(pause_us);
  }
  if (out_fd >= 0) drain(out_fd, res.output);  // what the child wrote before it ended
  close_out();
  if (WIFSIGNALED(status))
    res.signal = WTERMSIG(status);
  else
    res.exit_code = WEXITSTATUS(status);
  return res;
}

LineChild::LineChild(const ProcessSpec& spec) {
  if (spec.program.empty()) throw std::invalid_argument("LineChild: no program given");
  if (spec.in.kind != Redirect::Kind::inherit || spec.out.kind != Redirect::Kind::inherit)
    throw std::invalid_argument("LineChild: stdin and stdout are the socket (" + spec.program + ")");
  int sv[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error_ = std::string("cannot create a socket for ") + spec.program + ": " + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // dup2 clears close-on-exec on the copies; both originals close at exec.
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
  if (!add_redirect(fa, STDERR_FILENO, spec.err, -1)) {
    posix_spawn_file_actions_destroy(&fa);
    ::close(sv[0]);
    ::close(sv[1]);
    throw std::invalid_argument("LineChild: a stderr redirect it does not take (" + spec.program + ")");
  }
  pid_t pid = 0;
  const int rc = spawn(spec, fa, pid);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    error_ = "cannot start " + spec.program + ": " + std::strerror(rc);
    result_.error = error_;
    result_.error_number = rc;
    finished_ = true;
    return;
  }
  pid_ = pid;
  fd_ = sv[0];
  own_group_ = spec.own_group;
}

LineChild::~LineChild() { finish(); }

bool LineChild::send(const std::string& line) {
  if (fd_ < 0) return false;
  const std::string msg = line + "\n";
  std::size_t done = 0;
  while (done < msg.size()) {
    const ssize_t n = ::send(fd_, msg.data() + done, msg.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += std::size_t(n);
  }
  return true;
}

std::optional<std::string> LineChild::receive(double timeout_s) {
  timed_out_ = false;
  const double until = steady_seconds() + timeout_s;
  while (true) {
    if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (fd_ < 0) return std::nullopt;
    const double left = until - steady_seconds();
    if (left <= 0) {
      timed_out_ = true;
      return std::nullopt;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buf[65536];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {  // the child closed its end: what it wrote before is still returned above
      ::close(fd_);
      fd_ = -1;
      if (buffer_.empty()) return std::nullopt;
      std::string rest;
      rest.swap(buffer_);
      return rest;
    }
    buffer_.append(buf, std::size_t(got));
  }
}

ProcessResult LineChild::finish(double grace_s) {
  if (finished_) return result_;
  finished_ = true;
  if (fd_ >= 0) ::close(fd_), fd_ = -1;  // its stdin ends: a worker reading requests exits
  const pid_t target = own_group_ ? -pid_ : pid_;
  const double t0 = steady_seconds();
  int status = 0, stage = 0;  // 0: waiting, 1: after SIGTERM, 2: after SIGKILL
  while (true) {
    const pid_t w = ::waitpid(pid_, &status, WNOHANG);
    if (w == pid_) break;
    if (w < 0 && errno != EINTR) {
      result_.error_number = errno;
      result_.error = std::string("waitpid: ") + std::strerror(errno);
      return result_;
    }
    const double waited = steady_seconds() - t0;
    if (stage == 0 && waited >= grace_s) {
      ::kill(target, SIGTERM);
      result_.timed_out = true;
      result_.limit_s = grace_s;
      stage = 1;
    } else if (stage == 1 && waited >= 2 * grace_s) {
      ::kill(target, SIGKILL);
      stage = 2;
    }
    ::usleep(2000);
  }
  if (WIFSIGNALED(status))
    result_.signal = WTERMSIG(status);
  else
    result_.exit_code = WEXITSTATUS(status);
  return result_;
}

}  // namespace gtb
