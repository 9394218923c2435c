// The host stream sizes, chosen from the machine: the ceiling size sits well above the last-level
// cache the machine reports, bounded by the memory it has free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace gtb::ceilings {

inline constexpr std::int64_t kMiB = 1ll << 20;
// Sizes per array. The ceiling size is at least this, and a multiple of kCeilingStep.
inline constexpr std::int64_t kMinCeilingBytes = 256 * kMiB;
inline constexpr std::int64_t kCeilingStep = 256 * kMiB;
// The copy, the smaller working set (2 arrays), must reach this many times the last-level cache to
// count as memory (the cache-resident rule, include/gtb/context.h).
inline constexpr double kResidentMultiple = 4.0;
inline constexpr int kArraysHeld = 3;             // a, b, c of one size are allocated together
inline constexpr double kMemoryFraction = 0.5;    // of the available memory, for those three arrays
inline const std::vector<std::int64_t> kCacheSizes = {16 * kMiB, 64 * kMiB};  // what the caches add
inline const std::vector<std::int64_t> kFullFixed = {16 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB};

struct HostStreamSizes {
  std::vector<std::int64_t> quick, full;  // array bytes, ascending
  std::int64_t ceiling_bytes = 0;         // the size that measures memory; 0 when none fits
  std::int64_t needed_bytes = 0;          // the smallest size that would
  std::string missing;                    // why no size measures memory; empty when one does
};

inline std::string mib_text(double bytes) { return std::to_string(static_cast<long long>(bytes / double(kMiB))) + " MiB"; }

// llc_bytes: the last-level cache (0: unknown, where no size counts as cache-resident);
// available_bytes: memory free for new allocations (0: unknown, no bound).
inline HostStreamSizes host_stream_sizes(long long llc_bytes, long long available_bytes) {
  HostStreamSizes s;
  const double per_array_min = kResidentMultiple * double(std::max(0ll, llc_bytes)) / 2.0;
  std::int64_t needed = kMinCeilingBytes;
  while (double(needed) < per_array_min) needed += kCeilingStep;
  s.needed_bytes = needed;
  const double budget = available_bytes > 0 ? kMemoryFraction * double(available_bytes) : 0;
  auto fits = [&](std::int64_t bytes) { return budget == 0 || double(kArraysHeld) * double(bytes) <= budget; };
  std::int64_t top = needed;
  if (!fits(needed)) {
    top = static_cast<std::int64_t>(budget / kArraysHeld) / kCeilingStep * kCeilingStep;
    s.missing = "a host array of " + mib_text(double(needed)) + " is needed to stream well above the " +
                mib_text(double(llc_bytes)) + " last-level cache, but " + std::to_string(kArraysHeld) +
                " such arrays do not fit in half of the " + mib_text(double(available_bytes)) +
                " of memory available";
  } else {
    s.ceiling_bytes = needed;
  }
  auto add = [&](std::vector<std::int64_t>& v, std::int64_t bytes) {
    if (bytes > 0 && fits(bytes) && std::find(v.begin(), v.end(), bytes) == v.end()) v.push_back(bytes);
  };
  for (std::int64_t b : kCacheSizes) add(s.quick, b);
  add(s.quick, top);
  for (std::int64_t b : kFullFixed) add(s.full, b);
  add(s.full, top);
  std::sort(s.quick.begin(), s.quick.end());
  std::sort(s.full.begin(), s.full.end());
  // The quick suite keeps one size below the ceiling size, the largest cache size.
  if (s.quick.size() > 2) s.quick.erase(s.quick.begin(), s.quick.end() - 2);
  return s;
}

// The most recently used values by size, up to a byte budget: the stream cases of one size share
// their arrays, and the next size evicts the oldest sizes until it fits (one size always fits).
template <class V>
class RecentBySize {
 public:
  explicit RecentBySize(double budget_bytes) : budget_(budget_bytes) {}
  // The value of size n (moved to most recent), or make(n) after evicting what the budget needs.
  V& get(std::size_t n, double bytes, const std::function<V(std::size_t)>& make) {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->n == n) {
        Item hit = std::move(*it);
        items_.erase(it);
        items_.push_back(std::move(hit));
        return items_.back().v;
      }
    double held = 0;
    for (const Item& i : items_) held += i.bytes;
    while (!items_.empty() && held + bytes > budget_) {
      held -= items_.front().bytes;
      items_.pop_front();
    }
    items_.push_back(Item{n, bytes, make(n)});
    return items_.back().v;
  }
  std::size_t size() const { return items_.size(); }
  bool holds(std::size_t n) const {
    for (const Item& i : items_)
      if (i.n == n) return true;
    return false;
  }

 private:
  struct Item {
    std::size_t n;
    double bytes;
    V v;
  };
  double budget_;
  std::deque<Item> items_;  // most recent last
};

}  // namespace gtb::ceilings
