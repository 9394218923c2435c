// The vectorize family's CUDA kernels (scalar, serial, launch loop, float4 with its grid-stride loop
// and scalar tail, the three unfused passes), their own code run on CPU threads through the host
// stand-in of tests/cpu/cuda_emu (a device of two SMs, so the float4 grid strides several times),
// against the float64 references; a planted indexing error (a grid's last block run as block 0)
// must fail every multi-block form.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in, and check.cpp's error path.
#include "kernels/common/cuda/check.cpp"
#include "kernels/vectorize/cuda/vectorize.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/vectorize/cpu/vectorize.h"

namespace {
namespace gc = gtb::cuda;
using gc::Form;

constexpr float kA = 1.75f;
constexpr gtb::ChainParams kChain{1.5f, -0.25f};
// 16 SM-blocks of 256 float4s: 16384 floats per stride; 40003 takes three strides and a tail of 3.
constexpr std::size_t kN = 40003;

// One run of `form`, as written and with the planted indexing error; returns whether each matched.
struct Outcome {
  bool ok = false, planted_ok = false;
  std::string detail;
};
Outcome run(Form form, bool chain_op) {
  std::vector<float> x(kN + 4), y0(kN + 4);
  gtb::fill_uniform(x.data(), x.size(), 21, -3.0f, 3.0f);
  gtb::fill_uniform(y0.data(), y0.size(), 22, -3.0f, 3.0f);
  std::vector<double> ref(kN);
  if (chain_op)
    gtb::cpu::chain_reference(kChain, x.data(), ref.data(), kN);
  else
    gtb::cpu::axpy_reference(kA, x.data(), y0.data(), ref.data(), kN);
  Outcome o;
  for (bool plant : {false, true}) {
    std::vector<float> y = y0;
    if (chain_op) gtb::poison(y.data(), kN);
    gtb_emu::plant_last_block_as_first = plant;
    if (chain_op)
      gc::chain(form, kChain, x.data(), y.data(), kN, 7000, nullptr);
    else
      gc::axpy(form, kA, x.data(), y.data(), kN, 7000, nullptr);
    gtb_emu::plant_last_block_as_first = false;
    const double rtol = chain_op ? gtb::kChainRtol : gtb::kAxpyRtol, atol = chain_op ? gtb::kChainAtol : gtb::kAxpyAtol;
    const gtb::ErrorReport e = gtb::compare_elementwise(y.data(), ref.data(), kN, rtol, atol);
    (plant ? o.planted_ok : o.ok) = e.ok;
    if (!plant) o.detail = e.detail;
  }
  return o;
}

TEST(VectorizeEmulated, EveryFormOfAxpyMatchesFloat64) {
  for (Form f : {Form::launch_loop, Form::serial, Form::scalar, Form::vec4}) {
    const Outcome o = run(f, false);
    EXPECT_TRUE(o.ok) << gc::to_string(f) << ": " << o.detail;
    if (f != Form::serial) {
      EXPECT_FALSE(o.planted_ok) << gc::to_string(f) << ": the planted error passed";
    }
  }
}

TEST(VectorizeEmulated, EveryFormOfTheChainMatchesFloat64) {
  for (Form f : {Form::launch_loop, Form::serial, Form::scalar, Form::vec4, Form::unfused}) {
    const Outcome o = run(f, true);
    EXPECT_TRUE(o.ok) << gc::to_string(f) << ": " << o.detail;
    if (f != Form::serial) {
      EXPECT_FALSE(o.planted_ok) << gc::to_string(f) << ": the planted error passed";
    }
  }
}

TEST(VectorizeEmulated, Vec4RefusesMisalignedArrays) {
  std::vector<float> x(64), y(64);
  EXPECT_THROW(gc::axpy(Form::vec4, kA, x.data() + 1, y.data(), 32, 0, nullptr), std::invalid_argument);
}

}  // namespace
