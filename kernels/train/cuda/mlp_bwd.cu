// MLP backward kernels: softmax cross-entropy with the last bias gradient, and activation backward
// fused with the bias gradient (column sums).
#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/train/cuda/mlp_dtype.h"

namespace gtb::cuda::mlp {

namespace {
constexpr int kCols = 32, kRowLanes = 8;  // act_backward_db block: 32 columns x 8 row lanes
constexpr int kXentBlock = 128;

// Each block owns 32 columns and a strided share of the rows: a warp reads 32 consecutive
// columns of one row (coalesced), partial column sums meet in shared memory, then one atomic per
// column per block.
template <class T>
__global__ void act_backward_db_kernel(T* __restrict__ dz, const T* __restrict__ z, float* __restrict__ db, int rows,
                                       int cols, Act act, int* found_inf) {
  __shared__ float part[kRowLanes][kCols + 1];
  const int j = blockIdx.x * kCols + threadIdx.x;
  float sum = 0.0f;
  bool bad = false;
  if (j < cols) {
    for (int r = blockIdx.y * kRowLanes + threadIdx.y; r < rows; r += gridDim.y * kRowLanes) {
      const std::size_t i = std::size_t(r) * std::size_t(cols) + std::size_t(j);
      const T g = from_f<T>(to_f(dz[i]) * gtb::mlp::act_derivative(act, to_f(z[i])));
      dz[i] = g;
      const float gf = to_f(g);
      bad |= !gtb::mlp::is_finite(gf);
      sum += gf;
    }
  }
  part[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    float s = 0.0f;
    for (int k = 0; k < kRowLanes; ++k) s += part[k][threadIdx.x];
    atomicAdd(db + j, s);
  }
  if (bad && found_inf) atomicExch(found_inf, 1);
}

template <class T>
__global__ void xent_kernel(T* __restrict__ z, const float* __restrict__ b, const int* __restrict__ labels,
                            T* __restrict__ dz, float* __restrict__ db, float* __restrict__ row_loss, int rows,
                            int classes, float inv_batch, const ScaleState* ss, int* found_inf) {
  GTB_DYNAMIC_SHARED(float, colsum);
  for (int j = threadIdx.x; j < classes; j += blockDim.x) colsum[j] = 0.0f;
  __syncthreads();
  const float scale = (ss ? ss->scale : 1.0f) * inv_batch;
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  bool bad = false;
  if (r < rows) {
    T* zr = z + std::size_t(r) * std::size_t(classes);
    T* gr = dz + std::size_t(r) * std::size_t(classes);
    for (int j = 0; j < classes; ++j) zr[j] = from_f<T>(to_f(zr[j]) + b[j]);
    row_loss[r] = gtb::mlp::softmax_xent_row<float>(
        classes, labels[r], scale, [&](int j) { return to_f(zr[j]); },
        [&](int j, float g) {
          const T gs = from_f<T>(g);
          gr[j] = gs;
          const float gf = to_f(gs);
          bad |= !gtb::mlp::is_finite(gf);
          atomicAdd(colsum + j, gf);
        });
  }
  __syncthreads();
  for (int j = threadIdx.x; j < classes; j += blockDim.x) atomicAdd(db + j, colsum[j]);
  if (bad && found_inf) atomicExch(found_inf, 1);
}

dim3 act_bwd_grid(int rows, int cols) {
  const int gx = (cols + kCols - 1) / kCols;
  const int want_blocks = 4 * sm_count();
  int gy = (want_blocks + gx - 1) / gx;
  const int max_gy = (rows + kRowLanes - 1) / kRowLanes;
  gy = gy < 1 ? 1 : (gy > max_gy ? max_gy : gy);
  return dim3(unsigned(gx), unsigned(gy));
}
}  // namespace

void act_backward_db(DType t, void* dz, const void* z, float* db, int rows, int cols, Act act, ScaleState* ss,
                     cudaStream_t s) {
  const dim3 grid = act_bwd_grid(rows, cols);
  int* flag = ss ? &ss->found_inf : nullptr;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(act_backward_db_kernel<T>, grid, dim3(kCols, kRowLanes), 0, s)(static_cast<T*>(dz),
                                                                            static_cast<const T*>(z), db, rows, cols,
                                                                            act, flag);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

void softmax_xent(DType t, void* z, const float* b, const int* labels, void* dz, float* db, float* row_loss, int rows,
                  int classes, float inv_batch, ScaleState* ss, cudaStream_t s) {
  const unsigned grid = unsigned((rows + kXentBlock - 1) / kXentBlock);
  const std::size_t smem = std::size_t(classes) * sizeof(float);
  int* flag = ss ? &ss->found_inf : nullptr;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(xent_kernel<T>, grid, kXentBlock, smem, s)(static_cast<T*>(z), b, labels, static_cast<T*>(dz), db,
                                                          row_loss, rows, classes, inv_batch, ss, flag);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

std::vector<KernelInfo> bwd_kernel_info(DType t, int rows, int cols, int classes) {
  std::vector<KernelInfo> v;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const dim3 g = act_bwd_grid(rows, cols);
    v.push_back(kernel_info("act_backward_db", act_backward_db_kernel<T>, kCols * kRowLanes,
                            static_cast<long long>(g.x) * g.y));
    v.push_back(kernel_info("softmax_xent", xent_kernel<T>, kXentBlock, (rows + kXentBlock - 1) / kXentBlock,
                            std::size_t(classes) * sizeof(float)));
  });
  return v;
}

}  // namespace gtb::cuda::mlp
