#include "harness/driver/common/speed.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"

namespace gtb::health {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr long kLoopIterations = 200000;  // x 48 multiply-adds: about half a millisecond on one core
// Enough independent chains (12 SSE registers) that the loop is bound by the core's arithmetic
// throughput, not by one chain's latency: a core shared with other work shows it.
constexpr int kChains = 48;

// kChains independent multiply-add chains, `n` steps each; the result keeps the compiler from
// dropping the work. The same loop on every reading and every machine: only its speed changes. Never
// instrumented (a sanitizer build measures nothing, but runs the reading around every family).
__attribute__((no_sanitize("address", "undefined"))) float madd_loop(long n) {
  float a[kChains];
  for (int j = 0; j < kChains; ++j) a[j] = 1.0f + 1e-3f * float(j);
  const float m = 0.999999f, c = 1e-6f;
  for (long i = 0; i < n; ++i)
    for (int j = 0; j < kChains; ++j) a[j] = a[j] * m + c;
  float s = 0;
  for (float v : a) s += v;
  return s;
}

// Sums `n` floats `passes` times (eight independent sums, so that the loop is bound by the cache's
// bandwidth, not by one addition's latency). Never instrumented, as madd_loop.
__attribute__((no_sanitize("address", "undefined"))) float sweep_loop(const float* p, std::size_t n, int passes) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int r = 0; r < passes; ++r)
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] += p[i + j];
  float s = 0;
  for (float v : acc) s += v;
  return s;
}

std::atomic<float> g_sink{0};

// Seconds of `threads` threads running work(thread) at once (started together, timed until the
// last is done).
template <class Work>
double together(int threads, Work work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  auto body = [&](int t) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    g_sink.store(work(t), std::memory_order_relaxed);
  };
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(body, t);
  while (ready.load() < threads - 1) {
  }
  ready.fetch_add(1);
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  g_sink.store(work(0), std::memory_order_relaxed);
  for (auto& th : others) th.join();
  return since(t0);
}

// G multiply-adds per second of `threads` threads running the loop at once.
double loop_rate(int threads) {
  const double s = together(threads, [](int) { return madd_loop(kLoopIterations); });
  return s > 0 ? double(threads) * double(kLoopIterations) * kChains / s / 1e9 : 0.0;
}

// Bytes per second each of `threads` threads summed from its own buffer, all at once.
constexpr int kSweepPasses = 320;  // about 2 ms on one thread at 100 GB/s
double sweep_rate(int threads, const std::vector<std::vector<float>>& buffers) {
  const double s = together(threads, [&](int t) { return sweep_loop(buffers[std::size_t(t)].data(), buffers[std::size_t(t)].size(), kSweepPasses); });
  return s > 0 ? double(threads) * double(buffers[0].size()) * sizeof(float) * kSweepPasses / s : 0.0;
}

// Microseconds from notifying a thread asleep on a condition variable until it runs, over `rounds`
// rounds, each after a third of a millisecond of work on this thread (as a step's serial part keeps
// its other threads waiting).
std::vector<double> wake_rounds(int rounds) {
  std::mutex mu;
  std::condition_variable cv;
  int round = 0;
  bool stop = false;
  std::atomic<int> ack{0};
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mu);
    int seen = 0;
    for (;;) {
      cv.wait(lock, [&] { return stop || round != seen; });
      if (stop) return;
      seen = round;
      ack.store(seen, std::memory_order_release);
    }
  });
  std::vector<double> us;
  for (int r = 1; r <= rounds; ++r) {
    const auto busy = Clock::now();
    while (since(busy) < 300e-6) {
    }
    const auto t0 = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu);
      round = r;
    }
    cv.notify_one();
    while (ack.load(std::memory_order_acquire) != r) {
    }
    us.push_back(since(t0) * 1e6);
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_one();
  worker.join();
  return us;
}

}  // namespace

Speed measure_speed(int threads, long long l2_bytes) {
  Speed s;
  s.threads = threads > 0 ? threads : int(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  std::vector<double> one, all;
  for (int i = 0; i < 7; ++i) one.push_back(loop_rate(1));
  for (int i = 0; i < 5; ++i) all.push_back(loop_rate(s.threads));
  s.one_core = median(one);
  s.all_cores = median(all);
  if (l2_bytes < 0) l2_bytes = std::max(0L, ::sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (l2_bytes > 0 && s.threads > 1) {
    const auto n = std::size_t(kCacheSweepShare * double(l2_bytes) / sizeof(float)) / 8 * 8;
    std::vector<std::vector<float>> buffers(std::size_t(s.threads), std::vector<float>(std::max<std::size_t>(n, 8)));
    for (auto& b : buffers)
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(i % 7) * 1e-3f;
    sweep_rate(s.threads, buffers);  // first touch and a first pass: the buffers in their caches
    std::vector<double> one_sweep, all_sweep;
    for (int i = 0; i < 5; ++i) {
      one_sweep.push_back(sweep_rate(1, buffers));
      all_sweep.push_back(sweep_rate(s.threads, buffers));
    }
    const double alone = median(one_sweep);
    s.cache_sweep_bytes = double(buffers[0].size() * sizeof(float));
    s.cache_scaling = alone > 0 ? median(all_sweep) / (double(s.threads) * alone) : 0.0;
  }
  const std::vector<double> wake = wake_rounds(16);
  s.wake_us = median(wake);
  s.wake_max_us = *std::max_element(wake.begin(), wake.end());
  return s;
}

json to_json(const Speed& s) {
  return {{"threads", s.threads},
          {"one_core_gmadd_per_s", s.one_core},
          {"all_cores_gmadd_per_s", s.all_cores},
          {"wake_us", s.wake_us},
          {"wake_max_us", s.wake_max_us},
          {"cache_sweep_bytes", s.cache_sweep_bytes},
          {"cache_scaling", s.cache_scaling}};
}

std::optional<SpeedSpread> speed_spread(const json& doc) {
  SpeedSpread out;
  std::vector<double> wakes;
  for (const auto& f : json_read::array_at(doc, {"families"}))
    for (const char* when : {"before", "after"}) {
      const json& r = json_read::object_at(f, {"health", "speed", when});
      const double one = json_read::number_at(r, {"one_core_gmadd_per_s"}, 0.0);
      const double all = json_read::number_at(r, {"all_cores_gmadd_per_s"}, 0.0);
      if (!(one > 0) || !(all > 0)) continue;
      out.one_core_min = out.readings ? std::min(out.one_core_min, one) : one;
      out.one_core_max = std::max(out.one_core_max, one);
      out.all_cores_min = out.readings ? std::min(out.all_cores_min, all) : all;
      out.all_cores_max = std::max(out.all_cores_max, all);
      wakes.push_back(json_read::number_at(r, {"wake_us"}, 0.0));
      out.wake_max_us = std::max(out.wake_max_us, json_read::number_at(r, {"wake_max_us"}, 0.0));
      out.threads = std::max(out.threads, int(json_read::number_at(r, {"threads"}, 0.0)));
      ++out.readings;
      const double cs = json_read::number_at(r, {"cache_scaling"}, 0.0);
      if (cs > 0) {
        out.cache_scaling_min = out.cache_readings ? std::min(out.cache_scaling_min, cs) : cs;
        out.cache_scaling_max = std::max(out.cache_scaling_max, cs);
        out.cache_sweep_bytes = json_read::number_at(r, {"cache_sweep_bytes"}, 0.0);
        out.cache_shared += cs < kCacheSharedLimit;
        ++out.cache_readings;
      }
    }
  if (!out.readings) return std::nullopt;
  // The middle reading (the lower of the two middle ones for an even count): a figure one reading gave.
  std::sort(wakes.begin(), wakes.end());
  out.wake_us_median = wakes.empty() ? 0.0 : wakes[(wakes.size() - 1) / 2];
  return out;
}

std::string speed_change(const json& family_speed) {
  using format::printf_number;
  const json& b = json_read::object_at(family_speed, {"before"});
  const json& a = json_read::object_at(family_speed, {"after"});
  std::vector<std::string> moved;
  for (const auto& [key, label] : {std::pair<const char*, const char*>{"one_core_gmadd_per_s", "one core"},
                                   std::pair<const char*, const char*>{"all_cores_gmadd_per_s", "all cores"}}) {
    const double x = json_read::number_at(b, {key}, 0.0), y = json_read::number_at(a, {key}, 0.0);
    if (x > 0 && y > 0 && std::min(x, y) / std::max(x, y) < 1.0 - kSpeedSpreadLimit)
      moved.push_back(std::string(label) + " " + printf_number("%.3g", x) + " -> " + printf_number("%.3g", y) +
                      " G multiply-adds/s");
  }
  const double cx = json_read::number_at(b, {"cache_scaling"}, 0.0), cy = json_read::number_at(a, {"cache_scaling"}, 0.0);
  if (cx > 0 && cy > 0 && std::min(cx, cy) < kCacheSharedLimit && std::max(cx, cy) >= kCacheSharedLimit &&
      std::max(cx, cy) - std::min(cx, cy) > kSpeedSpreadLimit)
    moved.push_back("the CPUs' cache reading " + printf_number("%.2f", cx) + " -> " + printf_number("%.2f", cy));
  if (moved.empty()) return "";
  std::string t = "the machine's speed changed while it ran: ";
  for (std::size_t i = 0; i < moved.size(); ++i) t += (i ? ", " : "") + moved[i];
  return t;
}

namespace {
std::string micros_text(double us) {
  return us >= 1000 ? format::printf_number("%.3g", us / 1000) + " ms" : format::printf_number("%.3g", us) + " us";
}
}  // namespace

std::string speed_sentence(const SpeedSpread& s) {
  using format::printf_number;
  const double low = s.low_over_high();
  std::string t = "A fixed multiply-add loop, run before and after each family (" + std::to_string(s.readings) +
                  " readings), ran at " + printf_number("%.3g", s.one_core_min) + " to " +
                  printf_number("%.3g", s.one_core_max) + " G multiply-adds/s on one core and " +
                  printf_number("%.3g", s.all_cores_min) + " to " + printf_number("%.3g", s.all_cores_max) +
                  " on all cores; a thread asleep took " + micros_text(s.wake_us_median) +
                  " to wake (median; the slowest " + micros_text(s.wake_max_us) + ").";
  if (s.cache_readings > 0) {
    t += " Each of the " + std::to_string(s.threads) + " CPUs summing a buffer of its own that fits one core's L2 (" +
         format::printf_number("%.3g", s.cache_sweep_bytes / 1e6) + " MB each), all at once, ran at " +
         printf_number("%.2f", s.cache_scaling_min) +
         (s.cache_scaling_max > s.cache_scaling_min ? " to " + printf_number("%.2f", s.cache_scaling_max) : "") +
         " of one CPU's rate alone";
    if (s.cache_shared > 0)
      t += ": **the CPUs shared one core's cache** in " + std::to_string(s.cache_shared) + " of " +
           std::to_string(s.cache_readings) +
           " readings (under " + printf_number("%.2f", kCacheSharedLimit) +
           "; SMT siblings of one core, or one core shared in time, as a host may place a virtual machine's CPUs): work "
           "that fits a core's cache "
           "per thread, a GEMM's blocks among it, then does not scale across them, and a step's threads can run "
           "slower together than one alone.";
    else
      t += " (each CPU has a core's cache of its own).";
  }
  if (low < 1.0 - kSpeedSpreadLimit)
    t += " **The machine's speed changed during the run**: its slowest all-core reading was " +
         printf_number("%.0f", 100 * low) +
         "% of its fastest (a host's other work on a shared or virtual machine, which the load average does not "
         "show and the steal time not always): two records measured minutes apart can differ by that much with "
         "no change in the work.";
  return t;
}

}  // namespace gtb::health
