// The verify → measure protocol and the family main, end to end on a family made for the test.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include <filesystem>
#include <map>
#include <new>
#include <vector>

#include "gtb/gpu.h"
#include "gtb/gtb.h"
#include "harness/document/results.h"
#include "tests/common/named_record.h"

namespace {

void busy_work(std::int64_t n) {
  volatile double acc = 0;
  for (std::int64_t i = 0; i < n; ++i) acc = acc + double(i) * 1e-9;
}

void measured(gtb::State& st) {
  const auto n = st.get_int("n");
  st.check(true, "trivially right");
  st.set_work(double(n));
  st.info("mode", st.get_string("mode"));
  st.exec([&] { busy_work(n); });
  st.counter("finite", 1.5, "x");
  st.counter("not_finite", std::numeric_limits<double>::infinity(), "x");
}

auto& ok_bench = gtb::add("selftest", "work", "loop", gtb::Backend::cpu, measured)
                     .axis("n", std::vector<std::int64_t>{1000, 2000, 4000}, {1000, 2000})
                     .option("mode", std::vector<std::string>{"a", "b"})
                     .filter([](const gtb::json& p, const gtb::json& o) { return !(p["n"] == 2000 && o["mode"] == "b"); })
                     .rate("throughput", "items/s", 1.0);
auto& invalid_bench = gtb::add("selftest", "work", "wrong", gtb::Backend::cpu, [](gtb::State& st) {
                        st.check(false, "element 3: got 1, expected 2");
                        st.exec([] {});  // refused
                      }).axis("n", std::vector<std::int64_t>{1000});
auto& failing = gtb::add("selftest", "work", "throws", gtb::Backend::cpu, [](gtb::State&) {
                  throw std::runtime_error("cudaMemcpy: invalid argument");
                }).axis("n", std::vector<std::int64_t>{1000});
auto& oom = gtb::add("selftest", "work", "oom", gtb::Backend::cpu, [](gtb::State&) { throw std::bad_alloc(); })
                .axis("n", std::vector<std::int64_t>{1000});
auto& unchecked = gtb::add("selftest", "work", "unchecked", gtb::Backend::cpu, [](gtb::State& st) {
                    st.exec_batch_self_timed(gtb::Clock::host_wall, [](std::int64_t) { return 1e-3; });
                  }).axis("n", std::vector<std::int64_t>{1000});
auto& skipper = gtb::add("selftest", "work", "unsupported", gtb::Backend::cpu, [](gtb::State&) {
                  throw gtb::Skip("needs AVX-512 FP16");
                }).axis("n", std::vector<std::int64_t>{1000});
auto& gpu = gtb::add("selftest", "work", "device", gtb::Backend::cuda, measured)
                .axis("n", std::vector<std::int64_t>{1000})
                .option("mode", std::vector<std::string>{"a"})
                .rate("throughput", "items/s", 1.0);
auto& full_only = gtb::add("selftest", "work", "big", gtb::Backend::cpu, measured).axis("n", std::vector<std::int64_t>{1000}).only(gtb::Suite::full);
const bool findings = gtb::add_family_findings<std::size_t>(
    "selftest", "selftest", 100, [](const std::vector<gtb::Record>& recs) { return recs.size(); },
    [](const std::size_t& seen, gtb::json& f) { f["records_seen"] = seen; },
    [](const std::vector<gtb::Record>&, const std::size_t&, gtb::findings::Family&) {});

class FamilyMain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = (std::filesystem::temp_directory_path() / ("gtb-selftest-" + std::to_string(::getpid()) + ".json")).string();
    std::vector<std::string> args = {"gtb-selftest", "--gtb_out=" + path_, "--gtb_budget=0.02",
                                     "--benchmark_format=json"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    rc_ = gtb::family_main(static_cast<int>(argv.size()), argv.data(), "selftest");
    doc_ = gtb::load_document(path_);
    for (const auto& r : gtb::records_of(doc_)) by_variant_[r.variant].push_back(r);
    std::filesystem::remove(path_);
  }
  static std::string path_;
  static int rc_;
  static gtb::json doc_;
  static std::map<std::string, std::vector<gtb::Record>> by_variant_;
};
std::string FamilyMain::path_;
int FamilyMain::rc_ = -1;
gtb::json FamilyMain::doc_;
std::map<std::string, std::vector<gtb::Record>> FamilyMain::by_variant_;

}  // namespace

TEST_F(FamilyMain, ExitsZeroAndWritesAValidDocument) {
  EXPECT_EQ(rc_, 0);
  EXPECT_NO_THROW(gtb::validate_document(doc_));
  EXPECT_EQ(doc_["suite"], "quick");
  EXPECT_EQ(doc_["findings"]["selftest"]["data"]["records_seen"], doc_["records"].size());
}

TEST_F(FamilyMain, AxesMultiplyQuickValuesAndFilterDrops) {
  // quick n = {1000, 2000} x mode {a, b}, minus (2000, b)
  ASSERT_EQ(by_variant_["loop"].size(), 3u);
  for (const auto& r : by_variant_["loop"]) {
    EXPECT_EQ(r.status, gtb::Status::ok) << r.status_detail;
    EXPECT_TRUE(r.params["n"].is_number_integer());
    EXPECT_TRUE(r.options["mode"].is_string());
    ASSERT_TRUE(r.value && r.stats);
    EXPECT_GT(*r.value, 0);
    EXPECT_GE(r.stats->count, 3);
    EXPECT_EQ(r.samples.size(), static_cast<std::size_t>(r.stats->count));
    EXPECT_DOUBLE_EQ(*r.value, r.metric_of_seconds(r.stats->median));
    EXPECT_EQ(r.clock, gtb::Clock::host_wall);
    EXPECT_EQ(r.info["mode"], r.options["mode"]);
    EXPECT_TRUE(r.counters.count("finite"));
    EXPECT_FALSE(r.counters.count("not_finite"));
  }
  EXPECT_TRUE(by_variant_["big"].empty());  // full suite only
}

TEST_F(FamilyMain, FailedCheckIsInvalidWithoutAValue) {
  ASSERT_EQ(by_variant_["wrong"].size(), 1u);
  const auto& r = by_variant_["wrong"][0];
  EXPECT_EQ(r.status, gtb::Status::invalid);
  EXPECT_EQ(r.status_detail, "element 3: got 1, expected 2");
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.check["passed"], false);
}

TEST_F(FamilyMain, ErrorsBecomeStatusesNotCrashes) {
  EXPECT_EQ(by_variant_["throws"].at(0).status, gtb::Status::failed);
  EXPECT_EQ(by_variant_["throws"].at(0).status_detail, "cudaMemcpy: invalid argument");
  EXPECT_EQ(by_variant_["oom"].at(0).status, gtb::Status::skipped);
  EXPECT_NE(by_variant_["oom"].at(0).status_detail.find("out of memory"), std::string::npos);
  EXPECT_EQ(by_variant_["unsupported"].at(0).status, gtb::Status::skipped);
  EXPECT_EQ(by_variant_["unsupported"].at(0).status_detail, "needs AVX-512 FP16");
}

TEST_F(FamilyMain, MeasuringWithoutACheckIsRefused) {
  const auto& r = by_variant_["unchecked"].at(0);
  EXPECT_EQ(r.status, gtb::Status::failed);
  EXPECT_NE(r.status_detail.find("before check()"), std::string::npos) << r.status_detail;
  EXPECT_FALSE(r.value);
}

TEST_F(FamilyMain, GpuCasesWithoutAGpuAreSkippedWithTheReason) {
  const auto& r = by_variant_["device"].at(0);
  if (gtb::gpu::available()) {
    EXPECT_EQ(r.status, gtb::Status::ok);
  } else {
    EXPECT_EQ(r.status, gtb::Status::skipped);
    EXPECT_NE(r.status_detail.find(*gtb::gpu::unavailable_reason()), std::string::npos) << r.status_detail;
    EXPECT_EQ(doc_["context"]["gpu"]["available"], false);
  }
}

TEST(FamilyMainFlags, BadValuesExitTwoAndWriteNothing) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("gtb-selftest-bad-" + std::to_string(::getpid()) + ".json")).string();
  for (std::vector<std::string> args :
       {std::vector<std::string>{"x", "--gtb_suite=medium", "--gtb_out=" + out},
        std::vector<std::string>{"x", "--gtb_budget=-1", "--gtb_out=" + out},
        std::vector<std::string>{"x", "--gtb_nonsense", "--gtb_out=" + out},
        std::vector<std::string>{"x", "--gtb_out=/nonexistent-gtb/x.json"}}) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    EXPECT_EQ(gtb::family_main(static_cast<int>(argv.size()), argv.data(), "selftest"), 2) << args[1];
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

namespace {

TEST(MeasureHostWall, EventTimesGetTheHostWallAroundThemAndImpossibleOnesAreSuspect) {
  // A "device" sampler that claims 2 ms per repetition while the host sees almost nothing: the
  // harness keeps the host wall per repetition, and the plausibility check flags the record.
  gtb::Record r = gtb::test::named_record("t", "w", "v", gtb::Backend::cuda, {{"n", 1}});
  gtb::State st(r, gtb::Suite::quick, gtb::suite_rule(gtb::Suite::quick));
  st.check(true, "ok");
  st.exec_batch_self_timed(gtb::Clock::cuda_event, [](std::int64_t reps) { return 2e-3 * double(reps); });
  ASSERT_TRUE(r.info.contains("host_wall_seconds_per_rep"));
  EXPECT_LT(r.info["host_wall_seconds_per_rep"].get<double>(), 1e-3);
  const gtb::json doc = gtb::make_document(gtb::json::object(), "quick", gtb::json::array(), {r}, gtb::json::object());
  ASSERT_TRUE(doc["records"][0].contains("suspect"));
  EXPECT_NE(doc["records"][0]["suspect"].get<std::string>().find("the events do not time it"), std::string::npos);

  // A host-clock record gets no such reading.
  gtb::Record h = r;
  h.info = gtb::json::object();
  gtb::State hs(h, gtb::Suite::quick, gtb::suite_rule(gtb::Suite::quick));
  hs.check(true, "ok");
  hs.exec_batch_self_timed(gtb::Clock::host_wall, [](std::int64_t reps) { return 1e-3 * double(reps); });
  EXPECT_FALSE(h.info.contains("host_wall_seconds_per_rep"));
}

}  // namespace
// A family run as several processes: the hooks run once each, only the writing process writes, and a
// start that fails ends the run with exit 1 and no file. Each run is a child process (family_main
// registers its cases with Google Benchmark once per process); the hooks log to a file.
namespace {
struct GroupConfig {
  bool writer = true, fail_start = false;
  std::string log;
};
GroupConfig& group_config() {
  static GroupConfig g;
  return g;
}
void group_note(const char* what) {
  std::FILE* f = std::fopen(group_config().log.c_str(), "a");
  if (f) {
    std::fputs(what, f);
    std::fclose(f);
  }
}
auto& group_case = gtb::add("grouptest", "work", "loop", gtb::Backend::cpu, measured)
                       .axis("n", std::vector<std::int64_t>{1000})
                       .option("mode", std::vector<std::string>{"a"})
                       .rate("throughput", "items/s", 1.0);
const bool group_hooks = gtb::set_process_group(
    "grouptest", {[] {
                    group_note("S");
                    if (group_config().fail_start) throw std::runtime_error("no MPI today");
                  },
                  [](gtb::json& ctx) { ctx["grouptest"] = {{"ranks", 2}}; }, [] { return group_config().writer; },
                  [] { group_note("F"); }, nullptr});  // no agree: one case at a time, pairs apart
// A family's own context block (gtb::add_context), written after the group's.
const bool group_context = gtb::add_context("grouptest", [](gtb::json& ctx) { ctx["libraries"] = {{"onednn3", "found"}}; });

int run_group(const std::string& path) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> args = {"gtb-grouptest", "--gtb_out=" + path, "--gtb_budget=0.01"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    const int rc = gtb::family_main(static_cast<int>(argv.size()), argv.data(), "grouptest");
    std::fflush(nullptr);
    ::_exit(rc);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST(ProcessGroup, OnlyTheWriterWritesAndTheContextGrows) {
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string path = (tmp / ("gtb-group-" + std::to_string(::getpid()) + ".json")).string();
  group_config().log = (tmp / ("gtb-group-" + std::to_string(::getpid()) + ".log")).string();
  std::filesystem::remove(path);
  std::filesystem::remove(group_config().log);
  group_config().writer = false;
  EXPECT_EQ(run_group(path), 0);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(slurp(group_config().log), "SF");
  group_config().writer = true;
  EXPECT_EQ(run_group(path), 0);
  ASSERT_TRUE(std::filesystem::exists(path));
  const gtb::json doc = gtb::load_document(path);
  EXPECT_EQ(doc["context"]["grouptest"]["ranks"], 2);
  EXPECT_EQ(doc["context"]["grouptest"]["libraries"]["onednn3"], "found");
  EXPECT_EQ(doc["records"].size(), 1u);
  std::filesystem::remove(path);
  group_config().fail_start = true;
  EXPECT_EQ(run_group(path), 1);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(slurp(group_config().log), "SFSFSF");  // finish runs after a failed start too
  std::filesystem::remove(group_config().log);
}

// --gtb_backend and --gtb_cases choose the cases a run takes: one backend's, then a slice of them in
// run order, so that the slices 0:K and K: together are the whole list, each case once. Bad values
// exit 2. Each run is a child process (family_main registers its cases once per process).
namespace {
std::vector<std::string> selected_ids(const std::vector<std::string>& flags, int& rc) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gtb-selftest-sel-" + std::to_string(::getpid()) + ".json")).string();
  std::filesystem::remove(path);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> args = {"gtb-selftest", "--gtb_out=" + path, "--gtb_budget=0.01"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::FILE* devnull = std::freopen("/dev/null", "w", stdout);
    (void)devnull;
    const int code = gtb::family_main(static_cast<int>(argv.size()), argv.data(), "selftest");
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::vector<std::string> ids;
  if (std::filesystem::exists(path)) {
    for (const auto& r : gtb::records_of(gtb::load_document(path))) ids.push_back(r.id);
    std::filesystem::remove(path);
  }
  return ids;
}
}  // namespace

TEST(FamilyMainFlags, BackendAndCasesSelectTheCases) {
  int rc = -1;
  const std::vector<std::string> all = selected_ids({}, rc);
  ASSERT_EQ(rc, 0);
  std::vector<std::string> cpu, cuda;
  for (const auto& id : all) (id.find("/cuda/") != std::string::npos ? cuda : cpu).push_back(id);
  ASSERT_EQ(cuda.size(), 1u);
  ASSERT_GE(cpu.size(), 4u);
  EXPECT_EQ(selected_ids({"--gtb_backend=cuda"}, rc), cuda);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(selected_ids({"--gtb_backend=cpu"}, rc), cpu);
  // The first two CPU cases, then the rest: the whole CPU list in its order.
  const std::vector<std::string> first = selected_ids({"--gtb_backend=cpu", "--gtb_cases=0:2"}, rc);
  const std::vector<std::string> rest = selected_ids({"--gtb_backend=cpu", "--gtb_cases=2:"}, rc);
  EXPECT_EQ(first, std::vector<std::string>(cpu.begin(), cpu.begin() + 2));
  EXPECT_EQ(rest, std::vector<std::string>(cpu.begin() + 2, cpu.end()));
  EXPECT_EQ(selected_ids({"--gtb_cases=:1"}, rc), std::vector<std::string>(all.begin(), all.begin() + 1));
  EXPECT_TRUE(selected_ids({"--gtb_backend=cuda", "--gtb_cases=1:"}, rc).empty());  // past the end: none
  EXPECT_EQ(rc, 0);
  for (const char* bad : {"--gtb_backend=tpu", "--gtb_backend=", "--gtb_cases=3", "--gtb_cases=2:1", "--gtb_cases=a:",
                          "--gtb_cases=-1:2"}) {
    EXPECT_TRUE(selected_ids({bad}, rc).empty()) << bad;
    EXPECT_EQ(rc, 2) << bad;
  }
}
