// The blocking kernel: spins on a host-mapped flag, with a timeout, so that timed work queues behind it.
#include "harness/runtime/cuda_blocking.h"

#include "kernels/common/cuda/check.h"

namespace gtb::cuda {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void block_stream(volatile BlockFlags* flags, unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  while (flags->release == 0) {
    if (global_ns() - start > timeout_ns) {
      flags->timed_out = 1;
      __threadfence_system();
      return;
    }
    // Each poll is a read across PCIe: a short sleep keeps the link quiet for the timed copies.
    __nanosleep(500);
  }
}

}  // namespace

void launch_block_stream(BlockFlags* device_flags, double timeout_seconds, cudaStream_t stream) {
  block_stream<<<1, 1, 0, stream>>>(device_flags, static_cast<unsigned long long>(timeout_seconds * 1e9));
  GTB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gtb::cuda
