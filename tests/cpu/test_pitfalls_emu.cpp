// The pitfalls family's device kernels of its build-flag A/Bs (chain, activation forward/backward,
// cross-entropy rows, block sums of squares), their own code run on CPU threads through the host
// stand-in of tests/cpu/cuda_emu, against the family's float64 references (make_flag_data); a
// planted indexing error (a grid's last block run as block 0) must fail every check.
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in as one more flag variant.
#define GTB_PF_VARIANT emu
#define GTB_PF_FLAGS "host stand-in"
#include "kernels/pitfalls/cuda/flag_kernels.cu"

#include "kernels/common/verify.h"
#include "kernels/pitfalls/reference.h"

namespace {
namespace pf = gtb::pitfalls;

// 5 reduction blocks: several blocks of 256 threads in every kernel, the last one partial where the
// work allows (n must be a whole number of reduction blocks).
constexpr std::size_t kN = 5 * pf::kReduceBlock;

pf::FlagCheck run(pf::FlagWork w, bool plant) {
  const pf::FlagData d = pf::make_flag_data(w, kN);
  std::vector<float> out(d.out_size()), out2(d.out2_size());
  gtb::poison(out.data(), out.size());
  gtb::poison(out2.data(), out2.size());
  const pf::DeviceKernels& k = pf::device_kernels_emu();
  gtb_emu::plant_last_block_as_first = plant;
  cudaError_t e = cudaSuccess;
  switch (w) {
    case pf::FlagWork::chain: e = k.chain(d.x.data(), out.data(), d.n, nullptr); break;
    case pf::FlagWork::act:
      e = k.act(d.x.data(), d.bias.data(), d.g.data(), out.data(), out2.data(), d.rows, d.n / d.rows, nullptr);
      break;
    case pf::FlagWork::xent:
      e = k.xent(d.x.data(), d.labels.data(), out.data(), out2.data(), d.rows, pf::kXentClasses, nullptr);
      break;
    case pf::FlagWork::reduce: e = k.reduce(d.x.data(), out.data(), d.n, nullptr); break;
  }
  gtb_emu::plant_last_block_as_first = false;
  EXPECT_EQ(e, cudaSuccess);
  return pf::check_flag_output(d, out.data(), out2.empty() ? nullptr : out2.data());
}

TEST(PitfallsDeviceKernelsEmulated, EachMatchesFloat64AndThePlantedErrorFails) {
  for (pf::FlagWork w : pf::kFlagWorks) {
    const pf::FlagCheck ok = run(w, false), planted = run(w, true);
    EXPECT_TRUE(ok.ok) << int(w) << ": " << ok.detail;
    EXPECT_FALSE(planted.ok) << int(w) << ": the planted indexing error passed";
  }
}

}  // namespace
