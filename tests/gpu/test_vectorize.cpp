// Every GPU variant of the vectorize family against the float64 CPU reference (skipped without a GPU).
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtb/cuda_timing.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/vectorize/cpu/vectorize.h"
#include "kernels/vectorize/cuda/vectorize.h"
#include "kernels/vectorize/elementwise.h"

namespace {

using gtb::cuda::Form;

constexpr float kA = 0.75f;
constexpr gtb::ChainParams kChain{1.5f, 0.25f};
// Odd sizes and every n % 4 for the float4 tail; one size large enough for a multi-wave grid.
const std::vector<std::size_t> kSizes = {1, 2, 3, 4, 5, 7, 1023, 1024, 1025, 4099, (std::size_t(1) << 20) + 3};
constexpr std::size_t kSerialMax = 5000;  // one GPU thread per element chain is slow

// Runs `enqueue` on device copies of x (and y0 for the axpy), returns the result on the host.
struct Problem {
  bool axpy;
  std::size_t n;
  std::vector<float> x, y0;
  std::vector<double> ref;

  Problem(bool is_axpy, std::size_t count) : axpy(is_axpy), n(count), x(count), y0(count), ref(count) {
    gtb::fill_uniform(x.data(), n, 101, is_axpy ? 0.5f : -2.0f, is_axpy ? 1.5f : 2.0f);
    gtb::fill_uniform(y0.data(), n, 102, -1.0f, 1.0f);
    if (axpy)
      gtb::cpu::axpy_reference(kA, x.data(), y0.data(), ref.data(), n);
    else
      gtb::cpu::chain_reference(kChain, x.data(), ref.data(), n);
  }

  gtb::ErrorReport run(const std::function<void(const float*, float*, cudaStream_t)>& enqueue) const {
    const std::size_t bytes = n * sizeof(float);
    gtb::cuda::DeviceBuffer dx(bytes), dy(bytes);
    gtb::cuda::Stream s;
    GTB_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), bytes, cudaMemcpyHostToDevice));
    if (axpy)
      GTB_CUDA_CHECK(cudaMemcpy(dy.get(), y0.data(), bytes, cudaMemcpyHostToDevice));
    else
      GTB_CUDA_CHECK(cudaMemset(dy.get(), 0xFF, bytes));  // NaN poison
    // The non-blocking stream does not wait for the legacy stream's copies and memset.
    GTB_CUDA_CHECK(cudaDeviceSynchronize());
    enqueue(dx.as<float>(), dy.as<float>(), s.get());
    s.sync();
    std::vector<float> got(n);
    GTB_CUDA_CHECK(cudaMemcpy(got.data(), dy.get(), bytes, cudaMemcpyDeviceToHost));
    return axpy ? gtb::compare_elementwise(got.data(), ref.data(), n, gtb::kAxpyRtol, gtb::kAxpyAtol)
                : gtb::compare_elementwise(got.data(), ref.data(), n, gtb::kChainRtol, gtb::kChainAtol);
  }
};

void expect_form(Form form, std::size_t chunk, std::size_t max_n = ~std::size_t(0)) {
  for (bool axpy : {true, false}) {
    if (axpy && form == Form::unfused) continue;
    for (std::size_t n : kSizes) {
      if (n > max_n) continue;
      const Problem p(axpy, n);
      std::int64_t launched = -1;
      const auto rep = p.run([&](const float* x, float* y, cudaStream_t s) {
        launched = axpy ? gtb::cuda::axpy(form, kA, x, y, n, chunk, s) : gtb::cuda::chain(form, kChain, x, y, n, chunk, s);
      });
      EXPECT_TRUE(rep.ok) << gtb::cuda::to_string(form) << (axpy ? " axpy" : " chain") << " n=" << n
                          << " chunk=" << chunk << ": " << rep.detail;
      EXPECT_EQ(launched, gtb::cuda::launches(form, n, chunk));
    }
  }
}

TEST(VectorizeGpu, LaunchLoopMatchesReferenceForEveryChunk) {
  for (std::size_t chunk : {std::size_t(7), std::size_t(256), std::size_t(1000), std::size_t(4096)})
    expect_form(Form::launch_loop, chunk, chunk < 256 ? 5000 : ~std::size_t(0));
}
TEST(VectorizeGpu, SerialMatchesReference) { expect_form(Form::serial, 0, kSerialMax); }
TEST(VectorizeGpu, ScalarMatchesReference) { expect_form(Form::scalar, 0); }
TEST(VectorizeGpu, Vec4MatchesReferenceWithEveryTail) { expect_form(Form::vec4, 0); }
TEST(VectorizeGpu, UnfusedChainMatchesReference) { expect_form(Form::unfused, 0); }

TEST(VectorizeGpu, ThrustMatchesReference) {
  for (bool axpy : {true, false})
    for (std::size_t n : kSizes) {
      const Problem p(axpy, n);
      const auto rep = p.run([&](const float* x, float* y, cudaStream_t s) {
        if (axpy)
          gtb::cuda::axpy_thrust(kA, x, y, n, s);
        else
          gtb::cuda::chain_thrust(kChain, x, y, n, s);
      });
      EXPECT_TRUE(rep.ok) << (axpy ? "axpy" : "chain") << " n=" << n << ": " << rep.detail;
    }
}

TEST(VectorizeGpu, GraphOfTheLaunchLoopMatchesReference) {
  for (bool axpy : {true, false})
    for (std::size_t n : {std::size_t(5), std::size_t(4099), (std::size_t(1) << 20) + 3}) {
      const std::size_t chunk = 1024;
      const Problem p(axpy, n);
      std::size_t nodes = 0;
      const auto rep = p.run([&](const float* x, float* y, cudaStream_t s) {
        gtb::cuda::CapturedGraph g(s, [&](cudaStream_t cs) {
          if (axpy)
            gtb::cuda::axpy(Form::launch_loop, kA, x, y, n, chunk, cs);
          else
            gtb::cuda::chain(Form::launch_loop, kChain, x, y, n, chunk, cs);
        });
        nodes = g.nodes();
        g.launch(s);
        GTB_CUDA_CHECK(cudaStreamSynchronize(s));  // the graph is destroyed on return
      });
      EXPECT_TRUE(rep.ok) << (axpy ? "axpy" : "chain") << " n=" << n << ": " << rep.detail;
      EXPECT_EQ(static_cast<std::int64_t>(nodes), gtb::cuda::launches(Form::launch_loop, n, chunk));
    }
}

TEST(VectorizeGpu, CaptureRunsNothingAndReplaysRepeat) {
  const std::size_t n = 3000;
  std::vector<float> x(n, 1.0f), y(n, 0.5f);
  gtb::cuda::DeviceBuffer dx(n * 4), dy(n * 4);
  gtb::cuda::Stream s;
  GTB_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), n * 4, cudaMemcpyHostToDevice));
  GTB_CUDA_CHECK(cudaMemcpy(dy.get(), y.data(), n * 4, cudaMemcpyHostToDevice));
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  gtb::cuda::CapturedGraph g(s.get(), [&](cudaStream_t cs) {
    gtb::cuda::axpy(Form::launch_loop, 0.25f, dx.as<float>(), dy.as<float>(), n, 512, cs);
  });
  s.sync();
  GTB_CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), n * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(y[0], 0.5f) << "capture must not execute the kernels";
  g.launch(s.get());
  g.launch(s.get());
  s.sync();
  GTB_CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), n * 4, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 1.0f) << i;
}

TEST(VectorizeGpu, BadArgumentsThrow) {
  gtb::cuda::DeviceBuffer dx(4096), dy(4096);
  gtb::cuda::Stream s;
  const float* x = dx.as<float>();
  float* y = dy.as<float>();
  EXPECT_THROW(gtb::cuda::axpy(Form::vec4, kA, x + 1, y, 100, 0, s.get()), std::invalid_argument);
  EXPECT_THROW(gtb::cuda::chain(Form::vec4, kChain, x, y + 1, 100, 0, s.get()), std::invalid_argument);
  EXPECT_THROW(gtb::cuda::chain(Form::unfused, kChain, x, y + 2, 100, 0, s.get()), std::invalid_argument);
  EXPECT_THROW(gtb::cuda::axpy(Form::launch_loop, kA, x, y, 100, 0, s.get()), std::invalid_argument);
  EXPECT_THROW(gtb::cuda::axpy(Form::unfused, kA, x, y, 100, 0, s.get()), std::invalid_argument);
  // Nothing to do is not an error, and launches nothing.
  EXPECT_EQ(gtb::cuda::axpy(Form::vec4, kA, x + 1, y, 0, 0, s.get()), 0);
  EXPECT_EQ(gtb::cuda::chain(Form::launch_loop, kChain, x, y, 0, 0, s.get()), 0);
  s.sync();
}

TEST(VectorizeGpu, LaunchCountsPerForm) {
  EXPECT_EQ(gtb::cuda::launches(Form::launch_loop, 1000, 256), 4);
  EXPECT_EQ(gtb::cuda::launches(Form::launch_loop, 1024, 256), 4);
  EXPECT_EQ(gtb::cuda::launches(Form::unfused, 10, 0), 3);
  EXPECT_EQ(gtb::cuda::launches(Form::vec4, 10, 0), 1);
  EXPECT_EQ(gtb::cuda::launches(Form::serial, 0, 0), 0);
}

}  // namespace
