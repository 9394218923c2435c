// The vectorize family's Thrust variant: thrust::transform with the shared elementwise functors.
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/transform.h>

#include "kernels/common/cuda/check.h"
#include "kernels/vectorize/cuda/vectorize.h"
#include "kernels/vectorize/cuda/vectorize_ops.h"

namespace gtb::cuda {

// par_nosync: the default par policy synchronizes the stream after each algorithm, which would put
// a host round trip into every timed repetition.
void axpy_thrust(float a, const float* x, float* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  thrust::transform(thrust::cuda::par_nosync.on(s), x, x + n, y, y, ops::Axpy{a});
  GTB_CUDA_CHECK_LAUNCH();
}

void chain_thrust(ChainParams p, const float* x, float* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  thrust::transform(thrust::cuda::par_nosync.on(s), x, x + n, y, ops::ChainUnary{p});
  GTB_CUDA_CHECK_LAUNCH();
}

}  // namespace gtb::cuda
