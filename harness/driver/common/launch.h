// Starting a family as several MPI ranks: the mpirun command line, its environment, and its checks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace gtb::driver {

struct LaunchRequest {
  int ranks = 1;
  bool ranks_given = false;   // --ranks on the command line; otherwise default_ranks() decides
  std::string hostfile;       // empty: every rank on this machine
  std::string mpirun;         // resolved mpirun path (find_mpirun)
  int local_cores = 1;        // online cores of this machine
  bool as_root = false;
};

struct LaunchCommand {
  std::string program;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // set in the driver before spawning
};

// Families whose binary runs as MPI ranks (`gtb run --ranks N` applies to them only): those declaring
// RANKS in their gtb_add_family; GTB_RANK_FAMILIES (comma-separated) replaces the list.
bool runs_as_ranks(const std::string& family);
// Families whose binary judges input only a run can see: those declaring PRECHECK in their
// gtb_add_family; GTB_PRECHECK_FAMILIES (comma-separated) replaces the list.
bool declares_precheck(const std::string& family);
// Default rank count when --ranks is not given and the machine has fewer than two visible GPUs: two,
// so the quick suite exercises a real all-reduce.
inline constexpr int kDefaultRanks = 2;
// The rank count when --ranks is not given: one rank per visible GPU on a machine with two or more
// (each rank drives its own GPU), else kDefaultRanks. `visible_gpus`: nothing when unknown.
int default_ranks(std::optional<int> visible_gpus);
// The visible GPU count default_ranks() is given: GTB_VISIBLE_GPUS=N when set (tests inject a
// machine), else what the CUDA driver shows this process; nothing when neither says.
std::optional<int> visible_gpus_for_ranks();

// mpirun's path: $GTB_MPIRUN if set (an explicit choice, used as is), else the first mpirun on PATH.
std::optional<std::string> find_mpirun();

// What is wrong with a request before anything runs ("" when nothing): ranks < 1, a hostfile that
// does not exist or cannot be read.
std::string validate(const LaunchRequest& r);

// `mpirun -np N [--hostfile F] [--oversubscribe] [loopback transport] binary args...` with Open MPI's
// allow-run-as-root variables when root. One machine (no hostfile) keeps traffic on shared memory
// (where a container forbids its single-copy mechanism, OMPI_MCA_btl_vader_single_copy_mechanism=none
// in the environment turns it off; it is ~10x slower, so it is not the default).
LaunchCommand build_command(const LaunchRequest& r, const std::string& binary, const std::vector<std::string>& args);

}  // namespace gtb::driver

#include "harness/driver/common/process.h"

namespace gtb::driver {

// --ranks N (default kDefaultRanks) and --hostfile FILE on `gtb run`.
void add_launch_options(CLI::App& app, LaunchRequest& r);
// Validates the request and fills in mpirun, the core count and root; returns the error text or "".
std::string prepare_launch(LaunchRequest& r);

// Runs a family's binary: under mpirun when it runs as ranks and more than one was asked for. Without
// mpirun it runs as one process told why (GTB_LAUNCH_SKIP), so its records say so instead of
// passing for a multi-rank run.
// `binary` is the family's gtb-<family> (gtb ab runs two builds' binaries of one family). `limits`
// (time limit, environment) apply to the whole launch: mpirun and its ranks are one process group.
ProcessResult run_family(const std::string& family, const std::string& binary, const LaunchRequest& launch,
                         const std::vector<std::string>& args, const std::string& log_path,
                         const std::function<void()>& tick, const ProcessLimits& limits = {});

}  // namespace gtb::driver
