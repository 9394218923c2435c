// Checked CUDA runtime calls: the message names the call, the code and its string.
#include "kernels/common/cuda/check.h"

#include <string>

#include "kernels/common/errors.h"

namespace gtb {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  std::string where = file;
  where = where.substr(where.find_last_of('/') + 1);
  const std::string msg = std::string(call) + ": " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) +
                          ") at " + where + ":" + std::to_string(line);
  if (code == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it so the next case starts clean
    throw OutOfMemory(msg);
  }
  throw CudaError(code, msg);
}


int device_attribute(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  GTB_CUDA_CHECK(cudaGetDevice(&dev));
  GTB_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

}  // namespace gtb
