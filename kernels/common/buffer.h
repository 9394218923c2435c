// One owner of a memory block for every kind of memory: the kind is its allocator (aligned host
// memory in kernels/common/cpu/host_buffer.h; device and pinned memory in kernels/common/cuda/memory.h).
#pragma once

#include <cstddef>
#include <utility>

namespace gtb {

// Allocator: `static void* allocate(std::size_t bytes, Args...)` (throws when it cannot; never
// called for 0 bytes) and `static void release(void*) noexcept`. T is what get() points to (void:
// raw memory; float: an array of floats whose size is still given in bytes).
template <class Allocator, class T = void>
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  // `args` go to Allocator::allocate (e.g. an alignment, cudaHostAlloc flags). 0 bytes: no block.
  template <class... Args>
  explicit OwnedBuffer(std::size_t bytes, Args... args)
      : p_(bytes ? Allocator::allocate(bytes, args...) : nullptr), n_(bytes) {}
  ~OwnedBuffer() { reset(); }
  OwnedBuffer(OwnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  OwnedBuffer& operator=(OwnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;

  T* get() const { return static_cast<T*>(p_); }
  template <class U>
  U* as() const {
    return static_cast<U*>(p_);
  }
  std::byte* bytes_ptr() const { return static_cast<std::byte*>(p_); }
  std::size_t bytes() const { return n_; }
  // Frees the block now; the owner is then empty.
  void reset() noexcept {
    if (p_) Allocator::release(p_);
    p_ = nullptr;
    n_ = 0;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace gtb
