// Launchers of the MLP step's custom CUDA kernels (elementwise math from kernels/train/mlp.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/train/mlp.h"

namespace gtb::cuda::mlp {

using gtb::mlp::Act;
using gtb::mlp::ScaleState;

// Storage type of activations, activation gradients and the low-precision weight copy.
enum class DType { f32, f16, bf16 };
inline std::size_t dtype_bytes(DType t) { return t == DType::f32 ? 4 : 2; }

// Z += b, A = act(Z) over rows x cols (forward of a hidden layer).
void bias_act(DType t, void* z, void* a, const float* b, int rows, int cols, Act act, cudaStream_t s);
// dZ = dA (.) act'(Z) in place, db += column sums of dZ; a non-finite dZ sets ss->found_inf (ss may be null).
void act_backward_db(DType t, void* dz, const void* z, float* db, int rows, int cols, Act act, ScaleState* ss,
                     cudaStream_t s);
// Logits Z += b (written back), per-row loss, dZ = (softmax - onehot) * scale * inv_batch with
// scale = ss->scale (1 without ss), db += column sums of dZ. One thread per row.
void softmax_xent(DType t, void* z, const float* b, const int* labels, void* dz, float* db, float* row_loss, int rows,
                  int classes, float inv_batch, ScaleState* ss, cudaStream_t s);
// fp32 -> low precision copy (inputs and the weight copy).
void to_lowp(DType t, const float* src, void* dst, std::size_t n, cudaStream_t s);

// Optimizers over the flat parameter buffer: gradients are divided by ss->scale and the update is
// skipped when ss->found_inf (ss may be null for plain FP32 SGD). lowp (may be null) receives the
// updated weights in `lowp_type`. Adam's step t = ss->step + 1 (ss required).
void sgd(float* w, float* v, const float* g, void* lowp, DType lowp_type, std::size_t n, float lr, float mu,
         const ScaleState* ss, cudaStream_t s);
void adam(float* w, float* m, float* v, const float* g, void* lowp, DType lowp_type, std::size_t n, float lr,
          float b1, float b2, float eps, const ScaleState* ss, cudaStream_t s);
// End of step: count skips, adjust the loss scale, advance the step counter (one thread).
void scale_end(ScaleState* ss, bool dynamic, int interval, cudaStream_t s);

// Launch geometry and theoretical occupancy of each custom kernel for a given problem.
struct KernelInfo {
  std::string name;
  int block = 0;
  long long grid = 0;
  int blocks_per_sm = 0;   // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  double occupancy = 0;    // resident warps / max warps per SM
  double waves = 0;        // grid / (blocks_per_sm * SMs)
};
std::vector<KernelInfo> fwd_kernel_info(DType t, int rows, int cols);
std::vector<KernelInfo> bwd_kernel_info(DType t, int rows, int cols, int classes);
std::vector<KernelInfo> opt_kernel_info(DType lowp_type, bool adam, std::size_t n);

// Device facts cached per process (SM count, max threads per SM).
int sm_count();
int max_threads_per_sm();

}  // namespace gtb::cuda::mlp
