// GPU queries for a build without the CUDA backend: always unavailable, with the reason.
#include "gtb/gpu.h"

namespace gtb::gpu {

namespace {
const char* kReason = "built without CUDA (nvcc was not found when gtb was configured)";
}

bool built_with_cuda() { return false; }
std::optional<std::string> unavailable_reason() { return std::string(kReason); }
int device_count() { return 0; }
json describe() { return {{"available", false}, {"reason", kReason}}; }
std::optional<std::string> reset_after_error() { return std::nullopt; }
std::pair<std::size_t, std::size_t> memory_info() { return {0, 0}; }

}  // namespace gtb::gpu
