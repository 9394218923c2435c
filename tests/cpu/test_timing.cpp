// Tests of the harness's timing: the exec forms of State (the harness owns warm-up, calibration and
// sampling), its probe, and the host timing loop (batch_seconds) under them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtb/gtb.h"
#include "kernels/common/clock.h"

namespace {

TEST(BatchSeconds, CallsTheWorkRepsTimesAndFinishBeforeAndAtTheEnd) {
  int calls = 0, finishes = 0, calls_at_first_finish = -1, calls_at_last_finish = -1;
  const double t = gtb::batch_seconds(7, [&] { ++calls; }, [&] {
    (finishes == 0 ? calls_at_first_finish : calls_at_last_finish) = calls;
    ++finishes;
  });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(finishes, 2);
  EXPECT_EQ(calls_at_first_finish, 0);  // the untimed drain before the span
  EXPECT_EQ(calls_at_last_finish, 7);
  EXPECT_GE(t, 0.0);
  EXPECT_GE(gtb::batch_seconds(0, [&] { ++calls; }), 0.0);
  EXPECT_EQ(calls, 7);  // zero repetitions run nothing
}

TEST(BatchSeconds, SpansTheWorkAndTheFinalFinishOnTheHostClock) {
  const auto nap = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  const double t0 = gtb::host_seconds();
  const double t = gtb::batch_seconds(3, nap, nap);
  const double outside = gtb::host_seconds() - t0;
  EXPECT_GE(t, 4 * 0.002 * 0.99);     // three naps plus the finish at the end
  EXPECT_LE(t, outside - 0.002 * 0.99);  // the finish before the span is not in it
}

TEST(BatchSeconds, AnExceptionFromTheWorkReachesTheCaller) {
  int calls = 0;
  EXPECT_THROW(gtb::batch_seconds(5, [&] { if (++calls == 2) throw gtb::Skip("stop"); }), gtb::Skip);
  EXPECT_EQ(calls, 2);
}

// A record and its State under a small, fixed rule: no time budget or noise target ends sampling
// early, so the number of samples is the rule's max_samples exactly.
struct Fixture {
  gtb::Record r;
  gtb::StopRule rule;
  Fixture(double min_sample_seconds = 1e-9) {
    r.id = "t/w/v/cpu/n=1";
    r.family = "t";
    r.backend = gtb::Backend::cpu;
    r.metric = {"time", "s", 1.0, gtb::MetricKind::time};
    rule.warmup_samples = 2;
    rule.warmup_seconds = 0;
    rule.min_samples = 4;
    rule.max_samples = 4;
    rule.noise_target = 1e-12;
    rule.budget_seconds = 1e6;
    rule.hard_min_samples = 4;
    rule.min_sample_seconds = min_sample_seconds;
  }
};

TEST(Exec, CallsTheWorkExactlyAsOftenAsTheHarnessSamples) {
  // Each call takes about 1 ms and a sample must last 1 us: calibration stops at one repetition,
  // so the work runs once in calibration, once in the second warm-up sample and once per sample.
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  int calls = 0;
  const gtb::SampleSet& s = st.exec([&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_EQ(s.reps_per_sample, 1);
  EXPECT_EQ(s.warmup_samples, 2);  // the calibration sample counts as the first warm-up
  ASSERT_EQ(s.seconds_per_rep.size(), 4u);
  EXPECT_EQ(s.stop_reason, "max_samples");
  EXPECT_EQ(calls, 1 + 1 + 4);
  EXPECT_EQ(f.r.status, gtb::Status::ok);
  EXPECT_EQ(f.r.clock, gtb::Clock::host_wall);
  EXPECT_EQ(f.r.samples.size(), 4u);
  EXPECT_GE(s.stats.median, 0.001 * 0.99);
}

TEST(Exec, CalibrationRepeatsFastWorkAndEveryRepetitionIsCalled) {
  // A 2 ms sample of near-free work: the harness grows the repetitions; every call it asks for runs.
  Fixture f(2e-3);
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  std::int64_t calls = 0;
  const gtb::SampleSet& s = st.exec([&] { ++calls; });
  EXPECT_GT(s.reps_per_sample, 1);
  // calls = the calibration samples' repetitions (1, then growing up to reps_per_sample), then one
  // warm-up sample and four samples of reps_per_sample each.
  const std::int64_t calibration = s.warmup_samples - 1, reps = s.reps_per_sample;
  ASSERT_GE(calibration, 2);
  EXPECT_GE(calls, 1 + reps + 5 * reps);
  EXPECT_LE(calls, 1 + (calibration - 1) * reps + 5 * reps);
  EXPECT_EQ(f.r.reps_per_sample, s.reps_per_sample);
}

TEST(Exec, EverySampleCallsTheWorkTheRepetitionsTheHarnessChose) {
  // finish() brackets every sample (once before its span, once at its end), so the calls between
  // the two are that sample's repetitions: 1 first, growing through calibration, then
  // reps_per_sample for the warm-up sample and the four kept samples, and nothing else.
  Fixture f(2e-3);
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  std::int64_t calls = 0, in_sample = 0;
  bool open = false;
  std::vector<std::int64_t> per_sample;
  const gtb::SampleSet& s = st.exec([&] {
    ++calls;
    ++in_sample;
  }, [&] {
    if (open) per_sample.push_back(in_sample);
    open = !open;
    in_sample = 0;
  });
  ASSERT_EQ(per_sample.size(), std::size_t(s.warmup_samples + 4));
  EXPECT_EQ(per_sample.front(), 1);
  for (std::size_t i = 1; i < per_sample.size(); ++i) EXPECT_GE(per_sample[i], per_sample[i - 1]);
  for (std::size_t i = per_sample.size() - 5; i < per_sample.size(); ++i) EXPECT_EQ(per_sample[i], s.reps_per_sample);
  std::int64_t sum = 0;
  for (std::int64_t n : per_sample) sum += n;
  EXPECT_EQ(calls, sum);
  EXPECT_GT(s.reps_per_sample, 1);
}

TEST(Exec, TheFinishFormDrainsBeforeAndEndsEverySampleInsideTheSpan) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  int calls = 0, finishes = 0;
  st.exec([&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }, [&] { ++finishes; });
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(finishes, 2 * 6);  // one untimed drain and one timed finish per sample of one repetition
}

TEST(Exec, HostTimeExcludesWorkOutsideTheSpan) {
  // The untimed drain before each sample sleeps 5 ms, the work 1 ms: the samples see only the work.
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  bool before = true;
  const gtb::SampleSet& s = st.exec([&] {
    before = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }, [&] {
    if (before) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    before = true;  // the next call of finish is the drain before the next sample
  });
  EXPECT_GE(s.stats.median, 0.001 * 0.99);
  EXPECT_LT(s.stats.median, 0.005);
}

TEST(Exec, RefusedBeforeCheck) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  int calls = 0;
  EXPECT_THROW(st.exec([&] { ++calls; }), std::logic_error);
  EXPECT_THROW(st.exec([&] { ++calls; }, [] {}), std::logic_error);
  EXPECT_THROW(st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t) { return double(++calls); }),
               std::logic_error);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(f.r.stats.has_value());
}

TEST(Exec, RefusedAfterAFailedCheck) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(false, "element 3: got 1, expected 2");
  int calls = 0;
  EXPECT_ANY_THROW(st.exec([&] { ++calls; }));
  EXPECT_ANY_THROW(st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t) { return double(++calls); }));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(f.r.status, gtb::Status::invalid);
  EXPECT_FALSE(f.r.stats.has_value());
}

TEST(Exec, TheSelfTimedBatchGetsTheRepetitionsTheHarnessChose) {
  // The body claims 10 us per repetition and a sample must last 1 ms: the harness grows the
  // repetitions until it does, and every sample after calibration gets the final count.
  Fixture f(1e-3);
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  std::vector<std::int64_t> asked;
  const gtb::SampleSet& s = st.exec_batch_self_timed(gtb::Clock::cuda_event, [&](std::int64_t reps) {
    asked.push_back(reps);
    return 1e-5 * double(reps);
  });
  ASSERT_GE(asked.size(), 2u + 4u);
  EXPECT_EQ(asked.front(), 1);
  EXPECT_GE(s.reps_per_sample, 100);
  for (std::size_t i = asked.size() - 5; i < asked.size(); ++i) EXPECT_EQ(asked[i], s.reps_per_sample);  // warm-up + samples
  EXPECT_DOUBLE_EQ(s.stats.median, 1e-5);
  EXPECT_EQ(f.r.clock, gtb::Clock::cuda_event);
  EXPECT_EQ(f.r.reps_per_sample, s.reps_per_sample);
}

TEST(Exec, ABatchThatReturnsANegativeTimeFails) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  st.check(true, "ok");
  EXPECT_THROW(st.exec_batch_self_timed(gtb::Clock::host_wall, [](std::int64_t) { return -1.0; }), std::runtime_error);
}

TEST(Probe, CalibratesToTheSampleLengthAndLeavesTheRecordAlone) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  int calls = 0;
  // About 1 ms a call, samples of at least 5 ms: one untimed call, one timed, then 3 samples of about 5.
  const double s = st.probe([&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }, gtb::ProbeRule{3, 5e-3, 0});
  EXPECT_GE(s, 0.001 * 0.99);
  EXPECT_LT(s, 0.004);
  EXPECT_GE(calls, 2 + 3);
  EXPECT_LE(calls, 2 + 3 * 5);
  EXPECT_FALSE(f.r.stats.has_value());  // a probe is no measurement of the record
  EXPECT_TRUE(f.r.samples.empty());
}

TEST(Probe, FixedRepetitionsRunExactlyThatOftenAndFinishDrains) {
  Fixture f;
  gtb::State st(f.r, gtb::Suite::quick, f.rule);
  int calls = 0, finishes = 0;
  st.probe([&] { ++calls; }, [&] { ++finishes; }, gtb::ProbeRule{1, 0.02, 5});
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(finishes, 2);
  EXPECT_THROW(st.probe([] {}, gtb::ProbeRule{0, 0.02, 1}), std::invalid_argument);
  EXPECT_THROW(st.probe([] {}, gtb::ProbeRule{1, 0.0, 0}), std::invalid_argument);
  EXPECT_THROW(st.probe([] {}, gtb::ProbeRule{1, 0.02, -1}), std::invalid_argument);
}

}  // namespace
