// CPU side of the transfer family: host copies, allocation with first touch, gather and loader data.
#include "kernels/transfer/cpu/transfer.h"

#include <omp.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <new>
#include <thread>
#include <utility>

#include "kernels/transfer/transfer.h"

namespace gtb::cpu {

void memcpy_single(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

void memcpy_parallel(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Below this size waking the team costs more than the copy (and on a busy machine a descheduled
  // thread stalls the barrier for a whole time slice), so small copies stay on one thread.
#pragma omp parallel if (bytes >= kParallelCopyMinBytes)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    // Shares rounded to 64 bytes so no two threads write the same cache line.
    const std::size_t share = ((bytes + nt - 1) / nt + 63) / 64 * 64;
    const std::size_t begin = std::min(bytes, t * share);
    const std::size_t end = std::min(bytes, begin + share);
    if (end > begin) std::memcpy(d + begin, s + begin, end - begin);
  }
}

int memcpy_threads(std::size_t bytes) { return bytes >= kParallelCopyMinBytes ? omp_get_max_threads() : 1; }

std::uint64_t alloc_touch_free(std::size_t bytes) {
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  auto* p = static_cast<volatile unsigned char*>(m);
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i < bytes; i += kPageBytes) {
    p[i] = static_cast<unsigned char>(i / kPageBytes);
    acc += p[i];
  }
  munmap(m, bytes);
  return acc;
}

void fill_batch(void* dst, std::size_t bytes, std::uint64_t seed, std::uint64_t batch) {
  auto* d = static_cast<unsigned char*>(dst);
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t w = transfer::loader_word(seed, batch, i);
    std::memcpy(d + 8 * i, &w, 8);
  }
  if (bytes % 8) {
    const std::uint64_t w = transfer::loader_word(seed, batch, words);
    std::memcpy(d + 8 * words, &w, bytes % 8);
  }
}

bool batch_matches(const void* data, std::size_t bytes, std::uint64_t seed, std::uint64_t batch) {
  const auto* d = static_cast<const unsigned char*>(data);
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t got;
    std::memcpy(&got, d + 8 * i, 8);
    if (got != transfer::loader_word(seed, batch, i)) return false;
  }
  if (bytes % 8) {
    const std::uint64_t w = transfer::loader_word(seed, batch, words);
    if (std::memcmp(d + 8 * words, &w, bytes % 8) != 0) return false;
  }
  return true;
}

std::uint64_t checksum_words(const void* data, std::size_t bytes) {
  const auto* d = static_cast<const unsigned char*>(data);
  const std::size_t words = bytes / 8;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w;
    std::memcpy(&w, d + 8 * i, 8);
    sum += w;
  }
  if (bytes % 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, d + 8 * words, bytes % 8);
    sum += w;
  }
  return sum;
}

std::uint64_t expected_batch_checksum(std::size_t bytes, std::uint64_t seed, std::uint64_t batch) {
  const std::size_t words = bytes / 8;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; ++i) sum += transfer::loader_word(seed, batch, i);
  if (bytes % 8) {
    const std::uint64_t w = transfer::loader_word(seed, batch, words);
    std::uint64_t t = 0;
    std::memcpy(&t, &w, bytes % 8);
    sum += t;
  }
  return sum;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void spin_for(double seconds) {
  const double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) {
  }
}

void sleep_for(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace gtb::cpu
