// main() for GPU test binaries: without a usable GPU every test exits 77, which CTest shows as Skipped.
#include <cstdio>

#include <gtest/gtest.h>

#include "harness/gpu.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!GTEST_FLAG_GET(list_tests)) {
    if (auto why = gtb::gpu::unavailable_reason()) {
      std::printf("SKIPPED: no usable GPU: %s\n", why->c_str());
      return 77;
    }
  }
  return RUN_ALL_TESTS();
}
