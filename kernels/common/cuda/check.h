// Checked CUDA runtime calls: an error throws with the call, the code and its string. Include only
// from code that is compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace gtb {

struct CudaError : std::runtime_error {
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
  cudaError_t code;
};

// Throws gtb::OutOfMemory for cudaErrorMemoryAllocation (a record status, not an abort), CudaError
// otherwise.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

// An attribute of the current device (cudaDeviceGetAttribute); throws as GTB_CUDA_CHECK does.
int device_attribute(cudaDeviceAttr attr);

}  // namespace gtb

#define GTB_CUDA_CHECK(call)                                                  \
  do {                                                                        \
    cudaError_t gtb_cuda_status_ = (call);                                    \
    if (gtb_cuda_status_ != cudaSuccess)                                      \
      ::gtb::throw_cuda_error(gtb_cuda_status_, #call, __FILE__, __LINE__);   \
  } while (0)

// After a kernel launch: catches launch-configuration errors at once.
#define GTB_CUDA_CHECK_LAUNCH() GTB_CUDA_CHECK(cudaGetLastError())
