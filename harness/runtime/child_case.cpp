// Runs one case in a child process of the same family binary and takes over its record.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "harness/runtime/gtb.h"
#include "harness/document/results.h"

extern char** environ;

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
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    bool drop = false;
    for (const auto& u : unset) drop = drop || name == u;
    for (const auto& s : set) drop = drop || name == s.substr(0, s.find('='));
    if (!drop) envs.push_back(kv);
  }
  for (const auto& s : set) envs.push_back(s);

  const char* tmpdir = std::getenv("TMPDIR");
  std::string out = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gtb-case-XXXXXX";
  const int fd = ::mkstemp(out.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary results file in " + out);
  ::close(fd);
  char budget[64];
  std::snprintf(budget, sizeof budget, "--gtb_budget=%.17g", st.rule().budget_seconds);
  std::vector<std::string> args = {"/proc/self/exe", std::string("--gtb_suite=") + to_string(st.suite()), budget,
                                   "--benchmark_filter=" + exact_regex(id), "--gtb_out=" + out};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // Its console table would interleave with ours; the record comes back through the file.
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    ::unlink(out.c_str());
    throw std::runtime_error(std::string("cannot start a child process for the case: ") + std::strerror(rc));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(out.c_str());
    throw std::runtime_error("the child process for the case " +
                             (WIFSIGNALED(status) ? "died with signal " + std::to_string(WTERMSIG(status))
                                                  : "exited with status " + std::to_string(WEXITSTATUS(status))));
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
