// CPU side of the transfer family: host memcpy (one thread and all cores), page-aligned host
// buffers, first-touch allocation, sample gathering, and the busy/sleep work used by the loader.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/cpu/host_buffer.h"
#include "kernels/transfer/host_memory.h"  // kPageBytes, host_available_bytes, prefault, gather

namespace gtb::cpu {

// HostBuffer: page-aligned host memory (kernels/common/cpu/host_buffer.h).

// One-thread memcpy: what a pageable cudaMemcpy's staging copy runs at.
void memcpy_single(void* dst, const void* src, std::size_t bytes);
// All-cores memcpy: each OpenMP thread copies one contiguous, cache-line-aligned share; copies
// smaller than kParallelCopyMinBytes run on the calling thread.
inline constexpr std::size_t kParallelCopyMinBytes = 256 * 1024;
void memcpy_parallel(void* dst, const void* src, std::size_t bytes);
// Threads memcpy_parallel runs a copy of `bytes` on: all of them, or 1 below kParallelCopyMinBytes.
int memcpy_threads(std::size_t bytes = kParallelCopyMinBytes);

// Fresh anonymous pages (mmap, as malloc does for large blocks) + a write to each page + munmap:
// the pageable allocation a pinned one competes with. mmap directly, because glibc would otherwise
// recycle small and recently freed blocks and nothing would be first-touched. Returns the sum of
// the bytes written ((page index) mod 256 per page) so the work cannot be optimised away.
// Throws std::bad_alloc when the mapping fails.
std::uint64_t alloc_touch_free(std::size_t bytes);

// Deterministic loader data: 64-bit words from transfer::loader_word(seed, batch, i); a tail that
// is not a whole word takes the low bytes of the next word.
void fill_batch(void* dst, std::size_t bytes, std::uint64_t seed, std::uint64_t batch);
// True when dst holds exactly fill_batch(seed, batch) data.
bool batch_matches(const void* data, std::size_t bytes, std::uint64_t seed, std::uint64_t batch);
// Sum of the 64-bit words (tail bytes zero-extended), mod 2^64: the loader consumer's read of a batch.
std::uint64_t checksum_words(const void* data, std::size_t bytes);
// The same sum from the generator, without the data (for checking a GPU consumer's checksums).
std::uint64_t expected_batch_checksum(std::size_t bytes, std::uint64_t seed, std::uint64_t batch);

// Work of a given length on this thread. spin_for burns `seconds` of this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), i.e. a fixed amount of compute: with more busy threads than cores it
// takes longer on the wall clock, as real decoding would; spinning on the wall clock would let 16
// threads on 2 cores pretend to work in parallel. sleep_for models I/O-bound loading that frees
// the core.
void spin_for(double seconds);
void sleep_for(double seconds);
double thread_cpu_seconds();

}  // namespace gtb::cpu
