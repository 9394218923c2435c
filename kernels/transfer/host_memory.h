// Host memory helpers both backends of the transfer family use: page size, available memory,
// pre-faulting and the host-side gather of scattered samples.
#pragma once

#include <cstddef>

namespace gtb::cpu {

inline constexpr std::size_t kPageBytes = 4096;

// MemAvailable from /proc/meminfo (0 if unreadable). Checked before big allocations because with
// overcommit a too-large allocation succeeds and the first touch gets the process killed.
std::size_t host_available_bytes();

// Writes one byte per page so every page is mapped before anything is timed (all cores).
void prefault(void* p, std::size_t bytes);

// Copies `count` samples of `sample_bytes` from srcs[i] into dst back to back (host pack).
void gather(void* dst, const void* const* srcs, std::size_t count, std::size_t sample_bytes);

}  // namespace gtb::cpu
