// CPU STREAM-like copy and triad over all OpenMP threads (the host memory-bandwidth ceiling).
#pragma once
#include <cstddef>

namespace gtb::cpu {
// Parallel first-touch fill so pages land near the threads that use them.
void stream_init(float* a, float* b, float* c, std::size_t n, unsigned long long seed);
void stream_copy(float* a, const float* b, std::size_t n);
void stream_triad(float* a, const float* b, const float* c, float scalar, std::size_t n);
int stream_threads();
}  // namespace gtb::cpu
