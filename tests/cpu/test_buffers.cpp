// The one owner of a memory block (kernels/common/buffer.h) and the aligned host buffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <utility>

#include "kernels/common/buffer.h"
#include "kernels/common/cpu/host_buffer.h"

#if defined(__SANITIZE_ADDRESS__)
#define GTB_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTB_TEST_UNDER_ASAN 1
#endif
#endif

namespace {

// A planted allocator that counts, so the owner's frees can be checked.
int g_live = 0;
struct CountingAllocator {
  static void* allocate(std::size_t bytes, int fill = 0) {
    ++g_live;
    auto* p = static_cast<unsigned char*>(::operator new(bytes));
    p[0] = static_cast<unsigned char>(fill);
    return p;
  }
  static void release(void* p) noexcept {
    --g_live;
    ::operator delete(p);
  }
};
using Counted = gtb::OwnedBuffer<CountingAllocator>;

}  // namespace

TEST(Buffers, OwnerFreesOnceThroughMovesAndReset) {
  g_live = 0;
  {
    Counted a(16, 7);
    EXPECT_EQ(g_live, 1);
    EXPECT_EQ(a.bytes(), 16u);
    EXPECT_EQ(*a.as<unsigned char>(), 7) << "extra arguments reach the allocator";
    Counted b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);
    EXPECT_EQ(a.bytes(), 0u);
    EXPECT_EQ(g_live, 1);
    Counted c(8);
    c = std::move(b);  // c's own block is freed
    EXPECT_EQ(g_live, 1);
    EXPECT_EQ(c.bytes(), 16u);
    c.reset();
    EXPECT_EQ(g_live, 0);
    EXPECT_EQ(c.get(), nullptr);
    Counted empty(0);
    EXPECT_EQ(empty.get(), nullptr) << "0 bytes allocates nothing";
    EXPECT_EQ(g_live, 0);
  }
  EXPECT_EQ(g_live, 0);
}

TEST(Buffers, HostBufferIsAlignedAsAsked) {
  const gtb::cpu::HostBuffer page(10000);
  ASSERT_NE(page.get(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(page.get()) % 4096, 0u);
  EXPECT_EQ(page.bytes(), 10000u);
  const gtb::cpu::HostBuffer line(100, std::size_t(64));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(line.get()) % 64, 0u);
  EXPECT_THROW(gtb::cpu::HostBuffer(64, std::size_t(48)), std::bad_alloc) << "not a power of two";
#ifndef GTB_TEST_UNDER_ASAN
  // AddressSanitizer aborts the process on an allocation it cannot serve instead of failing it.
  EXPECT_THROW(gtb::cpu::HostBuffer(std::size_t(1) << 62), std::bad_alloc);
#endif
  EXPECT_THROW(gtb::cpu::HostBuffer(~std::size_t(0)), std::bad_alloc) << "rounding up overflows";
}
