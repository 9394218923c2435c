// Tests of measurement health (readings, the busy decision, --wait-idle's rule) and of the
// plausibility checks that flag suspect records, on synthetic inputs.
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "harness/driver/common/health.h"
#include "harness/document/plausibility.h"
#include "harness/document/results.h"
#include "tests/common/error_of.h"
#include "tests/common/named_record.h"

namespace gtb {
namespace {

namespace fs = std::filesystem;
using health::CpuTimes;
using health::Snapshot;

// ------------------------------------------------------------------------------ readings

TEST(HealthParse, ProcStatAggregateLine) {
  const std::string text =
      "cpu  1000 50 250 8000 100 10 40 300 0 0\n"
      "cpu0 500 25 125 4000 50 5 20 150 0 0\n"
      "intr 12345\n";
  const CpuTimes c = health::parse_proc_stat(text, 100);
  EXPECT_DOUBLE_EQ(c.busy, (1000 + 50 + 250 + 10 + 40) / 100.0);
  EXPECT_DOUBLE_EQ(c.idle, (8000 + 100) / 100.0);
  EXPECT_DOUBLE_EQ(c.steal, 3.0);
  // Old kernels list only user nice system idle.
  EXPECT_DOUBLE_EQ(health::parse_proc_stat("cpu 1 2 3 4\n", 1).steal, 0.0);
}

TEST(HealthParse, ProcStatBadInputSaysWhat) {
  auto message = [](const std::string& text) {
    return gtb::test::error_of<std::runtime_error>([&] { health::parse_proc_stat(text, 100); });
  };
  EXPECT_NE(message("").find("no aggregate \"cpu\" line"), std::string::npos);
  EXPECT_NE(message("cpu0 1 2 3 4\n").find("no aggregate"), std::string::npos);
  EXPECT_NE(message("cpu 1 2 3\n").find("fewer than 4"), std::string::npos);
  EXPECT_NE(message("cpu 1 2 x 4 5\n").find("not a number"), std::string::npos);
  EXPECT_NE(message("cpu 1 -2 3 4\n").find("negative"), std::string::npos);
  EXPECT_THROW(health::parse_proc_stat("cpu 1 2 3 4\n", 0), std::runtime_error);
}

TEST(HealthParse, LoadAverage) {
  EXPECT_DOUBLE_EQ(health::parse_loadavg("1.25 0.80 0.40 2/345 6789\n"), 1.25);
  EXPECT_THROW(health::parse_loadavg(""), std::runtime_error);
  EXPECT_THROW(health::parse_loadavg("abc"), std::runtime_error);
  EXPECT_THROW(health::parse_loadavg("-1 0 0"), std::runtime_error);
}

class HealthTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gtb-health-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc");
    fs::create_directories(root_ / "sys/devices/system/cpu");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  health::Sources sources() const { return {(root_ / "proc").string(), (root_ / "sys").string(), false}; }
  fs::path root_;
};

TEST_F(HealthTree, ReadsGovernorClocksAndThrottleCounters) {
  write("proc/stat", "cpu 100 0 50 1000 0 0 0 7\n");
  write("proc/loadavg", "0.50 0.40 0.30 1/100 42\n");
  for (int c = 0; c < 2; ++c) {
    const std::string d = "sys/devices/system/cpu/cpu" + std::to_string(c) + "/";
    write(d + "cpufreq/scaling_governor", c == 0 ? "performance\n" : "powersave\n");
    write(d + "cpufreq/scaling_cur_freq", c == 0 ? "2400000\n" : "1200000\n");
    write(d + "thermal_throttle/core_throttle_count", "3\n");
    write(d + "thermal_throttle/package_throttle_count", "1\n");
  }
  write("sys/devices/system/cpu/cpufreq_not_a_cpu/x", "");
  const Snapshot s = health::take(sources());
  ASSERT_TRUE(s.cpu.has_value());
  EXPECT_GT(s.cpu->steal, 0.0);
  ASSERT_TRUE(s.loadavg_1min.has_value());
  EXPECT_DOUBLE_EQ(*s.loadavg_1min, 0.5);
  ASSERT_TRUE(s.governor.has_value());
  EXPECT_EQ(*s.governor, "mixed: performance, powersave");
  EXPECT_DOUBLE_EQ(*s.cur_mhz_min, 1200.0);
  EXPECT_DOUBLE_EQ(*s.cur_mhz_max, 2400.0);
  EXPECT_EQ(s.mhz_source.rfind("cpufreq", 0), 0u) << s.mhz_source;  // the running clock
  EXPECT_EQ(*s.thermal_throttle_events, 8);
  EXPECT_TRUE(s.unavailable.empty()) << s.unavailable.front();
}

TEST_F(HealthTree, WhatCannotBeReadIsUnavailableWithTheReason) {
  // A virtual machine: no cpufreq, no throttle counters; clocks from /proc/cpuinfo; /proc/stat garbled.
  write("proc/stat", "intr 1 2 3\n");
  write("proc/cpuinfo", "processor : 0\ncpu MHz\t\t: 2596.140\nprocessor : 1\ncpu MHz\t\t: 2596.140\n");
  fs::create_directories(root_ / "sys/devices/system/cpu/cpu0");
  const Snapshot s = health::take(sources());
  EXPECT_FALSE(s.cpu.has_value());
  EXPECT_FALSE(s.governor.has_value());
  EXPECT_FALSE(s.loadavg_1min.has_value());
  EXPECT_DOUBLE_EQ(*s.cur_mhz_min, 2596.14);
  // The kernel's cpuinfo figure is named as such: in a VM it is the nominal clock, not the running one.
  EXPECT_NE(s.mhz_source.find("/proc/cpuinfo"), std::string::npos) << s.mhz_source;
  EXPECT_NE(s.mhz_source.find("not the running clock"), std::string::npos) << s.mhz_source;
  EXPECT_FALSE(s.thermal_throttle_events.has_value());
  std::string all;
  for (const auto& u : s.unavailable) all += u + "\n";
  EXPECT_NE(all.find("cpu load and steal: /proc/stat: no aggregate"), std::string::npos) << all;
  EXPECT_NE(all.find("cpu governor: no "), std::string::npos) << all;
  EXPECT_NE(all.find("thermal throttling"), std::string::npos) << all;
  const json d = health::describe(s);
  EXPECT_EQ(d["cpu_governor"], "unavailable");
  EXPECT_EQ(d["cpu_mhz"]["source"], s.mhz_source);
  EXPECT_EQ(d["unavailable"].size(), s.unavailable.size());
}

// ------------------------------------------------------------------------------ the decision

Snapshot snap(double wall, double busy, double idle, double steal, double own, int cpus = 2) {
  Snapshot s;
  s.wall_s = wall;
  s.own_cpu_s = own;
  s.cpus = cpus;
  s.cpu = CpuTimes{busy, idle, steal};
  return s;
}

TEST(HealthJudge, IdleMachineIsNotBusy) {
  // 10 s on 2 CPUs; gtb's family used 19 s of CPU and the machine was 19.5 s busy: 0.5 s others.
  const json h = health::judge(snap(0, 100, 100, 0, 1), snap(10, 119.5, 100.5, 0, 20), {});
  EXPECT_FALSE(h["busy"].get<bool>()) << h.dump(1);
  EXPECT_NEAR(h["other_cpu_fraction"].get<double>(), 0.025, 1e-9);
  EXPECT_TRUE(h["warnings"].empty());
}

TEST(HealthJudge, OtherProcessesMakeItBusy) {
  // The family used 5 s, the machine 15 s: others took 10 of 20 CPU-seconds.
  const json h = health::judge(snap(0, 100, 100, 0, 0), snap(10, 115, 105, 0, 5), {});
  EXPECT_TRUE(h["busy"].get<bool>());
  EXPECT_NEAR(h["other_cpu_fraction"].get<double>(), 0.5, 1e-9);
  ASSERT_EQ(h["warnings"].size(), 1u);
  EXPECT_EQ(h["warnings"][0], "other processes used 50% of the CPUs (limit 10%)");
}

TEST(HealthJudge, StealMakesItBusy) {
  // No other process, but the hypervisor took 4 of 20 CPU-seconds.
  const json h = health::judge(snap(0, 100, 100, 0, 0), snap(10, 110, 106, 4, 10), {});
  EXPECT_TRUE(h["busy"].get<bool>()) << h.dump(1);
  EXPECT_NEAR(h["steal_fraction"].get<double>(), 0.2, 1e-9);
  EXPECT_NE(h["warnings"][0].get<std::string>().find("steal"), std::string::npos);
}

TEST(HealthJudge, ThrottlingAndGpuReadings) {
  Snapshot a = snap(0, 100, 100, 0, 0), b = snap(10, 110, 110, 0, 10);
  a.thermal_throttle_events = 5;
  b.thermal_throttle_events = 7;
  health::GpuReading before;
  before.name = "GPU";
  before.compute_processes = 1;
  before.utilization_pct = 60;
  a.gpus = std::vector<health::GpuReading>{before};
  b.gpus = std::vector<health::GpuReading>{health::GpuReading{}};
  health::During during;
  during.gpu_reasons = 0x40 | 0x4;  // hardware thermal slowdown + software power cap
  const json h = health::judge(a, b, during);
  std::string all;
  for (const auto& w : h["warnings"]) all += w.get<std::string>() + "\n";
  EXPECT_NE(all.find("throttled for heat 2 times"), std::string::npos) << all;
  EXPECT_NE(all.find("1 other process(es) held GPU 0"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU 0 was 60% busy"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU clocks were pulled down (hw_thermal_slowdown)"), std::string::npos) << all;
  EXPECT_EQ(all.find("sw_power_cap"), std::string::npos) << "the power cap is normal under load: " << all;
  EXPECT_EQ(h["gpu_clock_event_reasons_during"], json({"hw_thermal_slowdown", "sw_power_cap"}));
}

TEST(HealthJudge, PowerCapAndIdleAloneAreNotThrottling) {
  Snapshot a = snap(0, 100, 100, 0, 0), b = snap(10, 110, 110, 0, 10);
  a.gpus = std::vector<health::GpuReading>{health::GpuReading{}};
  b.gpus = a.gpus;
  health::During during;
  during.gpu_reasons = 0x1 | 0x4;
  EXPECT_FALSE(health::judge(a, b, during)["busy"].get<bool>());
  EXPECT_TRUE(health::throttle_reason_names(0x1 | 0x4).empty());
  EXPECT_EQ(health::throttle_reason_names(0x8 | 0x80), (std::vector<std::string>{"hw_slowdown", "hw_power_brake"}));
}

// ------------------------------------------------------------------------------ which GPUs NVML reads

TEST(HealthNvml, BusIdsCompareWhateverTheSpelling) {
  EXPECT_EQ(health::canonical_pci_bus_id("0000:17:00.0"), "00000000:17:00.0");  // CUDA
  EXPECT_EQ(health::canonical_pci_bus_id("00000000:17:00.0"), "00000000:17:00.0");  // NVML
  EXPECT_EQ(health::canonical_pci_bus_id("00000000:3B:00.0"), health::canonical_pci_bus_id("0000:3b:00.0"));
  EXPECT_EQ(health::canonical_pci_bus_id("0001:c1:1f.7"), "00000001:c1:1f.7");
  EXPECT_NE(health::canonical_pci_bus_id("0000:17:00.0"), health::canonical_pci_bus_id("0000:18:00.0"));
  for (const char* bad : {"", "17:00.0", "0000:17:00", "0000:17.00.0", "0000:117:00.0", "00000000:17:00.10",
                          "000000000:17:00.0", "0000:1g:00.0", "0000::00.0"})
    EXPECT_EQ(health::canonical_pci_bus_id(bad), std::nullopt) << bad;
}

TEST(HealthNvml, ReadsOnlyTheDevicesCudaSeesInCudaOrder) {
  const std::vector<std::string> nvml = {"00000000:17:00.0", "00000000:3B:00.0", "00000000:86:00.0",
                                         "00000000:AF:00.0"};
  // CUDA_VISIBLE_DEVICES=3,1: NVML devices 3 and 1, in that order (GPU 0 of the record is CUDA's 0).
  auto s = health::select_visible_nvml({"0000:af:00.0", "0000:3b:00.0"}, nvml);
  EXPECT_EQ(s.read, (std::vector<std::size_t>{3, 1}));
  EXPECT_TRUE(s.not_found.empty());
  // Every device visible: all of them.
  s = health::select_visible_nvml({"0000:17:00.0", "0000:3b:00.0", "0000:86:00.0", "0000:af:00.0"}, nvml);
  EXPECT_EQ(s.read, (std::vector<std::size_t>{0, 1, 2, 3}));
  // Nothing visible (CUDA_VISIBLE_DEVICES=""): nothing read.
  s = health::select_visible_nvml({}, nvml);
  EXPECT_TRUE(s.read.empty());
  EXPECT_TRUE(s.not_found.empty());
  // Two MIG instances of one GPU share its bus id: the GPU is read once.
  s = health::select_visible_nvml({"0000:86:00.0", "0000:86:00.0"}, nvml);
  EXPECT_EQ(s.read, (std::vector<std::size_t>{2}));
  // A visible device NVML does not list (or an unreadable id) is reported, not matched to another.
  s = health::select_visible_nvml({"0000:99:00.0", "garbage", "0000:17:00.0"}, {"", "00000000:17:00.0"});
  EXPECT_EQ(s.read, (std::vector<std::size_t>{1}));
  EXPECT_EQ(s.not_found, (std::vector<std::string>{"0000:99:00.0", "garbage"}));
}

TEST(HealthNvml, AReadingWaitsOneUtilizationPeriodAfterThePrevious) {
  const double p = health::kNvmlUtilizationPeriodSeconds;
  EXPECT_GE(p, 1.0);  // NVML's documented sample period is at most one second
  EXPECT_DOUBLE_EQ(health::nvml_wait_seconds(100.0, std::nullopt), 0.0);  // the first reading of a run
  EXPECT_DOUBLE_EQ(health::nvml_wait_seconds(100.0, 100.0), p);           // right after the previous
  EXPECT_NEAR(health::nvml_wait_seconds(100.25, 100.0), p - 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(health::nvml_wait_seconds(100.0 + p, 100.0), 0.0);
  EXPECT_DOUBLE_EQ(health::nvml_wait_seconds(105.0, 100.0), 0.0);
}

TEST(HealthJudge, UnreadableCpuTimesGiveNoFraction) {
  Snapshot a, b;
  a.wall_s = 0;
  b.wall_s = 5;
  b.unavailable = {"cpu load and steal: /proc/stat is not readable"};
  const json h = health::judge(a, b, {});
  EXPECT_FALSE(h.contains("other_cpu_fraction"));
  EXPECT_FALSE(h["busy"].get<bool>());
  EXPECT_EQ(h["unavailable"][0], "cpu load and steal: /proc/stat is not readable");
}

TEST(HealthSettle, NeedsConsecutiveQuietWindows) {
  health::Settle s;  // 3 windows under 5%
  EXPECT_FALSE(s.add(0.01, 0));
  EXPECT_FALSE(s.add(0.02, 0));
  EXPECT_FALSE(s.add(0.50, 0));  // a busy second starts the count again
  EXPECT_EQ(s.quiet_windows(), 0);
  EXPECT_FALSE(s.add(0.00, 0));
  EXPECT_FALSE(s.add(0.04, 0.20));  // steal is not quiet either
  EXPECT_FALSE(s.add(0.00, 0));
  EXPECT_FALSE(s.add(0.00, 0));
  EXPECT_TRUE(s.add(0.05, 0.05));
}

TEST(HealthWarnings, FromADocument) {
  json doc = {{"context", {{"health", {{"wait_idle", {{"settled", false}, {"waited_s", 60.0}}}}}}},
              {"families",
               {{{"name", "transfer"}, {"health", {{"busy", true}, {"warnings", {"a", "b"}}}}},
                {{"name", "gemm"}, {"health", {{"busy", false}, {"warnings", json::array()}}}},
                {{"name", "odd"}, {"health", "not an object"}},
                {{"name", "train"}}}}};
  const auto w = health::warnings(doc);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "--wait-idle: the machine did not settle in 60 s; the run measured anyway");
  EXPECT_EQ(w[1], "transfer: a; b");
  EXPECT_TRUE(health::warnings(json::object()).empty());
  EXPECT_TRUE(health::warnings(json::array()).empty());
}

// A speed reading of two threads (health::to_json's keys); a cache reading only where cache > 0.
json speed_reading(double one, double all, double cache = 0, double wake = 5, double wake_max = 9) {
  json r = {{"threads", 2}, {"one_core_gmadd_per_s", one}, {"all_cores_gmadd_per_s", all}, {"wake_us", wake},
            {"wake_max_us", wake_max}};
  if (cache > 0) r["cache_sweep_bytes"] = 629145.6, r["cache_scaling"] = cache;
  return r;
}
json speed(const json& before, const json& after) { return json{{"before", before}, {"after", after}}; }
// A results file's entry of a family with the speed readings before and after it ran.
json family_speed(const std::string& name, const json& before, const json& after) {
  return {{"name", name}, {"health", {{"speed", speed(before, after)}}}};
}
// A results file of these families' entries.
json families_doc(const std::vector<json>& families) { return {{"families", families}}; }

// A family whose speed readings moved while it ran: a loop rate beyond kSpeedSpreadLimit, or a cache
// reading that crossed kCacheSharedLimit by more than it. Steady readings, a steadily shared cache,
// small moves and missing readings are not a change. busy_text carries it (for files written before
// the judgement too), once, beside the judged warnings.
TEST(HealthSpeed, AChangeOfSpeedWhileAFamilyRanMakesItBusy) {
  const auto reading = [](double one, double all, double cache) { return speed_reading(one, all, cache); };
  EXPECT_EQ(health::speed_change(speed(reading(12, 24, 0.97), reading(11.5, 22.5, 0.93))), "");
  EXPECT_EQ(health::speed_change(speed(reading(12, 13, 0.50), reading(12, 12.5, 0.52))), "")
      << "CPUs that always share a core are slow, not changing";
  EXPECT_EQ(health::speed_change(speed(reading(12, 24, 0.74), reading(12, 24, 0.80))), "")
      << "a crossing smaller than the limit is a reading's own noise";
  EXPECT_EQ(health::speed_change(json::object()), "");
  EXPECT_EQ(health::speed_change(speed(reading(0, 0, 0), reading(12, 24, 0.97))), "");
  EXPECT_EQ(health::speed_change(speed(reading(12, 24.1, 0.97), reading(12, 15.4, 0.97))),
            "the machine's speed changed while it ran: all cores 24.1 -> 15.4 G "
            "multiply-adds/s");
  const std::string both = health::speed_change(speed(reading(14.8, 24, 0.58), reading(6.05, 24, 0.97)));
  EXPECT_NE(both.find("one core 14.8 -> 6.05 G multiply-adds/s, the CPUs' cache reading 0.58 -> 0.97"), std::string::npos)
      << both;
  EXPECT_EQ(both.find("all cores"), std::string::npos);

  json h = {{"busy", false}, {"warnings", json::array()}, {"speed", speed(reading(12, 24, 0.97), reading(12, 12, 0.5))}};
  const std::string moved = health::speed_change(h["speed"]);
  EXPECT_EQ(health::busy_text(h), moved);
  h["busy"] = true;
  h["warnings"] = {"other processes used 55% of the CPUs", moved};
  EXPECT_EQ(health::busy_text(h), "other processes used 55% of the CPUs; " + moved) << "said once";
  h["speed"] = speed(reading(12, 24, 0.97), reading(12, 24, 0.97));
  h["warnings"] = {"other processes used 55% of the CPUs"};
  EXPECT_EQ(health::busy_text(h), "other processes used 55% of the CPUs");
  h["busy"] = false;
  EXPECT_EQ(health::busy_text(h), "");
  EXPECT_EQ(health::family_warning_line("[1/9] gemm", h), "");
  // The line names what was seen; the host's speed moving while nothing else ran is said so, with what it
  // means for the family's figures now that its pairs are measured as pairs.
  h["busy"] = true;
  h["warnings"] = {"other processes used 55% of the CPUs"};
  EXPECT_EQ(health::family_warning_line("[1/9] gemm", h),
            "[1/9] gemm WARNING: measured on a busy machine: other processes used 55% of the CPUs");
  h["speed"] = speed(reading(12, 38.4, 0.97), reading(12, 19.4, 0.97));
  h["warnings"] = {health::speed_change(h["speed"])};
  EXPECT_EQ(health::family_warning_line("[1/9] gemm", h),
            "[1/9] gemm WARNING: the host's speed moved while nothing else ran here (all cores 38.4 -> 19.4 G "
            "multiply-adds/s): its A/B pairs were measured as pairs, so its comparisons hold; its absolute figures "
            "vary by up to 1.98x");
  json doc = families_doc({family_speed("gemm", reading(12, 24, 0.97), reading(12, 24, 0.5))});
  const auto w = health::warnings(doc);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("gemm: the machine's speed changed while it ran", 0), 0u) << w[0];
  // A file of several runs names the run of each entry.
  doc["runs"] = 2;
  doc["families"][0]["run"] = 2;
  EXPECT_EQ(health::warnings(doc)[0].rfind("gemm (run 2): the machine's speed changed", 0), 0u) << health::warnings(doc)[0];
}

// ------------------------------------------------------------------------------ suspect records

Record rate(const std::string& variant, Backend be, double value, const json& params = {{"n", 1}}) {
  Record r = test::named_record("fam", "w", variant, be, params);
  r.metric = {"bandwidth", "GB/s", 1e9, MetricKind::rate};
  r.value = value;
  r.stats = Stats{};
  r.stats->median = 1e-3;
  return r;
}

json ctx_with(double l3_bytes, double ceiling) {
  return {{"host", {{"caches", {{"l1d_bytes", 32768}, {"l2_bytes", 1 << 20}, {"l3_bytes", l3_bytes}}}}},
          {"ceilings", {{"host_copy_gbps", ceiling}}}};
}

// The speed reading: positive figures on the threads it was given, the slowest wake at least the median.
TEST(HealthSpeed, AReadingHasEveryFigure) {
  const health::Speed s = health::measure_speed(2);
  EXPECT_EQ(s.threads, 2);
  EXPECT_GT(s.one_core, 0);
  EXPECT_GT(s.all_cores, 0);
  EXPECT_GT(s.wake_us, 0);
  EXPECT_GE(s.wake_max_us, s.wake_us);
  const json j = health::to_json(s);
  for (const char* k : {"threads", "one_core_gmadd_per_s", "all_cores_gmadd_per_s", "wake_us", "wake_max_us",
                        "cache_sweep_bytes", "cache_scaling"})
    EXPECT_TRUE(j.contains(k)) << k;
}

// The cache reading: a buffer per thread of kCacheSweepShare of the L2 it is given (whole blocks of 8
// floats), a scaling that is a share of the threads' sum; none without an L2 size or a second thread.
TEST(HealthSpeed, TheCacheReadingSweepsItsShareOfTheL2) {
  const health::Speed s = health::measure_speed(2, 256 * 1024);
  EXPECT_DOUBLE_EQ(s.cache_sweep_bytes, double(std::size_t(health::kCacheSweepShare * 256 * 1024 / 4) / 8 * 8 * 4));
  EXPECT_GT(s.cache_scaling, 0.0);
  EXPECT_LT(s.cache_scaling, 2.0);
  const health::Speed none = health::measure_speed(2, 0);
  EXPECT_EQ(none.cache_scaling, 0.0);
  EXPECT_EQ(none.cache_sweep_bytes, 0.0);
  EXPECT_EQ(health::measure_speed(1, 256 * 1024).cache_scaling, 0.0);
}

// The spread over a run: every family's before and after readings; a reading without figures (or a
// family without readings) is left out; a file without any has none.
TEST(HealthSpeed, SpreadOverTheFamiliesReadings) {
  const auto reading = [](double one, double all, double wake, double wake_max) {
    return speed_reading(one, all, 0, wake, wake_max);
  };
  EXPECT_FALSE(health::speed_spread(families_doc({})));
  json doc = families_doc({family_speed("a", reading(10, 20, 5, 9), reading(12, 16, 7, 40)),
                           {{"name", "b"}, {"health", {{"seconds", 1}}}},
                           family_speed("c", reading(0, 0, 0, 0), reading(8, 18, 6, 2000))});
  const auto sp = health::speed_spread(doc);
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->readings, 3);
  EXPECT_DOUBLE_EQ(sp->one_core_min, 8);
  EXPECT_DOUBLE_EQ(sp->one_core_max, 12);
  EXPECT_DOUBLE_EQ(sp->all_cores_min, 16);
  EXPECT_DOUBLE_EQ(sp->all_cores_max, 20);
  EXPECT_DOUBLE_EQ(sp->wake_us_median, 6);
  EXPECT_DOUBLE_EQ(sp->wake_max_us, 2000);
  EXPECT_DOUBLE_EQ(sp->low_over_high(), 0.8);
  EXPECT_NE(health::speed_sentence(*sp).find("changed during the run"), std::string::npos);
  doc["families"][0]["health"]["speed"]["after"] = reading(12, 19, 7, 40);
  doc["families"][2]["health"]["speed"]["after"] = reading(8, 18, 6, 2000);
  EXPECT_EQ(health::speed_sentence(*health::speed_spread(doc)).find("changed during the run"), std::string::npos);
  EXPECT_EQ(health::speed_sentence(*health::speed_spread(doc)).find("L2"), std::string::npos)
      << "readings without the cache reading say nothing of it";
}

// The cache reading over a run: its range, and how many readings found the CPUs sharing one core's
// cache (a scaling under kCacheSharedLimit); readings of files without it are left out.
TEST(HealthSpeed, CPUsThatShareACoresCacheAreSaid) {
  const auto reading = [](double scaling) { return speed_reading(10, 20, scaling); };
  json doc = families_doc({family_speed("a", reading(0.97), reading(0.9)), family_speed("b", reading(0), reading(0.8))});
  auto sp = health::speed_spread(doc);
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->readings, 4);
  EXPECT_EQ(sp->cache_readings, 3);
  EXPECT_EQ(sp->cache_shared, 0);
  EXPECT_DOUBLE_EQ(sp->cache_scaling_min, 0.8);
  EXPECT_DOUBLE_EQ(sp->cache_scaling_max, 0.97);
  std::string t = health::speed_sentence(*sp);
  EXPECT_NE(t.find("Each of the 2 CPUs summing a buffer of its own that fits one core's L2 (0.629 MB each), all at "
                   "once, ran at 0.80 to 0.97 of one CPU's rate alone (each CPU has a core's cache of its own)."),
            std::string::npos)
      << t;
  doc["families"][1]["health"]["speed"]["after"] = reading(0.51);
  sp = health::speed_spread(doc);
  EXPECT_EQ(sp->cache_shared, 1);
  t = health::speed_sentence(*sp);
  EXPECT_NE(t.find("ran at 0.51 to 0.97 of one CPU's rate alone: **the CPUs shared one core's cache** in 1 of 3 readings"),
            std::string::npos)
      << t;
}

TEST(Suspect, RateAboveTheCeilingAtAMemorySize) {
  std::vector<Record> v = {rate("big", Backend::cpu, 30), rate("small", Backend::cpu, 30), rate("under", Backend::cpu, 15)};
  for (auto& r : v) r.ceiling = "host_copy_gbps";
  v[0].work_per_rep = 3 * 64e6;  // touches >= 96 MB > 4 x 16 MB
  v[1].work_per_rep = 3 * 1e6;   // cache-resident: may beat a DRAM ceiling
  v[2].work_per_rep = 3 * 64e6;
  flag_suspects(v, ctx_with(16e6, 20));
  EXPECT_NE(v[0].suspect.find("150% of the measured ceiling host_copy_gbps"), std::string::npos) << v[0].suspect;
  EXPECT_NE(v[0].suspect.find("not cache-resident"), std::string::npos);
  EXPECT_TRUE(v[1].suspect.empty()) << v[1].suspect;
  EXPECT_TRUE(v[2].suspect.empty()) << v[2].suspect;
  // Without cache sizes in the context residency is unknown: nothing is flagged.
  flag_suspects(v, json{{"ceilings", {{"host_copy_gbps", 20}}}});
  EXPECT_TRUE(v[0].suspect.empty());
  // A declared working set wins over the estimate from the counted bytes.
  v[1].info["working_set_bytes"] = 512e6;
  flag_suspects(v, ctx_with(16e6, 20));
  EXPECT_FALSE(v[1].suspect.empty());
}

TEST(Suspect, ParallelSlowerThanItsSerialTwin) {
  std::vector<Record> v = {rate("scalar", Backend::cpu, 20), rate("autovec", Backend::cpu, 100),
                           rate("openmp", Backend::cpu, 50), rate("openmp_ok", Backend::cpu, 95),
                           rate("openmp", Backend::cpu, 1, {{"n", 2}})};
  for (auto& r : v) r.info["threads"] = r.variant.rfind("openmp", 0) == 0 ? 2 : 1;
  flag_suspects(v, json::object());
  EXPECT_NE(v[2].suspect.find("the 2-thread variant ran at 0.5x its one-thread twin 'autovec' (50 vs 100 GB/s)"),
            std::string::npos)
      << v[2].suspect;
  EXPECT_TRUE(v[3].suspect.empty()) << "within 10% of the serial twin: " << v[3].suspect;
  EXPECT_TRUE(v[4].suspect.empty()) << "no serial twin at n=2: " << v[4].suspect;
  EXPECT_TRUE(v[0].suspect.empty());
  // A time metric (lower is better): the parallel variant taking twice as long is suspect too.
  for (auto& r : v) r.metric = {"time", "ms", 1e-3, MetricKind::time};
  v[1].value = 1.0;
  v[2].value = 2.0;
  flag_suspects(v, json::object());
  EXPECT_NE(v[2].suspect.find("0.5x"), std::string::npos) << v[2].suspect;
}

TEST(Suspect, GpuEventsLongerThanTheHostClock) {
  std::vector<Record> v = {rate("a", Backend::cuda, 10), rate("b", Backend::cuda, 10), rate("c", Backend::cuda, 10)};
  for (auto& r : v) r.clock = Clock::cuda_event;
  v[0].info["host_wall_seconds_per_rep"] = 0.5e-3;  // events 1 ms inside a 0.5 ms host window: impossible
  v[1].info["host_wall_seconds_per_rep"] = 1.01e-3;
  v[2].clock = Clock::host_wall;
  v[2].info["host_wall_seconds_per_rep"] = 0.5e-3;
  flag_suspects(v, json::object());
  EXPECT_NE(v[0].suspect.find("the CUDA events measured 1e+03 us per repetition, longer than the 500 us"), std::string::npos)
      << v[0].suspect;
  EXPECT_TRUE(v[1].suspect.empty()) << v[1].suspect;
  EXPECT_TRUE(v[2].suspect.empty()) << v[2].suspect;
}

TEST(Suspect, RecomputedNotAccumulatedAndKeptInTheFile) {
  std::vector<Record> v = {rate("autovec", Backend::cpu, 100), rate("openmp", Backend::cpu, 10)};
  v[0].info["threads"] = 1;
  v[1].info["threads"] = 4;
  flag_suspects(v, json::object());
  const std::string once = v[1].suspect;
  flag_suspects(v, json::object());
  EXPECT_EQ(v[1].suspect, once);
  // make_document flags; the number stays; the reason survives a round trip through JSON.
  const json doc = make_document(json::object(), "quick", json::array(), v, json::object());
  const auto back = records_of(doc);
  EXPECT_EQ(back[1].suspect, once);
  ASSERT_TRUE(back[1].value.has_value());
  EXPECT_DOUBLE_EQ(*back[1].value, 10);
  EXPECT_FALSE(doc["records"][0].contains("suspect"));
}

TEST(Suspect, BadSuspectFieldsAreRejected) {
  json r = to_json(rate("x", Backend::cpu, 1));
  r["suspect"] = "";
  EXPECT_THROW(record_from_json(r), std::runtime_error);
  r["suspect"] = 3;
  EXPECT_THROW(record_from_json(r), std::runtime_error);
  r["suspect"] = "because";
  EXPECT_EQ(record_from_json(r).suspect, "because");
}


TEST(Suspect, ARecordsOwnCacheMarkDecides) {
  // GPU records: no device cache in the context, but the record says whether its working set left
  // the L2; a cache-resident one may beat the DRAM ceiling, one out of cache may not.
  std::vector<Record> v = {rate("out", Backend::cuda, 5000), rate("in", Backend::cuda, 9000)};
  for (auto& r : v) r.ceiling = "device_stream_gbps", r.work_per_rep = 3e9;
  v[0].info["cache_resident"] = false;
  v[1].info["cache_resident"] = true;
  flag_suspects(v, json{{"ceilings", {{"device_stream_gbps", 4000}}}});
  EXPECT_NE(v[0].suspect.find("125% of the measured ceiling device_stream_gbps"), std::string::npos) << v[0].suspect;
  EXPECT_TRUE(v[1].suspect.empty()) << v[1].suspect;
  // The injected last-level size of the run is the one the rule uses.
  std::vector<Record> h = {rate("big", Backend::cpu, 30)};
  h[0].ceiling = "host_copy_gbps";
  h[0].work_per_rep = 3 * 64e6;
  json ctx = ctx_with(16e6, 20);
  ctx["host"]["caches"]["last_level_bytes"] = 480e6;  // 96 MB touched is resident in 480 MB
  flag_suspects(h, ctx);
  EXPECT_TRUE(h[0].suspect.empty()) << h[0].suspect;
}

TEST(Suspect, SamplesThatDriftOrSpread) {
  // Samples climbing steadily from 7.3 to 53.8 ms: not a steady figure, whatever the median says.
  std::vector<Record> v = {rate("drift", Backend::cpu, 1), rate("steady", Backend::cpu, 1),
                           rate("spread", Backend::cpu, 1), rate("warmup", Backend::cpu, 1)};
  for (int i = 0; i < 12; ++i) v[0].samples.push_back(7.3e-3 + i * (53.8e-3 - 7.3e-3) / 11);
  v[1].samples = {1.00e-3, 1.02e-3, 0.99e-3, 1.01e-3, 1.00e-3, 0.98e-3, 1.01e-3, 1.00e-3};
  v[2].samples = {1e-3, 3e-3, 1e-3, 3e-3, 1e-3, 3e-3, 1e-3, 3e-3};
  v[3].samples = {3e-3, 2e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};  // a slow start, a steady median
  auto set_stats = [](Record& r) {
    std::vector<double> s = r.samples;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    r.stats->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    r.stats->iqr = s[(3 * n) / 4] - s[n / 4];
  };
  for (auto& r : v) set_stats(r);
  flag_suspects(v, json::object());
  EXPECT_NE(v[0].suspect.find("grew slower through the record"), std::string::npos) << v[0].suspect;
  EXPECT_TRUE(v[1].suspect.empty()) << v[1].suspect;
  EXPECT_NE(v[2].suspect.find("spread over 100% of their median"), std::string::npos) << v[2].suspect;
  EXPECT_TRUE(v[3].suspect.empty()) << v[3].suspect;
  // Several runs joined: their order is not time order within one process, so no drift verdict.
  v[0].runs.resize(2);
  flag_suspects(v, json::object());
  EXPECT_EQ(v[0].suspect.find("grew slower"), std::string::npos) << v[0].suspect;
}

}  // namespace
}  // namespace gtb
