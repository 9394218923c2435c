// GPU ceiling kernels (host-callable entry points; implemented in ceilings.cu).
#pragma once
#include <cstddef>
#include <cuda_runtime_api.h>

namespace gtb::cuda {
// a = b + scalar * c over n floats, grid-stride with 16-byte accesses where aligned.
void stream_triad(float* a, const float* b, const float* c, float scalar, std::size_t n, cudaStream_t s);
}  // namespace gtb::cuda
