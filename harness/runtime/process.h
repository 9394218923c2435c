// Child processes: the one helper that starts a program, sets its environment and output, stops it
// at a time limit or on an interrupt, and decodes how it ended. Used by the driver (family binaries,
// the plotting script), by a case that runs in a child of its own family binary, and by the OpenBLAS
// core probe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gtb {

// Where one of the child's standard streams goes.
struct Redirect {
  enum class Kind {
    inherit,    // this process's own stream
    null,       // /dev/null
    append,     // the file `path`, created if missing, appended to
    truncate,   // the file `path`, created if missing, emptied first
    to_stdout,  // (stderr only) wherever the child's stdout goes
    capture,    // (stdout only) read back into ProcessResult::output
  };
  Kind kind = Kind::inherit;
  std::string path;
  static Redirect inherit() { return {}; }
  static Redirect null() { return {Kind::null, ""}; }
  static Redirect append(std::string p) { return {Kind::append, std::move(p)}; }
  static Redirect truncate(std::string p) { return {Kind::truncate, std::move(p)}; }
  static Redirect to_stdout() { return {Kind::to_stdout, ""}; }
  static Redirect capture() { return {Kind::capture, ""}; }
};

struct ProcessSpec {
  std::string program;             // a path; with search_path a name looked up in PATH too
  std::vector<std::string> args;   // the arguments after argv[0] (which is `program`)
  bool search_path = false;
  // The child's environment is this process's, less `unset_env`, with `set_env` set over it.
  std::vector<std::pair<std::string, std::string>> set_env;
  std::vector<std::string> unset_env;
  Redirect in, out, err;           // stdin accepts inherit and null
  // A process group of its own, led by the child: what gets signalled is then the group, so
  // mpirun's ranks and any grandchild go with it, and a member that outlives the child is stopped too.
  bool own_group = false;
  double timeout_s = 0;  // wall-clock limit from the start; 0: none. Past it the child gets SIGTERM.
  // After SIGTERM (a timeout) or a forwarded interrupt, how long the child has before SIGKILL.
  double grace_s = 5;
  // Polled while the child runs: a signal number to forward to the child once (0: none so far).
  std::function<int()> interrupt;
  std::function<void()> tick;  // called about every 200 ms while the child runs
};

struct ProcessResult {
  int exit_code = -1;      // valid when signal == 0 and error is empty
  int signal = 0;          // the signal that killed the child, 0 if it exited
  std::string error;       // set when the child could not be started or waited for
  int error_number = 0;    // the errno behind `error`
  bool timed_out = false;  // stopped at ProcessSpec::timeout_s, whatever its exit status says
  double limit_s = 0;      // the limit it ran under when it timed out
  std::string output;      // the child's stdout, with Redirect::capture
  bool started() const { return error_number == 0 && error.empty(); }
  bool ok() const { return error.empty() && !timed_out && signal == 0 && exit_code == 0; }
  // "exited with code 3", "killed by signal 11 (Segmentation fault)", "timed out after 600 s"
  std::string describe() const;
};

// Starts the child and waits for it. Never throws for the child's failures: a program that cannot
// be started gives error "cannot start PROGRAM: REASON" (a missing one: "No such file or directory").
// An invalid spec (a redirect kind on a stream that does not take it) throws std::invalid_argument.
ProcessResult run_process(const ProcessSpec& spec);

// A child that serves requests for as long as this process needs it: its stdin and stdout are one
// socket to this process, and each exchange is a line each way (a worker in another language that
// does work this process asks for). Started with the spec's program, arguments, environment, stderr
// and process group; its `in` and `out` must be inherit (they become the socket), and its timeout,
// interrupt and tick do not apply (each receive has its own limit). Writing to a child that has
// gone is an error return, never a SIGPIPE.
class LineChild {
 public:
  // Starts the child; started() and error() say whether it did. Throws std::invalid_argument for
  // a spec whose stdin or stdout is redirected.
  explicit LineChild(const ProcessSpec& spec);
  ~LineChild();  // finish()
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  // Sends `line` and a newline. False when the child is gone (or never started).
  bool send(const std::string& line);
  // The next line the child writes, without its newline. nullopt when the child closed its end
  // (exited) or `timeout_s` passed first (then timed_out() is true).
  std::optional<std::string> receive(double timeout_s);
  bool timed_out() const { return timed_out_; }
  // Closes the socket and waits up to `grace_s` for the child to exit, then SIGTERM and, after as
  // long again, SIGKILL. How it ended (the second call returns the first's result).
  ProcessResult finish(double grace_s = 5);

 private:
  int pid_ = -1;
  int fd_ = -1;
  bool own_group_ = false, timed_out_ = false, finished_ = false;
  std::string error_, buffer_;
  ProcessResult result_;
};

// This process's environment less `unset`, with `set` set over it, as "NAME=value" strings.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& set,
                                           const std::vector<std::string>& unset = {});

}  // namespace gtb
