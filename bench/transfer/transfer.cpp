// Transfer family: host<->device copies by memory kind and size, the cost of pinning, batching,
// copy/compute overlap and a data loader that starves or feeds its consumer; CPU side by side.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gtb/gtb.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/transfer/cpu/transfer.h"
#include "kernels/transfer/loader.h"
#include "kernels/transfer/transfer.h"
#if GTB_HAVE_CUDA
#include "bench/transfer/gpu_timing.h"
#include "gtb/cuda_timing.h"
#include "kernels/transfer/cuda/loader.h"
#include "kernels/transfer/cuda/transfer.h"
#endif

namespace {

using gtb::Backend;
using gtb::State;
namespace tx = gtb::transfer;

constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
const std::vector<std::int64_t> kFullBytes = tx::log_sizes(KiB, GiB, 4);  // 1 KiB .. 1 GiB, x4
const std::vector<std::int64_t> kQuickBytes = {4 * KiB, MiB, 64 * MiB};
const std::vector<std::string> kAllMemory = {"pageable", "pinned", "registered", "write_combined"};
const std::vector<std::string> kReadableMemory = {"pageable", "pinned", "registered"};
const std::vector<std::string> kClocks = {"device", "host"};

// The loader's fixed problem: 32 samples of 16 KiB per batch, 24 batches per run.
constexpr std::int64_t kLoaderBatches = 24;
constexpr std::int64_t kBatchSamples = 32;
constexpr std::int64_t kSampleBytes = 16 * KiB;

std::size_t size_param(const State& st, const char* name) {
  const std::int64_t v = st.get_int(name);
  if (v <= 0) throw std::invalid_argument(std::string(name) + " must be > 0, got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

// With overcommit a too-large allocation succeeds and the first touch kills the process, so the
// available memory is checked first and the case is skipped as out of memory.
void require_host(double bytes, const std::string& what) {
  const double avail = double(gtb::cpu::host_available_bytes());
  if (avail > 0 && bytes > 0.9 * avail)
    throw gtb::OutOfMemory(what + ": " + std::to_string(std::llround(bytes)) + " bytes of host memory needed, " +
                           std::to_string(std::llround(avail)) + " available");
}

gtb::cpu::HostBuffer host_buffer(std::size_t bytes) {
  try {
    return gtb::cpu::HostBuffer(bytes);
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host buffer of " + std::to_string(bytes) + " bytes");
  }
}

void median_counter(State& st, const char* name) {
  if (st.record().stats) st.counter(name, st.record().stats->median, "s");
}

// ---- copies ---------------------------------------------------------------------------------------

// The CPU side of a copy: the same bytes moved by memcpy between two host buffers.
void cpu_copy(State& st, bool bidir, bool parallel) {
  const std::size_t n = size_param(st, "bytes");
  const int pairs = bidir ? 2 : 1;
  require_host(2.0 * pairs * double(n), "host copy");
  std::vector<gtb::cpu::HostBuffer> src, dst;
  for (int p = 0; p < pairs; ++p) {
    src.push_back(host_buffer(n));
    dst.push_back(host_buffer(n));
    gtb::fill_bytes(src.back().get(), n, 0xC0 + std::uint64_t(p));
    gtb::cpu::prefault(dst.back().get(), n);
    gtb::poison_bytes(dst.back().get(), n);
  }
  auto copy = [&] {
    for (int p = 0; p < pairs; ++p) {
      if (parallel)
        gtb::cpu::memcpy_parallel(dst[std::size_t(p)].get(), src[std::size_t(p)].get(), n);
      else
        gtb::cpu::memcpy_single(dst[std::size_t(p)].get(), src[std::size_t(p)].get(), n);
    }
  };
  copy();
  gtb::ErrorReport rep = gtb::compare_bytes(dst[0].get(), src[0].get(), n);
  if (rep.ok && bidir) rep = gtb::compare_bytes(dst[1].get(), src[1].get(), n);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(double(pairs) * double(n));
  // The threads that really ran it: a small copy stays on one thread (kParallelCopyMinBytes), and
  // a plausibility check must not read it as an all-core copy slowed by other load.
  st.info("threads", parallel ? gtb::cpu::memcpy_threads(n) : 1);
  st.exec(copy);
  median_counter(st, "seconds_per_copy");
}

#if GTB_HAVE_CUDA
namespace gt = gtb::cuda::transfer;
namespace tt = gtb::transfer_timing;

gtb::Clock clock_option(const State& st) {
  const std::string c = st.get_string("clock");
  if (c == "device") return gtb::Clock::cuda_event;
  if (c == "host") return gtb::Clock::host_wall;
  throw std::invalid_argument("clock must be device or host, got '" + c + "'");
}

void gpu_copy(State& st, gt::Direction dir) {
  const std::size_t n = size_param(st, "bytes");
  const auto kind = gt::memory_kind_from_string(st.get_string("memory"));
  const gtb::Clock clock = clock_option(st);
  // Host buffers plus the pageable references and read-back used by the check.
  require_host((dir == gt::Direction::bidir ? 5.0 : 3.0) * double(n), "copy with its check");
  gt::CopyCase c(dir, kind, n);
  const gtb::ErrorReport rep = c.verify();
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(c.bytes_per_rep());
  // The driver stages pageable memory through its own pinned buffer on the calling thread (a D2H
  // returns only once it is done), so between the events the copy engine waits for the host: the
  // device clock measures the same staged path as the host clock, not the engine alone.
  if (kind == gt::MemoryKind::pageable && clock == gtb::Clock::cuda_event)
    st.info("clock_note", "pageable: the events span the driver's host-side staging, not the copy engine alone");
  if (clock == gtb::Clock::cuda_event)  // the copy case queues its repetitions itself, behind the start event
    st.exec_batch_self_timed(clock, [&](std::int64_t reps) { return tt::copy_device(c, reps); });
  else
    st.exec([&] { c.run_once(); });
  median_counter(st, "seconds_per_copy");
}
#else
void gpu_copy(State&, int) { throw gtb::Skip("built without CUDA"); }
#endif

// Many points (sizes x kinds x clocks x directions): keep each suite within its time budget.
const gtb::RuleChange kCopyQuick = gtb::RuleChange().budget_seconds(0.12);
const gtb::RuleChange kCopyFull = gtb::RuleChange().budget_seconds(1.0);

void register_copies() {
  struct Dir {
    const char* workload;
    bool bidir;
#if GTB_HAVE_CUDA
    gt::Direction dir;
#else
    int dir;
#endif
    const std::vector<std::string>* memory;
    const char* what;
  };
#if GTB_HAVE_CUDA
  const Dir dirs[] = {{"copy_h2d", false, gt::Direction::h2d, &kAllMemory, "host to device"},
                      {"copy_d2h", false, gt::Direction::d2h, &kReadableMemory, "device to host"},
                      {"copy_bidir", true, gt::Direction::bidir, &kReadableMemory, "H2D and D2H at once"}};
#else
  const Dir dirs[] = {{"copy_h2d", false, 0, &kAllMemory, "host to device"},
                      {"copy_d2h", false, 1, &kReadableMemory, "device to host"},
                      {"copy_bidir", true, 2, &kReadableMemory, "H2D and D2H at once"}};
#endif
  for (const Dir& d : dirs) {
    const bool bidir = d.bidir;
    const auto dir = d.dir;
    const std::string bytes_rule = bidir ? "; bytes = 2 x size (both directions)" : "; bytes = size";
    gtb::add("transfer", d.workload, "cudaMemcpyAsync", Backend::cuda, [dir](State& st) { gpu_copy(st, dir); })
        .axis("bytes", kFullBytes, kQuickBytes)
        .option("memory", *d.memory)
        .option("clock", kClocks)
        .rate("bandwidth", "GB/s", 1e9)
        .rule(gtb::Suite::quick, kCopyQuick).rule(gtb::Suite::full, kCopyFull)
        .describe(std::string("cudaMemcpyAsync ") + d.what +
                  "; clock=device: copies back to back between CUDA events, clock=host: each copy's API call "
                  "through stream synchronize" + bytes_rule);
    for (const bool parallel : {false, true})
      gtb::add("transfer", d.workload, parallel ? "memcpy_parallel" : "memcpy_1thread", Backend::cpu,
               [bidir, parallel](State& st) { cpu_copy(st, bidir, parallel); })
          .axis("bytes", kFullBytes, kQuickBytes)
          .rate("bandwidth", "GB/s", 1e9)
          .rule(gtb::Suite::quick, kCopyQuick).rule(gtb::Suite::full, kCopyFull)
          .describe(std::string(parallel ? "host memcpy split over all cores (OpenMP; one thread below 256 KiB)"
                                         : "host memcpy on one thread (the speed a pageable copy's staging runs at)") +
                    bytes_rule);
  }
}

// ---- pinning cost ---------------------------------------------------------------------------------

void cpu_alloc_touch(State& st) {
  const std::size_t n = size_param(st, "bytes");
  require_host(double(n), "fresh allocation");
  std::uint64_t expect = 0;
  for (std::size_t p = 0; p * gtb::cpu::kPageBytes < n; ++p) expect += p % 256;
  std::uint64_t got = 0;
  try {
    got = gtb::cpu::alloc_touch_free(n);
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("mmap of " + std::to_string(n) + " bytes");
  }
  st.check(got == expect, got == expect ? "every page touched" :
                                          "page-touch sum " + std::to_string(got) + " != " + std::to_string(expect));
  if (got != expect) return;
  st.set_work(double(n));
  std::uint64_t sink = 0;
  st.exec([&] { sink += gtb::cpu::alloc_touch_free(n); });
  st.info("sink", sink % 2);
}

#if GTB_HAVE_CUDA
void gpu_pin(State& st) {
  const std::size_t n = size_param(st, "bytes");
  gt::PinCase c(gt::pin_method_from_string(st.get_string("method")), n);
  const gtb::ErrorReport rep = c.verify();
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(double(n));
  st.exec([&] { c.run_once(); });
}
#else
void gpu_pin(State&) { throw gtb::Skip("built without CUDA"); }
#endif

const gtb::RuleChange kPinQuick = gtb::RuleChange().min_samples(5).budget_seconds(0.2);
const gtb::RuleChange kPinFull = gtb::RuleChange().min_samples(5).budget_seconds(1.5);

// ---- batching -------------------------------------------------------------------------------------

void cpu_gather(State& st) {
  const std::size_t count = size_param(st, "samples"), sb = size_param(st, "sample_bytes");
  const std::size_t stride = (sb + 2 * gtb::cpu::kPageBytes - 1) / gtb::cpu::kPageBytes * gtb::cpu::kPageBytes;
  require_host(double(count) * double(stride + sb) * 2, "gather");
  auto samples = host_buffer(count * stride);
  auto packed = host_buffer(count * sb);
  auto expect = host_buffer(count * sb);
  std::vector<const void*> srcs;
  for (std::size_t i = 0; i < count; ++i) {
    gtb::fill_bytes(samples.bytes_ptr() + i * stride, sb, 0xBA7C4 + i);
    std::memcpy(expect.bytes_ptr() + i * sb, samples.bytes_ptr() + i * stride, sb);
    srcs.push_back(samples.bytes_ptr() + i * stride);
  }
  gtb::poison_bytes(packed.get(), count * sb);
  gtb::cpu::gather(packed.get(), srcs.data(), count, sb);
  const gtb::ErrorReport rep = gtb::compare_bytes(packed.get(), expect.get(), count * sb);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(double(count));
  st.exec([&] { gtb::cpu::gather(packed.get(), srcs.data(), count, sb); });
  median_counter(st, "seconds_per_batch");
}

#if GTB_HAVE_CUDA
void gpu_batching(State& st, const std::string& method) {
  const std::size_t count = size_param(st, "samples"), sb = size_param(st, "sample_bytes");
  gt::BatchingCase c(gt::batch_method_from_string(method), count, sb);
  const gtb::ErrorReport rep = c.verify();
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(double(count));
  st.exec([&] { c.run_once(); });
  median_counter(st, "seconds_per_batch");
}
#else
void gpu_batching(State&, const std::string&) { throw gtb::Skip("built without CUDA"); }
#endif

// ---- overlap --------------------------------------------------------------------------------------

#if GTB_HAVE_CUDA
void gpu_overlap(State& st) {
  gt::OverlapConfig cfg;
  cfg.chunk_bytes = size_param(st, "chunk_bytes");
  cfg.chunks = static_cast<int>(size_param(st, "chunks"));
  cfg.streams = static_cast<int>(st.get_int("streams"));
  cfg.compute_ratio = st.get_double("compute_ratio");
  require_host(4.0 * double(cfg.chunk_bytes) * cfg.chunks, "overlap buffers and check");
  gt::OverlapCase c(cfg, gtb::cuda::event_timer());
  const gtb::ErrorReport rep = c.verify();
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  st.set_work(c.bytes_per_rep());
  st.info("async_engine_count", gt::async_engine_count());
  st.info("kernel_iters", c.iters());
  st.info("buffers", cfg.streams);
  const auto& ss = gtb::cuda::exec(st, c.stream(), tt::overlap_pipeline(c), tt::overlap_timing(c));
  // The reference times: the median of 5 single passes of the copies alone and of the kernels alone.
  const double t_copy = tt::overlap_copy_only(c, 5), t_compute = tt::overlap_compute_only(c, 5);
  const double t_total = ss.stats.median;
  st.counter("copy_seconds", t_copy, "s");
  st.counter("compute_seconds", t_compute, "s");
  st.counter("overlap_fraction", tx::overlap_fraction(t_copy, t_compute, t_total), "");
  st.counter("speedup_vs_serial", (t_copy + t_compute) / t_total, "x");
}
#else
void gpu_overlap(State&) { throw gtb::Skip("built without CUDA"); }
#endif

// ---- loader ---------------------------------------------------------------------------------------

struct LoaderParams {
  gtb::cpu::LoaderConfig cfg;
  std::size_t batch_bytes = 0;
  double preprocess_seconds = 0;  // per batch
  double consume_seconds = 0;     // per batch
  bool spin = false;
};

LoaderParams loader_params(const State& st) {
  LoaderParams p;
  p.cfg.workers = static_cast<int>(st.get_int("workers"));
  p.cfg.depth = static_cast<int>(st.get_int("depth"));
  p.cfg.batches = kLoaderBatches;
  const std::size_t samples = size_param(st, "batch_samples");
  p.batch_bytes = samples * size_param(st, "sample_bytes");
  p.preprocess_seconds = double(samples) * double(st.get_int("sample_us")) * 1e-6;
  p.consume_seconds = double(st.get_int("consume_us")) * 1e-6;
  const std::string pre = st.get_string("preprocess");
  if (pre != "sleep" && pre != "spin") throw std::invalid_argument("preprocess must be sleep or spin, got '" + pre + "'");
  p.spin = pre == "spin";
  if (p.preprocess_seconds < 0 || p.consume_seconds < 0) throw std::invalid_argument("loader times must be >= 0");
  gtb::cpu::validate(p.cfg, std::size_t(std::max(p.cfg.depth, 1)));
  return p;
}

constexpr std::uint64_t kLoaderSeed = 0x10AD;

gtb::cpu::ProduceFn producer(const LoaderParams& p) {
  return [p](std::int64_t b, void* slot) {
    gtb::cpu::fill_batch(slot, p.batch_bytes, kLoaderSeed, std::uint64_t(b));
    if (p.spin)
      gtb::cpu::spin_for(p.preprocess_seconds);
    else
      gtb::cpu::sleep_for(p.preprocess_seconds);
  };
}

void cpu_loader(State& st) {
  const LoaderParams p = loader_params(st);
  require_host(double(p.batch_bytes) * p.cfg.depth, "loader ring");
  std::vector<gtb::cpu::HostBuffer> ring;
  std::vector<void*> slots;
  for (int d = 0; d < p.cfg.depth; ++d) {
    ring.push_back(host_buffer(p.batch_bytes));
    slots.push_back(ring.back().get());
  }
  const auto produce = producer(p);
  int bad = 0;
  gtb::cpu::run_loader(p.cfg, slots, produce, [&](std::int64_t b, void* s) {
    if (!gtb::cpu::batch_matches(s, p.batch_bytes, kLoaderSeed, std::uint64_t(b))) ++bad;
    gtb::poison_bytes(s, p.batch_bytes);  // a slot must be rewritten before it is consumed again
  });
  st.check(bad == 0, bad == 0 ? "every batch arrived once, in order, intact"
                              : std::to_string(bad) + " batches arrived corrupted or out of order");
  if (bad) return;
  st.set_work(double(p.cfg.batches) * double(p.batch_bytes / size_param(st, "sample_bytes")));
  std::vector<double> idle, wait;
  std::uint64_t sink = 0;
  st.exec([&] {
    const auto run = gtb::cpu::run_loader(p.cfg, slots, produce, [&](std::int64_t, void* s) {
      sink += gtb::cpu::checksum_words(s, p.batch_bytes);
      gtb::cpu::spin_for(p.consume_seconds);  // the consumer computes: it holds a core
    });
    idle.push_back(run.idle_fraction);
    wait.push_back(run.wait_seconds / run.seconds);
  });
  st.counter("idle_fraction", gtb::median(idle), "");
  st.counter("wait_fraction", gtb::median(wait), "");
  st.info("sink", sink % 2);
}

#if GTB_HAVE_CUDA
void gpu_loader(State& st) {
  const LoaderParams p = loader_params(st);
  gt::GpuLoaderConfig cfg;
  cfg.loader = p.cfg;
  cfg.memory = gt::memory_kind_from_string(st.get_string("memory"));
  cfg.batch_bytes = p.batch_bytes;
  cfg.kernel_seconds = p.consume_seconds;
  gt::GpuLoader loader(cfg);
  const auto produce = producer(p);
  const auto first = loader.run(produce);
  int bad = 0;
  for (std::size_t b = 0; b < first.checksums.size(); ++b)
    if (first.checksums[b] != gtb::cpu::expected_batch_checksum(p.batch_bytes, kLoaderSeed, b)) ++bad;
  st.check(bad == 0, bad == 0 ? "the GPU's checksum of every batch matches"
                              : std::to_string(bad) + " batches reached the GPU corrupted or out of order");
  if (bad) return;
  st.set_work(double(p.cfg.batches) * double(p.batch_bytes / size_param(st, "sample_bytes")));
  std::vector<double> idle, wait;
  st.exec([&] {
    const auto run = loader.run(produce);
    idle.push_back(run.gpu_idle_fraction);
    wait.push_back(run.host.wait_seconds / run.seconds);
  });
  st.counter("idle_fraction", gtb::median(idle), "");
  st.counter("wait_fraction", gtb::median(wait), "");
}
#else
void gpu_loader(State&) { throw gtb::Skip("built without CUDA"); }
#endif

const gtb::RuleChange kLoaderRule = gtb::RuleChange().warmup_samples(1).warmup_seconds(0).hard_min_samples(3);
const gtb::RuleChange kLoaderQuick = gtb::RuleChange().min_samples(3);
const gtb::RuleChange kLoaderFull = gtb::RuleChange().min_samples(5).budget_seconds(1.5);

// ---- registration ---------------------------------------------------------------------------------

const bool kRegistered = [] {
  register_copies();

  gtb::add("transfer", "pin_cost", "cudaHostAlloc_or_Register", Backend::cuda, gpu_pin)
      .axis("bytes", kFullBytes, kQuickBytes)
      .option("method", std::vector<std::string>{"host_alloc", "host_register"})
      .time("time", "ms", 1e-3)
      .rule(gtb::Suite::quick, kPinQuick).rule(gtb::Suite::full, kPinFull)
      .describe("host_alloc: cudaHostAlloc + cudaFreeHost; host_register: cudaHostRegister + cudaHostUnregister "
                "of a touched pageable buffer; host wall per buffer");
  gtb::add("transfer", "pin_cost", "mmap_first_touch", Backend::cpu, cpu_alloc_touch)
      .axis("bytes", kFullBytes, kQuickBytes)
      .time("time", "ms", 1e-3)
      .rule(gtb::Suite::quick, kPinQuick).rule(gtb::Suite::full, kPinFull)
      .describe("fresh pageable memory: mmap + one write per page + munmap (what malloc does for large blocks)");

  const std::vector<std::int64_t> full_samples = {8, 64, 512}, quick_samples = {64};
  const std::vector<std::int64_t> full_sb = {KiB, 16 * KiB, 256 * KiB}, quick_sb = {4 * KiB, 64 * KiB};
  const std::pair<const char*, const char*> methods[] = {
      {"per_sample", "one cudaMemcpyAsync per sample"},
      {"pack_then_copy", "host memcpy of the samples into a pinned staging buffer, then one copy (packing timed)"},
      {"prepacked", "one copy of an already contiguous pinned batch"},
      {"memcpy_batch", "one cudaMemcpyBatchAsync call for all samples"}};
  for (const auto& [m, what] : methods) {
    const std::string method = m;
    gtb::add("transfer", "batching", method, Backend::cuda, [method](State& st) { gpu_batching(st, method); })
        .axis("samples", full_samples, quick_samples)
        .axis("sample_bytes", full_sb, quick_sb)
        .rate("throughput", "samples/s", 1.0)
        .describe(std::string(what) + "; pinned samples one page apart; API calls through synchronize");
  }
  gtb::add("transfer", "batching", "gather_memcpy", Backend::cpu, cpu_gather)
      .axis("samples", full_samples, quick_samples)
      .axis("sample_bytes", full_sb, quick_sb)
      .rate("throughput", "samples/s", 1.0)
      .describe("host memcpy of scattered samples into one contiguous batch (the CPU's whole job)");

  gtb::add("transfer", "overlap", "pipeline", Backend::cuda, gpu_overlap)
      .axis("chunk_bytes", std::vector<std::int64_t>{MiB, 4 * MiB, 16 * MiB}, std::vector<std::int64_t>{4 * MiB})
      .axis("chunks", std::vector<std::int64_t>{16})
      .axis("compute_ratio", std::vector<double>{0.25, 1.0, 4.0}, std::vector<double>{1.0})
      .option("streams", std::vector<std::int64_t>{1, 2, 3, 4})
      .rate("throughput", "GB/s", 1e9)
      .describe("per chunk: H2D, a kernel calibrated to compute_ratio x the chunk's copy time, D2H; streams=1 is "
                "serial, streams=S uses S streams with a device buffer pair each; bytes = in + out");

  const std::vector<std::int64_t> full_w = {1, 2, 3, 4, 6, 8, 12, 16}, quick_w = {1, 2, 4, 8};
  const std::vector<std::int64_t> full_d = {2, 4, 8, 16}, quick_d = {8};
  auto loader_axes = [&](gtb::Bench& b) -> gtb::Bench& {
    return b.axis("workers", full_w, quick_w)
        .axis("depth", full_d, quick_d)
        .axis("batch_samples", std::vector<std::int64_t>{kBatchSamples})
        .axis("sample_bytes", std::vector<std::int64_t>{kSampleBytes})
        .axis("sample_us", std::vector<std::int64_t>{75})
        .axis("consume_us", std::vector<std::int64_t>{1000})
        .rate("throughput", "samples/s", 1.0)
        .rule(kLoaderRule).rule(gtb::Suite::quick, kLoaderQuick).rule(gtb::Suite::full, kLoaderFull);
  };
  loader_axes(gtb::add("transfer", "loader", "cpu_consumer", Backend::cpu, cpu_loader))
      .option("preprocess", std::vector<std::string>{"sleep", "spin"}, std::vector<std::string>{"sleep"})
      .describe("W workers fill a ring of D host buffers (preprocessing = sample_us per sample, sleeping or "
                "spinning); a consumer thread computes consume_us per batch; idle_fraction = time between "
                "consumer computations / span");
  loader_axes(gtb::add("transfer", "loader", "gpu_consumer", Backend::cuda, gpu_loader))
      .option("memory", std::vector<std::string>{"pinned", "pageable"}, std::vector<std::string>{"pinned"})
      .option("preprocess", std::vector<std::string>{"sleep", "spin"}, std::vector<std::string>{"sleep"})
      .describe("W workers fill a ring of D host buffers; the host thread copies each batch to the GPU and "
                "launches a consume_us kernel; idle_fraction = GPU time between consumer kernels (events) / span");
  return true;
}();

}  // namespace
