// What the harness knows about the GPU, with the same interface whether or not CUDA was built.
#pragma once

#include <optional>
#include <string>

#include "harness/document/types.h"

namespace gtb::gpu {

// True when this build has the CUDA backend.
bool built_with_cuda();
// Empty when a CUDA device can be used; otherwise why not ("built without CUDA", or the CUDA
// error text, e.g. "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime
// version (cudaErrorInsufficientDriver)"). Evaluated once per process.
std::optional<std::string> unavailable_reason();
inline bool available() { return !unavailable_reason().has_value(); }
int device_count();  // 0 when unavailable
// Device properties, versions, NVML link/clocks where readable. {"available": false, ...} otherwise.
json describe();
// Clears a non-sticky CUDA error left by a failed case (e.g. out of memory) so the next case starts
// clean. Returns the text of a sticky error that poisons the context, if any.
std::optional<std::string> reset_after_error();
// Free and total device memory in bytes (0, 0 when unavailable).
std::pair<std::size_t, std::size_t> memory_info();

}  // namespace gtb::gpu
