// main() for GPU test binaries: exits 77 (CTest: Skipped) without a usable GPU, and also when every
// test it ran skipped, so that a binary that tested nothing never counts as a pass.
#include <cstdio>

#include <gtest/gtest.h>

#include "gtb/gpu.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const bool listing = GTEST_FLAG_GET(list_tests);
  if (!listing) {
    if (auto why = gtb::gpu::unavailable_reason()) {
      std::printf("SKIPPED: no usable GPU: %s\n", why->c_str());
      return 77;
    }
  }
  const int rc = RUN_ALL_TESTS();
  if (rc != 0 || listing) return rc;
  // GTEST_SKIP() exits 0 like a pass (e.g. every NCCL test of a build without NCCL): a run in which
  // no test passed tested nothing.
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  if (u.successful_test_count() == 0) {
    std::printf("SKIPPED: no test passed (%d skipped, %d selected)\n", u.skipped_test_count(), u.test_to_run_count());
    return 77;
  }
  return 0;
}
