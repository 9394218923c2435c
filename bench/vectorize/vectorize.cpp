// Vectorize family: the same elementwise work (axpy update, scale -> bias -> GELU chain) as launch
// loops, serial loops, scalar and 16-byte vectorized kernels, unfused vs fused, Thrust and CUDA Graphs
// on the GPU, and as scalar, compiler-vectorized and OpenMP loops on the CPU.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gtb/context.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/clones.h"
#include "kernels/common/cpu/host_buffer.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/mlp.h"
#include "kernels/vectorize/cpu/vectorize.h"
#include "kernels/vectorize/elementwise.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/vectorize/cuda/vectorize.h"
#endif

namespace {

using gtb::Backend;
using gtb::State;

GTB_NAMED_ENUM(Work, kWorkNames, axpy, chain);

constexpr float kA = 0.75f;
constexpr gtb::ChainParams kChain{1.5f, 0.25f};
constexpr std::uint64_t kSeed = 20240611;

// n elements per array, 4 bytes each: 256 KiB (cache-resident everywhere) to 256 MiB per array
// (more than 4x the 50-60 MB L2 of an H100/H200).
const std::vector<std::int64_t> kFullN = {1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26};
// The quick suite's CPU loops also at a cache size (a step's passes over its activations are that
// small): their rate there, a parallel region's start and end included, prices those passes. (At
// 2^14 the two threads' loop has too little work to beat one thread's, which the plausibility check
// rightly calls suspect: 2^16 is the smallest size both variants measure honestly.)
const std::vector<std::int64_t> kQuickCpuN = {1 << 16, 1 << 18, 1 << 24};
const std::vector<std::int64_t> kQuickGpuN = {1 << 18, 1 << 24, 1 << 26};
// Elements per launch of the launch loop (256 = one block per launch, like a loop over short rows).
const std::vector<std::int64_t> kFullChunk = {256, 1024, 4096};
const std::vector<std::int64_t> kQuickChunk = {1024};
// Bounds that keep one repetition well under ~0.5 s on a current GPU: a launch costs a few us, a
// serial thread pays a memory latency (~0.5 us at worst) per element.
constexpr std::int64_t kMaxLoopLaunches = 1 << 16;
constexpr std::int64_t kMaxGraphNodes = 1 << 14;  // capture and instantiation grow with the node count
constexpr std::int64_t kMaxSerialN = 1 << 18;

const char* name(Work w) { return gtb::name_of(kWorkNames, w); }
int arrays(Work w) { return w == Work::axpy ? gtb::kAxpyArrays : gtb::kChainArrays; }

std::size_t elements(const State& st) {
  const std::int64_t n = st.get_int("n");
  if (n <= 0) throw std::invalid_argument("n must be > 0, got " + std::to_string(n));
  return static_cast<std::size_t>(n);
}

// With overcommit a too-large allocation succeeds and the first touch kills the process, so the
// available memory is checked first.
void require_host_bytes(double bytes) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") {
      if (bytes > 0.9 * kib * 1024.0)
        throw gtb::OutOfMemory(std::to_string(static_cast<long long>(bytes)) + " bytes of host memory needed, " +
                               std::to_string(static_cast<long long>(kib * 1024.0)) + " available");
      return;
    }
    meminfo.ignore(256, '\n');
  }
}

// Inputs and the float64 reference of one (workload, n), built once and shared by every variant.
// x in [0.5, 1.5] makes |a*x| >= 0.375: y is read as well as written by the axpy so it cannot be
// poisoned, but an element the update never wrote still fails the check by far.
struct HostData {
  std::vector<float> x, y0;
  std::vector<double> ref;
};

const HostData& host_data(Work w, std::size_t n) {
  static std::map<std::pair<int, std::size_t>, std::unique_ptr<HostData>> cache;
  auto& slot = cache[{static_cast<int>(w), n}];
  if (!slot) {
    require_host_bytes(double(n) * (w == Work::axpy ? 16.0 : 12.0));
    auto d = std::make_unique<HostData>();
    d->x.resize(n);
    d->ref.resize(n);
    gtb::fill_uniform(d->x.data(), n, kSeed, 0.5f, 1.5f);
    if (w == Work::axpy) {
      d->y0.resize(n);
      gtb::fill_uniform(d->y0.data(), n, kSeed + 1, -1.0f, 1.0f);
      gtb::cpu::axpy_reference(kA, d->x.data(), d->y0.data(), d->ref.data(), n);
    } else {
      // Spread the chain's inputs over [-2, 2] so the GELU sees both its curved and linear parts.
      for (float& v : d->x) v = 4.0f * (v - 1.0f);
      gtb::cpu::chain_reference(kChain, d->x.data(), d->ref.data(), n);
    }
    slot = std::move(d);
  }
  return *slot;
}

gtb::ErrorReport compare(Work w, const float* got, const HostData& d, std::size_t n) {
  return w == Work::axpy ? gtb::compare_elementwise(got, d.ref.data(), n, gtb::kAxpyRtol, gtb::kAxpyAtol)
                         : gtb::compare_elementwise(got, d.ref.data(), n, gtb::kChainRtol, gtb::kChainAtol);
}

// ---------------------------------------------------------------------------------------------
// CPU

using HostArray = gtb::cpu::HostFloats;

HostArray host_array(std::size_t n) {
  const std::size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  try {
    return HostArray(bytes, std::size_t(64));
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host array of " + std::to_string(bytes) + " bytes");
  }
}

void cpu_case(State& st, Work w, gtb::cpu::Loop loop) {
  const std::size_t n = elements(st);
  const HostData& d = host_data(w, n);
  require_host_bytes(double(n) * 8.0);
  HostArray x = host_array(n), y = host_array(n);
  // First touch by the OpenMP threads, in the partition the openmp loops use.
  gtb::cpu::parallel_copy(x.get(), d.x.data(), n);
  auto run = [&] {
    if (w == Work::axpy)
      gtb::cpu::axpy(loop, kA, x.get(), y.get(), n);
    else
      gtb::cpu::chain(loop, kChain, x.get(), y.get(), n);
  };
  if (w == Work::axpy) {
    gtb::cpu::parallel_copy(y.get(), d.y0.data(), n);
  } else {
    gtb::cpu::parallel_copy(y.get(), d.x.data(), n);  // first touch, then poison
    gtb::poison(y.get(), n);
  }
  run();
  const gtb::ErrorReport rep = compare(w, y.get(), d, n);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;
  const double working_set = double(arrays(w)) * double(n * sizeof(float));
  st.set_work(working_set);
  // Its percent of the host stream ceiling means something only when memory, not a cache, serves it.
  st.info("cache_resident", gtb::cache_resident(working_set));
  st.info("working_set_bytes", working_set);
  st.info("threads", loop == gtb::cpu::Loop::openmp ? gtb::cpu::openmp_threads() : 1);
  st.exec(run);
}

// An optimizer update is an elementwise pass too, but Adam's square root and division per parameter
// can cost more than its bytes at the streaming rate: measured as one, it prices a step's update. The
// update is the training steps' own (mlp::adam, kernels/train/mlp.h), compiled as their CPU loops are.
constexpr float kAdamLr = 1e-3f, kAdamB1 = 0.9f, kAdamB2 = 0.999f, kAdamEps = 1e-8f;

// c1 = 1 / (1 - b1^t), c2 = 1 / (1 - b2^t): the bias corrections, as mlp::adam takes them.
GTB_CPU_CLONES void adam_range(float* __restrict w, float* __restrict m, float* __restrict v,
                               const float* __restrict g, std::size_t b, std::size_t e, float c1, float c2) {
#pragma omp simd
  for (std::size_t i = b; i < e; ++i) gtb::mlp::adam(w[i], m[i], v[i], g[i], kAdamLr, kAdamB1, kAdamB2, kAdamEps, c1, c2);
}

void adam_pass(float* __restrict w, float* __restrict m, float* __restrict v, const float* __restrict g,
               std::size_t n, float c1, float c2) {
#pragma omp parallel
  {
    const std::size_t nt = std::size_t(omp_get_num_threads()), t = std::size_t(omp_get_thread_num());
    adam_range(w, m, v, g, n * t / nt, n * (t + 1) / nt, c1, c2);
  }
}

void cpu_adam(State& st) {
  const std::size_t n = elements(st);
  require_host_bytes(double(n) * 16.0);
  HostArray w = host_array(n), m = host_array(n), v = host_array(n), g = host_array(n);
  std::vector<float> w0(n), m0(n), v0(n), g0(n);
  gtb::fill_normal(w0.data(), n, 11);
  gtb::fill_normal(m0.data(), n, 12);
  gtb::fill_normal(g0.data(), n, 13);
  gtb::fill_normal(v0.data(), n, 14);
  for (float& x : v0) x = x * x + 1e-3f;  // a second moment is positive
  gtb::cpu::parallel_copy(w.get(), w0.data(), n);
  gtb::cpu::parallel_copy(m.get(), m0.data(), n);
  gtb::cpu::parallel_copy(v.get(), v0.data(), n);
  gtb::cpu::parallel_copy(g.get(), g0.data(), n);
  // The first step's bias corrections (t = 1), the update's largest.
  float c1 = 0, c2 = 0;
  gtb::mlp::adam_corrections(1, kAdamB1, kAdamB2, c1, c2);
  adam_pass(w.get(), m.get(), v.get(), g.get(), n, c1, c2);
  // The float64 reference of the same update (the same definition in double), outside the timed region.
  std::vector<double> ref(n);
  double dc1 = 0, dc2 = 0;
  gtb::mlp::adam_corrections(1, double(kAdamB1), double(kAdamB2), dc1, dc2);
  for (std::size_t i = 0; i < n; ++i) {
    double wi = w0[i], mi = m0[i], vi = v0[i];
    gtb::mlp::adam<double>(wi, mi, vi, g0[i], kAdamLr, kAdamB1, kAdamB2, kAdamEps, dc1, dc2);
    ref[i] = wi;
  }
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(double(w.get()[i]) - ref[i]) <= 1e-5 + 1e-5 * std::fabs(ref[i]))) {
      if (!bad) first = i;
      ++bad;
    }
  st.check(bad == 0, bad == 0 ? "all " + std::to_string(n) + " updated weights within 1e-5 of the float64 update"
                              : std::to_string(bad) + " weights off the float64 update, the first at " +
                                    std::to_string(first));
  if (bad) return;
  const double bytes = 7.0 * 4.0 * double(n);  // read w, m, v, g; write w, m, v
  st.set_work(bytes);
  st.info("cache_resident", gtb::cache_resident(bytes));
  st.info("working_set_bytes", 4.0 * 4.0 * double(n));
  st.info("threads", gtb::cpu::openmp_threads());
  st.exec([&] { adam_pass(w.get(), m.get(), v.get(), g.get(), n, c1, c2); });
}

// The MLP step's SGD-with-momentum update (mlp::sgd_update, the step's own code): three arrays read
// and two written per parameter, a different stream mix from axpy's. `autovec` runs it on one thread,
// as a step under the serial FLOPs does; `openmp` splits it over the threads as the step's
// optimizer_step does (one thread below the parallel-work size).
constexpr float kSgdLr = 0.05f, kSgdMomentum = 0.9f;  // the train family's (mlp::bench_config)

void sgd_pass(bool all_threads, float* w, float* v, const float* g, std::size_t n) {
  if (!all_threads) return gtb::mlp::sgd_update(w, v, g, n, kSgdLr, kSgdMomentum);
  gtb::cpu::parallel_ranges(n, double(n), [&](std::size_t b, std::size_t e, int) {
    gtb::mlp::sgd_update(w + b, v + b, g + b, e - b, kSgdLr, kSgdMomentum);
  });
}

void cpu_sgd(State& st, bool all_threads) {
  const std::size_t n = elements(st);
  require_host_bytes(double(n) * 12.0);
  HostArray w = host_array(n), v = host_array(n), g = host_array(n);
  std::vector<float> w0(n), v0(n), g0(n);
  gtb::fill_normal(w0.data(), n, kSeed + 31);
  gtb::fill_normal(v0.data(), n, kSeed + 32);
  gtb::fill_normal(g0.data(), n, kSeed + 33);
  gtb::cpu::parallel_copy(w.get(), w0.data(), n);
  gtb::cpu::parallel_copy(v.get(), v0.data(), n);
  gtb::cpu::parallel_copy(g.get(), g0.data(), n);
  sgd_pass(all_threads, w.get(), v.get(), g.get(), n);
  // The float64 reference of the same update, outside the timed region: every weight and momentum.
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    double wi = w0[i], vi = v0[i];
    gtb::mlp::sgd_momentum<double>(wi, vi, g0[i], kSgdLr, kSgdMomentum);
    const bool ok = std::fabs(double(w.get()[i]) - wi) <= 1e-6 + 1e-6 * std::fabs(wi) &&
                    std::fabs(double(v.get()[i]) - vi) <= 1e-6 + 1e-6 * std::fabs(vi);
    if (!ok && !bad++) first = i;
  }
  st.check(bad == 0, bad == 0 ? "all " + std::to_string(n) + " weights and momenta within 1e-6 of the float64 update"
                              : std::to_string(bad) + " weights or momenta off the float64 update, the first at " +
                                    std::to_string(first));
  if (bad) return;
  const double bytes = 5.0 * 4.0 * double(n);  // read w, v, g; write w, v
  st.set_work(bytes);
  st.info("cache_resident", gtb::cache_resident(3.0 * 4.0 * double(n)));
  st.info("working_set_bytes", 3.0 * 4.0 * double(n));
  st.info("threads", all_threads ? gtb::cpu::openmp_threads() : 1);
  st.exec([&] { sgd_pass(all_threads, w.get(), v.get(), g.get(), n); });
}

// The MLP step's loss, softmax cross-entropy over rows of logits (the last layer's bias added, the
// gradient and its column sums written): two exponentials per logit, which cost far more than the
// bytes the pass moves. The code is the CPU step's own (mlp::softmax_xent_rows); `autovec` runs it on
// one thread, as the step does below its parallel-work size, and `openmp` splits the rows over all
// threads as the step does above it (each thread its column sums, then summed).
constexpr int kXentClasses = 16;  // the train family's class count (mlp::Config::classes)

// Returns the rows' summed loss.
double xent_pass(bool all_threads, float* z, float* dz, const float* b, const int* labels, std::size_t rows,
                 float scale, float* db) {
  const std::size_t C = kXentClasses;
  if (!all_threads) {  // as the step's rows loop on one thread: no parallel region
    std::fill(db, db + C, 0.0f);
    return gtb::mlp::softmax_xent_rows(z, dz, b, labels, rows, C, scale, db);
  }
  const int nt = omp_get_max_threads();
  std::vector<double> loss(std::size_t(nt), 0.0);
  std::vector<float> parts(std::size_t(nt) * C, 0.0f);
#pragma omp parallel num_threads(nt)
  {
    const std::size_t t = std::size_t(omp_get_thread_num()), n = std::size_t(omp_get_num_threads());
    const std::size_t r0 = rows * t / n, r1 = rows * (t + 1) / n;
    loss[t] = gtb::mlp::softmax_xent_rows(z + r0 * C, dz + r0 * C, b, labels + r0, r1 - r0, C, scale,
                                          parts.data() + t * C);
  }
  for (std::size_t j = 0; j < C; ++j) {
    float s = 0.0f;
    for (int t = 0; t < nt; ++t) s += parts[std::size_t(t) * C + j];
    db[j] = s;
  }
  double sum = 0;
  for (double v : loss) sum += v;
  return sum;
}

void cpu_softmax_xent(State& st, bool all_threads) {
  const std::int64_t rows_arg = st.get_int("rows");
  if (rows_arg <= 0) throw std::invalid_argument("rows must be > 0, got " + std::to_string(rows_arg));
  const auto rows = std::size_t(rows_arg);
  const std::size_t C = kXentClasses, n = rows * C;
  std::vector<float> z0(n), b(C), nb(C), z(n), dz(n), db(C);
  std::vector<int> labels(rows);
  gtb::fill_normal(z0.data(), n, kSeed + 21, 2.0f);
  gtb::fill_normal(b.data(), C, kSeed + 22, 0.5f);
  for (std::size_t r = 0; r < rows; ++r) labels[r] = int(gtb::mix64(kSeed + 23 + r) % C);
  for (std::size_t j = 0; j < C; ++j) nb[j] = -b[j];
  const float scale = 1.0f / float(rows);
  z = z0;
  gtb::poison(dz.data(), n);
  gtb::poison(db.data(), C);
  const double loss = xent_pass(all_threads, z.data(), dz.data(), b.data(), labels.data(), rows, scale, db.data());
  // float64 reference, outside the timed region: the loss, each gradient and each column sum.
  double loss_ref = 0;
  std::vector<double> g(n), db_ref(C, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    double mx = -1e300, sum = 0;
    for (std::size_t j = 0; j < C; ++j) mx = std::max(mx, double(z0[r * C + j]) + double(b[j]));
    for (std::size_t j = 0; j < C; ++j) sum += std::exp(double(z0[r * C + j]) + double(b[j]) - mx);
    for (std::size_t j = 0; j < C; ++j) {
      const double p = std::exp(double(z0[r * C + j]) + double(b[j]) - mx) / sum;
      g[r * C + j] = (p - (int(j) == labels[r] ? 1.0 : 0.0)) * double(scale);
      db_ref[j] += g[r * C + j];
    }
    loss_ref += std::log(sum) + mx - (double(z0[r * C + std::size_t(labels[r])]) + double(b[std::size_t(labels[r])]));
  }
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(double(dz[i]) - g[i]) <= 1e-6 * double(scale))) {
      if (!bad) first = i;
      ++bad;
    }
  std::size_t bad_sums = 0;
  for (std::size_t j = 0; j < C; ++j)
    if (!(std::fabs(double(db[j]) - db_ref[j]) <= 1e-5)) ++bad_sums;
  const bool loss_ok = std::fabs(loss - loss_ref) <= 1e-5 * std::max(1.0, std::fabs(loss_ref));
  std::string detail = "all " + std::to_string(n) + " gradients (within 1e-6/rows), " + std::to_string(C) +
                       " column sums (1e-5) and the loss (1e-5 relative) agree with float64";
  if (bad) detail = std::to_string(bad) + " of " + std::to_string(n) + " gradients off float64, the first at " +
                    std::to_string(first);
  else if (bad_sums) detail = std::to_string(bad_sums) + " of " + std::to_string(C) + " column sums off float64";
  else if (!loss_ok) detail = "the loss " + std::to_string(loss) + " is off the float64 " + std::to_string(loss_ref);
  const bool ok = bad == 0 && bad_sums == 0 && loss_ok;
  st.check(ok, detail);
  if (!ok) return;
  st.set_work(double(n));
  st.info("classes", double(C));
  st.info("threads", all_threads ? gtb::cpu::openmp_threads() : 1);
  // The bias alternates with its negative, so the logits stay where they began (z0 + b, z0, ...).
  z = z0;
  bool flip = false;
  st.exec([&] {
    xent_pass(all_threads, z.data(), dz.data(), flip ? nb.data() : b.data(), labels.data(), rows, scale, db.data());
    flip = !flip;
  });
}

// ---------------------------------------------------------------------------------------------
// GPU

GTB_NAMED_ENUM(GpuVariant, kGpuVariantNames, launch_loop, serial, scalar, vec4, unfused, thrust, graph);

#if GTB_HAVE_CUDA
gtb::cuda::Form form_of(GpuVariant v) {
  switch (v) {
    case GpuVariant::launch_loop:
    case GpuVariant::graph: return gtb::cuda::Form::launch_loop;
    case GpuVariant::serial: return gtb::cuda::Form::serial;
    case GpuVariant::scalar: return gtb::cuda::Form::scalar;
    case GpuVariant::vec4: return gtb::cuda::Form::vec4;
    case GpuVariant::unfused: return gtb::cuda::Form::unfused;
    case GpuVariant::thrust: break;
  }
  throw std::logic_error("no hand-written form for this variant");
}

void gpu_case(State& st, Work w, GpuVariant v) {
  const std::size_t n = elements(st);
  const bool chunked = v == GpuVariant::launch_loop || v == GpuVariant::graph;
  const std::size_t chunk = chunked ? static_cast<std::size_t>(st.get_int("chunk")) : 0;
  if (chunked && chunk == 0) throw std::invalid_argument("chunk must be > 0");
  const std::size_t bytes = n * sizeof(float);
  const HostData& d = host_data(w, n);

  gtb::cuda::DeviceBuffer x(bytes), y(bytes);
  gtb::cuda::Stream stream;
  GTB_CUDA_CHECK(cudaMemcpy(x.get(), d.x.data(), bytes, cudaMemcpyHostToDevice));
  if (w == Work::axpy)
    GTB_CUDA_CHECK(cudaMemcpy(y.get(), d.y0.data(), bytes, cudaMemcpyHostToDevice));
  else
    GTB_CUDA_CHECK(cudaMemset(y.get(), 0xFF, bytes));  // NaN poison
  // The uploads and the memset ran on the legacy default stream, which a non-blocking stream does
  // not wait for (and cudaMemset returns before it is done).
  GTB_CUDA_CHECK(cudaDeviceSynchronize());

  const float* xp = x.as<float>();
  float* yp = y.as<float>();
  auto direct = [&](cudaStream_t s) {
    if (v == GpuVariant::thrust) {
      if (w == Work::axpy)
        gtb::cuda::axpy_thrust(kA, xp, yp, n, s);
      else
        gtb::cuda::chain_thrust(kChain, xp, yp, n, s);
      return;
    }
    if (w == Work::axpy)
      gtb::cuda::axpy(form_of(v), kA, xp, yp, n, chunk, s);
    else
      gtb::cuda::chain(form_of(v), kChain, xp, yp, n, chunk, s);
  };
  // The graph holds the launch loop's kernels, captured once; each repetition is one graph launch.
  std::unique_ptr<gtb::cuda::CapturedGraph> graph;
  if (v == GpuVariant::graph) graph = std::make_unique<gtb::cuda::CapturedGraph>(stream.get(), direct);
  auto enqueue = [&](cudaStream_t s) {
    if (graph)
      graph->launch(s);
    else
      direct(s);
  };

  enqueue(stream.get());
  stream.sync();
  std::vector<float> got(n);
  GTB_CUDA_CHECK(cudaMemcpy(got.data(), y.get(), bytes, cudaMemcpyDeviceToHost));
  const gtb::ErrorReport rep = compare(w, got.data(), d, n);
  st.check(rep.ok, rep.detail);
  if (!rep.ok) return;

  const double launches = graph ? double(graph->nodes())
                          : v == GpuVariant::thrust
                              ? 1.0
                              : double(gtb::cuda::launches(form_of(v), n, chunk));
  // What the host queues per repetition: one graph launch however many kernel nodes it holds.
  const std::int64_t queued = graph ? 1 : static_cast<std::int64_t>(launches);
  const double working_set = double(arrays(w)) * double(bytes);
  st.set_work(working_set);
  // Percent of the device ceiling means something only when the working set is well above the L2.
  st.info("cache_resident", gtb::cache_resident(working_set, gtb::cuda::device_l2_bytes()));
  st.info("working_set_bytes", working_set);
  const gtb::SampleSet& ss = gtb::cuda::exec(st, stream.get(), enqueue, {gtb::Blocking::allowed, queued});
  const double seconds = ss.stats.median;
  st.counter("launches_per_run", launches, "launches");
  if (graph) st.counter("graph_launches_per_run", 1.0, "launches");
  // Per launch only where several launches share a repetition; for one launch it is just the time.
  const bool multi = v == GpuVariant::launch_loop || v == GpuVariant::graph || v == GpuVariant::unfused;
  if (multi && seconds > 0 && launches > 0) st.counter("time_per_launch", seconds / launches * 1e6, "us");
  if (v == GpuVariant::unfused && seconds > 0)
    st.counter("traffic_bandwidth", double(gtb::kChainUnfusedArrays) * double(bytes) / seconds / 1e9, "GB/s");
}
#else
void gpu_case(State&, Work, GpuVariant) { throw gtb::Skip("built without CUDA"); }
#endif

// A pass over data that other threads wrote last. A parallel step's optimizer reads the gradients
// the GEMMs' slices wrote, each thread a different part than its own share of the update: within the
// caches, such a pass moves every line from another core's cache, and runs at a fraction of the rate
// of a pass over data its own core wrote (the axpy table), while beyond the caches both stream from
// memory. Each repetition shifts the threads' partition by one thread, so every pass's data was
// written by another thread in the repetition before. The pass writes what it reads (a rotation that
// keeps the values bounded however many repetitions run): x += a y, then y -= a x.
constexpr float kHandoffA = 1e-3f;

GTB_CPU_CLONES void handoff_range(float* __restrict x, float* __restrict y, std::size_t b, std::size_t e) {
#pragma omp simd
  for (std::size_t i = b; i < e; ++i) {
    const float xi = x[i] + kHandoffA * y[i];
    x[i] = xi;
    y[i] -= kHandoffA * xi;
  }
}

void handoff_pass(float* __restrict x, float* __restrict y, std::size_t n, int shift) {
#pragma omp parallel
  {
    const std::size_t nt = std::size_t(omp_get_num_threads());
    const std::size_t part = (std::size_t(omp_get_thread_num()) + std::size_t(shift)) % nt;
    handoff_range(x, y, n * part / nt, n * (part + 1) / nt);
  }
}

void cpu_handoff(State& st) {
  const std::size_t n = elements(st);
  require_host_bytes(double(n) * 16.0);
  HostArray x = host_array(n), y = host_array(n);
  std::vector<float> x0(n), y0(n);
  gtb::fill_normal(x0.data(), n, 21);
  gtb::fill_normal(y0.data(), n, 22);
  gtb::cpu::parallel_copy(x.get(), x0.data(), n);
  gtb::cpu::parallel_copy(y.get(), y0.data(), n);
  handoff_pass(x.get(), y.get(), n, 0);
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = double(x0[i]) + double(kHandoffA) * y0[i], yi = double(y0[i]) - double(kHandoffA) * xi;
    if (!(std::fabs(x.get()[i] - xi) <= 1e-6 * (1 + std::fabs(xi))) ||
        !(std::fabs(y.get()[i] - yi) <= 1e-6 * (1 + std::fabs(yi)))) {
      if (!bad) first = i;
      ++bad;
    }
  }
  st.check(bad == 0, bad == 0 ? "all " + std::to_string(n) + " pairs within 1e-6 of the float64 pass"
                              : std::to_string(bad) + " pairs off the float64 pass, the first at " + std::to_string(first));
  if (bad) return;
  const double bytes = 4.0 * 4.0 * double(n);  // read x, y; write x, y
  st.set_work(bytes);
  st.info("cache_resident", gtb::cache_resident(bytes));
  st.info("working_set_bytes", 2.0 * 4.0 * double(n));
  st.info("threads", gtb::cpu::openmp_threads());
  int shift = 1;  // the check's pass ran in partition 0
  st.exec([&] { handoff_pass(x.get(), y.get(), n, shift++); });
}

// ---------------------------------------------------------------------------------------------
// Registration

const char* kBytesRule = "GB/s = (bytes read + bytes written) / time, GB = 1e9 bytes";

std::string bytes_text(Work w) {
  return w == Work::axpy ? "bytes = 3 x 4n (read x, read y, write y)" : "bytes = 2 x 4n (read x, write y)";
}

gtb::Bench& cpu_bench(Work w, gtb::cpu::Loop loop, const std::string& how) {
  return gtb::add("vectorize", name(w), gtb::cpu::to_string(loop), Backend::cpu,
                  [w, loop](State& st) { cpu_case(st, w, loop); })
      .axis("n", kFullN, kQuickCpuN)
      .rate("bandwidth", "GB/s", 1e9)
      .ceiling("host_stream_gbps")
      .describe(how + "; " + bytes_text(w) + "; " + kBytesRule);
}

gtb::Bench& gpu_bench(Work w, GpuVariant v, const std::string& how) {
  auto& b = gtb::add("vectorize", name(w), gtb::name_of(kGpuVariantNames, v), Backend::cuda, [w, v](State& st) { gpu_case(st, w, v); })
                .axis("n", kFullN, kQuickGpuN)
                .rate("bandwidth", "GB/s", 1e9)
                .ceiling("device_stream_gbps")
                .describe(how + "; " + bytes_text(w) + "; " + kBytesRule);
  if (v == GpuVariant::launch_loop || v == GpuVariant::graph) {
    const std::int64_t cap = v == GpuVariant::graph ? kMaxGraphNodes : kMaxLoopLaunches;
    b.option("chunk", kFullChunk, kQuickChunk).filter([cap](const gtb::json& p, const gtb::json& o) {
      const auto n = p.at("n").get<std::int64_t>(), c = o.at("chunk").get<std::int64_t>();
      return c > 0 && (n + c - 1) / c <= cap;
    });
  } else if (v == GpuVariant::serial) {
    b.filter([](const gtb::json& p, const gtb::json&) { return p.at("n").get<std::int64_t>() <= kMaxSerialN; });
  }
  return b;
}

bool register_all() {
  for (Work w : {Work::axpy, Work::chain}) {
    const std::string what = w == Work::axpy ? "y = a*x + y" : "y = gelu_tanh(scale*x + bias)";
    cpu_bench(w, gtb::cpu::Loop::scalar, what + ", one core, vectorization disabled for the loop");
    cpu_bench(w, gtb::cpu::Loop::autovec, what + ", one core, compiler-vectorized loop");
    cpu_bench(w, gtb::cpu::Loop::openmp, what + ", all cores, OpenMP parallel for simd");
    gpu_bench(w, GpuVariant::launch_loop,
              what + ", host loop launching one one-thread-per-element kernel per chunk (launches_per_run "
                     "and time_per_launch counters); n/chunk <= 65536");
    gpu_bench(w, GpuVariant::serial, what + ", one GPU thread walks all elements; n <= 2^18");
    gpu_bench(w, GpuVariant::scalar, what + ", one thread per element, 4-byte loads/stores, one launch");
    gpu_bench(w, GpuVariant::vec4,
              what + (w == Work::chain ? ", fused: " : ", ") +
                  "grid-stride kernel with 16-byte float4 loads/stores and a scalar tail");
    if (w == Work::chain)
      gpu_bench(w, GpuVariant::unfused,
                what + ", unfused: three float4 kernels (scale, bias, activation) moving 6 x 4n bytes "
                       "(traffic_bandwidth counter); bandwidth counts the fused 2 x 4n");
    gpu_bench(w, GpuVariant::thrust, what + ", thrust::transform (par_nosync) with the same functor");
    gpu_bench(w, GpuVariant::graph,
              what + ", the launch loop captured once in a CUDA Graph, one graph launch per run; "
                     "n/chunk <= 16384");
  }
  gtb::add("vectorize", "adam", "openmp", Backend::cpu, cpu_adam)
      .axis("n", kFullN, {1 << 18, 1 << 20, 1 << 22})
      .rate("bandwidth", "GB/s", 1e9)
      .ceiling("host_stream_gbps")
      .describe("an Adam update of n FP32 parameters (m, v, w from g), all cores, OpenMP parallel for simd; "
                "bytes = 7 x 4n (read w, m, v, g; write w, m, v); " + std::string(kBytesRule));
  for (const bool all : {false, true})
    gtb::add("vectorize", "sgd", all ? "openmp" : "autovec", Backend::cpu, [all](State& st) { cpu_sgd(st, all); })
        .axis("n", std::vector<std::int64_t>{1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24},
              {1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22})
        .rate("bandwidth", "GB/s", 1e9)
        .ceiling("host_stream_gbps")
        .describe(std::string("the CPU MLP step's SGD-with-momentum update of n FP32 parameters (mlp::sgd_update: v = mu "
                              "v + g, w -= lr v), ") +
                  (all ? "split over all cores as the step's optimizer splits it (OpenMP)" : "one core") +
                  "; bytes = 5 x 4n (read w, v, g; write w, v); " + std::string(kBytesRule));
  for (const bool all : {false, true})
    gtb::add("vectorize", "softmax_xent", all ? "openmp" : "autovec", Backend::cpu,
             [all](State& st) { cpu_softmax_xent(st, all); })
        .axis("rows", std::vector<std::int64_t>{64, 256, 1024, 4096, 16384}, {64, 256, 1024, 4096})
        .rate("throughput", "Glogit/s", 1e9)
        .describe(std::string("the CPU MLP step's loss over rows of 16 logits: the last layer's bias added, softmax "
                              "cross-entropy, the gradient and its column sums (mlp::softmax_xent_rows, two "
                              "exponentials per logit), ") +
                  (all ? "the rows split over all cores (OpenMP)" : "one core") + "; work = logits (rows x 16)");
  gtb::add("vectorize", "handoff", "openmp", Backend::cpu, cpu_handoff)
      .axis("n", std::vector<std::int64_t>{1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24},
            {1 << 14, 1 << 16, 1 << 18, 1 << 20})
      .rate("bandwidth", "GB/s", 1e9)
      .ceiling("host_stream_gbps")
      .describe("a pass over two arrays of n FP32 values that other threads wrote last (each repetition shifts "
                "the threads' partition by one), as a parallel step's optimizer reads the gradients the GEMMs' "
                "slices wrote; x += a y, y -= a x; bytes = 4 x 4n (read x, y; write x, y); " + std::string(kBytesRule));
  return true;
}
const bool kRegistered = register_all();

}  // namespace
