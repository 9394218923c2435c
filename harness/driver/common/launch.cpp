// The mpirun command for a family run as ranks; kept apart from the run loop so it can be tested.
#include "harness/driver/common/launch.h"

#include <CLI/CLI.hpp>

#include "harness/driver/common/families.h"
#include "harness/driver/common/health.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gtb::driver {

namespace {
// Whether `family` is in the comma-separated list the environment variable `env_name` sets (when set
// and not empty: it replaces the built-in list, as GTB_FAMILIES does the family list) or in `built_in`.
bool listed(const std::string& family, const char* env_name, const char* built_in) {
  const char* env = std::getenv(env_name);
  std::stringstream ss(env && *env ? env : built_in);
  std::string f;
  while (std::getline(ss, f, ','))
    if (f == family) return true;
  return false;
}
}  // namespace

bool runs_as_ranks(const std::string& family) { return listed(family, "GTB_RANK_FAMILIES", GTB_RANK_FAMILY_LIST); }

bool declares_precheck(const std::string& family) {
  return listed(family, "GTB_PRECHECK_FAMILIES", GTB_PRECHECK_FAMILY_LIST);
}

std::optional<std::string> find_mpirun() {
  if (const char* e = std::getenv("GTB_MPIRUN"); e && *e) return std::string(e);
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const std::string p = dir + "/mpirun";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

std::string validate(const LaunchRequest& r) {
  if (r.ranks < 1) return "--ranks must be at least 1 (got " + std::to_string(r.ranks) + ")";
  if (!r.hostfile.empty()) {
    struct stat st{};
    if (::stat(r.hostfile.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return "--hostfile " + r.hostfile + " does not exist or is not a file";
    std::ifstream in(r.hostfile);
    if (!in) return "--hostfile " + r.hostfile + " cannot be read";
  }
  return "";
}

LaunchCommand build_command(const LaunchRequest& r, const std::string& binary, const std::vector<std::string>& args) {
  LaunchCommand c;
  c.program = r.mpirun;
  c.args = {"-np", std::to_string(r.ranks)};
  if (!r.hostfile.empty()) {
    c.args.insert(c.args.end(), {"--hostfile", r.hostfile});
  } else {
    if (r.ranks > r.local_cores) c.args.push_back("--oversubscribe");
    c.args.insert(c.args.end(), {"--mca", "btl", "self,vader"});
  }
  if (r.as_root) {
    c.args.push_back("--allow-run-as-root");
    c.env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  }
  c.args.push_back(binary);
  c.args.insert(c.args.end(), args.begin(), args.end());
  return c;
}

}  // namespace gtb::driver

namespace gtb::driver {

int default_ranks(std::optional<int> visible_gpus) {
  return visible_gpus && *visible_gpus >= 2 ? *visible_gpus : kDefaultRanks;
}

std::optional<int> visible_gpus_for_ranks() {
  if (const char* env = std::getenv("GTB_VISIBLE_GPUS"); env && *env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end && *end == '\0' && n >= 0 && n <= 4096) return int(n);
    return std::nullopt;  // unreadable: as if unknown
  }
  return health::visible_gpu_count();
}

void add_launch_options(CLI::App& app, LaunchRequest& r) {
  r.ranks = kDefaultRanks;
  app.add_option("--ranks", r.ranks,
                 "MPI ranks for families that run as ranks (RANKS in their gtb_add_family); 1: no mpirun "
                 "(default: one per visible GPU where there are two or more, else 2)")
      ->each([&r](const std::string&) { r.ranks_given = true; });
  app.add_option("--hostfile", r.hostfile, "mpirun hostfile, for ranks on several machines");
}

std::string prepare_launch(LaunchRequest& r) {
  if (!r.ranks_given) r.ranks = default_ranks(visible_gpus_for_ranks());
  if (std::string why = validate(r); !why.empty()) return why;
  r.mpirun = find_mpirun().value_or("");
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  r.local_cores = cores > 0 ? int(cores) : 1;
  r.as_root = ::geteuid() == 0;
  return "";
}

ProcessResult run_family(const std::string& family, const std::string& binary, const LaunchRequest& launch,
                         const std::vector<std::string>& args, const std::string& log_path,
                         const std::function<void()>& tick, const ProcessLimits& limits) {
  if (!runs_as_ranks(family) || launch.ranks == 1) return run_process(binary, args, log_path, tick, limits);
  ProcessLimits with = limits;
  if (launch.mpirun.empty()) {
    with.env.emplace_back("GTB_LAUNCH_SKIP", "mpirun not found on PATH: cannot start " + std::to_string(launch.ranks) +
                                                 " ranks (install openmpi-bin, or run with --ranks 1)");
    return run_process(binary, args, log_path, tick, with);
  }
  const LaunchCommand cmd = build_command(launch, binary, args);
  with.env.insert(with.env.end(), cmd.env.begin(), cmd.env.end());
  ProcessResult pr = run_process(cmd.program, cmd.args, log_path, tick, with);
  if (!pr.ok() && pr.error.empty() && pr.signal == 0 && !pr.timed_out)
    pr.error = cmd.program + " -np " + std::to_string(launch.ranks) + " " + pr.describe() +
               " (see the log below; mpirun's own errors appear there)";
  return pr;
}

}  // namespace gtb::driver
