// Tests of the harness's host timing loop (time_host) and the host clock kernels share with it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "harness/runtime/gtb.h"
#include "kernels/common/clock.h"

namespace {

TEST(TimeHost, CallsTheWorkRepsTimesAndFinishOnceAtTheEnd) {
  int calls = 0, finishes = 0, calls_at_finish = -1;
  const double t = gtb::time_host(
      7, [&] { ++calls; }, [&] { calls_at_finish = calls, ++finishes; });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(finishes, 1);
  EXPECT_EQ(calls_at_finish, 7);
  EXPECT_GE(t, 0.0);
  EXPECT_GE(gtb::time_host(0, [&] { ++calls; }), 0.0);
  EXPECT_EQ(calls, 7);  // zero repetitions run nothing
}

TEST(TimeHost, SpansTheWorkAndTheFinishOnTheHostClock) {
  const auto nap = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  const double t0 = gtb::host_seconds();
  const double t = gtb::time_host(3, nap, nap);
  const double outside = gtb::host_seconds() - t0;
  EXPECT_GE(t, 4 * 0.002 * 0.99);  // three naps plus the finish
  EXPECT_LE(t, outside);           // measured inside the caller's span, on the same clock
}

TEST(TimeHost, AnExceptionFromTheWorkReachesTheCaller) {
  int calls = 0;
  EXPECT_THROW(gtb::time_host(5, [&] { if (++calls == 2) throw gtb::Skip("stop"); }), gtb::Skip);
  EXPECT_EQ(calls, 2);
}

}  // namespace
