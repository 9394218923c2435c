// The train family's backward CUDA kernels (mlp_bwd.cu: activation backward with the bias gradient,
// softmax cross-entropy with the last bias gradient), their own code run on CPU threads through the
// host stand-in of tests/cpu/cuda_emu (2-D blocks, dynamic shared memory), in FP32, FP16 and BF16,
// against float64; a planted indexing error (a grid's last block run as block 0) must fail every
// check. Also the stand-in's own 3-D blocks, warps across block rows and dynamic shared memory.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in.
#include "kernels/train/cuda/mlp_bwd.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/cpu/train_emu_dtype.h"

namespace {
namespace gm = gtb::cuda::mlp;
using gtb::mlp::Act;

using gtb_train_emu::name;
using gtb_train_emu::narrow;
using gtb_train_emu::ulp;
using gtb_train_emu::widen;

// Column sums of g (rows x cols) added to db0, and the tolerance of a float sum of g rounded to
// the storage type: a relative ulp of the sum of magnitudes, plus float accumulation.
struct ColumnSums {
  std::vector<double> sum;
  double atol = 0;
};
ColumnSums column_sums(const std::vector<double>& g, const std::vector<float>& db0, int rows, int cols, gm::DType t) {
  ColumnSums c{std::vector<double>(db0.begin(), db0.end()), 0.0};
  std::vector<double> mag(std::size_t(cols), 0.0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) {
      c.sum[std::size_t(j)] += g[std::size_t(r) * cols + j];
      mag[std::size_t(j)] += std::fabs(g[std::size_t(r) * cols + j]);
    }
  for (int j = 0; j < cols; ++j)
    c.atol = std::max(c.atol, (ulp(t) + 1e-5) * (mag[std::size_t(j)] + std::fabs(db0[std::size_t(j)])));
  c.atol += 1e-6;
  return c;
}

// dZ = dA (.) act'(Z) in place and db += column sums, as written and with the planted error.
template <class T>
void check_act_backward(gm::DType t, int rows, int cols) {
  const std::size_t n = std::size_t(rows) * cols;
  std::vector<float> daf(n), zf(n), db0(static_cast<std::size_t>(cols));
  gtb::fill_uniform(daf.data(), n, 51, -2.0f, 2.0f);
  gtb::fill_uniform(zf.data(), n, 52, -3.0f, 3.0f);
  gtb::fill_uniform(db0.data(), db0.size(), 53, -1.0f, 1.0f);
  const std::vector<T> da = narrow<T>(daf), z = narrow<T>(zf);
  for (Act act : {Act::relu, Act::gelu}) {
    std::vector<double> g(n);
    for (std::size_t i = 0; i < n; ++i)
      g[i] = double(gm::to_f(da[i])) * gtb::mlp::act_derivative(act, double(gm::to_f(z[i])));
    const ColumnSums ref = column_sums(g, db0, rows, cols, t);
    for (bool plant : {false, true}) {
      std::vector<T> dz = da;
      std::vector<float> db = db0;
      gtb::mlp::ScaleState ss{1.0f, 0, 0, 0, 0};
      gtb_emu::plant_last_block_as_first = plant;
      gm::act_backward_db(t, dz.data(), z.data(), db.data(), rows, cols, act, &ss, nullptr);
      gtb_emu::plant_last_block_as_first = false;
      // GELU's derivative in float (its tanh 3e-7 relative, terms of order 1 that cancel where act'
      // is small) times |dA| <= 2: an absolute term as the forward test's.
      const auto edz = gtb::compare_elementwise(widen(dz).data(), g.data(), n, 2 * ulp(t), 1e-5);
      const auto edb = gtb::compare_elementwise(db.data(), ref.sum.data(), db.size(), 0.0, ref.atol);
      const std::string what = std::string(name(t)) + " " + gtb::mlp::to_string(act) + " " + std::to_string(rows) +
                               "x" + std::to_string(cols);
      if (plant) {
        EXPECT_FALSE(edz.ok && edb.ok) << what << ": the planted indexing error passed";
      } else {
        EXPECT_TRUE(edz.ok) << what << " dz: " << edz.detail;
        EXPECT_TRUE(edb.ok) << what << " db: " << edb.detail;
        EXPECT_EQ(ss.found_inf, 0) << what << ": finite gradients flagged as an overflow";
      }
    }
  }
}

// Logits Z += b, per-row loss, dZ = (softmax - onehot) * scale / rows, db += column sums, as
// written and with the planted error.
template <class T>
void check_xent(gm::DType t, int rows, int classes) {
  const std::size_t n = std::size_t(rows) * classes;
  std::vector<float> zf(n), b(static_cast<std::size_t>(classes)), db0(static_cast<std::size_t>(classes)), lab(static_cast<std::size_t>(rows));
  gtb::fill_uniform(zf.data(), n, 61, -4.0f, 4.0f);
  gtb::fill_uniform(b.data(), b.size(), 62, -1.0f, 1.0f);
  gtb::fill_uniform(db0.data(), db0.size(), 63, -0.5f, 0.5f);
  gtb::fill_uniform(lab.data(), lab.size(), 64, 0.0f, float(classes));
  std::vector<int> labels(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) labels[std::size_t(r)] = std::min(classes - 1, int(lab[std::size_t(r)]));
  const std::vector<T> z0 = narrow<T>(zf);
  const float scale = 4.0f, inv_batch = 1.0f / float(rows);
  // The kernel stores Z + b in the storage type and reads the stored logits back.
  std::vector<double> rz(n), rg(n), rloss(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < n; ++i)
    rz[i] = double(gm::to_f(gm::from_f<T>(gm::to_f(z0[i]) + b[i % std::size_t(classes)])));
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * classes;
    rloss[std::size_t(r)] = gtb::mlp::softmax_xent_row<double>(
        classes, labels[std::size_t(r)], double(scale) * double(inv_batch), [&](int j) { return rz[o + j]; },
        [&](int j, double g) { rg[o + j] = g; });
  }
  const ColumnSums ref = column_sums(rg, db0, rows, classes, t);
  for (bool plant : {false, true}) {
    std::vector<T> z = z0, dz(n, gm::from_f<T>(NAN));
    std::vector<float> db = db0, loss(std::size_t(rows), NAN);
    gtb::mlp::ScaleState ss{scale, 0, 0, 0, 0};
    gtb_emu::plant_last_block_as_first = plant;
    gm::softmax_xent(t, z.data(), b.data(), labels.data(), dz.data(), db.data(), loss.data(), rows, classes, inv_batch,
                     &ss, nullptr);
    gtb_emu::plant_last_block_as_first = false;
    const auto ez = gtb::compare_elementwise(widen(z).data(), rz.data(), n, ulp(t), 0.0);
    const auto el = gtb::compare_elementwise(loss.data(), rloss.data(), loss.size(), 1e-5, 1e-6);
    // f16's subnormal spacing (2^-24) bounds the absolute error of the small gradients.
    const auto eg = gtb::compare_elementwise(widen(dz).data(), rg.data(), n, 2 * ulp(t), 1e-7);
    const auto edb = gtb::compare_elementwise(db.data(), ref.sum.data(), db.size(), 0.0, ref.atol);
    const std::string what = std::string(name(t)) + " " + std::to_string(rows) + "x" + std::to_string(classes);
    if (plant) {
      EXPECT_FALSE(ez.ok && el.ok && eg.ok && edb.ok) << what << ": the planted indexing error passed";
    } else {
      EXPECT_TRUE(ez.ok) << what << " z: " << ez.detail;
      EXPECT_TRUE(el.ok) << what << " loss: " << el.detail;
      EXPECT_TRUE(eg.ok) << what << " dz: " << eg.detail;
      EXPECT_TRUE(edb.ok) << what << " db: " << edb.detail;
      EXPECT_EQ(ss.found_inf, 0) << what << ": finite gradients flagged as an overflow";
    }
  }
}

// 250 x 100 on the stand-in's two SMs: a 4 x 2 grid of 32 x 8 blocks, a partial last column block,
// rows strided; 5 x 40: the grid's rows capped at the one row block there is.
TEST(TrainBackwardKernelsEmulated, ActivationBackwardAndBiasGradientEveryType) {
  for (auto [rows, cols] : {std::pair{250, 100}, std::pair{5, 40}}) {
    check_act_backward<float>(gm::DType::f32, rows, cols);
    check_act_backward<__half>(gm::DType::f16, rows, cols);
    check_act_backward<__nv_bfloat16>(gm::DType::bf16, rows, cols);
  }
}

// 300 rows: three blocks of 128, the last partial; 150 classes: more than a block's threads, so the
// shared column sums are cleared and flushed in strides.
TEST(TrainBackwardKernelsEmulated, SoftmaxCrossEntropyEveryType) {
  for (auto [rows, classes] : {std::pair{300, 10}, std::pair{130, 150}}) {
    check_xent<float>(gm::DType::f32, rows, classes);
    check_xent<__half>(gm::DType::f16, rows, classes);
    check_xent<__nv_bfloat16>(gm::DType::bf16, rows, classes);
  }
}

TEST(TrainBackwardKernelsEmulated, AnOverflowSetsFoundInf) {
  constexpr int rows = 40, cols = 40;
  std::vector<float> da(rows * cols, 0.5f), z(rows * cols, 1.0f), db(cols, 0.0f);
  da[777] = INFINITY;
  gtb::mlp::ScaleState ss{1.0f, 0, 0, 0, 0};
  gm::act_backward_db(gm::DType::f32, da.data(), z.data(), db.data(), rows, cols, Act::relu, &ss, nullptr);
  EXPECT_EQ(ss.found_inf, 1);
  std::vector<float> logits(rows * 4, 1.0f), dz(rows * 4), b(4, 0.0f), loss(rows), db2(4, 0.0f);
  std::vector<int> labels(rows, 2);
  logits[57] = INFINITY;
  gtb::mlp::ScaleState ss2{1.0f, 0, 0, 0, 0};
  gm::softmax_xent(gm::DType::f32, logits.data(), b.data(), labels.data(), dz.data(), db2.data(), loss.data(), rows, 4,
                   1.0f / rows, &ss2, nullptr);
  EXPECT_EQ(ss2.found_inf, 1);
}

TEST(TrainBackwardKernelsEmulated, KernelInfoReadsTheStandInDevice) {
  const auto info = gm::bwd_kernel_info(gm::DType::bf16, 250, 100, 10);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0].block, 256);
  EXPECT_EQ(info[0].grid, 8);  // 4 column blocks x 2 row blocks: four blocks per SM of the two
  EXPECT_EQ(info[1].grid, 2);
}

// ---- the stand-in itself ----
// Each thread records its block, its thread index and what dynamic shared memory held before any
// write; lane pairs swap ranks through a shuffle (warps are 32 consecutive ranks, across rows).
__global__ void probe_kernel(unsigned* out, float* shuffled, float* nan_reads) {
  GTB_DYNAMIC_SHARED(float, buf);
  const unsigned rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  if (!(buf[rank] == buf[rank])) atomicAdd(nan_reads, 1.0f);
  __syncthreads();
  buf[rank] = float(rank);
  __syncthreads();
  out[block * threads + rank] = unsigned(buf[(rank + 1) % threads]);
  shuffled[block * threads + rank] = __shfl_xor_sync(0xffffffffu, float(rank), 1);
}

TEST(CudaStandIn, ThreeDimensionalBlocksWarpsAndDynamicSharedMemory) {
  const dim3 grid(2, 1, 3), block(16, 4, 2);  // 128 threads: warps span two rows of 16
  const unsigned threads = 128, blocks = 6;
  std::vector<unsigned> out(threads * blocks, 9999);
  std::vector<float> shuffled(threads * blocks, NAN);
  float nan_reads = 0;
  GTB_LAUNCH(probe_kernel, grid, block, threads * sizeof(float), nullptr)(
      out.data(), shuffled.data(), &nan_reads);
  EXPECT_EQ(nan_reads, float(threads * blocks)) << "dynamic shared memory is not NaN before each block";
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      ASSERT_EQ(out[b * threads + t], (t + 1) % threads) << "block " << b << " thread " << t;
      ASSERT_EQ(shuffled[b * threads + t], float(t ^ 1u)) << "block " << b << " thread " << t;
    }
  // The planted error runs the last block as block 0: block 5's outputs stay unwritten.
  std::fill(out.begin(), out.end(), 9999u);
  gtb_emu::plant_last_block_as_first = true;
  GTB_LAUNCH(probe_kernel, grid, block, threads * sizeof(float), nullptr)(
      out.data(), shuffled.data(), &nan_reads);
  gtb_emu::plant_last_block_as_first = false;
  EXPECT_EQ(out[5 * threads], 9999u);
}

}  // namespace
