// Every measuring process flushes denormals on every CPU thread (kernels/common/denormals.h).
#include <gtest/gtest.h>
#include <omp.h>

#include <thread>

#include "kernels/common/denormals.h"

namespace {
// A denormal input times one, and a normal input halved into the denormal range: both zero when the
// thread flushes, both not otherwise.
bool flushes_here() {
  volatile float denormal_in = 1e-39f, small = 1.5e-38f, one = 1.0f, half = 0.5f;
  const float a = denormal_in * one, b = small * half;
  return a == 0.0f && b == 0.0f;
}
bool computes_here() {
  volatile float denormal_in = 1e-39f, small = 1.5e-38f, one = 1.0f, half = 0.5f;
  const float a = denormal_in * one, b = small * half;
  return a != 0.0f && b != 0.0f;
}
}  // namespace

// Run in a thread of its own (its OpenMP pool is its own and ends with it): before, the thread
// computes denormals; after, it and every thread of its pool flush them, and a thread it starts
// later inherits that.
TEST(Denormals, FlushedOnEveryThreadAfterTheSwitch) {
#if GTB_HAVE_MXCSR
  std::thread t([] {
    EXPECT_FALSE(gtb::denormals_flushed_here());
    EXPECT_TRUE(computes_here());
    EXPECT_NE(gtb::denormals_mode().find("computed"), std::string::npos);
    EXPECT_TRUE(gtb::flush_denormals_on_every_thread());
    EXPECT_TRUE(flushes_here());
    int flushing = 0, threads = 0;
#pragma omp parallel num_threads(3) reduction(+ : flushing, threads)
    {
      flushing += flushes_here() ? 1 : 0;
      threads += 1;
    }
    EXPECT_EQ(flushing, threads);
    bool child = false;
    std::thread([&] { child = flushes_here(); }).join();
    EXPECT_TRUE(child);
    EXPECT_NE(gtb::denormals_mode().find("FTZ and DAZ"), std::string::npos);
  });
  t.join();
  EXPECT_TRUE(computes_here());  // this thread was left as it was
#else
  GTEST_SKIP() << "no MXCSR on this CPU";
#endif
}
