// Inputs and float64 references of the build-flag workloads (the math of flag_math.h in double).
#include "kernels/pitfalls/reference.h"

#include <cmath>
#include <stdexcept>

#include "kernels/common/random.h"

namespace gtb::pitfalls {

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-6;
// GELU's derivative sums terms of order 1 that cancel near its minimum, so its float rounding is
// absolute, not relative to the (small) result.
constexpr double kActAtol = 1e-5;

double gelu(double v) { return mlp::act_forward(mlp::Act::gelu, v); }

// Row loss and gradient of softmax cross-entropy in double, the same three passes as the float code.
double xent_ref(const float* logits, int label, double* grad, int classes) {
  return mlp::softmax_xent_row<double>(
      classes, label, 1.0, [&](int j) { return double(logits[j]); }, [&](int j, double g) { grad[j] = g; });
}

}  // namespace

FlagData make_flag_data(FlagWork w, std::size_t n, std::uint64_t seed) {
  if (n == 0 || n % kReduceBlock)
    throw std::invalid_argument("build-flag workloads need n > 0 and a multiple of " + std::to_string(kReduceBlock) +
                                ", got " + std::to_string(n));
  FlagData d;
  d.work = w;
  d.n = n;
  d.x.resize(n);
  // [-3, 3] covers GELU's curved part and both tails; logits of that spread give peaked softmaxes.
  fill_uniform(d.x.data(), n, seed, -3.0f, 3.0f);
  switch (w) {
    case FlagWork::chain:
      d.ref.resize(n);
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) d.ref[i] = gelu(double(kFlagChain.scale) * d.x[i] + double(kFlagChain.bias));
      break;
    case FlagWork::act: {
      d.rows = n / kActWidth;
      d.bias.resize(kActWidth);
      d.g.resize(n);
      fill_uniform(d.bias.data(), kActWidth, seed + 1, -0.5f, 0.5f);
      fill_uniform(d.g.data(), n, seed + 2, -1.0f, 1.0f);
      d.ref.resize(n);
      d.ref2.resize(n);
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) {
        const double v = double(d.x[i]) + double(d.bias[i % kActWidth]);
        d.ref[i] = gelu(v);
        d.ref2[i] = double(d.g[i]) * mlp::act_derivative(mlp::Act::gelu, v);
      }
      break;
    }
    case FlagWork::xent: {
      d.rows = n / kXentClasses;
      d.labels.resize(d.rows);
      for (std::size_t r = 0; r < d.rows; ++r) d.labels[r] = int(mix64(seed + r) % kXentClasses);
      d.ref.resize(n);
      d.ref2.resize(d.rows);
#pragma omp parallel for schedule(static)
      for (std::size_t r = 0; r < d.rows; ++r)
        d.ref2[r] = xent_ref(d.x.data() + r * kXentClasses, d.labels[r], d.ref.data() + r * kXentClasses, kXentClasses);
      break;
    }
    case FlagWork::reduce:
      d.ref.assign(n / kReduceBlock, 0.0);
#pragma omp parallel for schedule(static)
      for (std::size_t b = 0; b < n / kReduceBlock; ++b)
        for (std::size_t i = b * kReduceBlock; i < (b + 1) * kReduceBlock; ++i) d.ref[b] += double(d.x[i]) * double(d.x[i]);
      break;
  }
  return d;
}

FlagCheck check_flag_output(const FlagData& d, const float* out, const float* out2) {
  FlagCheck c;
  if (!out || (d.out2_size() && !out2)) {
    c.detail = "missing output";
    return c;
  }
  const double atol = d.work == FlagWork::act ? kActAtol : kAtol;
  const ErrorReport a = compare_elementwise(out, d.ref.data(), d.out_size(), kRtol, atol);
  c.ok = a.ok;
  c.max_abs_err = a.max_abs_err;
  c.rel_norm_err = a.rel_fro_err;
  c.detail = a.detail;
  if (d.out2_size()) {
    const ErrorReport b = compare_elementwise(out2, d.ref2.data(), d.out2_size(), kRtol, atol);
    c.ok = c.ok && b.ok;
    c.max_abs_err = std::fmax(c.max_abs_err, b.max_abs_err);
    c.rel_norm_err = std::fmax(c.rel_norm_err, b.rel_fro_err);
    c.detail += "; second output: " + b.detail;
  }
  return c;
}

}  // namespace gtb::pitfalls
