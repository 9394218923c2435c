// GEMM family: FP32, TF32, FP16 and BF16 GEMMs through cuBLAS/cuBLASLt against the CPU's SGEMM
// candidates (OpenBLAS per core type, oneDNN, oneMKL) and oneDNN BF16/FP16 and oneMKL BF16, each
// result checked against a float64 reference before it is timed.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bench/gemm/check.h"
#include "bench/gemm/findings.h"
#include "gtb/stats.h"
#include "gtb/blas_core.h"
#include "gtb/context.h"
#include "gtb/gtb.h"
#include "gtb/host_timing.h"
#include "kernels/common/clock.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/gemm_plan.h"
#include "kernels/common/cpu/dnnl3.h"
#include "kernels/common/cpu/mkl.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/gemm/cpu/gemm.h"
#include "kernels/gemm/cpu/gemm_dnnl.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_shapes.h"
#include "kernels/train/mlp.h"
#include "kernels/transformer/block.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/common/cuda/blas.h"
#include "kernels/gemm/cuda/gemm.h"
#include "kernels/gemm/cuda/gemm_lt.h"
#endif

namespace {

using gtb::gemm::Precision;

constexpr std::uint64_t kSeed = 7919;
constexpr int kCheckRows = 64;
// Below this many FLOPs every row of C is checked (the float64 reference costs about as much as
// the GEMM itself, which is nothing at these sizes).
constexpr double kFullCheckFlops = 2.0 * 512 * 512 * 512;

// Host operands and the float64 reference rows of one shape. Cases run option-major (every shape
// for one precision, then the next), so a few recent shapes are kept, up to a byte budget, and each
// shape's inputs and reference are made once for all its precisions, libraries and L2 modes.
struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<float> a, b;
  std::vector<int> rows;
  std::vector<double> ref;
  double bytes() const { return 4.0 * double(a.size() + b.size()) + 8.0 * double(ref.size()); }
};
constexpr double kCacheBytes = 3.0e9;

int dim(gtb::State& st, const char* name) {
  const std::int64_t v = st.get_int(name);
  if (v <= 0 || v > INT_MAX) throw std::invalid_argument(std::string("gemm: ") + name + " must be in 1..INT_MAX");
  return static_cast<int>(v);
}

const Problem& problem(int m, int n, int k) {
  static std::deque<std::unique_ptr<Problem>> cache;  // most recent last
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if ((*it)->m == m && (*it)->n == n && (*it)->k == k) {
      std::unique_ptr<Problem> hit = std::move(*it);
      cache.erase(it);
      cache.push_back(std::move(hit));
      return *cache.back();
    }
  const double need = 4.0 * (double(m) * k + double(k) * n);
  double held = 0;
  for (const auto& p : cache) held += p->bytes();
  while (!cache.empty() && held + need > kCacheBytes) {
    held -= cache.front()->bytes();
    cache.pop_front();
  }
  auto p = std::make_unique<Problem>();
  try {
    p->a.resize(std::size_t(m) * std::size_t(k));
    p->b.resize(std::size_t(k) * std::size_t(n));
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host operands of " + std::to_string(need) + " bytes");
  }
  // Normal inputs (never zeros: zero operands run faster and would flatter every rate). B depends
  // only on (k, n) and its seed: a cached shape sharing them lends its B (the skinny shapes share a
  // 4096 x 4096 one, whose normals take longer to draw than to copy).
  gtb::fill_normal(p->a.data(), p->a.size(), kSeed);
  const auto same_b = std::find_if(cache.begin(), cache.end(), [&](const auto& q) { return q->k == k && q->n == n; });
  if (same_b != cache.end())
    std::copy((*same_b)->b.begin(), (*same_b)->b.end(), p->b.begin());
  else
    gtb::fill_normal(p->b.data(), p->b.size(), kSeed + 1);
  const bool full = gtb::gemm::flops(m, n, k) <= kFullCheckFlops;
  p->rows = gtb::cpu::gemm_check_rows(m, full ? m : kCheckRows, kSeed + 2);
  p->ref = gtb::cpu::gemm_reference_rows(p->a.data(), p->b.data(), n, k, p->rows);
  p->m = m, p->n = n, p->k = k;
  cache.push_back(std::move(p));
  return *cache.back();
}

bool record_check(gtb::State& st, const float* c, const Problem& pr, Precision prec) {
  return gtb::gemm::record_gemm_check(st, c, int(pr.m), int(pr.n), pr.rows, pr.ref, gtb::gemm::tolerance(prec, pr.k));
}

void describe_problem(gtb::State& st, const Problem& pr, Precision prec) {
  st.set_work(gtb::gemm::flops(pr.m, pr.n, pr.k));
  st.info("shape_class", gtb::gemm::shape_class(pr.m, pr.n, pr.k));
  st.counter("operand_bytes", gtb::gemm::operand_bytes(prec, pr.m, pr.n, pr.k), "bytes");
  st.counter("operand_bytes_fp32", gtb::gemm::operand_bytes(Precision::fp32, pr.m, pr.n, pr.k), "bytes");
}

std::vector<float> output_buffer(const Problem& pr) {
  try {
    std::vector<float> c(std::size_t(pr.m) * std::size_t(pr.n));
    gtb::poison(c.data(), c.size());
    return c;
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host output of " + std::to_string(4.0 * double(pr.m) * double(pr.n)) + " bytes");
  }
}

void cpu_sgemm(gtb::State& st) {
  const Precision prec = gtb::gemm::precision_from_string(st.get_string("precision"));
  if (prec != Precision::fp32) throw std::invalid_argument("openblas variant runs fp32 only");
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  std::vector<float> c = output_buffer(pr);
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  gtb::cpu::gemm_sgemm(pr.a.data(), pr.b.data(), c.data(), m, n, k);
  describe_problem(st, pr, prec);
  if (!record_check(st, c.data(), pr, prec)) return;
  st.info("threads", gtb::cpu::blas_threads());
  st.info("library", gtb::cpu::blas_config());
  st.info("corename", gtb::cpu::blas_corename());
  st.info("coretype_source", gtb::openblas_core_source());
  st.info("compute", "cblas_sgemm (FP32 in, FP32 accumulate, FP32 out)");
  st.exec([&] { gtb::cpu::gemm_sgemm(pr.a.data(), pr.b.data(), c.data(), m, n, k); });
}

// OpenBLAS with the core it detects by itself, when this process runs another one (chosen by gtb
// or set by the user). The core is fixed when OpenBLAS loads, so the case runs in a child process
// without OPENBLAS_CORETYPE; there it is an ordinary OpenBLAS case.
constexpr const char* kEnvDetectedChild = "GTB_GEMM_DETECTED_CHILD";
void cpu_sgemm_detected(gtb::State& st) {
  if (std::getenv(kEnvDetectedChild)) return cpu_sgemm(st);
  if (gtb::openblas_core_source() == "detected")
    throw gtb::Skip("OpenBLAS runs the core it detected (" + gtb::cpu::blas_corename() +
                    "): the openblas variant is this configuration");
  const std::string ours = gtb::cpu::blas_corename();
  gtb::run_case_in_child(st, {gtb::kEnvCoretype, gtb::kEnvDetected, gtb::kEnvReason},
                         {std::string(gtb::kEnvAutocore) + "=0", std::string(kEnvDetectedChild) + "=1"});
  gtb::Record& r = st.record();
  if (r.status == gtb::Status::ok && r.info.value("corename", "") == ours) {
    r.status = gtb::Status::skipped;
    r.status_detail =
        "OpenBLAS detects the core this process runs (" + ours + "): the openblas variant is this configuration";
  }
}

gtb::cpu::DnnlMatmul::Type dnnl_type(Precision prec) {
  if (prec == Precision::tf32) throw gtb::Skip("TF32 is a tensor-core input format; no CPU library computes in it");
  if (prec == Precision::fp16_fp16acc)
    throw gtb::Skip("no CPU library here accumulates in FP16 (oneDNN accumulates FP16 inputs in FP32)");
  using T = gtb::cpu::DnnlMatmul::Type;
  return prec == Precision::fp32 ? T::f32 : prec == Precision::bf16_fp32acc ? T::bf16 : T::f16;
}

void cpu_onednn(gtb::State& st) {
  const Precision prec = gtb::gemm::precision_from_string(st.get_string("precision"));
  const auto type = dnnl_type(prec);
  {
    const float one = 1.0f;  // a 1x1x1 probe: an unsupported type skips before any large setup
    gtb::cpu::DnnlMatmul probe(type, 1, 1, 1, &one, &one);
  }
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  gtb::cpu::DnnlMatmul mm(type, int(pr.m), int(pr.n), int(pr.k), pr.a.data(), pr.b.data());
  std::vector<float> c = output_buffer(pr);
  mm.run();
  mm.result(c.data());
  describe_problem(st, pr, prec);
  if (!record_check(st, c.data(), pr, prec)) return;
  st.info("threads", mm.threads());
  st.info("library", "oneDNN " + gtb::cpu::dnnl_version());
  st.info("impl", mm.impl());
  st.exec([&] { mm.run(); });
}

// The precision of a library variant (fp32 or bf16_fp32acc, std::invalid_argument otherwise), once
// `require` finds the library usable (gtb::Skip otherwise).
Precision library_precision(gtb::State& st, const std::string& variant, void (*require)()) {
  const Precision prec = gtb::gemm::precision_from_string(st.get_string("precision"));
  if (prec != Precision::fp32 && prec != Precision::bf16_fp32acc)
    throw std::invalid_argument(variant + " variant runs fp32 and bf16_fp32acc only");
  require();
  return prec;
}

// A and B of `pr` rounded to bfloat16 once, outside the timed region (packed rows).
void bf16_operands(const Problem& pr, std::vector<std::uint16_t>& a16, std::vector<std::uint16_t>& b16) {
  a16.resize(pr.a.size()), b16.resize(pr.b.size());
  gtb::cpu::to_bf16_rows(pr.a.data(), int(pr.m), int(pr.k), int(pr.k), a16.data());
  gtb::cpu::to_bf16_rows(pr.b.data(), int(pr.k), int(pr.n), int(pr.n), b16.data());
}

// oneMKL's cblas_sgemm, or cblas_gemm_bf16bf16f32 on operands rounded to bfloat16 once, outside the
// timed region (C stays FP32: the routine has no bf16 output).
void cpu_mkl(gtb::State& st) {
  namespace mkl = gtb::cpu::mkl;
  const Precision prec = library_precision(st, "mkl", mkl::require);
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  const bool bf16 = prec == Precision::bf16_fp32acc;
  std::vector<std::uint16_t> a16, b16;
  if (bf16) bf16_operands(pr, a16, b16);
  std::vector<float> c = output_buffer(pr);
  auto run = [&] {
    if (bf16)
      mkl::gemm_bf16(false, false, m, n, k, 1.0f, a16.data(), k, b16.data(), n, 0.0f, c.data(), n);
    else
      mkl::sgemm(false, false, m, n, k, 1.0f, pr.a.data(), k, pr.b.data(), n, 0.0f, c.data(), n);
  };
  run();
  describe_problem(st, pr, prec);
  if (!record_check(st, c.data(), pr, prec)) return;
  st.info("threads", mkl::threads());
  st.info("threading", mkl::threading());
  st.info("library", mkl::version());
  st.info("processor", mkl::processor());
  st.info("compute", bf16 ? "cblas_gemm_bf16bf16f32 (BF16 in, FP32 accumulate, FP32 out)"
                          : "cblas_sgemm (FP32 in, FP32 accumulate, FP32 out)");
  st.exec(run);
}

// The current oneDNN (3.x, loaded beside Debian's 2.6): its matmul with FP32 operands, or BF16 ones
// rounded once, outside the timed region, FP32 C either way. The record names the kernel oneDNN
// picked (impl) and the ISA it dispatched to.
void cpu_onednn3(gtb::State& st) {
  namespace dnnl3 = gtb::cpu::dnnl3;
  const Precision prec = library_precision(st, "onednn3", dnnl3::require);
  const bool bf16 = prec == Precision::bf16_fp32acc;
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  const dnnl3::Matmul mm(bf16, false, false, m, n, k, n, 0.0f);  // a skip where it has no implementation
  if (bf16 && mm.reference())
    throw gtb::Skip(dnnl3::version() + " has only its reference BF16 matmul (" + mm.impl() + ") on this CPU (ISA " +
                    dnnl3::isa() + ")");
  std::vector<std::uint16_t> a16, b16;
  if (bf16) bf16_operands(pr, a16, b16);
  const void* a = bf16 ? static_cast<const void*>(a16.data()) : pr.a.data();
  const void* b = bf16 ? static_cast<const void*>(b16.data()) : pr.b.data();
  std::vector<float> c = output_buffer(pr);
  mm.run(a, b, c.data());
  describe_problem(st, pr, prec);
  if (!record_check(st, c.data(), pr, prec)) return;
  st.info("threads", omp_get_max_threads());
  st.info("threading", dnnl3::threading());
  st.info("library", dnnl3::version());
  st.info("isa", dnnl3::isa());
  st.info("impl", mm.impl());
  st.info("compute", bf16 ? "matmul, BF16 A and B, FP32 accumulate, FP32 C" : "matmul, FP32 in, FP32 accumulate, FP32 out");
  st.exec([&] { mm.run(a, b, c.data()); });
}

// The quick suite measures oneMKL's BF16 GEMM at the three quick squares and a skinny shape: at
// 2048^3 it can be the CPU's fastest BF16 library (several times oneDNN's rate on an AVX-512 CPU without BF16
// arithmetic, docs/gemm.md), and the family's best BF16 rate is the best record of the run.
bool mkl_quick_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return (m == n && n == k && (m == 256 || m == 1024 || m == 2048)) || (m == 32 && n == 4096 && k == 4096);
}

// (A filter replaces the registration's, so the training shapes are left out here too.)
bool onednn_quick_skips(std::int64_t m, std::int64_t n, std::int64_t k) {
  return m == 2047 || m == 2048 || (m == 128 && n == 4096 && k == 4096) ||
         gtb::gemm::shape_class(m, n, k) == "training";
}

// The GEMMs of a training step are thin and small and run transposed in the backward pass. A layer
// in -> out on R rows calls three of them: the forward Z = A W (nn: R x out x in), the weight
// gradient dW = A^T dZ (tn: in x out x R) and the input gradient dA = dZ W^T (nt: R x in x out).
// The CPU steps call them through one path (kernels/common/cpu/parallel.h split_gemm): one
// single-threaded library call per thread on its slice, one call below the split threshold, with
// the library's own thread pool at one thread. Measured here the same way, back to back on hot
// threads, they are the matmul points the cost model prices a step's GEMMs with, per orientation.
void cpu_step_shape(gtb::State& st, gtb::cpu::GemmLib lib) {
  const std::string orient = st.get_string("orientation");
  if (orient != "nn" && orient != "tn" && orient != "nt")
    throw std::invalid_argument("gemm: orientation must be nn, tn or nt, got " + orient);
  if (!gtb::cpu::gemm_lib_available(lib))
    throw gtb::Skip(std::string(gtb::cpu::to_string(lib)) + " is not available here" +
                    (lib == gtb::cpu::GemmLib::mkl ? " (" + gtb::cpu::mkl::unavailable_reason() + ")" : ""));
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  const bool ta = orient == "tn", tb = orient == "nt";
  // The transposed operand is stored transposed, so op(A) op(B) is the A B the reference holds.
  std::vector<float> at, bt;
  if (ta) {
    at.resize(pr.a.size());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) at[std::size_t(j) * m + i] = pr.a[std::size_t(i) * k + j];
  }
  if (tb) {
    bt.resize(pr.b.size());
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < n; ++j) bt[std::size_t(j) * k + i] = pr.b[std::size_t(i) * n + j];
  }
  const float* a = ta ? at.data() : pr.a.data();
  const float* b = tb ? bt.data() : pr.b.data();
  const int lda = ta ? m : k, ldb = tb ? k : n;
  std::vector<float> c = output_buffer(pr);
  // The steps run the library on one thread per slice; the family's other cases use its pool.
  const gtb::cpu::BlasThreadsScope one(1);
  auto run = [&] {
    gtb::cpu::split_gemm(ta, tb, m, n, k, a, lda, b, ldb, c.data(), n, false,
                         [&](int mm, int nn, const float* as, const float* bs, float* cs) {
                           gtb::cpu::sgemm(lib, ta, tb, mm, nn, k, 1.0f, as, lda, bs, ldb, 0.0f, cs, n);
                         });
  };
  run();
  describe_problem(st, pr, Precision::fp32);
  if (!record_check(st, c.data(), pr, Precision::fp32)) return;
  st.info("threads", omp_get_max_threads());
  st.info("library", gtb::cpu::to_string(lib));
  st.info("compute", std::string("sgemm ") + (ta ? "A^T B" : tb ? "A B^T" : "A B") +
                         " (FP32), one single-threaded call per thread's slice (the CPU steps' split)");
  st.exec(run);
}

// The code path a plan candidate ran on this CPU: oneDNN 3's ISA, oneMKL's processor, OpenBLAS's core.
std::string library_isa(const std::string& candidate) {
  if (candidate == "onednn3_bf16") return "oneDNN 3 " + gtb::cpu::dnnl3::isa();
  if (candidate == "mkl" || candidate == "mkl_bf16") return "oneMKL " + gtb::cpu::mkl::processor();
  if (candidate == "openblas") return "OpenBLAS " + gtb::cpu::blas_corename();
  return "oneDNN " + gtb::cpu::dnnl_version() + " (its own dispatch)";
}

// The BF16 step's GEMMs as the CPU steps run them: FP32 operands handed to the per-shape plan
// (kernels/common/cpu/gemm_plan.h), which rounds them to BF16 as they enter the product (autocast)
// and runs the library it verified and timed fastest at this shape (oneDNN's or oneMKL's BF16 GEMM,
// whose conversion to BF16 words and packing count against them, or an FP32 library on the rounded
// operands). The library shapes above take operands already in BF16 words; at a step's small
// shapes the conversion is much of the product's time, and these points price it.
void cpu_step_shape_bf16(gtb::State& st) {
  const std::string orient = st.get_string("orientation");
  if (orient != "nn" && orient != "tn" && orient != "nt")
    throw std::invalid_argument("gemm: orientation must be nn, tn or nt, got " + orient);
  if (gtb::gemm::precision_from_string(st.get_string("precision")) != Precision::bf16_fp32acc)
    throw std::invalid_argument("gemm: the plan variant runs bf16_fp32acc only");
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  const bool ta = orient == "tn", tb = orient == "nt";
  std::vector<float> a(pr.a.size()), b(pr.b.size());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) (ta ? a[std::size_t(j) * m + i] : a[std::size_t(i) * k + j]) = pr.a[std::size_t(i) * k + j];
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j) (tb ? b[std::size_t(j) * k + i] : b[std::size_t(i) * n + j]) = pr.b[std::size_t(i) * n + j];
  const int lda = ta ? m : k, ldb = tb ? k : n;
  const gtb::cpu::BlasThreadsScope one(1);
  gtb::cpu::plan::Plan plan;
  plan.choose({{"site", ta, tb, m, n, k, lda, ldb, n, false}}, true, true);  // verified and timed per candidate
  const auto& ch = plan.choices().front();
  if (ch.chosen < 0) throw gtb::Skip("no BF16 GEMM candidate verified at this shape: " + plan.summary());
  std::vector<float> c = output_buffer(pr);
  plan.run(0, a.data(), b.data(), 0.0f, c.data());
  describe_problem(st, pr, Precision::bf16_fp32acc);
  if (!record_check(st, c.data(), pr, Precision::bf16_fp32acc)) return;
  st.info("threads", omp_get_max_threads());
  st.info("library", ch.tried[std::size_t(ch.chosen)].name);
  st.info("isa", library_isa(ch.tried[std::size_t(ch.chosen)].name));
  st.info("gemm_plan", plan.summary());
  st.info("compute", std::string("BF16 ") + (ta ? "A^T B" : tb ? "A B^T" : "A B") +
                         " from FP32 operands rounded as they enter the product, FP32 accumulation and C (the CPU "
                         "steps' per-shape plan)");
  st.exec([&] { plan.run(0, a.data(), b.data(), 0.0f, c.data()); });
}

// A step of `layers` layers trained as the CPU steps train it (forward, backward, SGD with momentum),
// every GEMM through the per-shape plan: a step's GEMMs read what its passes and the other threads
// just wrote, so they keep only a share of the back-to-back rate. The modes and the step's algebra
// are in docs/gemm.md ("Why a step's GEMMs are not the back-to-back records").
struct Chain {
  int rows = 0, width = 0, layers = 0;
  std::vector<float> x, w, z, a, dz, da, dw, mom;  // x: R x W; the others `layers` blocks (w, dw, mom: W x W)
  std::size_t act() const { return std::size_t(rows) * std::size_t(width); }
  std::size_t wsz() const { return std::size_t(width) * std::size_t(width); }
  const float* in(int l) const { return l == 0 ? x.data() : a.data() + act() * std::size_t(l - 1); }
  float* W(int l) { return w.data() + wsz() * std::size_t(l); }
  float* Z(int l) { return z.data() + act() * std::size_t(l); }
  float* A(int l) { return a.data() + act() * std::size_t(l); }
  float* dZ(int l) { return dz.data() + act() * std::size_t(l); }
  float* dW(int l) { return dw.data() + wsz() * std::size_t(l); }
  // dA_l: the top layer's is its activation; below it, what the layer above wrote.
  const float* dA(int l) const { return l == layers - 1 ? a.data() + act() * std::size_t(l) : da.data() + act() * std::size_t(l); }
  float* dA_out(int l) { return da.data() + act() * std::size_t(l); }
};

void relu_pass(const float* z, float* a, std::size_t rows, std::size_t cols) {
  gtb::cpu::parallel_ranges(rows, double(rows) * double(cols), [&](std::size_t r0, std::size_t r1, int) {
    for (std::size_t r = r0; r < r1; ++r) {
      const float* __restrict zr = z + r * cols;
      float* __restrict ar = a + r * cols;
#pragma omp simd
      for (std::size_t j = 0; j < cols; ++j) ar[j] = zr[j] > 0.0f ? zr[j] : 0.0f;
    }
  });
}

void relu_backward_pass(const float* z, const float* da, float* dz, std::size_t rows, std::size_t cols) {
  gtb::cpu::parallel_ranges(rows, double(rows) * double(cols), [&](std::size_t r0, std::size_t r1, int) {
    for (std::size_t r = r0; r < r1; ++r) {
      const float* __restrict zr = z + r * cols;
      const float* __restrict dar = da + r * cols;
      float* __restrict dzr = dz + r * cols;
#pragma omp simd
      for (std::size_t j = 0; j < cols; ++j) dzr[j] = dar[j] * (zr[j] > 0.0f ? 1.0f : 0.0f);  // no branch: a vector loop
    }
  });
}

// The optimizer's learning rate and momentum: the top layer's stand-in gradient is that of half its
// activations' squared sum, so the steps descend it, slowly enough to keep every value of order one.
constexpr float kSequenceLr = 1e-6f, kSequenceMomentum = 0.9f;

// SGD with momentum (the train family's update and its split over the threads), flushing a
// denormal momentum as the step does.
void sgd_pass(float* w, float* v, const float* g, std::size_t n) {
  gtb::cpu::parallel_ranges(n, double(n), [&](std::size_t b, std::size_t e, int) {
    float* __restrict wp = w + b;
    float* __restrict vp = v + b;
    const float* __restrict gp = g + b;
#pragma omp simd
    for (std::size_t i = 0; i < e - b; ++i) {
      gtb::mlp::sgd_momentum(wp[i], vp[i], gp[i], kSequenceLr, kSequenceMomentum);
      vp[i] = gtb::mlp::flush_denormal(vp[i]);
    }
  });
}

// Row-major transpose of a rows x cols matrix (for the float64 references).
std::vector<float> transposed(const float* m, int rows, int cols) {
  std::vector<float> t(std::size_t(rows) * std::size_t(cols));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[std::size_t(j) * std::size_t(rows) + std::size_t(i)] = m[std::size_t(i) * std::size_t(cols) + std::size_t(j)];
  return t;
}

// The sequence's buffers: input, weights and momentum filled, everything the step writes poisoned.
Chain make_chain(int rows, int width, int layers) {
  Chain ch;
  ch.rows = rows, ch.width = width, ch.layers = layers;
  const std::size_t L = std::size_t(ch.layers);
  ch.x.resize(ch.act()), ch.w.resize(ch.wsz() * L), ch.dw.resize(ch.wsz() * L), ch.mom.resize(ch.wsz() * L);
  for (auto* v : {&ch.z, &ch.a, &ch.dz, &ch.da}) v->resize(ch.act() * L);
  gtb::fill_normal(ch.x.data(), ch.x.size(), kSeed);
  gtb::fill_normal(ch.w.data(), ch.w.size(), kSeed + 1);
  const float scale = 1.0f / std::sqrt(float(ch.width));  // keeps the activations of order one
  for (float& v : ch.w) v *= scale;
  gtb::fill_normal(ch.mom.data(), ch.mom.size(), kSeed + 4);
  for (auto* v : {&ch.z, &ch.a, &ch.dz, &ch.da, &ch.dw}) gtb::poison(v->data(), v->size());
  return ch;
}

// What a step holds and moves, as counters: its working set, and what its passes and its update
// read and write per step.
void sequence_bytes(gtb::State& st, const Chain& ch) {
  // Weights, their gradients and momentum, the input, and per layer Z, A, dZ and dA.
  const std::size_t L = std::size_t(ch.layers);
  st.counter("working_set_bytes", 4.0 * double(3 * ch.wsz() * L + ch.act() * (4 * L + 1)), "bytes");
  // What the passes and the update move per step, read and written (ReLU: Z read, A written; its
  // gradient: Z and dA read, dZ written; the update: weights, momentum and gradient read, weights
  // and momentum written).
  st.counter("pass_bytes", 4.0 * double(ch.act()) * 5.0 * double(L), "bytes");
  st.counter("update_bytes", 4.0 * double(ch.w.size()) * 5.0, "bytes");
}

// The sequence's check after one step: a forward, a weight-gradient and an input-gradient
// GEMM against float64 from the operands as computed, every pass elementwise, then the update
// (`update`) against float64. False (the failure recorded) where one is wrong.
template <class Update>
bool check_sequence(gtb::State& st, Chain& ch, Precision prec, const Update& update) {
  const int R = ch.rows, Wd = ch.width;
  const int l = ch.layers - 1;
  std::vector<float> prev(ch.in(l), ch.in(l) + ch.act()), wl(ch.W(l), ch.W(l) + ch.wsz());
  const std::vector<int> rows = gtb::cpu::gemm_check_rows(R, std::min(R, kCheckRows), kSeed + 2);
  const std::vector<double> ref = gtb::cpu::gemm_reference_rows(prev.data(), wl.data(), Wd, Wd, rows);
  if (!gtb::gemm::record_gemm_check(st, ch.Z(l), R, Wd, rows, ref, gtb::gemm::tolerance(prec, Wd))) return false;
  const std::vector<float> at = transposed(ch.in(0), R, Wd);
  const std::vector<int> wrows = gtb::cpu::gemm_check_rows(Wd, std::min(Wd, kCheckRows), kSeed + 3);
  if (!gtb::gemm::record_gemm_check(st, ch.dW(0), Wd, Wd, wrows,
                                    gtb::cpu::gemm_reference_rows(at.data(), ch.dZ(0), Wd, R, wrows),
                                    gtb::gemm::tolerance(prec, R)))
    return false;
  if (ch.layers > 1) {
    const std::vector<float> wt = transposed(ch.W(l), Wd, Wd);
    if (!gtb::gemm::record_gemm_check(st, ch.dA_out(l - 1), R, Wd, rows,
                                      gtb::cpu::gemm_reference_rows(ch.dZ(l), wt.data(), Wd, Wd, rows),
                                      gtb::gemm::tolerance(prec, Wd)))
      return false;
  }
  for (int k = 0; k < ch.layers; ++k)
    for (std::size_t i = 0; i < ch.act(); ++i) {
      const std::size_t o = ch.act() * std::size_t(k) + i;
      const bool on = ch.z[o] > 0.0f;
      if (!(ch.a[o] == (on ? ch.z[o] : 0.0f)) || !(ch.dz[o] == (on ? ch.dA(k)[i] : 0.0f))) {  // -0 == 0
        st.check(false, std::string(ch.a[o] == (on ? ch.z[o] : 0.0f) ? "relu backward" : "relu") +
                            " pass: layer " + std::to_string(k) + " element " + std::to_string(i) + " wrong");
        return false;
      }
    }
  const std::vector<float> w0 = ch.w, v0 = ch.mom;
  update();
  const long wrong = gtb::gemm::first_wrong_sgd_update(w0, v0, ch.dw.data(), ch.w, ch.mom, kSequenceLr, kSequenceMomentum);
  if (wrong >= 0) {
    st.check(false, "update: parameter " + std::to_string(wrong) + " wrong");
    return false;
  }
  return true;
}

// The cold mode: the step's GEMMs (`each_gemm` calls its argument around each) with every cache
// emptied before each call.
template <class EachGemm>
void run_cold(gtb::State& st, const EachGemm& each_gemm) {
  // Twice the last-level cache (8 MiB where it is unknown, at most 1 GiB), written with the threads
  // the step runs on before each GEMM: what the call reads then comes from memory. Only the calls
  // are timed.
  const long long llc = gtb::cpu_caches().last_level_bytes();
  const std::size_t flush_bytes =
      std::size_t(std::clamp(2.0 * double(llc), double(8 << 20), double(std::size_t(1) << 30)));
  std::vector<float> flush(flush_bytes / sizeof(float), 1.0f);
  float stamp = 0.0f;
  auto empty_caches = [&] {
    stamp += 1.0f;
    gtb::cpu::parallel_ranges(flush.size(), double(flush.size()), [&](std::size_t b, std::size_t e, int) {
      std::fill(flush.data() + b, flush.data() + e, stamp);
    });
  };
  st.counter("flush_bytes", double(flush_bytes), "bytes");
  st.counter("last_level_cache_bytes", double(llc), "bytes");
  // Each call is followed by the same call again, hot (its operands now in cache), timed apart: the
  // share hot / cold of each repetition pairs the two at the same moment, whatever the machine's
  // speed does between samples (hot_over_cold, the median over every repetition).
  std::vector<double> hot_over_cold;
  st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t reps) {
    double cold = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      double cold_rep = 0, hot_rep = 0;
      each_gemm([&](const auto& call) {
        empty_caches();
        cold_rep += gtb::batch_seconds(1, call);
        hot_rep += gtb::batch_seconds(1, call);
      });
      cold += cold_rep;
      if (cold_rep > 0) hot_over_cold.push_back(hot_rep / cold_rep);
    }
    return cold;
  });
  if (!hot_over_cold.empty()) st.counter("hot_over_cold", gtb::median(hot_over_cold), "fraction");
}

void cpu_sequence(gtb::State& st) {
  const Precision prec = gtb::gemm::precision_from_string(st.get_string("precision"));
  if (prec != Precision::fp32 && prec != Precision::bf16_fp32acc)
    throw std::invalid_argument("gemm: the sequence runs fp32 or bf16_fp32acc");
  const bool bf16 = prec == Precision::bf16_fp32acc;
  const std::string mode = st.get_string("mode");
  if (mode != "chain" && mode != "passes" && mode != "hot" && mode != "cold" && mode != "paired")
    throw std::invalid_argument("gemm: mode must be chain, passes, hot, cold or paired, got " + mode);
  const std::string threads = st.get_string("threads");
  if (threads != "all" && threads != "one") throw std::invalid_argument("gemm: threads must be all or one, got " + threads);
  const gtb::cpu::OneThreadScope one_thread(threads == "one");  // every slice and pass
  Chain ch = make_chain(dim(st, "rows"), dim(st, "width"), dim(st, "layers"));
  const gtb::cpu::BlasThreadsScope one(1);
  const int R = ch.rows, Wd = ch.width;
  // The steps' per-shape choice, FP32 or BF16 (operands rounded as they enter), for each GEMM.
  gtb::cpu::plan::Plan plan;
  plan.choose({{"layer", false, false, R, Wd, Wd, Wd, Wd, Wd, false},
               {"layer.dW", true, false, Wd, Wd, R, Wd, Wd, Wd, false},
               {"layer.dX", false, true, R, Wd, Wd, Wd, Wd, Wd, false}},
              bf16, bf16);
  for (const auto& c : plan.choices())
    if (c.chosen < 0) throw gtb::Skip("no GEMM candidate verified at this shape: " + plan.summary());
  // Inside the step each GEMM call is timed on its own (the calling thread's clock, the call's fork
  // and join included): the step's GEMM seconds without subtracting a separate run of its passes.
  // Its passes and its update are timed the same way (the same clock, fork and join included).
  // Paired (once checked): every call then repeated at once, timed apart into the *_hot sums: the
  // same call back to back on what it just read and wrote, a moment after its in-step run.
  double gemm_s = 0, pass_s = 0, update_s = 0, gemm_hot = 0, pass_hot = 0, update_hot = 0;
  bool twins = false;
  auto timed = [&](std::size_t site, const float* a, const float* b, float* c) {
    gemm_s += plan.run_timed(site, a, b, 0.0f, c);
    if (twins) gemm_hot += plan.run_timed(site, a, b, 0.0f, c);
  };
  auto timed_pass = [&](double& into, double& hot_into, const auto& pass) {
    into += gtb::seconds_of_call(pass);
    if (twins) hot_into += gtb::seconds_of_call(pass);
  };
  auto forward = [&](int l, int from) { timed(0, ch.in(from), ch.W(l), ch.Z(l)); };
  auto grad_w = [&](int l) { timed(1, ch.in(l), ch.dZ(l), ch.dW(l)); };
  auto grad_x = [&](int l) { timed(2, ch.dZ(l), ch.W(l), ch.dA_out(l - 1)); };
  auto relu = [&](int l) {
    timed_pass(pass_s, pass_hot, [&] { relu_pass(ch.Z(l), ch.A(l), std::size_t(R), std::size_t(Wd)); });
  };
  auto relu_back = [&](int l) {
    timed_pass(pass_s, pass_hot,
               [&] { relu_backward_pass(ch.Z(l), ch.dA(l), ch.dZ(l), std::size_t(R), std::size_t(Wd)); });
  };
  auto update = [&] {
    timed_pass(update_s, update_hot, [&] { sgd_pass(ch.w.data(), ch.mom.data(), ch.dw.data(), ch.w.size()); });
  };
  auto step = [&](bool gemms) {
    for (int l = 0; l < ch.layers; ++l) {
      if (gemms) forward(l, l);
      relu(l);
    }
    for (int l = ch.layers - 1; l >= 0; --l) {
      relu_back(l);
      if (gemms) grad_w(l);
      if (gemms && l > 0) grad_x(l);
    }
  };
  // Hot and cold: the step's GEMMs (layers forward, layers weight gradients, layers - 1 input
  // gradients), each kind repeated on one layer's operands.
  auto each_gemm = [&](const auto& around) {
    for (int l = 0; l < ch.layers; ++l) around([&] { forward(0, 0); });
    for (int l = 0; l < ch.layers; ++l) around([&] { grad_w(0); });
    for (int l = 1; l < ch.layers; ++l) around([&] { grad_x(1); });
  };
  // Every timed call of `run` (warm-ups too): the seconds of its GEMMs, its passes and its update.
  std::vector<double> gemm_per_step, pass_per_step, update_per_step;
  // Paired: each step's hot twins over its in-step calls, for the GEMMs, the passes and the update.
  std::vector<double> gemm_pairs, pass_pairs, update_pairs;
  auto run = [&] {
    if (mode == "hot") {
      each_gemm([](const auto& call) { call(); });
      return;
    }
    gemm_s = pass_s = update_s = gemm_hot = pass_hot = update_hot = 0;
    step(mode != "passes");
    update();
    gemm_per_step.push_back(gemm_s);
    pass_per_step.push_back(pass_s);
    update_per_step.push_back(update_s);
    if (!twins) return;
    if (gemm_s > 0) gemm_pairs.push_back(gemm_hot / gemm_s);
    if (pass_s > 0) pass_pairs.push_back(pass_hot / pass_s);
    if (update_s > 0) update_pairs.push_back(update_hot / update_s);
  };
  // The check: one step, then its GEMMs, passes and update against float64.
  step(true);
  if (!check_sequence(st, ch, prec, update)) return;
  const double flop = 2.0 * double(R) * double(Wd) * double(Wd) * double(3 * ch.layers - 1);
  if (mode != "passes") st.set_work(mode == "paired" ? 2 * flop : flop);  // paired: every GEMM twice
  sequence_bytes(st, ch);
  st.info("threads", omp_get_max_threads());
  st.info("gemm_plan", plan.summary());
  if (mode == "cold") return run_cold(st, each_gemm);
  twins = mode == "paired";
  st.exec(run);
  if (mode == "paired" && !gemm_pairs.empty()) {
    st.counter("gemm_hot_over_in_step", gtb::median(gemm_pairs), "fraction");
    if (!pass_pairs.empty()) st.counter("pass_hot_over_in_step", gtb::median(pass_pairs), "fraction");
    if (!update_pairs.empty()) st.counter("update_hot_over_in_step", gtb::median(update_pairs), "fraction");
  }
  if (mode == "chain" && !gemm_per_step.empty()) {
    st.counter("gemm_s_in_step", gtb::median(gemm_per_step), "s");
    st.counter("pass_s_in_step", gtb::median(pass_per_step), "s");
    st.counter("update_s_in_step", gtb::median(update_per_step), "s");
  }
  if (mode == "passes" && !pass_per_step.empty()) {
    st.counter("pass_s", gtb::median(pass_per_step), "s");
    st.counter("update_s", gtb::median(update_per_step), "s");
  }
}

// Attention's GEMMs: one small product per sample and head, the tasks spread over the threads
// (an OpenMP loop, each call single-threaded), as the CPU transformer step runs them. Per head of
// dh columns over S positions: scores Q K^T and dP = dO V^T (nt: S x S x dh), context P V and
// dQ = dS K (nn: S x dh x S), dV = P^T dO and dK = dS^T Q (tn: S x dh x S). `count` products,
// each on its own operands, per repetition.
void cpu_batched(gtb::State& st, gtb::cpu::GemmLib lib) {
  const std::string orient = st.get_string("orientation");
  if (orient != "nn" && orient != "tn" && orient != "nt")
    throw std::invalid_argument("gemm: orientation must be nn, tn or nt, got " + orient);
  if (!gtb::cpu::gemm_lib_available(lib))
    throw gtb::Skip(std::string(gtb::cpu::to_string(lib)) + " is not available here");
  const int count = dim(st, "count");
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const int m = int(pr.m), n = int(pr.n), k = int(pr.k);
  const bool ta = orient == "tn", tb = orient == "nt";
  const std::size_t asz = pr.a.size(), bsz = pr.b.size(), csz = std::size_t(m) * std::size_t(n);
  // Every task its own copy of the operands (the heads of a step touch distinct memory); each copy
  // stored as the orientation reads it, so op(A) op(B) is the A B the reference holds.
  std::vector<float> a(asz * std::size_t(count)), b(bsz * std::size_t(count));
  for (int t = 0; t < count; ++t) {
    float* at = a.data() + asz * std::size_t(t);
    float* bt = b.data() + bsz * std::size_t(t);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) (ta ? at[std::size_t(j) * m + i] : at[std::size_t(i) * k + j]) = pr.a[std::size_t(i) * k + j];
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < n; ++j) (tb ? bt[std::size_t(j) * k + i] : bt[std::size_t(i) * n + j]) = pr.b[std::size_t(i) * n + j];
  }
  const int lda = ta ? m : k, ldb = tb ? k : n;
  std::vector<float> c(csz * std::size_t(count));
  gtb::poison(c.data(), c.size());
  const gtb::cpu::BlasThreadsScope one(1);
  auto run = [&] {
#pragma omp parallel for schedule(static)
    for (int t = 0; t < count; ++t)
      gtb::cpu::sgemm(lib, ta, tb, m, n, k, 1.0f, a.data() + asz * std::size_t(t), lda, b.data() + bsz * std::size_t(t),
                      ldb, 0.0f, c.data() + csz * std::size_t(t), n);
  };
  run();
  st.set_work(double(count) * gtb::gemm::flops(pr.m, pr.n, pr.k));
  st.counter("operand_bytes", double(count) * gtb::gemm::operand_bytes(Precision::fp32, pr.m, pr.n, pr.k), "bytes");
  // The first and the last task's products are checked (the same operands, so one reference).
  for (const int t : {0, count - 1})
    if (!record_check(st, c.data() + csz * std::size_t(t), pr, Precision::fp32)) return;
  st.info("threads", omp_get_max_threads());
  st.info("library", gtb::cpu::to_string(lib));
  st.info("compute", std::string("sgemm ") + (ta ? "A^T B" : tb ? "A B^T" : "A B") +
                         " (FP32) x count, an OpenMP loop over the products, each call single-threaded");
  st.exec(run);
}

// The step-shape and per-head records time back-to-back calls of one small shape, which vary little:
// one warm-up sample, and in the quick suite a few samples suffice.
const gtb::RuleChange kSmallCallRule = gtb::RuleChange().warmup_samples(1).warmup_seconds(0);
const gtb::RuleChange kSmallCallQuickRule =
    gtb::RuleChange().min_samples(3).hard_min_samples(2).budget_seconds(0.02).noise_target(0.03);

// Attention's sites for heads of dh columns over S positions, in one orientation: the materialised
// step's whole products (S x S x dh, S x dh x S), then fused attention's blocks as the CPU kernel runs
// them (kernels/transformer/cpu/blocks.cpp): B = kFusedBlock query rows against the n keys up to the
// block's last row (nt B x n x dh, nn B x dh x n, tn n x dh x B).
std::vector<std::vector<std::int64_t>> attention_sites(const std::string& orient, bool full) {
  const std::vector<std::int64_t> seq = full ? std::vector<std::int64_t>{64, 128, 256, 512, 1024}
                                             : std::vector<std::int64_t>{128, 256, 512};
  const std::vector<std::int64_t> keys = full ? std::vector<std::int64_t>{64, 128, 256, 512, 1024}
                                              : std::vector<std::int64_t>{64, 128, 512};
  const std::vector<std::int64_t> head = full ? std::vector<std::int64_t>{32, 64, 128} : std::vector<std::int64_t>{32, 64};
  const std::int64_t B = gtb::xfmr::kFusedBlock;
  std::vector<std::vector<std::int64_t>> out;
  auto site = [&](std::int64_t rows, std::int64_t n, std::int64_t dh) {
    std::vector<std::int64_t> s = orient == "nt" ? std::vector<std::int64_t>{rows, n, dh}
                                  : orient == "nn" ? std::vector<std::int64_t>{rows, dh, n}
                                                   : std::vector<std::int64_t>{n, dh, rows};
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  for (std::int64_t s : seq)
    for (std::int64_t dh : head) site(s, s, dh);
  for (std::int64_t n : keys)
    for (std::int64_t dh : head) site(B, n, dh);
  return out;
}

// The sites of layers in -> out (out = in, and the 16-class output layer of small widths) at R rows,
// in one orientation. The quick list leaves the 1024-row, 1024-wide layer to the library shapes
// (1024^3 is one of them).
std::vector<std::vector<std::int64_t>> step_sites(const std::string& orient, bool full) {
  const std::vector<std::int64_t> rows = full ? std::vector<std::int64_t>{1, 32, 128, 256, 512, 1024, 2048}
                                              : std::vector<std::int64_t>{1, 32, 256, 1024};
  const std::vector<std::int64_t> widths = full ? std::vector<std::int64_t>{64, 128, 256, 512, 1024}
                                                : std::vector<std::int64_t>{64, 256, 512, 1024};
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t r : rows) {
    for (std::int64_t w : widths) {
      if (!full && r >= 1024 && w >= 1024) continue;
      std::vector<std::int64_t> outs{w};
      if (w <= 256) outs.push_back(16);
      for (std::int64_t o : outs) {
        if (orient == "nn") out.push_back({r, o, w});
        else if (orient == "tn") out.push_back({w, o, r});
        else out.push_back({r, w, o});
      }
    }
  }
  return out;
}

// The BF16 step sites: layers in -> out of the transformer's and the MLP's widths at R rows, in one
// orientation (fewer than FP32's: each record first verifies and times every BF16 candidate).
std::vector<std::vector<std::int64_t>> bf16_step_sites(const std::string& orient, bool full) {
  const std::vector<std::int64_t> rows = full ? std::vector<std::int64_t>{32, 128, 512, 2048}
                                              : std::vector<std::int64_t>{512};
  const std::vector<std::int64_t> widths = full ? std::vector<std::int64_t>{128, 256, 512, 1024}
                                                : std::vector<std::int64_t>{128, 512};
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t r : rows)
    for (std::int64_t in : widths)
      for (std::int64_t o : widths) {
        if (orient == "nn") out.push_back({r, o, in});
        else if (orient == "tn") out.push_back({in, o, r});
        else out.push_back({r, in, o});
      }
  return out;
}

#if GTB_HAVE_CUDA
void gpu_gemm(gtb::State& st, bool lt) {
  const Precision prec = gtb::gemm::precision_from_string(st.get_string("precision"));
  const std::string l2 = st.get_string("l2");
  if (l2 != "warm" && l2 != "cold") throw std::invalid_argument("gemm: l2 must be warm or cold, got " + l2);
  const Problem& pr = problem(dim(st, "m"), dim(st, "n"), dim(st, "k"));
  const gtb::cuda::GemmDevice dev = gtb::cuda::gemm_device();
  gtb::cuda::Stream stream;
  gtb::cuda::GemmOperands ops(prec, int(pr.m), int(pr.n), int(pr.k), pr.a.data(), pr.b.data());
  gtb::cuda::Blas blas(stream.get());
  std::unique_ptr<gtb::cuda::LtGemm> plan;
  if (lt) plan = std::make_unique<gtb::cuda::LtGemm>(ops);
  auto enqueue = [&](cudaStream_t s) {
    if (lt)
      plan->run(ops, s);
    else
      gtb::cuda::gemm_cublas(blas, ops);
  };
  ops.poison_c(stream.get());
  enqueue(stream.get());
  stream.sync();
  const std::vector<float> c = ops.download_c();
  describe_problem(st, pr, prec);
  if (!record_check(st, c.data(), pr, prec)) return;

  st.info("compute_type", gtb::cuda::compute_type_name(prec));
  st.info("library", std::string(lt ? "cuBLASLt " : "cuBLAS ") + gtb::cuda::cublas_version());
  st.info("gpu", dev.name);
  st.info("sm_count", dev.sms);
  if (lt) {
    const gtb::cuda::LtAlgo& a = plan->algo();
    st.info("algorithm", {{"algo_id", a.algo_id},
                          {"tile", a.tile},
                          {"tile_id", a.tile_id},
                          {"stages_id", a.stages_id},
                          {"splitk", a.splitk},
                          {"reduction_scheme", a.reduction_scheme},
                          {"cta_swizzling", a.cta_swizzling},
                          {"custom_option", a.custom_option},
                          {"cluster_shape_id", a.cluster_shape_id},
                          {"heuristic_waves", a.waves_count},
                          {"workspace_bytes", a.workspace_bytes},
                          {"workspace_limit_bytes", gtb::cuda::LtGemm::kDefaultWorkspace},
                          {"candidates", a.candidates},
                          {"choice", "first heuristic result"}});
  } else {
    st.info("algorithm", "cublasGemmEx CUBLAS_GEMM_DEFAULT (cuBLAS's own heuristic)");
  }
  const gtb::gemm::Tile tile = gtb::gemm::documented_tile(prec);
  const gtb::gemm::TileEstimate est = gtb::gemm::estimate_tiles(pr.m, pr.n, tile, dev.sms);
  st.info("est_tile", std::to_string(tile.m) + "x" + std::to_string(tile.n));
  st.counter("est_tiles", double(est.tiles), "");
  st.counter("est_waves", double(est.waves), "");
  st.counter("est_wave_efficiency", est.wave_efficiency, "");
  st.counter("est_tile_efficiency", est.tile_efficiency, "");

  // cuBLAS may add a split-K reduction kernel: two operations a call for the launch-queue limit.
  // Cold: the harness flushes the L2 before every repetition and times only the GEMM, so each one
  // starts with a cold L2.
  const gtb::cuda::EventTiming how{gtb::Blocking::allowed, 2};
  const gtb::SampleSet* ss = l2 == "warm" ? &gtb::cuda::exec(st, stream.get(), enqueue, how)
                                          : &gtb::cuda::exec_cold_l2(st, stream.get(), enqueue, how);
  if (const auto peak = gtb::gemm::find_peak(dev.name); peak && ss->stats.median > 0) {
    const double peak_tf = gtb::gemm::peak_tflops(*peak, prec);
    const double tflops = gtb::gemm::flops(pr.m, pr.n, pr.k) / ss->stats.median / 1e12;
    st.counter("pct_of_datasheet_peak", 100.0 * tflops / peak_tf, "%");
    st.info("datasheet", {{"gpu", peak->gpu}, {"peak_tflops", peak_tf}, {"source", peak->source},
                          {"note", "datasheet figure, dense (half the printed sparse figure)"}});
  }
}
#else
void gpu_gemm(gtb::State&, bool) { throw gtb::Skip("built without CUDA"); }
#endif

std::vector<std::vector<std::int64_t>> mnk(const std::vector<gtb::gemm::Shape>& shapes) {
  std::vector<std::vector<std::int64_t>> out;
  for (const gtb::gemm::Shape& s : shapes) out.push_back({s.m, s.n, s.k});
  return out;
}

gtb::Bench& register_gemm(gtb::Backend backend, const std::string& variant, const std::vector<std::string>& precisions,
                          gtb::CaseFn fn, const std::string& text) {
  const bool cpu = backend == gtb::Backend::cpu;
  auto& b = gtb::add("gemm", "gemm", variant, backend, std::move(fn))
                .zip({"m", "n", "k"}, mnk(gtb::gemm::shapes(true, cpu)), mnk(gtb::gemm::shapes(false, cpu)))
                .option("precision", precisions)
                .rate("tflops", "TFLOP/s", 1e12)
                .describe(text);
  if (!cpu) {
    b.option("l2", std::vector<std::string>{"warm", "cold"});
    // Cold-L2 runs matter where the operands fit in L2 and could stay there; the quick suite keeps
    // them to one small square and one skinny shape (a cold repetition synchronizes the host, so
    // these records take the whole sampling budget more often than warm ones).
    b.filter([](const gtb::json& p, const gtb::json& o, gtb::Suite suite) {
      if (suite != gtb::Suite::quick || o.at("l2") != "cold") return true;
      return gtb::gemm::quick_cold_l2(p.at("m").get<std::int64_t>(), p.at("n").get<std::int64_t>(), p.at("k").get<std::int64_t>());
    });
  }
  if (cpu) {
    // Quick: the two 2048-sized training shapes run at the 2048^3 rate within 1% on a small CPU, and
    // each costs about a second (three samples, the check and its reference); the full suite keeps them.
    // The misaligned 2047^3 too (about a second; its few-percent step from 2048^3 is a full-suite finding).
    b.filter([](const gtb::json& p, const gtb::json&, gtb::Suite suite) {
      const std::string cls = gtb::gemm::shape_class(p.at("m").get<std::int64_t>(), p.at("n").get<std::int64_t>(),
                                                     p.at("k").get<std::int64_t>());
      return suite != gtb::Suite::quick || (cls != "training" && cls != "alignment");
    });
    // A 2048^3 SGEMM takes ~0.1 s on a small CPU: a few samples measure it; more only cost time.
    // Quick: the call that is checked has already warmed the caches, the library and its threads,
    // so no warm-up sample is spent, and two samples within 0.15 s do (the 2048-sized records'
    // three samples on an idle 2-core CPU varied by at most 3%, coefficient of variation).
    b.rule(gtb::RuleChange().warmup_samples(1).warmup_seconds(0))
        .rule(gtb::Suite::quick,
              gtb::RuleChange().warmup_samples(0).min_samples(2).hard_min_samples(2).budget_seconds(0.15))
        .rule(gtb::Suite::full, gtb::RuleChange().min_samples(5).hard_min_samples(3));
  }
  return b;
}

const std::vector<std::string> kGpuPrecisions = gtb::gemm::precision_names();

// The gemm workload's CPU libraries: the FP32 candidates, both oneDNNs' and oneMKL's BF16.
void register_cpu_libraries() {
  // The FP32 candidates for the CPU's fastest SGEMM, each a percent of the measured FMA ceiling.
  register_gemm(gtb::Backend::cpu, "openblas", {"fp32"}, cpu_sgemm,
                "OpenBLAS cblas_sgemm with this process's core type, all cores; TFLOP/s = 2*m*n*k / time")
      .ceiling("host_fma_fp32_tflops");
  register_gemm(gtb::Backend::cpu, "openblas_detected", {"fp32"}, cpu_sgemm_detected,
                "OpenBLAS cblas_sgemm with the core OpenBLAS detects itself (child process), when that differs")
      .ceiling("host_fma_fp32_tflops");
  auto onednn_quick = [](const gtb::json& p, const gtb::json&, gtb::Suite suite) {
    return suite != gtb::Suite::quick || !onednn_quick_skips(p.at("m").get<std::int64_t>(), p.at("n").get<std::int64_t>(),
                                                             p.at("k").get<std::int64_t>());
  };
  // Quick: oneDNN off 2048^3 (the same rate as OpenBLAS within 1% on a 2-core CPU), the misaligned
  // 2047^3 and the 128-row skinny shape (OpenBLAS the faster by 3% and 85%): OpenBLAS gives the
  // fastest rate per shape there by itself.
  register_gemm(gtb::Backend::cpu, "onednn", {"fp32"}, cpu_onednn, "oneDNN f32 matmul, all cores")
      .ceiling("host_fma_fp32_tflops")
      .filter(onednn_quick);
  register_gemm(gtb::Backend::cpu, "onednn", {"bf16_fp32acc", "fp16_fp32acc"}, cpu_onednn,
                "oneDNN matmul with bf16/f16 A, B, C and f32 accumulation, all cores");
  // The current oneDNN beside Debian's: BF16 at every shape the 2.6 one runs, FP32 where 2.6's does.
  register_gemm(gtb::Backend::cpu, "onednn3", {"bf16_fp32acc"}, cpu_onednn3,
                "oneDNN 3 matmul (PyPI's GNU OpenMP build, loaded beside Debian's 2.6): bf16 A and B, f32 accumulation "
                "and C, all cores; the record names its kernel and ISA");
  register_gemm(gtb::Backend::cpu, "onednn3", {"fp32"}, cpu_onednn3, "oneDNN 3 f32 matmul, all cores")
      .ceiling("host_fma_fp32_tflops")
      .filter(onednn_quick);
  auto mkl_quick = [](const gtb::json& p, const gtb::json&, gtb::Suite suite) {
    return suite != gtb::Suite::quick || mkl_quick_shape(p.at("m").get<std::int64_t>(), p.at("n").get<std::int64_t>(),
                                                         p.at("k").get<std::int64_t>());
  };
  // oneMKL's SGEMM in the full suite only: at the quick shapes it was never the fastest FP32
  // library on a 2-core CPU (OpenBLAS or oneDNN give the fastest rate per shape by themselves).
  register_gemm(gtb::Backend::cpu, "mkl", {"fp32"}, cpu_mkl,
                "oneMKL cblas_sgemm, all cores (GNU OpenMP threading layer)")
      .ceiling("host_fma_fp32_tflops")
      .only(gtb::Suite::full);
  register_gemm(gtb::Backend::cpu, "mkl", {"bf16_fp32acc"}, cpu_mkl,
                "oneMKL cblas_gemm_bf16bf16f32: bf16 A and B, f32 accumulation and C, all cores")
      .filter(mkl_quick);
}

// A case of single-threaded library calls in one orientation (`axes` and the shapes full and quick),
// with the small-call rules and the CPU's FMA ceiling; the caller describes it.
gtb::Bench& add_single_calls(const char* workload, gtb::cpu::GemmLib lib, void (*run)(gtb::State&, gtb::cpu::GemmLib),
                             std::vector<std::string> axes, std::vector<std::vector<std::int64_t>> full,
                             std::vector<std::vector<std::int64_t>> quick, const std::string& orient) {
  return gtb::add("gemm", workload, gtb::cpu::to_string(lib), gtb::Backend::cpu,
                  [lib, run](gtb::State& st) { run(st, lib); })
      .zip(std::move(axes), std::move(full), std::move(quick))
      .option("orientation", std::vector<std::string>{orient})
      .rate("tflops", "TFLOP/s", 1e12)
      .rule(kSmallCallRule)
      .rule(gtb::Suite::quick, kSmallCallQuickRule)
      .ceiling("host_fma_fp32_tflops");
}

// A training step's GEMM sites through each library and through the BF16 per-shape plan.
void register_step_shapes() {
  // The step shapes through the libraries a CPU step picks from. Quick: OpenBLAS and oneDNN at every
  // site, so that each matmul point is the faster of two records taken at different moments (one
  // library alone left a record slowed 3-60x by a busy moment of a small machine as the site's
  // rate); full: all three.
  for (const gtb::cpu::GemmLib lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn, gtb::cpu::GemmLib::mkl})
    for (const std::string orient : {"nn", "tn", "nt"}) {
      const bool in_quick = lib != gtb::cpu::GemmLib::mkl;
      auto& b = add_single_calls("step_shapes", lib, cpu_step_shape, {"m", "n", "k"}, step_sites(orient, true),
                                 step_sites(orient, false), orient)
                    .describe("a training step's GEMM sites (layer in -> out at R rows: nn R x out x in, tn in x out x R, "
                              "nt R x in x out) the way the CPU steps call them: one single-threaded " +
                              std::string(gtb::cpu::to_string(lib)) + " call per thread's slice");
      if (!in_quick) b.only(gtb::Suite::full);
    }
  for (const std::string orient : {"nn", "tn", "nt"})
    gtb::add("gemm", "step_shapes", "plan", gtb::Backend::cpu, cpu_step_shape_bf16)
        .zip({"m", "n", "k"}, bf16_step_sites(orient, true), bf16_step_sites(orient, false))
        .option("precision", std::vector<std::string>{"bf16_fp32acc"})
        .option("orientation", std::vector<std::string>{orient})
        .rate("tflops", "TFLOP/s", 1e12)
        .rule(kSmallCallRule)
        .rule(gtb::Suite::quick, kSmallCallQuickRule)
        .describe("a BF16 training step's GEMM sites (layer in -> out at R rows) the way the CPU steps run them: "
                  "FP32 operands rounded to BF16 as they enter the product, the library the per-shape plan "
                  "verified and timed fastest (its conversion and packing included)");
}

// The sequence: a step's GEMMs, passes and update as a step runs them, in every mode.
void register_sequences() {
  // The sequence's cases, every mode at the same sizes (rows, width, layers) and precisions.
  auto sequence_cases = [](std::vector<std::string> modes, std::vector<std::string> threads,
                           const gtb::RuleChange& quick_rule, const std::string& what) {
    gtb::add("gemm", "sequence", "plan", gtb::Backend::cpu, cpu_sequence)
        .zip({"rows", "width", "layers"},
             {{64, 64, 4}, {32, 256, 4}, {512, 128, 4}, {512, 256, 4}, {512, 512, 4}, {2048, 1024, 4}},
             {{64, 64, 4}, {32, 256, 4}, {512, 128, 4}, {512, 256, 4}, {512, 512, 4}})
        .option("precision", std::vector<std::string>{"fp32", "bf16_fp32acc"})
        .option("mode", std::move(modes))
        .option("threads", std::move(threads))
        .rule(kSmallCallRule)
        .rule(gtb::Suite::quick, quick_rule)
        .describe(what);
  };
  // A step's sequence of GEMMs and passes against the same GEMMs hot (matmul_in_step), at GEMMs of
  // 0.5 MFLOP (64 x 64 x 64, the whole step within a core's L2 cache) to 268 MFLOP (512 x 512 x 512).
  sequence_cases({"chain", "passes", "hot"}, {"all", "one"}, kSmallCallQuickRule,
                 "a step's forward and backward GEMMs (each on what the previous pass wrote, the weight gradients "
                 "summing over rows the other threads wrote, every layer its own weights) against its passes alone "
                 "and each of its GEMMs repeated hot: the slowdown of a step's GEMMs over back-to-back calls");
  // The whole step with every GEMM, pass and update call repeated at once, hot, and timed apart from
  // its in-step run: the shares in-step / hot of one moment (matmul_in_step, passes_in_step,
  // update_in_step), whatever the machine's speed does between records; five samples at least.
  sequence_cases({"paired"}, {"all", "one"},
                 gtb::RuleChange().min_samples(5).hard_min_samples(5).budget_seconds(0.5).noise_target(0.03),
                 "a step's GEMMs, passes and update (as the chain mode runs them), each call repeated at once and "
                 "timed apart: the share of its hot rate each keeps inside the step, the two of one moment "
                 "(gemm_hot_over_in_step, pass_hot_over_in_step, update_hot_over_in_step)");
  // The same GEMMs cold, every cache emptied before each call (matmul_from_memory), all threads: a
  // repetition is as many cache flushes as GEMMs, so the quick suite's budget of small calls would
  // stop at two samples; five at least.
  sequence_cases({"cold"}, {"all"},
                 gtb::RuleChange().min_samples(5).hard_min_samples(5).budget_seconds(1.0).noise_target(0.03),
                 "a step's GEMMs (as the sequence's hot mode runs them) with every cache emptied before each call, "
                 "each call then repeated hot and timed apart: the share of the back-to-back rate GEMMs keep when "
                 "their operands come from memory (hot_over_cold)");
}

// Attention's per-head products through each library.
void register_batched() {
  // Attention's per-head products, 16 at once (a batch of 4 samples of 4 heads; more tasks than
  // threads, as the transformer steps run).
  for (const gtb::cpu::GemmLib lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn})
    for (const std::string orient : {"nn", "tn", "nt"}) {
      std::vector<std::vector<std::int64_t>> full, quick;
      for (auto s : attention_sites(orient, true)) s.push_back(16), full.push_back(s);
      for (auto s : attention_sites(orient, false)) s.push_back(16), quick.push_back(s);
      add_single_calls("batched", lib, cpu_batched, {"m", "n", "k", "count"}, full, quick, orient)
          .describe("attention's per-head GEMMs (S x S x dh, S x dh x S), count of them at once over the threads, each "
                    "one single-threaded " + std::string(gtb::cpu::to_string(lib)) + " call");
    }
}

void register_all() {
  register_cpu_libraries();
  register_step_shapes();
  register_sequences();
  register_batched();
  register_gemm(gtb::Backend::cuda, "cublas", kGpuPrecisions, [](gtb::State& st) { gpu_gemm(st, false); },
                "cublasGemmEx with the precision's compute type; TFLOP/s = 2*m*n*k / time");
  register_gemm(gtb::Backend::cuda, "cublaslt", kGpuPrecisions, [](gtb::State& st) { gpu_gemm(st, true); },
                "cublasLtMatmul, 32 MiB workspace, first heuristic algorithm (recorded)");
}

// Its kernels use OpenBLAS: its core type is selected before any case.
const bool kOpenblasCore = gtb::install_openblas_core_selection();
const bool kRegistered = (register_all(), true);

// The CPU GEMM libraries this process found, each with its version and code path, or why it is absent.
const bool kContext = gtb::add_context("gemm", [](gtb::json& ctx) {
  namespace dnnl3 = gtb::cpu::dnnl3;
  namespace mkl = gtb::cpu::mkl;
  gtb::json libs;
  libs["openblas"] = {{"library", gtb::cpu::blas_config()}, {"corename", gtb::cpu::blas_corename()}};
  if (gtb::cpu::dnnl_built()) {
    const std::string why = gtb::cpu::plan::native_bf16_unavailable();
    libs["onednn"] = {{"library", "oneDNN " + gtb::cpu::dnnl_version()},
                      {"bf16_matmul", why.empty() ? "native" : "not offered: " + why}};
  } else {
    libs["onednn"] = {{"unavailable", "built without oneDNN (libdnnl-dev)"}};
  }
  if (dnnl3::available()) {
    const std::string why = dnnl3::native_bf16_unavailable();
    libs["onednn3"] = {{"library", dnnl3::version()},
                       {"isa", dnnl3::isa()},
                       {"threading", dnnl3::threading()},
                       {"bf16_matmul", why.empty() ? "runs" : "not offered: " + why}};
  } else {
    libs["onednn3"] = {{"unavailable", dnnl3::unavailable_reason()}};
  }
  if (mkl::available())
    libs["mkl"] = {{"library", mkl::version()}, {"processor", mkl::processor()}, {"threading", mkl::threading()}};
  else
    libs["mkl"] = {{"unavailable", mkl::unavailable_reason()}};
  ctx["cpu_libraries"] = libs;
});

}  // namespace

// What this family publishes for the others to divide by (include/gtb/publish.h).
#include "gtb/publish.h"
const bool kPublishes = gtb::publish("gemm", gtb::published::kPeaks, "best_rate");
