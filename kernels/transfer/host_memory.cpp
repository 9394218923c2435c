// Host memory helpers of the transfer family: available memory, pre-faulting, sample gathering.
#include "kernels/transfer/host_memory.h"

#include <cstring>
#include <fstream>
#include <string>

namespace gtb::cpu {

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;
  return 0;
}

void prefault(void* p, std::size_t bytes) {
  auto* b = static_cast<volatile unsigned char*>(p);
  const auto pages = static_cast<long long>((bytes + kPageBytes - 1) / kPageBytes);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < pages; ++i) b[static_cast<std::size_t>(i) * kPageBytes] = 1;
}

void gather(void* dst, const void* const* srcs, std::size_t count, std::size_t sample_bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(d + i * sample_bytes, srcs[i], sample_bytes);
}

}  // namespace gtb::cpu
