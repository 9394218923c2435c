// The framework family's side of its Python worker: finding the interpreter (GTB_PYTHON), starting
// the worker once per process, and the request/answer exchange every case goes through.
#pragma once

#include <optional>
#include <string>

#include "gtb/record.h"

namespace gtb::framework {

// The interpreter the family runs: $GTB_PYTHON, or `python3` from PATH.
std::string python_program();
// "" when python_program() starts and is a Python 3 interpreter; otherwise the message for the
// user.
std::string python_problem();
// python_problem(), then the worker script: the family's precheck (gtb run exits 2 with it and
// writes nothing).
std::string precheck();
// The worker script beside the family binary (copied there by the build).
std::string worker_script();

// The one worker of this process, started on first use and stopped at exit.
class Worker {
 public:
  static Worker& get();
  // What the worker said when it started (interpreter, torch and CUDA versions, threads...).
  const json& hello() const { return hello_; }
  // Why nothing can be measured ("GTB_PYTHON=... has no module torch (...)"), or nullopt.
  const std::optional<std::string>& unavailable() const { return unavailable_; }
  // Sends a request and returns the answer. Throws std::runtime_error when the worker has gone or
  // does not answer within `timeout_s`.
  json request(const json& req, double timeout_s = 600);
  // A folder of this process for the files gtb and the worker exchange (inputs, outputs).
  const std::string& folder() const { return folder_; }
  // The context entry: what hello() said, or why there is none.
  json context() const;
  void stop();
  ~Worker();

 private:
  Worker();
  struct Impl;
  Impl* impl_ = nullptr;
  json hello_;
  std::optional<std::string> unavailable_;
  std::string folder_;
};

}  // namespace gtb::framework
