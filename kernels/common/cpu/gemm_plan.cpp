// The CPU training steps' per-shape GEMM choice: verify each library on the shape, time it, keep the fastest.
#include "kernels/common/cpu/gemm_plan.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "kernels/common/cpu/clones.h"
#include "kernels/common/cpu/dnnl3.h"
#include "kernels/common/cpu/mkl.h"
#include "kernels/common/clock.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/common/random.h"

#if GTB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace gtb::cpu::plan {

#if GTB_HAVE_DNNL
namespace {
using dt = dnnl::memory::data_type;
dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}
std::string dnnl_version_text() {
  const dnnl_version_t* v = ::dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}
// The matmul of a shape: BF16 A and B (dense, in the site's transposition), FP32 C with the site's
// leading dimension, beta through a sum post-op.
dnnl::matmul::primitive_desc matmul_pd(bool ta, bool tb, int m, int n, int k, int ldc, float beta) {
  const dnnl::memory::dims a_strides = ta ? dnnl::memory::dims{1, m} : dnnl::memory::dims{k, 1};
  const dnnl::memory::dims b_strides = tb ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1};
  const dnnl::memory::desc a_md({m, k}, dt::bf16, a_strides), b_md({k, n}, dt::bf16, b_strides),
      c_md({m, n}, dt::f32, dnnl::memory::dims{ldc, 1});
  dnnl::primitive_attr attr;
  if (beta != 0.0f) {
    dnnl::post_ops po;
    po.append_sum(beta);
    attr.set_post_ops(po);
  }
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine());
}
}  // namespace
#endif

std::string native_bf16_unavailable() {
#if GTB_HAVE_DNNL
  static const std::string why = [] {
    try {
      const auto pd = matmul_pd(false, false, 64, 64, 64, 64, 0.0f);
      const std::string impl = pd.impl_info_str();
      if (impl.find("ref") != std::string::npos)
        return "oneDNN " + dnnl_version_text() + " has only its reference BF16 matmul (" + impl +
               ") on this CPU: no AVX512-BF16 or AMX kernels";
      return std::string();
    } catch (const dnnl::error& e) {
      return "oneDNN " + dnnl_version_text() + " has no BF16 matmul implementation for this CPU (" + e.what() +
             "; its BF16 kernels need AVX-512, native with AVX512-BF16 or AMX)";
    }
  }();
  return why;
#else
  return "built without oneDNN (libdnnl-dev)";
#endif
}

bool native_bf16_serves(const Shape& s, std::string& why_not) {
  if (!s.inner) return true;
  why_not = "not offered for products that run one per thread inside the step's parallel region (its primitive is "
             "planned for all threads)";
  return false;
}

Machine this_machine() {
  return Machine{native_bf16_unavailable(), mkl::unavailable_reason(), {}, dnnl3::native_bf16_unavailable(),
                 dnnl3::isa()};
}

std::vector<Candidate> candidates(bool bf16, const Machine& machine) {
  std::vector<Candidate> out;
  for (const auto& [lib, name] : cpu::kGemmLibNames) {
    Candidate c;
    c.name = name;
    c.lib = lib;
    // oneMKL is the one FP32 library whose presence is a fact of the machine (it loads at run time).
    c.available = lib == GemmLib::mkl ? machine.mkl_unavailable.empty() : cpu::gemm_lib_available(lib);
    if (!c.available) c.why_not = lib == GemmLib::mkl ? machine.mkl_unavailable : std::string(name) + " is not built in";
    out.push_back(c);
  }
  // The FP32 libraries serve both precisions (operands rounded for BF16); BF16 adds the BF16 GEMMs.
  if (bf16) {
    // A BF16 GEMM: available unless the machine says why not.
    auto add_bf16 = [&out](const char* name, bool Candidate::*kind, const std::string& why_not) {
      Candidate c;
      c.name = name;
      c.*kind = true;
      c.why_not = why_not;
      c.available = why_not.empty();
      out.push_back(c);
    };
    add_bf16("mkl_bf16", &Candidate::mkl_bf16, machine.mkl_unavailable);
    add_bf16("onednn_bf16", &Candidate::native_bf16, machine.native_bf16_unavailable);
    add_bf16("onednn3_bf16", &Candidate::onednn3_bf16, machine.onednn3_bf16_unavailable);
  }
  if (!machine.only.empty())
    for (Candidate& c : out)
      if (c.available && std::find(machine.only.begin(), machine.only.end(), c.name) == machine.only.end())
        c.available = false, c.why_not = "left out by the caller";
  return out;
}
std::vector<Candidate> candidates(bool bf16) { return candidates(bf16, this_machine()); }

void Plan::call_native(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta, float* c) const {
#if GTB_HAVE_DNNL
  // One primitive per shape for the process (creation costs far more than a small product).
  struct Prim {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul prim;
  };
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<Prim>> prims;
  std::ostringstream key;
  key << s.ta << s.tb << ' ' << m << ' ' << n << ' ' << k << ' ' << s.ldc << ' ' << beta;
  std::shared_ptr<Prim> p;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = prims[key.str()];
    if (!slot) {
      slot = std::make_shared<Prim>();
      slot->pd = matmul_pd(s.ta, s.tb, m, n, k, s.ldc, beta);
      slot->prim = dnnl::matmul(slot->pd);
    }
    p = slot;
  }
  // Packed dense in the site's transposition as BF16 words, rounded to nearest even (operands that
  // are already BF16 values stay as they are); part of the candidate's timed cost.
  const int ar = s.ta ? k : m, ac = s.ta ? m : k, br = s.tb ? n : k, bc = s.tb ? k : n;
  std::vector<std::uint16_t> a16(std::size_t(ar) * ac), b16(std::size_t(br) * bc);
  auto pack = [](const float* src, int rows, int cols, int ld, std::uint16_t* dst) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) dst[std::size_t(i) * cols + j] = to_bf16(src[std::size_t(i) * ld + j]);
  };
  pack(a, ar, ac, s.lda, a16.data());
  pack(b, br, bc, s.ldb, b16.data());
  dnnl::stream strm(engine());
  dnnl::memory am(p->pd.src_desc(), engine(), a16.data()), bm(p->pd.weights_desc(), engine(), b16.data()),
      cm(p->pd.dst_desc(), engine(), c);
  p->prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  strm.wait();
#else
  (void)s, (void)m, (void)n, (void)k, (void)a, (void)b, (void)beta, (void)c;
  throw std::logic_error("gemm plan: oneDNN's BF16 matmul chosen in a build without oneDNN");
#endif
}

void Plan::call_onednn3(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta,
                        float* c) const {
  // One primitive per shape for the process, as for 2.6's.
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<dnnl3::Matmul>> prims;
  std::ostringstream key;
  key << s.ta << s.tb << ' ' << m << ' ' << n << ' ' << k << ' ' << s.ldc << ' ' << beta;
  std::shared_ptr<dnnl3::Matmul> p;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = prims[key.str()];
    if (!slot) slot = std::make_shared<dnnl3::Matmul>(true, s.ta, s.tb, m, n, k, s.ldc, beta);
    p = slot;
  }
  // Packed dense in the site's transposition as BF16 words (part of the candidate's timed cost).
  const int ar = s.ta ? k : m, ac = s.ta ? m : k, br = s.tb ? n : k, bc = s.tb ? k : n;
  thread_local std::vector<std::uint16_t> a16, b16;
  a16.resize(std::size_t(ar) * std::size_t(ac));
  b16.resize(std::size_t(br) * std::size_t(bc));
  auto pack = [](const float* src, int rows, int cols, int ld, std::uint16_t* dst) {
#pragma omp parallel for schedule(static) if (double(rows) * cols > kMinParallelWork)
    for (int i = 0; i < rows; ++i) to_bf16_rows(src + std::size_t(i) * std::size_t(ld), 1, cols, ld, dst + std::size_t(i) * cols);
  };
  pack(a, ar, ac, s.lda, a16.data());
  pack(b, br, bc, s.ldb, b16.data());
  p->run(a16.data(), b16.data(), c);
}

namespace {
// One row rounded to BF16 values, in the CPU's vector width (the rounding is a few integer
// operations per element, compiled for AVX-512 and AVX2 as well as the baseline).
GTB_CPU_CLONES void round_row(const float* __restrict src, float* __restrict dst, int cols) {
#pragma omp simd
  for (int j = 0; j < cols; ++j) dst[j] = from_bf16(to_bf16(src[j]));
}

// rows x cols of src (row stride ld) rounded to BF16 values into buf, same stride; over the threads
// when `fork` (a product cut into slices), on the calling thread otherwise (an inner product: the
// step runs it inside its own parallel region, and choose() must time what the step runs).
const float* rounded(const float* src, int rows, int cols, int ld, std::vector<float>& buf, bool fork) {
  buf.resize(std::size_t(rows) * std::size_t(ld));
  float* out = buf.data();
#pragma omp parallel for schedule(static) if (fork && double(rows) * cols > kMinParallelWork)
  for (int i = 0; i < rows; ++i) round_row(src + std::size_t(i) * ld, out + std::size_t(i) * ld, cols);
  return out;
}
}  // namespace

void Plan::call(const Shape& s, cpu::GemmLib lib, int m, int n, int k, const float* a, const float* b, float beta,
                float* c) const {
  if (round_) {
    // Autocast: the operands enter the product rounded (copies per thread: inner products run on
    // every thread at once).
    thread_local std::vector<float> ra, rb;
    a = rounded(a, s.ta ? k : m, s.ta ? m : k, s.lda, ra, !s.inner);
    b = rounded(b, s.tb ? n : k, s.tb ? k : n, s.ldb, rb, !s.inner);
  }
  // One slice per thread, each a single-threaded library call (cpu::split_gemm); inner products and
  // small ones are one call.
  cpu::split_gemm(s.ta, s.tb, m, n, k, a, s.lda, b, s.ldb, c, s.ldc, s.inner,
                  [&](int mm, int nn, const float* as, const float* bs, float* cs) {
                    cpu::sgemm(lib, s.ta, s.tb, mm, nn, k, 1.0f, as, s.lda, bs, s.ldb, beta, cs, s.ldc);
                  });
}

void Plan::call_mkl_bf16(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta,
                         float* c) const {
  // Sliced as the FP32 libraries are; each slice packs its operands to BF16 words (per thread).
  cpu::split_gemm(s.ta, s.tb, m, n, k, a, s.lda, b, s.ldb, c, s.ldc, s.inner,
                  [&](int mm, int nn, const float* as, const float* bs, float* cs) {
                    thread_local std::vector<std::uint16_t> a16, b16;
                    const int ar = s.ta ? k : mm, ac = s.ta ? mm : k, br = s.tb ? nn : k, bc = s.tb ? k : nn;
                    if (a16.size() < std::size_t(ar) * std::size_t(ac)) a16.resize(std::size_t(ar) * std::size_t(ac));
                    if (b16.size() < std::size_t(br) * std::size_t(bc)) b16.resize(std::size_t(br) * std::size_t(bc));
                    cpu::to_bf16_rows(as, ar, ac, s.lda, a16.data());
                    cpu::to_bf16_rows(bs, br, bc, s.ldb, b16.data());
                    mkl::gemm_bf16(s.ta, s.tb, mm, nn, k, 1.0f, a16.data(), ac, b16.data(), bc, beta, cs, s.ldc);
                  });
}

void Plan::call_candidate(const Candidate& cand, const Shape& s, int m, int n, int k, const float* a, const float* b,
                          float beta, float* c) const {
  if (cand.native_bf16) return call_native(s, m, n, k, a, b, beta, c);
  if (cand.mkl_bf16) return call_mkl_bf16(s, m, n, k, a, b, beta, c);
  if (cand.onednn3_bf16) return call_onednn3(s, m, n, k, a, b, beta, c);
  call(s, cand.lib, m, n, k, a, b, beta, c);
}

void Plan::run(std::size_t i, const float* a, const float* b, float beta, float* c) const {
  const Shape& s = choices_[i].shape;
  call_candidate(chosen_[i], s, s.m, s.n, s.k, a, b, beta, c);
}
double Plan::run_timed(std::size_t i, const float* a, const float* b, float beta, float* c) const {
  const double t0 = gtb::host_seconds();
  run(i, a, b, beta, c);
  return gtb::host_seconds() - t0;
}
void Plan::run_sized(std::size_t i, int m, int n, int k, const float* a, const float* b, float beta, float* c) const {
  call_candidate(chosen_[i], choices_[i].shape, m, n, k, a, b, beta, c);
}

namespace {
// The libraries' speed does not depend on the operands' values: BF16 and FP32 share a choice when
// they share the available candidates (the key names them; one that cannot run changes nothing).
std::string key_of(const Shape& s, const std::vector<Candidate>& cands, bool round) {
  std::ostringstream o;
  o << (round ? "round " : "");
  for (const Candidate& c : cands)
    if (c.available) o << c.name << '+';
  o << ' ' << s.ta << s.tb << ' ' << s.m << ' ' << s.n << ' ' << s.k << ' ' << s.lda << ' ' << s.ldb << ' ' << s.ldc << ' '
    << s.inner << ' ' << omp_get_max_threads();
  return o.str();
}
std::mutex g_mu;
std::map<std::string, Choice>& remembered() {
  static std::map<std::string, Choice> m;
  return m;
}
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The remembered choice of `key`, listed against this precision's candidates: one that cannot run
// here says why (a BF16 plan shares an FP32 one where the native BF16 library is absent).
std::optional<Choice> recall(const std::string& key, const Shape& s, const std::vector<Candidate>& cands) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = remembered().find(key);
  if (it == remembered().end()) return std::nullopt;
  const Choice& was = it->second;
  Choice ch;
  ch.shape = s;
  for (const Candidate& cand : cands) {
    auto t = std::find_if(was.tried.begin(), was.tried.end(), [&](const Choice::Tried& x) { return x.name == cand.name; });
    if (t != was.tried.end()) {
      if (t->name == was.tried[std::size_t(was.chosen)].name) ch.chosen = int(ch.tried.size());
      ch.tried.push_back(*t);
    } else {
      Choice::Tried u;
      u.name = cand.name;
      u.available = false;
      u.detail = cand.why_not;
      ch.tried.push_back(u);
    }
  }
  return ch;
}

// Freivalds' check in float64: C r against A (B r) for a random r, O(mk + kn + mn).
struct Freivalds {
  std::vector<double> r, want, bound;
  Freivalds(const Shape& s, const std::vector<float>& a, const std::vector<float>& b)
      : r(std::size_t(s.n)), want(std::size_t(s.m), 0.0), bound(std::size_t(s.m), 0.0) {
    std::vector<double> br_(std::size_t(s.k), 0.0), babs(std::size_t(s.k), 0.0);
    fill_uniform(r.data(), r.size(), 13);
    auto A = [&](int i, int p) { return double(s.ta ? a[std::size_t(p) * s.lda + i] : a[std::size_t(i) * s.lda + p]); };
    auto B = [&](int p, int j) { return double(s.tb ? b[std::size_t(j) * s.ldb + p] : b[std::size_t(p) * s.ldb + j]); };
    for (int p = 0; p < s.k; ++p)
      for (int j = 0; j < s.n; ++j) {
        br_[std::size_t(p)] += B(p, j) * r[std::size_t(j)];
        babs[std::size_t(p)] += std::fabs(B(p, j) * r[std::size_t(j)]);
      }
    for (int i = 0; i < s.m; ++i)
      for (int p = 0; p < s.k; ++p) {
        want[std::size_t(i)] += A(i, p) * br_[std::size_t(p)];
        bound[std::size_t(i)] += std::fabs(A(i, p)) * babs[std::size_t(p)];
      }
  }
  // The worst row's error and what it is allowed (0 and 1 where every row is within): FP32
  // accumulation over k terms, a few float epsilons times sqrt(k) of the magnitude bound.
  std::pair<double, double> error(const Shape& s, const std::vector<float>& c) const {
    double err = 0, allowed = 0, worst = -1;
    for (int i = 0; i < s.m; ++i) {
      double got = 0;
      for (int j = 0; j < s.n; ++j) got += double(c[std::size_t(i) * s.ldc + j]) * r[std::size_t(j)];
      const double e = std::fabs(got - want[std::size_t(i)]);
      const double lim = 8.0 * std::ldexp(1.0, -24) * std::sqrt(double(s.k)) * bound[std::size_t(i)] + 1e-30;
      if (!(e <= lim) && !(worst >= 0 && err / allowed >= e / lim)) err = e, allowed = lim, worst = i;
    }
    if (worst < 0) allowed = 1, err = 0;
    return {err, allowed};
  }
};

// A verified candidate's seconds per call: the verifying call was the warm-up (first touch, a
// library's JIT). A call of 1 ms or more is timed twice, a shorter one in three samples of >= 0.5 ms;
// the fastest sample counts, since other work on the machine only ever adds time. Choosing costs
// every candidate about three of the site's calls, which is most of a short run's set-up.
template <class Call>
double fastest_seconds(const Call& run_once) {
  double t0 = now();
  run_once();
  const double one = std::max(now() - t0, 1e-7);
  double fastest = one;
  const int reps = one >= 1e-3 ? 1 : std::max(1, int(0.5e-3 / one));
  for (int k = 0; k < (one >= 1e-3 ? 1 : 3); ++k) {
    t0 = now();
    for (int q = 0; q < reps; ++q) run_once();
    fastest = std::min(fastest, (now() - t0) / reps);
  }
  return fastest;
}
}  // namespace

int pick(const std::vector<Choice::Tried>& tried) {
  int best = -1;
  for (std::size_t i = 0; i < tried.size(); ++i) {
    const Choice::Tried& t = tried[i];
    if (!t.available || !t.verified) continue;
    if (best < 0 || cpu::clearly_faster(t.seconds, tried[std::size_t(best)].seconds)) best = int(i);
  }
  return best;
}

void Plan::choose(const std::vector<Shape>& shapes, bool bf16, bool round_operands) {
  choose(shapes, bf16, round_operands, this_machine());
}

void Plan::choose(const std::vector<Shape>& shapes, bool bf16, bool round_operands, const Machine& machine) {
  choices_.clear();
  chosen_.clear();
  round_ = bf16 && round_operands;
  const std::vector<Candidate> cands = candidates(bf16, machine);
  for (const Shape& s : shapes) {
    if (s.m < 1 || s.n < 1 || s.k < 1) throw std::invalid_argument("gemm plan: site " + s.site + " has an empty shape");
    const std::string key = key_of(s, cands, round_);
    if (std::optional<Choice> was = recall(key, s, cands)) {
      choices_.push_back(*was);
      continue;
    }
    // Operands with the site's leading dimensions, random (never zeros). For BF16 the reference
    // (and a step that hands over rounded operands) uses them rounded; a rounding step gets them in
    // FP32 and must round them itself.
    const std::size_t ar = s.ta ? s.k : s.m, br = s.tb ? s.n : s.k;
    std::vector<float> a(ar * std::size_t(s.lda)), b(br * std::size_t(s.ldb)), c(std::size_t(s.m) * std::size_t(s.ldc));
    fill_uniform(a.data(), a.size(), 11);
    fill_uniform(b.data(), b.size(), 12);
    std::vector<float> in_a = a, in_b = b;
    if (bf16) {
      for (float& v : a) v = from_bf16(to_bf16(v));
      for (float& v : b) v = from_bf16(to_bf16(v));
      if (!round_) in_a = a, in_b = b;
    }
    const Freivalds check(s, a, b);
    Choice ch;
    ch.shape = s;
    for (const Candidate& cand : cands) {
      Choice::Tried t;
      t.name = cand.name;
      std::string not_here = cand.why_not;
      if (!cand.available || ((cand.native_bf16 || cand.onednn3_bf16) && !native_bf16_serves(s, not_here))) {
        t.available = false;
        t.detail = not_here;
        ch.tried.push_back(t);
        continue;
      }
      auto run_once = [&] { call_candidate(cand, s, s.m, s.n, s.k, in_a.data(), in_b.data(), 0.0f, c.data()); };
      std::fill(c.begin(), c.end(), std::nanf(""));
      run_once();
      const auto [err, allowed] = check.error(s, c);
      t.verified = err <= allowed;
      if (!t.verified) {
        std::ostringstream o;
        o << "wrong result on " << s.site << ": error " << err << " over " << allowed;
        t.detail = o.str();
        ch.tried.push_back(t);
        continue;
      }
      t.seconds = fastest_seconds(run_once);
      ch.tried.push_back(t);
    }
    const int best = pick(ch.tried);
    if (best < 0) throw std::runtime_error("gemm plan: no library computed site " + s.site + " correctly");
    ch.chosen = best;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      remembered()[key] = ch;
    }
    choices_.push_back(ch);
  }
  for (const Choice& ch : choices_) {
    const std::string& name = ch.tried[std::size_t(ch.chosen)].name;
    chosen_.push_back(cands.front());
    for (const Candidate& c : cands)
      if (c.name == name) chosen_.back() = c;
  }
}

std::string Plan::summary() const {
  std::ostringstream o;
  for (std::size_t i = 0; i < choices_.size(); ++i)
    o << (i ? "; " : "") << choices_[i].shape.site << ": " << choices_[i].tried[std::size_t(choices_[i].chosen)].name;
  // A candidate no site could run is named once, with its reason.
  std::map<std::string, std::string> nowhere;
  std::map<std::string, bool> ran;
  for (const Choice& ch : choices_)
    for (const Choice::Tried& t : ch.tried) {
      if (t.available) ran[t.name] = true;
      else nowhere.emplace(t.name, t.detail);
    }
  for (const auto& [name, why] : nowhere)
    if (!ran.count(name)) o << " (" << name << " not available: " << why << ")";
  return o.str();
}

}  // namespace gtb::cpu::plan
