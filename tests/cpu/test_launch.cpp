// The mpirun command `gtb run --ranks N` builds: ranks, oversubscription, root, hostfile, transport.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "harness/driver/common/launch.h"

using gtb::driver::build_command;
using gtb::driver::LaunchRequest;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
std::string after(const std::vector<std::string>& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() || it + 1 == v.end() ? "" : *(it + 1);
}
}  // namespace

TEST(Launch, TwoRanksOnOneMachine) {
  LaunchRequest r;
  r.ranks = 2;
  r.mpirun = "/usr/bin/mpirun";
  r.local_cores = 2;
  const auto c = build_command(r, "/x/gtb-parallel", {"--gtb_out=o.json", "--gtb_suite=quick"});
  EXPECT_EQ(c.program, "/usr/bin/mpirun");
  EXPECT_EQ(after(c.args, "-np"), "2");
  EXPECT_FALSE(has(c.args, "--oversubscribe"));
  EXPECT_FALSE(has(c.args, "--allow-run-as-root"));
  EXPECT_TRUE(c.env.empty());
  EXPECT_EQ(after(c.args, "btl"), "self,vader");  // shared memory only on one machine
  // The binary comes after mpirun's options, its own arguments after it, in order.
  ASSERT_GE(c.args.size(), 3u);
  EXPECT_EQ(c.args[c.args.size() - 3], "/x/gtb-parallel");
  EXPECT_EQ(c.args.back(), "--gtb_suite=quick");
}

TEST(Launch, OversubscribesOnlyBeyondTheCores) {
  LaunchRequest r;
  r.mpirun = "mpirun";
  r.local_cores = 2;
  r.ranks = 3;
  EXPECT_TRUE(has(build_command(r, "b", {}).args, "--oversubscribe"));
  r.ranks = 2;
  EXPECT_FALSE(has(build_command(r, "b", {}).args, "--oversubscribe"));
}

TEST(Launch, RootGetsOpenMpisVariables) {
  LaunchRequest r;
  r.ranks = 2;
  r.mpirun = "mpirun";
  r.as_root = true;
  const auto c = build_command(r, "b", {});
  EXPECT_TRUE(has(c.args, "--allow-run-as-root"));
  std::vector<std::pair<std::string, std::string>> want = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                                                           {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  EXPECT_EQ(c.env, want);
}

TEST(Launch, HostfilePassesThroughWithoutLocalTransport) {
  LaunchRequest r;
  r.ranks = 16;
  r.mpirun = "mpirun";
  r.local_cores = 2;
  r.hostfile = "hosts.txt";
  const auto c = build_command(r, "b", {});
  EXPECT_EQ(after(c.args, "--hostfile"), "hosts.txt");
  EXPECT_FALSE(has(c.args, "--oversubscribe"));  // the hostfile's slots decide
  EXPECT_FALSE(has(c.args, "btl"));              // across machines Open MPI picks the network
}

TEST(Launch, ValidateRejectsBadRequests) {
  LaunchRequest r;
  r.ranks = 0;
  EXPECT_NE(gtb::driver::validate(r).find("--ranks must be at least 1"), std::string::npos);
  r.ranks = 2;
  r.hostfile = "/nonexistent/hosts";
  EXPECT_NE(gtb::driver::validate(r).find("does not exist"), std::string::npos);
  const std::string tmp = testing::TempDir() + "gtb_hosts_test";
  std::ofstream(tmp) << "localhost slots=2\n";
  r.hostfile = tmp;
  EXPECT_EQ(gtb::driver::validate(r), "");
  std::remove(tmp.c_str());
}

TEST(Launch, MpirunFromTheEnvironmentWins) {
  ::setenv("GTB_MPIRUN", "/opt/x/mpirun", 1);
  EXPECT_EQ(gtb::driver::find_mpirun().value_or(""), "/opt/x/mpirun");
  ::unsetenv("GTB_MPIRUN");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", "/nonexistent-dir", 1);
  EXPECT_FALSE(gtb::driver::find_mpirun().has_value());
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(gtb::driver::runs_as_ranks("parallel"));
  EXPECT_FALSE(gtb::driver::runs_as_ranks("train"));
}

// A family runs as ranks when it declares so (RANKS in gtb_add_family); GTB_RANK_FAMILIES replaces
// the declared list, and only whole names match.
TEST(Launch, RanksAreWhatFamiliesDeclare) {
  ::setenv("GTB_RANK_FAMILIES", "alpha,beta", 1);
  EXPECT_TRUE(gtb::driver::runs_as_ranks("alpha"));
  EXPECT_TRUE(gtb::driver::runs_as_ranks("beta"));
  EXPECT_FALSE(gtb::driver::runs_as_ranks("alph"));
  EXPECT_FALSE(gtb::driver::runs_as_ranks("alpha,beta"));
  EXPECT_FALSE(gtb::driver::runs_as_ranks(""));
  EXPECT_FALSE(gtb::driver::runs_as_ranks("parallel"));
  ::unsetenv("GTB_RANK_FAMILIES");
  EXPECT_FALSE(gtb::driver::runs_as_ranks(""));
}

// Without --ranks: one rank per visible GPU where there are two or more, two otherwise (a single GPU,
// none, or a machine whose GPUs cannot be counted still measures a real two-rank CPU all-reduce).
TEST(Launch, DefaultRanksFollowTheVisibleGpus) {
  using gtb::driver::default_ranks;
  EXPECT_EQ(default_ranks(std::nullopt), gtb::driver::kDefaultRanks);
  EXPECT_EQ(default_ranks(0), 2);
  EXPECT_EQ(default_ranks(1), 2);
  EXPECT_EQ(default_ranks(2), 2);
  EXPECT_EQ(default_ranks(8), 8);
  EXPECT_EQ(default_ranks(64), 64);
}

TEST(Launch, InjectedGpuCountSetsTheDefaultAndAnExplicitRanksWins) {
  ::setenv("GTB_VISIBLE_GPUS", "4", 1);
  LaunchRequest r;
  r.ranks = gtb::driver::kDefaultRanks;
  EXPECT_EQ(gtb::driver::prepare_launch(r), "");
  EXPECT_EQ(r.ranks, 4);
  LaunchRequest given;
  given.ranks = 3;
  given.ranks_given = true;
  EXPECT_EQ(gtb::driver::prepare_launch(given), "");
  EXPECT_EQ(given.ranks, 3);
  // An unreadable count is no count: the default, not a guess.
  ::setenv("GTB_VISIBLE_GPUS", "four", 1);
  LaunchRequest bad;
  EXPECT_EQ(gtb::driver::prepare_launch(bad), "");
  EXPECT_EQ(bad.ranks, gtb::driver::kDefaultRanks);
  ::unsetenv("GTB_VISIBLE_GPUS");
}
