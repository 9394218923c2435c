// Launchers of the transfer family's kernels (transfer_kernels.cu), in a header of their own so that
// the host stand-in of tests/cpu/cuda_emu compiles the kernels without the family's CUDA classes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gtb::cuda::transfer {

// out += sum of the 64-bit words of data (tail bytes zero-extended), as cpu::checksum_words.
void checksum_words(const void* data, std::size_t bytes, unsigned long long* out, cudaStream_t s);
// One block spinning on the global timer for `ns` nanoseconds: a consumer of fixed length.
void spin_kernel(std::uint64_t ns, cudaStream_t s);
// out[i] = overlap_compute(in[i], iters).
void overlap_compute(const float* in, float* out, std::size_t n, int iters, cudaStream_t s);

}  // namespace gtb::cuda::transfer
