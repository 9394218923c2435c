// Runs one case in a child process of the same family binary and takes over its record.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "gtb/gtb.h"
#include "harness/document/results.h"
#include "harness/runtime/process.h"

namespace gtb {

namespace {

// Google Benchmark's filter is a regular expression over the benchmark name, which is the record id
// followed by "/iterations:1/manual_time": it must match that id and no other.
std::string exact_regex(const std::string& id) {
  std::string out = "^";
  for (char ch : id) {
    if (std::strchr(".[]{}()*+?^$|\\", ch)) out += '\\';
    out += ch;
  }
  return out + "(/|$)";
}

}  // namespace

void run_case_in_child(State& st, const std::vector<std::string>& unset, const std::vector<std::string>& set) {
  const std::string id = st.record().id;
  ProcessSpec spec;
  spec.unset_env = unset;
  for (const auto& s : set) {
    const auto eq = s.find('=');
    spec.set_env.emplace_back(s.substr(0, eq), eq == std::string::npos ? "" : s.substr(eq + 1));
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string out = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gtb-case-XXXXXX";
  const int fd = ::mkstemp(out.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary results file in " + out);
  ::close(fd);
  char budget[64];
  std::snprintf(budget, sizeof budget, "--gtb_budget=%.17g", st.rule().budget_seconds);
  spec.program = "/proc/self/exe";
  spec.args = {std::string("--gtb_suite=") + to_string(st.suite()), budget, "--benchmark_filter=" + exact_regex(id),
               "--gtb_out=" + out};
  // Its console table would interleave with ours; the record comes back through the file.
  spec.out = Redirect::null();
  const ProcessResult pr = run_process(spec);
  if (!pr.started()) {
    ::unlink(out.c_str());
    throw std::runtime_error(std::string("cannot start a child process for the case: ") +
                             (pr.error_number ? std::strerror(pr.error_number) : pr.error.c_str()));
  }
  if (pr.signal != 0 || pr.exit_code != 0) {
    ::unlink(out.c_str());
    throw std::runtime_error("the child process for the case " +
                             (pr.signal ? "died with signal " + std::to_string(pr.signal)
                                        : "exited with status " + std::to_string(pr.exit_code)));
  }
  std::vector<Record> recs;
  try {
    recs = records_of(load_document(out));
  } catch (const std::exception& e) {
    ::unlink(out.c_str());
    throw std::runtime_error(std::string("the child process wrote unreadable results: ") + e.what());
  }
  ::unlink(out.c_str());
  for (const Record& r : recs)
    if (r.id == id) {
      st.record() = r;
      return;
    }
  throw std::runtime_error("the child process wrote no record for " + id);
}

}  // namespace gtb
