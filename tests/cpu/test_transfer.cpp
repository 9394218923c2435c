// CPU tests of the transfer family: the latency/bandwidth fit, half-peak, break-even, overlap and
// idle math, the host copy kernels, and the loader ring with a CPU consumer (starved vs fed).
#include <gtest/gtest.h>

#include <omp.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "harness/runtime/stopping.h"
#include "kernels/common/random.h"
#include "kernels/transfer/cpu/transfer.h"
#include "kernels/transfer/loader.h"
#include "kernels/transfer/transfer.h"
#include "tests/common/openmp_threads.h"

namespace t = gtb::transfer;
namespace c = gtb::cpu;

namespace {
std::vector<double> sizes_1k_1g() {
  std::vector<double> v;
  for (auto s : t::log_sizes(1024, 1ll << 30, 4)) v.push_back(double(s));
  return v;
}
}  // namespace

TEST(TransferFit, RecoversExactModelBothWeightings) {
  const double L = 8e-6, B = 25e9;
  const auto x = sizes_1k_1g();
  std::vector<double> y;
  for (double b : x) y.push_back(L + b / B);
  for (auto w : {t::FitWeighting::relative, t::FitWeighting::absolute}) {
    const auto f = t::fit_latency_bandwidth(x, y, w);
    ASSERT_TRUE(f.ok) << f.note;
    EXPECT_NEAR(f.latency_seconds, L, L * 1e-6);
    EXPECT_NEAR(f.bandwidth_bytes_per_second, B, B * 1e-6);
    EXPECT_LT(f.max_rel_residual, 1e-9);
    EXPECT_EQ(f.points, x.size());
  }
}

TEST(TransferFit, RelativeWeightingKeepsLatencyUnderNoise) {
  // +-3% alternating noise: the relative fit must still find the few-microsecond latency that
  // dominates the small sizes; plain least squares is allowed to lose it.
  const double L = 5e-6, B = 50e9;
  const auto x = sizes_1k_1g();
  std::vector<double> y;
  for (std::size_t i = 0; i < x.size(); ++i) y.push_back((L + x[i] / B) * (i % 2 ? 1.03 : 0.97));
  const auto f = t::fit_latency_bandwidth(x, y);
  ASSERT_TRUE(f.ok) << f.note;
  EXPECT_NEAR(f.latency_seconds, L, 0.1 * L);
  EXPECT_NEAR(f.bandwidth_bytes_per_second, B, 0.1 * B);
  EXPECT_GT(f.max_rel_residual, 0.01);
}

TEST(TransferFit, HalfPeakIsLatencyTimesBandwidth) {
  const double L = 4e-6, B = 20e9;
  const std::vector<double> x = {1e3, 1e6, 1e9};
  std::vector<double> y;
  for (double b : x) y.push_back(L + b / B);
  const auto f = t::fit_latency_bandwidth(x, y);
  ASSERT_TRUE(f.ok);
  const double hp = t::half_peak_bytes(f);
  EXPECT_NEAR(hp, L * B, 1e-3 * L * B);
  // At the half-peak size the achieved bandwidth is half the asymptote.
  EXPECT_NEAR(hp / t::model_seconds(f, hp), B / 2, 1e-6 * B);
}

TEST(TransferFit, NegativeInterceptIsClampedToZero) {
  // Pure bandwidth with the smallest point a little fast: the free fit goes below zero latency.
  const std::vector<double> x = {1e3, 1e6, 1e9};
  const std::vector<double> y = {0.5e-7, 1e-4, 1e-1};
  const auto f = t::fit_latency_bandwidth(x, y, t::FitWeighting::absolute);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.latency_seconds, 0.0);
  EXPECT_EQ(f.note, "latency clamped to 0");
  EXPECT_NEAR(f.bandwidth_bytes_per_second, 1e10, 1e8);
  EXPECT_EQ(t::half_peak_bytes(f), 0.0);
}

TEST(TransferFit, DegenerateInputsAreReportedNotFitted) {
  EXPECT_FALSE(t::fit_latency_bandwidth({}, {}).ok);
  EXPECT_FALSE(t::fit_latency_bandwidth({1e6, 1e6}, {1e-4, 1.1e-4}).ok);
  const auto shrinking = t::fit_latency_bandwidth({1e3, 1e6}, {1e-3, 1e-4});
  EXPECT_FALSE(shrinking.ok);
  EXPECT_THROW(t::half_peak_bytes(shrinking), std::invalid_argument);
}

TEST(TransferFit, BadInputThrows) {
  EXPECT_THROW(t::fit_latency_bandwidth({1e3, 1e6}, {1e-6}), std::invalid_argument);
  EXPECT_THROW(t::fit_latency_bandwidth({1e3, 0}, {1e-6, 1e-5}), std::invalid_argument);
  EXPECT_THROW(t::fit_latency_bandwidth({1e3, 1e6}, {1e-6, -1}), std::invalid_argument);
  EXPECT_THROW(t::fit_latency_bandwidth({1e3, 1e6}, {1e-6, NAN}), std::invalid_argument);
}

TEST(TransferBreakEven, CountsCopiesUntilPinningPaysBack) {
  // Pinning costs 10 ms extra; each pinned copy saves 2 ms -> 5 copies.
  const auto n = t::break_even_reuse(10e-3, 5e-3, 3e-3);
  ASSERT_TRUE(n.has_value());
  EXPECT_DOUBLE_EQ(*n, 5.0);
  EXPECT_DOUBLE_EQ(*t::break_even_reuse(0.0, 5e-3, 3e-3), 0.0);
  EXPECT_FALSE(t::break_even_reuse(10e-3, 3e-3, 3e-3).has_value());
  EXPECT_FALSE(t::break_even_reuse(10e-3, 2e-3, 3e-3).has_value());
  EXPECT_THROW(t::break_even_reuse(-1, 5e-3, 3e-3), std::invalid_argument);
  EXPECT_THROW(t::break_even_reuse(1, INFINITY, 3e-3), std::invalid_argument);
}

TEST(TransferOverlap, FractionFromTimes) {
  EXPECT_DOUBLE_EQ(t::overlap_fraction(2, 3, 5), 0.0);  // serial
  EXPECT_DOUBLE_EQ(t::overlap_fraction(2, 3, 3), 1.0);  // copy hidden under compute
  EXPECT_DOUBLE_EQ(t::overlap_fraction(4, 4, 6), 0.5);
  EXPECT_THROW(t::overlap_fraction(0, 3, 3), std::invalid_argument);
  EXPECT_THROW(t::overlap_fraction(1, 3, -1), std::invalid_argument);
}

TEST(TransferIdle, FractionOfSpanWithoutBusyIntervals) {
  EXPECT_DOUBLE_EQ(t::idle_fraction({0, 1, 2}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(t::idle_fraction({0, 2}, {1, 3}), 1.0 / 3.0);
  // Unsorted and overlapping intervals are merged.
  EXPECT_DOUBLE_EQ(t::idle_fraction({4, 0, 0.5}, {5, 1, 2}), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(t::idle_fraction({1}, {1}), 0.0);
  EXPECT_THROW(t::idle_fraction({}, {}), std::invalid_argument);
  EXPECT_THROW(t::idle_fraction({0, 1}, {1}), std::invalid_argument);
  EXPECT_THROW(t::idle_fraction({2}, {1}), std::invalid_argument);
}

TEST(TransferIdle, SmallestFedWorkers) {
  EXPECT_EQ(t::smallest_fed_workers({{8, 0.02}, {1, 0.8}, {4, 0.05}, {2, 0.4}}, 0.1), 4);
  EXPECT_FALSE(t::smallest_fed_workers({{1, 0.8}, {2, 0.4}}, 0.1).has_value());
  EXPECT_FALSE(t::smallest_fed_workers({}, 0.1).has_value());
}

TEST(TransferIdle, SmallestNearBestThroughput) {
  const std::vector<std::pair<std::int64_t, double>> sweep = {{8, 100}, {1, 30}, {4, 95}, {2, 60}};
  EXPECT_EQ(t::smallest_near_best(sweep, 0.9), 4);
  EXPECT_EQ(t::smallest_near_best(sweep, 1.0), 8);
  EXPECT_EQ(t::smallest_near_best(sweep, 0.25), 1);
  EXPECT_FALSE(t::smallest_near_best({}, 0.9).has_value());
  EXPECT_THROW(t::smallest_near_best(sweep, 0.0), std::invalid_argument);
  EXPECT_THROW(t::smallest_near_best(sweep, 1.5), std::invalid_argument);
}

TEST(TransferSizes, LogSpaced) {
  const auto s = t::log_sizes(1024, 1ll << 30, 4);
  ASSERT_EQ(s.size(), 11u);
  EXPECT_EQ(s.front(), 1024);
  EXPECT_EQ(s.back(), 1ll << 30);
  EXPECT_EQ(t::log_sizes(1, 10, 3), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_THROW(t::log_sizes(0, 10, 2), std::invalid_argument);
  EXPECT_THROW(t::log_sizes(10, 1, 2), std::invalid_argument);
  EXPECT_THROW(t::log_sizes(1, 10, 1), std::invalid_argument);
}

TEST(TransferHostCopy, SingleAndParallelCopyEveryByte) {
  for (std::size_t n : {std::size_t(1), std::size_t(63), std::size_t(4097), std::size_t((1 << 20) + 3)}) {
    c::HostBuffer src(n), a(n), b(n);
    gtb::fill_bytes(src.get(), n, 7 + n);
    std::memset(a.get(), 0xA5, n);
    std::memset(b.get(), 0xA5, n);
    c::memcpy_single(a.get(), src.get(), n);
    c::memcpy_parallel(b.get(), src.get(), n);
    EXPECT_EQ(std::memcmp(a.get(), src.get(), n), 0) << n;
    EXPECT_EQ(std::memcmp(b.get(), src.get(), n), 0) << n;
  }
  EXPECT_TRUE(gtb_test::follows_openmp_threads([] { return c::memcpy_threads(); }));
}

TEST(TransferHostCopy, BufferIsPageAlignedAndMovable) {
  c::HostBuffer a(10000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % c::kPageBytes, 0u);
  c::prefault(a.get(), a.bytes());
  void* p = a.get();
  c::HostBuffer b(std::move(a));
  EXPECT_EQ(b.get(), p);
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.bytes(), 10000u);
}

TEST(TransferHostCopy, AllocTouchTouchesEveryPage) {
  // (page index) mod 256 is written at each page start: 0 + 1 + 2 over 3 pages, and a partial
  // last page is touched too.
  EXPECT_EQ(c::alloc_touch_free(3 * c::kPageBytes), 3u);
  EXPECT_EQ(c::alloc_touch_free(2 * c::kPageBytes + 1), 3u);
  EXPECT_EQ(c::alloc_touch_free(300 * c::kPageBytes), 299u * 300u / 2u - 256u * 44u);
}

TEST(TransferHostCopy, GatherPacksSamplesInOrder) {
  const std::size_t count = 5, sb = 37;
  std::vector<std::vector<unsigned char>> samples(count, std::vector<unsigned char>(sb));
  std::vector<const void*> ptrs;
  for (std::size_t i = 0; i < count; ++i) {
    gtb::fill_bytes(samples[i].data(), sb, 100 + i);
    ptrs.push_back(samples[i].data());
  }
  std::vector<unsigned char> out(count * sb, 0xA5);
  c::gather(out.data(), ptrs.data(), count, sb);
  for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(std::memcmp(out.data() + i * sb, samples[i].data(), sb), 0);
}

TEST(TransferLoaderData, BatchesAreDistinctAndChecksumsAgree) {
  for (std::size_t n : {std::size_t(8), std::size_t(1001), std::size_t(4096)}) {
    std::vector<unsigned char> a(n), b(n);
    c::fill_batch(a.data(), n, 1, 3);
    c::fill_batch(b.data(), n, 1, 4);
    EXPECT_TRUE(c::batch_matches(a.data(), n, 1, 3));
    EXPECT_FALSE(c::batch_matches(b.data(), n, 1, 3));
    EXPECT_EQ(c::checksum_words(a.data(), n), c::expected_batch_checksum(n, 1, 3));
    EXPECT_NE(c::checksum_words(a.data(), n), c::checksum_words(b.data(), n));
    a[n - 1] ^= 1;  // a flipped tail byte must show
    EXPECT_FALSE(c::batch_matches(a.data(), n, 1, 3));
  }
}

TEST(TransferRing, RejectsBadConstruction) {
  int x = 0;
  EXPECT_THROW(c::BatchRing({}, 4), std::invalid_argument);
  EXPECT_THROW(c::BatchRing({&x, nullptr}, 4), std::invalid_argument);
  EXPECT_THROW(c::BatchRing({&x}, -1), std::invalid_argument);
}

TEST(TransferRing, SlotsRotateAndBatchesGoInOrder) {
  int s0 = 0, s1 = 0;
  c::BatchRing ring({&s0, &s1}, 3);
  void* slot = nullptr;
  ASSERT_EQ(ring.claim(&slot), 0);
  EXPECT_EQ(slot, &s0);
  ring.publish(0);
  ASSERT_EQ(ring.claim(&slot), 1);
  EXPECT_EQ(slot, &s1);
  EXPECT_THROW(ring.wait_ready(1), std::runtime_error);  // batch 0 comes first
  EXPECT_EQ(ring.wait_ready(0), &s0);
  EXPECT_THROW(ring.release(1), std::runtime_error);
  ring.release(0);
  ASSERT_EQ(ring.claim(&slot), 2);  // slot 0 is free again
  EXPECT_EQ(slot, &s0);
  EXPECT_EQ(ring.claim(&slot), -1);  // all batches handed out
}

TEST(TransferRing, CloseUnblocksWaiters) {
  int s0 = 0;
  c::BatchRing ring({&s0}, 4);
  void* slot = nullptr;
  ASSERT_EQ(ring.claim(&slot), 0);
  std::atomic<std::int64_t> got{99};
  std::thread producer([&] {
    void* s = nullptr;
    got = ring.claim(&s);  // blocks: batch 1 needs slot 0, which batch 0 still holds
  });
  std::thread consumer([&] { EXPECT_THROW(ring.wait_ready(0), std::runtime_error); });
  c::sleep_for(0.02);
  ring.close();
  producer.join();
  consumer.join();
  EXPECT_EQ(got.load(), -1);
}

TEST(TransferLoader, EveryBatchArrivesOnceInOrderIntact) {
  const std::size_t bytes = 3000;
  for (int workers : {1, 3, 8})
    for (int depth : {1, 2, 5}) {
      std::vector<c::HostBuffer> bufs;
      std::vector<void*> slots;
      for (int d = 0; d < depth; ++d) {
        bufs.emplace_back(bytes);
        slots.push_back(bufs.back().get());
      }
      std::vector<std::int64_t> seen;
      int bad = 0;
      const auto run = c::run_loader(
          {workers, depth, 40}, slots,
          [&](std::int64_t b, void* s) {
            c::fill_batch(s, bytes, 9, std::uint64_t(b));
            c::sleep_for(1e-4 * double(b % 3));  // finish out of order
          },
          [&](std::int64_t b, void* s) {
            seen.push_back(b);
            if (!c::batch_matches(s, bytes, 9, std::uint64_t(b))) ++bad;
            std::memset(s, 0xA5, bytes);  // a batch must be rewritten before reuse
          });
      ASSERT_EQ(seen.size(), 40u);
      for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(seen[std::size_t(i)], i);
      EXPECT_EQ(bad, 0) << "workers " << workers << " depth " << depth;
      EXPECT_EQ(run.busy_start.size(), 40u);
      EXPECT_GE(run.idle_fraction, 0.0);
      EXPECT_LE(run.idle_fraction, 1.0);
    }
}

TEST(TransferLoader, ErrorsPropagateWithoutHanging) {
  int s0 = 0, s1 = 0;
  const std::vector<void*> slots = {&s0, &s1};
  EXPECT_THROW(c::run_loader(
                   {2, 2, 20}, slots,
                   [](std::int64_t b, void*) {
                     if (b == 5) throw std::runtime_error("decode failed");
                   },
                   [](std::int64_t, void*) {}),
               std::runtime_error);
  EXPECT_THROW(c::run_loader(
                   {4, 2, 20}, slots, [](std::int64_t, void*) {},
                   [](std::int64_t b, void*) {
                     if (b == 3) throw std::logic_error("consumer failed");
                   }),
               std::logic_error);
}

TEST(TransferLoader, InvalidConfigIsAClearError) {
  int s0 = 0;
  const std::vector<void*> one = {&s0};
  auto nop = [](std::int64_t, void*) {};
  EXPECT_THROW(c::run_loader({0, 1, 4}, one, nop, nop), std::invalid_argument);
  EXPECT_THROW(c::run_loader({1, 0, 4}, one, nop, nop), std::invalid_argument);
  EXPECT_THROW(c::run_loader({1, 1, 0}, one, nop, nop), std::invalid_argument);
  EXPECT_THROW(c::run_loader({1, 2, 4}, one, nop, nop), std::invalid_argument);
}

TEST(TransferLoader, FewWorkersStarveTheConsumerEnoughWorkersFeedIt) {
  // Sleep-based preprocessing (I/O-like) keeps this robust on a loaded 2-core machine: a batch
  // takes 24 ms to produce and 3 ms to consume, so 1 worker leaves the consumer ~85% idle and 16
  // workers can produce ~5x faster than the consumer needs.
  const std::int64_t batches = 30;
  auto run_with = [&](int workers) {
    const int depth = 16;
    std::vector<c::HostBuffer> bufs;
    std::vector<void*> slots;
    for (int d = 0; d < depth; ++d) {
      bufs.emplace_back(4096);
      slots.push_back(bufs.back().get());
    }
    return c::run_loader(
        {workers, depth, batches}, slots,
        [](std::int64_t b, void* s) {
          c::fill_batch(s, 4096, 1, std::uint64_t(b));
          c::sleep_for(24e-3);
        },
        [](std::int64_t, void* s) {
          (void)c::checksum_words(s, 4096);
          c::sleep_for(3e-3);
        });
  };
  const auto starved = run_with(1);
  const auto fed = run_with(16);
  EXPECT_GT(starved.idle_fraction, 0.5);
  EXPECT_LT(fed.idle_fraction, 0.35);
  EXPECT_GT(starved.seconds, 2.0 * fed.seconds);
  EXPECT_EQ(t::smallest_fed_workers({{1, starved.idle_fraction}, {16, fed.idle_fraction}}, 0.35), 16);
}

TEST(TransferHostCopy, ImpossibleAllocationsThrowBadAlloc) {
  // The bench turns std::bad_alloc into gtb::OutOfMemory (a skipped record), so it must be thrown,
  // not crash. ASan aborts on absurd malloc sizes by design, so that half runs unsanitized only.
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_THROW(c::HostBuffer(std::size_t(1) << 62), std::bad_alloc);
#endif
  EXPECT_THROW(c::alloc_touch_free(std::size_t(1) << 62), std::bad_alloc);
  EXPECT_GT(c::host_available_bytes(), std::size_t(0));
}

TEST(TransferWork, SpinBurnsThreadCpuTime) {
  // A fixed amount of CPU work: the wall clock can only take longer (when the thread is preempted).
  const double w0 = gtb::host_seconds(), c0 = c::thread_cpu_seconds();
  c::spin_for(0.02);
  EXPECT_GE(c::thread_cpu_seconds() - c0, 0.02);
  EXPECT_GE(gtb::host_seconds() - w0, 0.0199);
  const double s0 = c::thread_cpu_seconds(), t0 = gtb::host_seconds();
  c::sleep_for(0.02);
  EXPECT_GE(gtb::host_seconds() - t0, 0.0199);
  EXPECT_LT(c::thread_cpu_seconds() - s0, 0.015);  // sleeping does not burn CPU
}

TEST(TransferOverlapMath, ClosedFormMatchesTheIteration) {
  // The GPU overlap check compares against 1 + a^k (x - 1); the float iteration must stay within
  // the tolerance it uses (1e-4 relative + 1e-4 absolute) at short and long kernel lengths.
  for (int iters : {1, 7, 1000, 20000})
    for (float x0 : {0.5f, 0.9f, 1.3f, 1.5f}) {
      const double ref = 1.0 + std::pow(0.9990234375, iters) * (double(x0) - 1.0);
      EXPECT_NEAR(double(t::overlap_compute(x0, iters)), ref, 1e-4 + 1e-4 * std::fabs(ref)) << iters << " " << x0;
    }
  EXPECT_EQ(t::overlap_compute(0.75f, 0), 0.75f);
}

TEST(TransferHostCopy, ThreadCountFollowsTheParallelThreshold) {
  // A copy below the threshold runs on the calling thread, and says so: a plausibility check reads
  // `threads` to compare an all-core copy with its one-thread twin.
  EXPECT_EQ(c::memcpy_threads(4096), 1);
  EXPECT_EQ(c::memcpy_threads(c::kParallelCopyMinBytes - 1), 1);
  EXPECT_EQ(c::memcpy_threads(c::kParallelCopyMinBytes), omp_get_max_threads());
}
