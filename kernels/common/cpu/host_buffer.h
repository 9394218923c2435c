// Aligned host memory from the ordinary (pageable) allocator: the host buffer of every family.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#include "kernels/common/buffer.h"

namespace gtb::cpu {

// The default alignment: one page.
inline constexpr std::size_t kHostBufferAlignment = 4096;

// std::aligned_alloc of `bytes` rounded up to a multiple of `alignment` (a power of two). Throws
// std::bad_alloc when the system refuses.
struct AlignedHostAllocator {
  static void* allocate(std::size_t bytes, std::size_t alignment = kHostBufferAlignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw std::bad_alloc();
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    if (rounded < bytes) throw std::bad_alloc();  // overflow
    void* p = std::aligned_alloc(alignment, rounded);
    if (!p) throw std::bad_alloc();
    return p;
  }
  static void release(void* p) noexcept { std::free(p); }
};

// Page-aligned by default: HostBuffer(bytes) or HostBuffer(bytes, alignment).
using HostBuffer = OwnedBuffer<AlignedHostAllocator>;
// The same memory seen as floats: HostFloats(n * sizeof(float), alignment).
using HostFloats = OwnedBuffer<AlignedHostAllocator, float>;

}  // namespace gtb::cpu
