// The table of device build-flag variants (one object of flag_kernels.cu per nvcc flag set).
#include <cstring>
#include <vector>

#include "kernels/pitfalls/cuda/flag_kernels.h"

namespace gtb::pitfalls {

const DeviceKernels& device_kernels_default();
const DeviceKernels& device_kernels_lineinfo();
const DeviceKernels& device_kernels_G();
const DeviceKernels& device_kernels_fast_math();

const std::vector<DeviceKernels>& device_variants() {
  static const std::vector<DeviceKernels> v = {device_kernels_default(), device_kernels_lineinfo(),
                                               device_kernels_G(), device_kernels_fast_math()};
  return v;
}

const DeviceKernels* find_device_variant(const char* name) {
  for (const auto& k : device_variants())
    if (std::strcmp(k.name, name) == 0) return &k;
  return nullptr;
}

}  // namespace gtb::pitfalls
