// kernels/common/cuda/graph.cpp against the host stand-in's graph capture (tests/cpu/cuda_emu): a
// failed end of capture is reported where it happens and leaves no stale last error for the next
// launch check to report as its own; every graph made is destroyed.
#include <stdexcept>

#include <gtest/gtest.h>

// The translation units themselves, compiled for the host stand-in; check.cpp's error path serves
// every stand-in test of this binary.
#include "kernels/common/cuda/check.cpp"
#include "kernels/common/cuda/graph.cpp"

namespace {
using gtb::cuda::CapturedGraph;

struct Fail {
  Fail() { gtb_emu::fail_end_capture = true; }
  ~Fail() { gtb_emu::fail_end_capture = false; }
};

TEST(CapturedGraphEmulated, CapturesInstantiatesAndDestroys) {
  int enqueued = 0;
  {
    CapturedGraph g(nullptr, [&](cudaStream_t) { ++enqueued; });
    EXPECT_EQ(g.nodes(), 1u);
    g.launch(nullptr);
  }
  EXPECT_EQ(enqueued, 1);
  EXPECT_EQ(gtb_emu::graphs_alive, 0);
}

// The stand-in's failed end of capture leaves its error as the last error, as CUDA's does: without
// the clearing in graph.cpp, the check below would see it.
TEST(CapturedGraphEmulated, AFailedEndOfCaptureLeavesAStaleErrorUncleared) {
  Fail fail;
  cudaGraph_t g = nullptr;
  EXPECT_NE(cudaStreamEndCapture(nullptr, &g), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CapturedGraphEmulated, AFailedEndOfCaptureThrowsAndClearsTheLastError) {
  {
    Fail fail;
    try {
      CapturedGraph g(nullptr, [](cudaStream_t) {});
      FAIL() << "a failed end of capture was not reported";
    } catch (const gtb::CudaError& e) {
      EXPECT_EQ(e.code, cudaErrorStreamCaptureInvalidated);
    }
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a stale error for the next launch check";
  }
  EXPECT_EQ(gtb_emu::graphs_alive, 0);
}

// An enqueue that throws during capture: its exception passes on, the capture is ended (here it
// fails, as an invalidated capture's end does) and no stale error is left.
TEST(CapturedGraphEmulated, AThrowingEnqueuePassesItsErrorOnAndClearsTheLastError) {
  Fail fail;
  EXPECT_THROW(CapturedGraph(nullptr, [](cudaStream_t) { throw std::runtime_error("launch failed in capture"); }),
               std::runtime_error);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(gtb_emu::graphs_alive, 0);
}

}  // namespace
