// The framework family's Python worker: the interpreter check, the worker's start and stop, and the
// line-per-request exchange over the one process helper (gtb/process.h).
#include "bench/framework/worker.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "gtb/process.h"

namespace gtb::framework {

namespace fs = std::filesystem;

std::string python_program() {
  const char* p = std::getenv("GTB_PYTHON");
  return p && *p ? p : "python3";
}

namespace {

std::string label() { return "GTB_PYTHON=" + python_program(); }

std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string first_line(const std::string& s) {
  const std::string line = s.substr(0, s.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

}  // namespace

std::string worker_script() { return (fs::path(self_dir()) / "framework-worker" / "worker.py").string(); }

std::string python_problem() {
  ProcessSpec spec;
  spec.program = python_program();
  spec.search_path = true;
  // A Python 3.7 or later prints the marker; anything else (another program, Python 2) does not.
  spec.args = {"-c", "import sys; sys.exit(3) if sys.version_info < (3, 7) else sys.stdout.write('gtb-python ' + sys.version.split()[0])"};
  spec.in = Redirect::null();
  spec.out = Redirect::capture();
  spec.err = Redirect::null();
  spec.timeout_s = 60;
  const ProcessResult r = run_process(spec);
  if (!r.started()) return label() + ": " + r.error;
  if (!r.ok() || r.output.rfind("gtb-python ", 0) != 0)
    return label() + " is not a Python 3.7+ interpreter (it " + r.describe() +
           (r.output.empty() ? " and printed nothing" : ", printing '" + first_line(r.output) + "'") + ")";
  return "";
}

std::string precheck() {
  if (std::string why = python_problem(); !why.empty()) return why;
  std::error_code ec;
  if (!fs::exists(worker_script(), ec)) return "the framework worker " + worker_script() + " is missing (rebuild gtb-framework)";
  return "";
}

struct Worker::Impl {
  std::unique_ptr<LineChild> child;
};

Worker& Worker::get() {
  static Worker w;
  return w;
}

Worker::Worker() : impl_(new Impl) {
  std::string tmpl = (fs::temp_directory_path() / "gtb-framework-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error(std::string("cannot create a temporary folder: ") + std::strerror(errno));
  folder_ = tmpl;
  if (const std::string why = precheck(); !why.empty()) {
    unavailable_ = why;
    return;
  }
  ProcessSpec spec;
  spec.program = python_program();
  spec.search_path = true;
  // All cores, as gtb's own CPU step uses: torch's default may be fewer.
  const unsigned cores = std::thread::hardware_concurrency();
  spec.args = {"-u", worker_script(), "--threads", std::to_string(cores ? cores : 1)};
  spec.err = Redirect::inherit();  // the family's log
  impl_->child = std::make_unique<LineChild>(spec);
  if (!impl_->child->started()) {
    unavailable_ = label() + ": " + impl_->child->error();
    return;
  }
  // Importing torch (and initialising CUDA) takes seconds on a cold machine.
  const auto line = impl_->child->receive(300);
  json h;
  try {
    if (line) h = json::parse(*line);
  } catch (const std::exception&) {
  }
  if (!h.is_object() || !h.contains("hello")) {
    const ProcessResult r = impl_->child->finish(2);
    unavailable_ = label() + ": the framework worker did not start (" +
                   (line ? "it said '" + first_line(*line) + "'" : std::string("it ") + r.describe()) + "; see the log)";
    return;
  }
  hello_ = h["hello"];
  if (hello_.value("torch", json()).is_null())
    unavailable_ = label() + " has no module torch (" + hello_.value("torch_error", std::string("import failed")) + ")";
}

Worker::~Worker() {
  stop();
  std::error_code ec;
  if (!folder_.empty()) fs::remove_all(folder_, ec);
  delete impl_;
}

void Worker::stop() {
  if (!impl_->child) return;
  impl_->child->send(json{{"op", "quit"}}.dump());
  impl_->child->finish(5);
  impl_->child.reset();
}

json Worker::request(const json& req, double timeout_s) {
  if (!impl_->child) throw std::runtime_error("the framework worker is not running" + (unavailable_ ? ": " + *unavailable_ : ""));
  if (!impl_->child->send(req.dump())) throw std::runtime_error("the framework worker has gone (see the log)");
  const auto line = impl_->child->receive(timeout_s);
  if (!line) {
    const bool late = impl_->child->timed_out();
    stop();
    throw std::runtime_error(late ? "the framework worker did not answer within " + std::to_string(int(timeout_s)) + " s"
                                  : "the framework worker ended (see the log)");
  }
  try {
    return json::parse(*line);
  } catch (const std::exception&) {
    throw std::runtime_error("the framework worker answered '" + first_line(*line) + "'");
  }
}

json Worker::context() const {
  json c = hello_.is_object() ? hello_ : json::object();
  c.erase("pid");
  c["interpreter"] = python_program();
  if (unavailable_) c["unavailable"] = *unavailable_;
  return c;
}

}  // namespace gtb::framework
