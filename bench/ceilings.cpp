// Ceilings family: the measured memory-bandwidth ceilings other families report percent of.
#include <cstring>
#include <vector>

#include "harness/gtb.h"
#include "kernels/common/random.h"
#include "kernels/common/stream.h"
#include "kernels/common/verify.h"
#include "kernels/cpu/stream.h"
#if GTB_HAVE_CUDA
#include "harness/cuda_timing.h"
#include "kernels/cuda/ceilings.h"
#endif

namespace {

constexpr float kScalar = 3.0f;
constexpr std::uint64_t kSeed = 42;
const std::vector<std::int64_t> kFullBytes = {16ll << 20, 64ll << 20, 256ll << 20, 1024ll << 20};
const std::vector<std::int64_t> kQuickBytes = {256ll << 20};

std::size_t elements(gtb::State& st) { return static_cast<std::size_t>(st.get_int("bytes")) / sizeof(float); }

// Reference triad in float64 for the check.
std::vector<double> triad_reference(const std::vector<float>& b, const std::vector<float>& c) {
  std::vector<double> ref(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) ref[i] = double(b[i]) + double(kScalar) * double(c[i]);
  return ref;
}

void cpu_stream(gtb::State& st, bool is_triad) {
  const std::size_t n = elements(st);
  std::vector<float> a, b, c;
  try {
    a.resize(n), b.resize(n), c.resize(n);
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host arrays of " + std::to_string(3 * n * sizeof(float)) + " bytes");
  }
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n, kSeed);
  gtb::poison(a.data(), n);
  gtb::ErrorReport rep;
  if (is_triad) {
    gtb::cpu::stream_triad(a.data(), b.data(), c.data(), kScalar, n);
    rep = gtb::compare_elementwise(a.data(), triad_reference(b, c).data(), n, 1e-6, 0.0);
  } else {
    gtb::cpu::stream_copy(a.data(), b.data(), n);
    rep = gtb::compare_bytes(a.data(), b.data(), n * sizeof(float));
  }
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  const int arrays = is_triad ? gtb::kStreamTriadArrays : gtb::kStreamCopyArrays;
  st.set_work(double(arrays) * double(n * sizeof(float)));
  st.info("threads", gtb::cpu::stream_threads());
  st.measure(gtb::Clock::host_wall, [&](std::int64_t reps) {
    const double t0 = gtb::host_seconds();
    for (std::int64_t r = 0; r < reps; ++r) {
      if (is_triad)
        gtb::cpu::stream_triad(a.data(), b.data(), c.data(), kScalar, n);
      else
        gtb::cpu::stream_copy(a.data(), b.data(), n);
    }
    return gtb::host_seconds() - t0;
  });
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
  const gtb::ErrorReport rep = is_triad ? gtb::compare_elementwise(ha.data(), triad_reference(hb, hc).data(), n, 1e-6, 0.0)
                                        : gtb::compare_bytes(ha.data(), hb.data(), bytes);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  const int arrays = is_triad ? gtb::kStreamTriadArrays : gtb::kStreamCopyArrays;
  st.set_work(double(arrays) * double(bytes));
  st.measure(gtb::Clock::cuda_event,
             [&](std::int64_t reps) { return gtb::cuda::time_events(stream.get(), reps, enqueue); });
}
#else
void gpu_stream(gtb::State&, bool) { throw gtb::Skip("built without CUDA"); }
#endif

auto& host_copy = gtb::add("ceilings", "stream_copy", "openmp", gtb::Backend::cpu,
                           [](gtb::State& st) { cpu_stream(st, false); })
                      .axis("bytes", kFullBytes, kQuickBytes)
                      .rate("bandwidth", "GB/s", 1e9)
                      .describe("STREAM-like copy a = b over all cores; bytes = 2 x array bytes");
auto& host_triad = gtb::add("ceilings", "stream_triad", "openmp", gtb::Backend::cpu,
                            [](gtb::State& st) { cpu_stream(st, true); })
                       .axis("bytes", kFullBytes, kQuickBytes)
                       .rate("bandwidth", "GB/s", 1e9)
                       .describe("STREAM-like triad a = b + s*c over all cores; bytes = 3 x array bytes");
auto& dev_copy = gtb::add("ceilings", "stream_copy", "memcpy_d2d", gtb::Backend::cuda,
                          [](gtb::State& st) { gpu_stream(st, false); })
                     .axis("bytes", kFullBytes, {1024ll << 20})
                     .rate("bandwidth", "GB/s", 1e9)
                     .describe("cudaMemcpyAsync device to device; bytes = 2 x array bytes");
auto& dev_triad = gtb::add("ceilings", "stream_triad", "kernel", gtb::Backend::cuda,
                           [](gtb::State& st) { gpu_stream(st, true); })
                      .axis("bytes", kFullBytes, {1024ll << 20})
                      .rate("bandwidth", "GB/s", 1e9)
                      .describe("grid-stride float4 triad kernel; bytes = 3 x array bytes");

// The ceilings other families divide by: the best bandwidth of each kind over sizes.
const bool kFindings = gtb::add_findings("ceilings",
                                          [](const std::vector<gtb::Record>& recs, gtb::json& f) {
                                            auto best = [&](const char* workload, gtb::Backend be) {
                                              double v = 0;
                                              for (const auto& r : recs)
                                                if (r.status == gtb::Status::ok && r.workload == workload &&
                                                    r.backend == be && r.value && *r.value > v)
                                                  v = *r.value;
                                              return v;
                                            };
                                            const std::pair<const char*, double> all[] = {
                                                {"host_copy_gbps", best("stream_copy", gtb::Backend::cpu)},
                                                {"host_triad_gbps", best("stream_triad", gtb::Backend::cpu)},
                                                {"device_copy_gbps", best("stream_copy", gtb::Backend::cuda)},
                                                {"device_triad_gbps", best("stream_triad", gtb::Backend::cuda)}};
                                            for (const auto& [k, v] : all)
                                              if (v > 0) f["ceilings"][k] = v;
                                          });

}  // namespace
