// Blocking-kernel decisions and the device_timing summary of a record, without a GPU.
#include <gtest/gtest.h>

#include "harness/runtime/device_timing.h"
#include "harness/document/types.h"
#include "tests/common/named_record.h"

namespace {

gtb::DeviceSample sample(double device, double enqueue, bool blocked, bool timed_out = false, std::int64_t reps = 1) {
  gtb::DeviceSample s;
  s.device_seconds = device;
  s.enqueue_seconds = enqueue;
  s.reps = reps;
  s.blocked = blocked;
  s.block_timed_out = timed_out;
  if (!blocked) s.not_blocked_reason = "because";
  return s;
}

}  // namespace

TEST(DeviceTiming, BlocksShortQueuesOnly) {
  EXPECT_TRUE(gtb::plan_blocking(gtb::Blocking::allowed, 1, 1, 0).use);
  EXPECT_TRUE(gtb::plan_blocking(gtb::Blocking::allowed, gtb::kMaxOpsBehindBlock, 1, 0).use);
  const gtb::BlockingPlan over = gtb::plan_blocking(gtb::Blocking::allowed, gtb::kMaxOpsBehindBlock / 4 + 1, 4, 0);
  EXPECT_FALSE(over.use);
  EXPECT_NE(over.reason.find("launch queue"), std::string::npos) << over.reason;
  // A degenerate count is treated as one operation, never as "nothing to queue".
  EXPECT_TRUE(gtb::plan_blocking(gtb::Blocking::allowed, 0, 0, 0).use);
}

TEST(DeviceTiming, NeverBlocksWorkThatSynchronises) {
  const gtb::BlockingPlan p = gtb::plan_blocking(gtb::Blocking::forbidden, 1, 1, 0);
  EXPECT_FALSE(p.use);
  EXPECT_NE(p.reason.find("pageable"), std::string::npos) << p.reason;
}

TEST(DeviceTiming, StopsBlockingAfterATimeout) {
  const gtb::BlockingPlan p = gtb::plan_blocking(gtb::Blocking::allowed, 1, 1, 1);
  EXPECT_FALSE(p.use);
  EXPECT_NE(p.reason.find("timed out"), std::string::npos) << p.reason;
}

TEST(DeviceTiming, SummaryReadsOnlyTheKeptSamples) {
  gtb::DeviceTimingLog log;
  log.add(sample(1.0, 0.1, false));  // calibration, unblocked: not part of the summary
  for (int i = 0; i < 3; ++i) log.add(sample(2e-3, 1e-3, true, false, 2));
  const gtb::json j = log.summary(3);
  EXPECT_EQ(j["blocking_kernel"], "all");
  EXPECT_EQ(j["blocked_samples"], 3);
  EXPECT_EQ(j["samples"], 3);
  EXPECT_FALSE(j.contains("not_blocked_reason"));
  EXPECT_DOUBLE_EQ(j["device_s_median"].get<double>(), 1e-3);  // per repetition
  EXPECT_DOUBLE_EQ(j["enqueue_s_median"].get<double>(), 5e-4);
  EXPECT_EQ(j["enqueue_bound"], false);
  EXPECT_FALSE(j.contains("note"));
}

TEST(DeviceTiming, FlagsHostBoundRecords) {
  gtb::DeviceTimingLog blocked, unblocked;
  for (int i = 0; i < 3; ++i) {
    blocked.add(sample(1e-6, 4e-6, true));
    unblocked.add(sample(4e-6, 4e-6, false));  // equal: the events may have timed the host
  }
  const gtb::json b = blocked.summary(3), u = unblocked.summary(3);
  EXPECT_EQ(b["enqueue_bound"], true);
  EXPECT_EQ(u["enqueue_bound"], true);
  EXPECT_EQ(u["blocking_kernel"], "none");
  EXPECT_EQ(u["not_blocked_reason"], "because");
  EXPECT_NE(u["note"].get<std::string>().find("not held"), std::string::npos) << u.dump();
  EXPECT_EQ(b["note"].get<std::string>().find("not held"), std::string::npos) << b.dump();
}

TEST(DeviceTiming, CountsTimeoutsAndDoesNotCallThemBlocked) {
  gtb::DeviceTimingLog log;
  log.add(sample(1e-3, 1e-4, true, true));
  log.add(sample(1e-3, 1e-4, false));
  EXPECT_EQ(log.timeouts(), 1);
  const gtb::json j = log.summary(2);
  EXPECT_EQ(j["block_timeouts"], 1);
  EXPECT_EQ(j["blocking_kernel"], "none");
  EXPECT_EQ(j["blocked_samples"], 0);
}

// The cold-L2 GEMM times each repetition as its own region (after an untimed flush): folded per
// sampler call, the summary reads every kept sample. Unfolded, summary(3) would read the last three
// repetitions only (all of the last sample, at 3 ms).
TEST(DeviceTiming, RegionsOfOneSampleAreFoldedIntoOneKeptSample) {
  gtb::DeviceTimingLog log;
  auto sampler = [&](int reps, double device_per_rep) {
    const std::size_t first = log.size();
    for (int r = 0; r < reps; ++r) log.add(sample(device_per_rep, device_per_rep / 10, true));
    log.combine_since(first);
  };
  sampler(1, 5.0);  // calibration
  sampler(4, 1.0);  // warm-up
  sampler(4, 1e-3);
  sampler(4, 2e-3);
  sampler(4, 3e-3);
  ASSERT_EQ(log.size(), 5u);
  const gtb::json j = log.summary(3);
  EXPECT_EQ(j["samples"], 3);
  EXPECT_EQ(j["blocked_samples"], 3);
  EXPECT_EQ(j["blocking_kernel"], "all");
  EXPECT_DOUBLE_EQ(j["device_s_median"].get<double>(), 2e-3);  // per repetition, over the three samples
  EXPECT_DOUBLE_EQ(j["enqueue_s_median"].get<double>(), 2e-4);
  EXPECT_EQ(j["block_timeouts"], 0);
}

TEST(DeviceTiming, FoldedSampleIsBlockedOnlyWhenEveryRegionWas) {
  gtb::DeviceTimingLog log;
  log.add(sample(1.0, 0.1, false));  // an earlier sample, left alone
  const std::size_t first = log.size();
  log.add(sample(3e-3, 1e-4, true, true));  // the block timed out: later regions are not held
  log.add(sample(1e-3, 2e-4, false, false, 2));
  log.combine_since(first);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log.timeouts(), 1);
  const gtb::json j = log.summary(1);
  EXPECT_EQ(j["samples"], 1);
  EXPECT_EQ(j["blocking_kernel"], "none");
  EXPECT_EQ(j["not_blocked_reason"], "because");
  EXPECT_EQ(j["block_timeouts"], 1);
  EXPECT_DOUBLE_EQ(j["device_s_median"].get<double>(), 4e-3 / 3);  // 3 repetitions in all
  EXPECT_DOUBLE_EQ(j["enqueue_s_median"].get<double>(), 3e-4 / 3);
  // Nothing or a single region since `first`: the log is unchanged.
  log.combine_since(log.size());
  log.combine_since(log.size() - 1);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_DOUBLE_EQ(log.summary(2)["device_s_median"].get<double>(), (1.0 + 4e-3 / 3) / 2);
}

TEST(DeviceTiming, RecordKeepsDeviceTimingThroughJson) {
  gtb::Record r = gtb::test::named_record("f", "w", "v", gtb::Backend::cuda);
  r.status = gtb::Status::skipped;
  r.status_detail = "test";
  r.device_timing = gtb::device_timing_unlogged();
  const gtb::Record back = gtb::record_from_json(gtb::to_json(r));
  EXPECT_EQ(back.device_timing, r.device_timing);
  gtb::json bad = gtb::to_json(r);
  bad["device_timing"] = 3;
  EXPECT_THROW(gtb::record_from_json(bad), std::runtime_error);
  gtb::Record plain = r;
  plain.device_timing = gtb::json::object();
  EXPECT_FALSE(gtb::to_json(plain).contains("device_timing"));
}
