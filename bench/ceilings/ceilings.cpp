// Ceilings family: the measured memory-bandwidth and compute ceilings other families report percent of.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bench/ceilings/sizes.h"
#include "gtb/context.h"
#include "gtb/gtb.h"
#include "kernels/ceilings/cpu/fma_peak.h"
#include "kernels/ceilings/cpu/stream.h"
#include "kernels/ceilings/stream.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/ceilings/cuda/ceilings.h"
#endif

namespace {

constexpr float kScalar = 3.0f;
constexpr std::uint64_t kSeed = 42;
const std::vector<std::int64_t> kFullBytes = {16ll << 20, 64ll << 20, 256ll << 20, 1024ll << 20};
// Host arrays: the ceiling counts only sizes whose working set is well above the last-level cache
// (the smaller ones show what the caches add). The sizes come from this machine's cache and free
// memory (sizes.h): a server CPU with hundreds of MB of L3 gets arrays large enough to stream.
const gtb::ceilings::HostStreamSizes& host_sizes() {
  static const gtb::ceilings::HostStreamSizes s =
      gtb::ceilings::host_stream_sizes(gtb::cpu_caches().last_level_bytes(), gtb::host_available_bytes());
  return s;
}
const std::vector<std::string> kStores = gtb::names_of(gtb::cpu::kStoresNames);

std::size_t elements(gtb::State& st) { return static_cast<std::size_t>(st.get_int("bytes")) / sizeof(float); }

// The triad's output against its float64 reference, computed element by element during the check.
gtb::ErrorReport check_triad(const float* a, const float* b, const float* c, std::size_t n) {
  return gtb::compare_elementwise_fn(a, n, 1e-6, 0.0,
                                     [&](std::size_t i) { return double(b[i]) + double(kScalar) * double(c[i]); });
}

// The three host arrays of one size, allocated and filled once for every stream case of that size
// (copy and triad, plain and non-temporal stores): at 3 x 256 MiB the allocation, first touch and
// random fill cost more than the case's samples. Each case poisons the output `a` before its check;
// b and c are only read. Recent sizes are kept up to a byte budget (one size always fits).
struct HostArrays {
  std::size_t n = 0;
  gtb::cpu::AlignedFloats a, b, c;
};
constexpr double kHostArrayBudget = 1.5e9;

HostArrays& host_arrays(std::size_t n) {
  static gtb::ceilings::RecentBySize<HostArrays> cache(kHostArrayBudget);
  return cache.get(n, 3.0 * double(n) * sizeof(float), [](std::size_t k) {
    HostArrays h;
    try {
      h.a = gtb::cpu::alloc_floats(k), h.b = gtb::cpu::alloc_floats(k), h.c = gtb::cpu::alloc_floats(k);
    } catch (const std::bad_alloc&) {
      throw gtb::OutOfMemory("host arrays of " + std::to_string(3 * k * sizeof(float)) + " bytes");
    }
    gtb::cpu::stream_init(h.a.get(), h.b.get(), h.c.get(), k, kSeed);  // first touch by the threads that use them
    h.n = k;
    return h;
  });
}

void cpu_stream(gtb::State& st, bool is_triad) {
  // Why no size streams out of the cache, kept with the records: findings derived later from the
  // file (--gtb_findings_from, on another machine) must say what the measuring machine found.
  if (!host_sizes().missing.empty()) st.info("ceiling_missing", host_sizes().missing);
  const std::size_t n = elements(st);
  const auto stores = gtb::cpu::stores_from_string(st.get_string("stores"));
  HostArrays& arrays_of_n = host_arrays(n);
  float* a = arrays_of_n.a.get();
  const float* b = arrays_of_n.b.get();
  const float* c = arrays_of_n.c.get();
  gtb::poison(a, n);
  gtb::ErrorReport rep;
  if (is_triad) {
    gtb::cpu::stream_triad(a, b, c, kScalar, n, stores);
    rep = check_triad(a, b, c, n);
  } else {
    gtb::cpu::stream_copy(a, b, n, stores);
    rep = gtb::compare_bytes(a, b, n * sizeof(float));
  }
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  const int arrays = is_triad ? gtb::kStreamTriadArrays : gtb::kStreamCopyArrays;
  const double working_set = double(arrays) * double(n * sizeof(float));
  st.set_work(working_set);
  st.info("threads", gtb::cpu::stream_threads());
  // Only sizes well above the last-level cache measure memory; the ceiling ignores the others.
  st.info("cache_resident", gtb::cache_resident(working_set));
  st.counter("working_set_bytes", working_set, "bytes");
  st.exec([&] {
    if (is_triad)
      gtb::cpu::stream_triad(a, b, c, kScalar, n, stores);
    else
      gtb::cpu::stream_copy(a, b, n, stores);
  });
}

// The FP32 compute ceiling: bit-exact against a scalar reference on a short run, then timed.
void cpu_fma(gtb::State& st) {
  const gtb::cpu::FmaIsa isa = gtb::cpu::fma_isa_from_string(st.get_string("isa"));
  if (!gtb::cpu::fma_isa_supported(isa)) throw gtb::Skip("this CPU does not run " + st.get_string("isa"));
  const int threads = gtb::cpu::stream_threads();
  const std::size_t count = std::size_t(threads) * gtb::cpu::kFmaChains * std::size_t(gtb::cpu::fma_lanes(isa));
  // x <- 0.9999 x + 1e-4 has its fixed point at 1: starting in [0.5, 1.5) the values stay there,
  // never denormal or infinite, whatever the number of iterations.
  constexpr float kMul = 0.9999f, kAdd = 1e-4f;
  constexpr std::int64_t kCheckIters = 1000, kIters = 1 << 20;
  std::vector<float> init(count), got, ref;
  gtb::fill_uniform(init.data(), count, kSeed, 0.5f, 1.5f);
  got = ref = init;
  gtb::cpu::fma_peak_run(isa, got.data(), threads, kCheckIters, kMul, kAdd);
  gtb::cpu::fma_peak_reference(isa, ref.data(), count, kCheckIters, kMul, kAdd);
  const gtb::ErrorReport rep = gtb::compare_bytes(got.data(), ref.data(), count * sizeof(float));
  st.check(rep.ok, rep.ok ? "bit-exact against the scalar recurrence after 1000 iterations" : rep.detail);
  if (!rep.ok) return;
  st.set_work(2.0 * double(count) * double(kIters));
  st.info("threads", threads);
  st.info("lanes", gtb::cpu::fma_lanes(isa));
  st.info("chains_per_thread", gtb::cpu::kFmaChains);
  st.info("flop_rule", isa == gtb::cpu::FmaIsa::baseline ? "2 per multiply-add pair (no FMA instruction)"
                                                          : "2 per FMA lane");
  st.exec([&] { gtb::cpu::fma_peak_run(isa, got.data(), threads, kIters, kMul, kAdd); });
}

#if GTB_HAVE_CUDA
void gpu_stream(gtb::State& st, bool is_triad) {
  const std::size_t n = elements(st);
  const std::size_t bytes = n * sizeof(float);
  // The copy needs no c: at 1 GiB per array filling and holding it would only slow the setup.
  std::vector<float> hb(n), hc(is_triad ? n : 0), ha(n);
  gtb::fill_uniform(hb.data(), n, kSeed, 0.5f, 1.5f);
  if (is_triad) gtb::fill_uniform(hc.data(), n, kSeed + 1, 0.5f, 1.5f);
  gtb::cuda::DeviceBuffer a(bytes), b(bytes), c(is_triad ? bytes : 0);
  gtb::cuda::Stream stream;
  GTB_CUDA_CHECK(cudaMemcpy(b.get(), hb.data(), bytes, cudaMemcpyHostToDevice));
  if (is_triad) GTB_CUDA_CHECK(cudaMemcpy(c.get(), hc.data(), bytes, cudaMemcpyHostToDevice));
  GTB_CUDA_CHECK(cudaMemset(a.get(), 0xFF, bytes));  // NaN poison
  // The fills above ran on the legacy stream; the measured stream does not wait for it.
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  auto enqueue = [&](cudaStream_t s) {
    if (is_triad)
      gtb::cuda::stream_triad(a.as<float>(), b.as<float>(), c.as<float>(), kScalar, n, s);
    else
      GTB_CUDA_CHECK(cudaMemcpyAsync(a.get(), b.get(), bytes, cudaMemcpyDeviceToDevice, s));
  };
  enqueue(stream.get());
  stream.sync();
  GTB_CUDA_CHECK(cudaMemcpy(ha.data(), a.get(), bytes, cudaMemcpyDeviceToHost));
  const gtb::ErrorReport rep = is_triad ? check_triad(ha.data(), hb.data(), hc.data(), n)
                                        : gtb::compare_bytes(ha.data(), hb.data(), bytes);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  const int arrays = is_triad ? gtb::kStreamTriadArrays : gtb::kStreamCopyArrays;
  const double working_set = double(arrays) * double(bytes);
  st.set_work(working_set);
  // The full suite's 16 and 64 MiB arrays sit in a 50-60 MB L2: they show what the L2 adds and are
  // left out of the device ceiling.
  st.info("cache_resident", gtb::cache_resident(working_set, gtb::cuda::device_l2_bytes()));
  st.info("working_set_bytes", working_set);
  gtb::cuda::exec(st, stream.get(), enqueue);
}
#else
void gpu_stream(gtb::State&, bool) { throw gtb::Skip("built without CUDA"); }
#endif

// A STREAM kernel, the copy or the triad: on the host over all cores (by array size and store kind), or
// on the GPU.
gtb::Bench& add_stream(const char* workload, const char* variant, gtb::Backend be, bool is_triad, const char* doc) {
  const bool host = be == gtb::Backend::cpu;
  gtb::Bench& b = gtb::add("ceilings", workload, variant, be, [host, is_triad](gtb::State& st) {
    host ? cpu_stream(st, is_triad) : gpu_stream(st, is_triad);
  });
  if (host)
    b.axis("bytes", host_sizes().full, host_sizes().quick).option("stores", kStores);
  else
    b.axis("bytes", kFullBytes, {1024ll << 20});
  return b.rate("bandwidth", "GB/s", 1e9).describe(doc);
}
auto& host_copy = add_stream("stream_copy", "openmp", gtb::Backend::cpu, false,
                             "STREAM-like copy a = b over all cores, 64-byte-aligned arrays placed by first touch; "
                             "bytes = 2 x array bytes");
auto& host_triad = add_stream("stream_triad", "openmp", gtb::Backend::cpu, true,
                              "STREAM-like triad a = b + s*c over all cores, 64-byte-aligned arrays placed by first "
                              "touch; bytes = 3 x array bytes");
auto& host_fma = gtb::add("ceilings", "fma_peak", "registers", gtb::Backend::cpu, cpu_fma)
                     .option("isa", gtb::names_of(gtb::cpu::kFmaIsaNames))
                     .rate("flops", "TFLOP/s", 1e12)
                     .describe("FP32 x = x*m + a on 12 register vectors per thread, all threads; 2 FLOPs per lane");
auto& dev_copy = add_stream("stream_copy", "memcpy_d2d", gtb::Backend::cuda, false,
                            "cudaMemcpyAsync device to device; bytes = 2 x array bytes");
auto& dev_triad = add_stream("stream_triad", "kernel", gtb::Backend::cuda, true,
                             "grid-stride float4 triad kernel; bytes = 3 x array bytes");

}  // namespace

// What this family publishes for the others to divide by (include/gtb/publish.h).
#include "gtb/publish.h"
const bool kPublishes = gtb::publish("ceilings", gtb::published::kCeilings, "ceilings") &&
                        gtb::publish("ceilings", gtb::published::kCeilingsMissing, "ceilings_missing");
