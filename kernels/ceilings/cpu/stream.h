// CPU STREAM-like copy and triad over all OpenMP threads (the host memory-bandwidth ceiling).
#pragma once
#include <cstddef>
#include <string>

#include "kernels/common/cpu/host_buffer.h"
#include "kernels/common/names.h"

namespace gtb::cpu {

// Plain stores read each destination line before writing it (write-allocate: a copy moves 3
// bytes for every 2 it counts); non-temporal stores write whole lines past the caches. Which one is
// faster depends on the CPU, so the ceiling is the best of both.
GTB_NAMED_ENUM(Stores, kStoresNames, plain, nontemporal);
inline Stores stores_from_string(const std::string& s) { return parse_name(kStoresNames, s, "stores"); }

using AlignedFloats = HostFloats;
// n floats, 64-byte aligned, left untouched so that the first write places each page (see
// stream_init). Throws std::bad_alloc.
AlignedFloats alloc_floats(std::size_t n);

// Fills the arrays with values in [0.5, 1.5) from every thread over the same ranges the kernels
// use, so each page is first touched (and placed) by the thread that streams it.
void stream_init(float* a, float* b, float* c, std::size_t n, unsigned long long seed);
void stream_copy(float* a, const float* b, std::size_t n, Stores stores);
void stream_triad(float* a, const float* b, const float* c, float scalar, std::size_t n, Stores stores);
int stream_threads();

}  // namespace gtb::cpu
