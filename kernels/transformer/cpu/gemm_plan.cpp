// The CPU transformer step's per-shape GEMM choice: verify each library on the shape, time it, keep the fastest.
#include "kernels/transformer/cpu/gemm_plan.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "kernels/common/cpu/parallel.h"
#include "kernels/common/random.h"
#include "kernels/transformer/block.h"

namespace gtb::xfmr::cpu_gemm {

std::vector<Candidate> candidates(bool bf16) {
  std::vector<Candidate> out;
  for (const auto& [lib, name] : cpu::kGemmLibNames) {
    Candidate c;
    c.name = name;
    c.lib = lib;
    c.available = cpu::gemm_lib_available(lib);
    if (!c.available) c.why_not = std::string(name) + " is not built in";
    out.push_back(c);
  }
  (void)bf16;  // the FP32 libraries serve both precisions (operands pre-rounded for BF16)
  return out;
}

void Plan::call(const Shape& s, cpu::GemmLib lib, int m, int n, int k, const float* a, const float* b, float beta,
                float* c) const {
  // One slice per thread, each a single-threaded library call (cpu::split_gemm); inner products and
  // small ones are one call.
  cpu::split_gemm(s.ta, s.tb, m, n, k, a, s.lda, b, s.ldb, c, s.ldc, s.inner,
                  [&](int mm, int nn, const float* as, const float* bs, float* cs) {
                    cpu::sgemm(lib, s.ta, s.tb, mm, nn, k, 1.0f, as, s.lda, bs, s.ldb, beta, cs, s.ldc);
                  });
}

void Plan::run(std::size_t i, const float* a, const float* b, float beta, float* c) const {
  const Shape& s = choices_[i].shape;
  call(s, lib_[i], s.m, s.n, s.k, a, b, beta, c);
}
void Plan::run_sized(std::size_t i, int m, int n, int k, const float* a, const float* b, float beta, float* c) const {
  call(choices_[i].shape, lib_[i], m, n, k, a, b, beta, c);
}

namespace {
// The libraries' speed does not depend on the operands' values: BF16 and FP32 share a choice when
// they share the candidates (the key names them).
std::string key_of(const Shape& s, const std::vector<Candidate>& cands) {
  std::ostringstream o;
  for (const Candidate& c : cands) o << c.name << (c.available ? '+' : '-');
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
}  // namespace

void Plan::choose(const std::vector<Shape>& shapes, bool bf16) {
  choices_.clear();
  lib_.clear();
  const std::vector<Candidate> cands = candidates(bf16);
  for (const Shape& s : shapes) {
    if (s.m < 1 || s.n < 1 || s.k < 1) throw std::invalid_argument("gemm plan: site " + s.site + " has an empty shape");
    const std::string key = key_of(s, cands);
    {
      std::lock_guard<std::mutex> lock(g_mu);
      auto it = remembered().find(key);
      if (it != remembered().end()) {
        Choice ch = it->second;
        ch.shape = s;
        choices_.push_back(ch);
        continue;
      }
    }
    // Operands with the site's leading dimensions, random (never zeros), BF16-rounded for BF16.
    const std::size_t ar = s.ta ? s.k : s.m, br = s.tb ? s.n : s.k;
    std::vector<float> a(ar * std::size_t(s.lda)), b(br * std::size_t(s.ldb)), c(std::size_t(s.m) * std::size_t(s.ldc));
    fill_uniform(a.data(), a.size(), 11);
    fill_uniform(b.data(), b.size(), 12);
    if (bf16) {
      for (float& v : a) v = round_bf16(v);
      for (float& v : b) v = round_bf16(v);
    }
    // Freivalds' check in float64: C r against A (B r) for a random r, O(mk + kn + mn).
    std::vector<double> r(std::size_t(s.n)), br_(std::size_t(s.k), 0.0), babs(std::size_t(s.k), 0.0),
        want(std::size_t(s.m), 0.0), bound(std::size_t(s.m), 0.0);
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
    Choice ch;
    ch.shape = s;
    int best = -1;
    for (const Candidate& cand : cands) {
      Choice::Tried t;
      t.name = cand.name;
      if (!cand.available) {
        t.detail = cand.why_not;
        ch.tried.push_back(t);
        continue;
      }
      std::fill(c.begin(), c.end(), std::nanf(""));
      call(s, cand.lib, s.m, s.n, s.k, a.data(), b.data(), 0.0f, c.data());
      // FP32 accumulation over k terms: a few float epsilons times sqrt(k) of the magnitude bound.
      double err = 0, allowed = 0, worst = -1;
      for (int i = 0; i < s.m; ++i) {
        double got = 0;
        for (int j = 0; j < s.n; ++j) got += double(c[std::size_t(i) * s.ldc + j]) * r[std::size_t(j)];
        const double e = std::fabs(got - want[std::size_t(i)]);
        const double lim = 8.0 * std::ldexp(1.0, -24) * std::sqrt(double(s.k)) * bound[std::size_t(i)] + 1e-30;
        if (!(e <= lim) && !(worst >= 0 && err / allowed >= e / lim)) err = e, allowed = lim, worst = i;
      }
      if (worst < 0) allowed = 1, err = 0;
      t.verified = err <= allowed;
      if (!t.verified) {
        std::ostringstream o;
        o << "wrong result on " << s.site << ": error " << err << " over " << allowed;
        t.detail = o.str();
        ch.tried.push_back(t);
        continue;
      }
      // Timed: the verifying call was the warm-up (first touch, a library's JIT). A call of 1 ms or
      // more is timed twice, a shorter one in three samples of >= 0.5 ms; the fastest sample
      // counts, since other work on the machine only ever adds time. Choosing costs every
      // candidate about three of the site's calls, which is most of a short run's set-up.
      double t0 = now();
      call(s, cand.lib, s.m, s.n, s.k, a.data(), b.data(), 0.0f, c.data());
      const double one = std::max(now() - t0, 1e-7);
      double fastest = one;
      const int reps = one >= 1e-3 ? 1 : std::max(1, int(0.5e-3 / one));
      for (int k = 0; k < (one >= 1e-3 ? 1 : 3); ++k) {
        t0 = now();
        for (int q = 0; q < reps; ++q) call(s, cand.lib, s.m, s.n, s.k, a.data(), b.data(), 0.0f, c.data());
        fastest = std::min(fastest, (now() - t0) / reps);
      }
      t.seconds = fastest;
      ch.tried.push_back(t);
      const int idx = int(ch.tried.size()) - 1;
      if (best < 0 || t.seconds < 0.95 * ch.tried[std::size_t(best)].seconds) best = idx;
    }
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
    lib_.push_back(cpu::GemmLib::openblas);
    for (const auto& [lib, n] : cpu::kGemmLibNames)
      if (name == n) lib_.back() = lib;
  }
}

std::string Plan::summary() const {
  std::ostringstream o;
  for (std::size_t i = 0; i < choices_.size(); ++i)
    o << (i ? "; " : "") << choices_[i].shape.site << ": " << choices_[i].tried[std::size_t(choices_[i].chosen)].name;
  return o.str();
}

}  // namespace gtb::xfmr::cpu_gemm
