// The train family's shared host pieces: initial parameters, the data set, and the float64 checks of
// the MLP step (a from-scratch reference for small models, and a layer-local verifier, sampled rows
// + random probes, cheap enough to run before every timed case).
#include "kernels/train/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "kernels/common/random.h"

namespace gtb::mlp {

std::vector<float> init_params(const Config& c, const Layout& lay) {
  std::vector<float> p(lay.total, 0.0f);
  for (int l = 0; l < lay.layers(); ++l) {
    const auto in = std::size_t(lay.dims[std::size_t(l)]), out = std::size_t(lay.dims[std::size_t(l) + 1]);
    const float bound = 1.0f / std::sqrt(float(in));
    fill_uniform(p.data() + lay.w[std::size_t(l)], in * out, c.seed + 2 * std::uint64_t(l), -bound, bound);
    fill_uniform(p.data() + lay.b[std::size_t(l)], out, c.seed + 2 * std::uint64_t(l) + 1, -bound, bound);
  }
  return p;
}

Dataset make_clusters(int rows, int input, int classes, std::uint64_t seed, float noise) {
  if (rows < 1 || input < 1 || classes < 2) throw std::invalid_argument("make_clusters: bad shape");
  Dataset d;
  d.rows = rows, d.input = input, d.classes = classes;
  std::vector<float> centres(std::size_t(classes) * std::size_t(input));
  fill_normal(centres.data(), centres.size(), seed, 1.0f);
  d.x.resize(std::size_t(rows) * std::size_t(input));
  fill_normal(d.x.data(), d.x.size(), seed + 1, noise);
  d.y.resize(std::size_t(rows));
  for (int r = 0; r < rows; ++r) {
    const int k = r % classes;
    d.y[std::size_t(r)] = k;
    float* row = d.x.data() + std::size_t(r) * std::size_t(input);
    const float* cen = centres.data() + std::size_t(k) * std::size_t(input);
    for (int i = 0; i < input; ++i) row[i] += cen[i];
  }
  return d;
}

namespace {
using dvec = std::vector<double>;

struct Fwd {
  std::vector<dvec> z, a;  // z[l-1] = Z_l (with bias); a[l] = A_l, a[0] = x
};

Fwd ref_forward(const Config& c, const Layout& lay, const dvec& p, const float* x, int batch) {
  const int L = lay.layers();
  const auto B = std::size_t(batch);
  Fwd f;
  f.a.emplace_back(x, x + B * std::size_t(c.input));
  for (int l = 1; l <= L; ++l) {
    const auto in = std::size_t(lay.dims[std::size_t(l - 1)]), out = std::size_t(lay.dims[std::size_t(l)]);
    const double* W = p.data() + lay.w[std::size_t(l - 1)];
    const double* b = p.data() + lay.b[std::size_t(l - 1)];
    const dvec& A = f.a.back();
    dvec Z(B * out);
    for (std::size_t r = 0; r < B; ++r)
      for (std::size_t j = 0; j < out; ++j) {
        double s = b[j];
        for (std::size_t i = 0; i < in; ++i) s += A[r * in + i] * W[i * out + j];
        Z[r * out + j] = s;
      }
    f.z.push_back(Z);
    if (l < L) {
      dvec Anext(B * out);
      for (std::size_t k = 0; k < Anext.size(); ++k) Anext[k] = act_forward<double>(c.act, Z[k]);
      f.a.push_back(Anext);
    }
  }
  return f;
}

double xent_rows(const dvec& logits, const int* labels, int batch, int C, double scale, dvec* grad) {
  double loss = 0;
  if (grad) grad->assign(std::size_t(batch) * std::size_t(C), 0.0);
  for (int r = 0; r < batch; ++r) {
    const double* zr = logits.data() + std::size_t(r) * std::size_t(C);
    double* gr = grad ? grad->data() + std::size_t(r) * std::size_t(C) : nullptr;
    loss += softmax_xent_row<double>(
        C, labels[r], scale, [&](int j) { return zr[j]; },
        [&](int j, double g) {
          if (gr) gr[j] = g;
        });
  }
  return loss / double(batch);
}

std::string fmt(const char* f, double a, double b, double c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// Accumulates one error against its allowance into the result.
struct Judge {
  VerifyResult& res;
  // `what` names the value; it is called only on a failure (the checks run millions of times).
  template <class Label>
  bool check(double got, double ref, double allowed, const Label& what) {
    const double err = std::fabs(got - ref);
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
    if (!(ratio <= 1.0) || !std::isfinite(got)) {
      if (res.ok) res.detail = what() + fmt(": got %.9g, expected %.9g (allowed error %.3g)", got, ref, allowed);
      res.ok = false;
      res.worst = INFINITY;
      return false;
    }
    res.worst = std::max(res.worst, ratio);
    return true;
  }
};

std::vector<int> sample_rows(int rows) {
  std::set<int> s = {0, rows / 3, (2 * rows) / 3, rows - 1};
  return {s.begin(), s.end()};
}

// Probe vector with entries of magnitude 0.5..1.5 and random sign, so no element is ignored.
dvec probe(std::size_t n, std::uint64_t seed) {
  dvec v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = uniform01(seed, i);
    v[i] = u < 0.5 ? -(0.5 + 2 * u) : (0.5 + 2 * (u - 0.5));
  }
  return v;
}
}  // namespace

double reference_loss(const Config& c, const std::vector<double>& params, const float* x, const int* labels,
                      int batch) {
  const Layout lay(c);
  const Fwd f = ref_forward(c, lay, params, x, batch);
  return xent_rows(f.z.back(), labels, batch, c.classes, 1.0, nullptr);
}

RefStep reference_step(const Config& c, const std::vector<double>& params, const std::vector<double>& opt, int t,
                       const float* x, const int* labels, int batch) {
  const Layout lay(c);
  const int L = lay.layers();
  const auto B = std::size_t(batch);
  if (params.size() != lay.total) throw std::invalid_argument("reference_step: params size");
  const Fwd f = ref_forward(c, lay, params, x, batch);
  RefStep out;
  dvec dz;
  out.loss = xent_rows(f.z.back(), labels, batch, c.classes, 1.0 / double(batch), &dz);
  out.grads.assign(lay.total, 0.0);
  for (int l = L; l >= 1; --l) {
    const auto in = std::size_t(lay.dims[std::size_t(l - 1)]), o = std::size_t(lay.dims[std::size_t(l)]);
    const dvec& A = f.a[std::size_t(l - 1)];
    double* dW = out.grads.data() + lay.w[std::size_t(l - 1)];
    double* db = out.grads.data() + lay.b[std::size_t(l - 1)];
    for (std::size_t r = 0; r < B; ++r)
      for (std::size_t j = 0; j < o; ++j) {
        const double g = dz[r * o + j];
        db[j] += g;
        for (std::size_t i = 0; i < in; ++i) dW[i * o + j] += A[r * in + i] * g;
      }
    if (l == 1) break;
    const double* W = params.data() + lay.w[std::size_t(l - 1)];
    const dvec& Zp = f.z[std::size_t(l - 2)];
    dvec dprev(B * in);
    for (std::size_t r = 0; r < B; ++r)
      for (std::size_t i = 0; i < in; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < o; ++j) s += dz[r * o + j] * W[i * o + j];
        dprev[r * in + i] = s * act_derivative<double>(c.act, Zp[r * in + i]);
      }
    dz.swap(dprev);
  }
  out.params_after = params;
  out.opt_after = opt;
  const std::size_t n = lay.total;
  if (c.optim == Optim::sgd) {
    for (std::size_t i = 0; i < n; ++i)
      sgd_momentum<double>(out.params_after[i], out.opt_after[i], out.grads[i], c.lr, c.momentum);
  } else {
    double c1, c2;
    adam_corrections<double>(t + 1, c.beta1, c.beta2, c1, c2);
    for (std::size_t i = 0; i < n; ++i)
      adam<double>(out.params_after[i], out.opt_after[i], out.opt_after[n + i], out.grads[i], c.lr, c.beta1, c.beta2,
                   c.eps, c1, c2);
  }
  return out;
}

namespace {
constexpr double kTiny = 1e-30;

// M v for a row-major rows x cols M, in double, with sum_j |M_ij v_j| beside each row's value: a
// probe's product and the magnitude its error bound scales with.
struct Probed {
  dvec value, magnitude;
};
Probed times(const float* M, std::size_t rows, std::size_t cols, const dvec& v) {
  Probed p{dvec(rows), dvec(rows)};
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      p.value[i] += double(M[i * cols + j]) * v[j];
      p.magnitude[i] += std::fabs(double(M[i * cols + j]) * v[j]);
    }
  return p;
}

// The checks of one layer l of a verified step: its Z, A (or the loss gradient at the top), the
// layer below's dZ and its gradients, each a function that returns false at the first wrong value
// (the Judge has recorded it). a_prev is A_{l-1} (the input at l = 1), z and dz the backend's Z_l
// and dZ_l.
struct LayerCheck {
  const StepView& v;
  Judge& judge;
  int l;
  std::size_t B, in, out;
  const std::vector<int>& rows;
  const float *W, *b;
  const std::vector<float>& a_prev;
  const std::vector<float>& z;
  const std::vector<float>& dz;
  std::string tag;

  // Row i of a probed result against ref + sum_k a[k * stride] p_k (p a probe's product), within rtol
  // of the magnitudes of both sides.
  template <class Label>
  bool probe_matches(const Probed& got, std::size_t i, const float* a, std::size_t stride, const Probed& p, double ref,
                     double bound, const Label& label) const {
    for (std::size_t k = 0; k < p.value.size(); ++k) {
      ref += double(a[k * stride]) * p.value[k];
      bound += std::fabs(double(a[k * stride])) * p.magnitude[k];
    }
    return judge.check(got.value[i], ref, v.rtol * (bound + got.magnitude[i]) + kTiny, label);
  }

  // Z_l rows, elementwise (W is walked row by row: the whole row of Z accumulates at once).
  bool z_rows() const {
    for (int r : rows) {
      dvec s(out), bound(out);
      for (std::size_t j = 0; j < out; ++j) s[j] = b[j], bound[j] = std::fabs(b[j]);
      for (std::size_t i = 0; i < in; ++i) {
        const double ai = a_prev[std::size_t(r) * in + i];
        const float* wi = W + i * out;
        for (std::size_t j = 0; j < out; ++j) {
          const double t = ai * wi[j];
          s[j] += t;
          bound[j] += std::fabs(t);
        }
      }
      for (std::size_t j = 0; j < out; ++j)
        if (!judge.check(z[std::size_t(r) * out + j], s[j], v.rtol * bound[j] + kTiny,
                         [&] { return tag + "Z[" + std::to_string(r) + "," + std::to_string(j) + "]"; }))
          return false;
    }
    return true;
  }

  // Z_l all rows through a probe: Z v = A (W v) + (b . v).
  bool z_probe() const {
    const dvec pv = probe(out, 1000 + std::uint64_t(l));
    const Probed wv = times(W, in, out, pv), bv = times(b, 1, out, pv), zv = times(z.data(), B, out, pv);
    for (std::size_t r = 0; r < B; ++r)
      if (!probe_matches(zv, r, a_prev.data() + r * in, 1, wv, bv.value[0], bv.magnitude[0],
                         [&] { return tag + "Z probe, row " + std::to_string(r); }))
        return false;
    return true;
  }

  // A_l = act(Z_l), every element.
  bool activations(const std::vector<float>& a_next) const {
    for (std::size_t k = 0; k < B * out; ++k) {
      const double zz = z[k];
      if (!judge.check(a_next[k], act_forward<double>(v.cfg->act, zz), v.rtol * std::fabs(zz) + kTiny,
                       [&] { return tag + "A[" + std::to_string(k / out) + "," + std::to_string(k % out) + "]"; }))
        return false;
    }
    return true;
  }

  // dZ_L from the logits, every element; the loss gradient is bounded by scale.
  bool loss_gradient() const {
    dvec g;
    const double scale = v.grad_scale / double(v.norm_rows);
    dvec logits(z.begin(), z.end());
    xent_rows(logits, v.labels, v.rows, int(out), scale, &g);
    for (std::size_t k = 0; k < B * out; ++k)
      if (!judge.check(dz[k], g[k], v.rtol * scale + kTiny, [&] {
            return tag + "dZ (loss gradient) [" + std::to_string(k / out) + "," + std::to_string(k % out) + "]";
          }))
        return false;
    return true;
  }

  // dZ_{l-1} rows = (dZ_l W_l^T) (.) act'(Z_{l-1}); dZ_l is only available now.
  bool dz_below(const std::vector<float>& z_prev, const std::vector<float>& dz_prev) const {
    for (int r : rows)
      for (std::size_t i = 0; i < in; ++i) {
        double s = 0, bound = 0;
        for (std::size_t j = 0; j < out; ++j) {
          const double t = double(dz[std::size_t(r) * out + j]) * W[i * out + j];
          s += t;
          bound += std::fabs(t);
        }
        const double d = act_derivative<double>(v.cfg->act, double(z_prev[std::size_t(r) * in + i]));
        if (!judge.check(dz_prev[std::size_t(r) * in + i], s * d, v.rtol * bound * std::fabs(d) + kTiny, [&] {
              return "layer " + std::to_string(l - 1) + " dZ[" + std::to_string(r) + "," + std::to_string(i) + "]";
            }))
          return false;
      }
    return true;
  }

  // Gradients: db exactly, dW through a probe.
  bool gradients(const float* dW, const float* db) const {
    for (std::size_t j = 0; j < out; ++j) {
      double s = 0, bound = 0;
      for (std::size_t r = 0; r < B; ++r) s += dz[r * out + j], bound += std::fabs(double(dz[r * out + j]));
      if (!judge.check(db[j], s, v.rtol * bound + kTiny, [&] { return tag + "db[" + std::to_string(j) + "]"; }))
        return false;
    }
    const dvec pv = probe(out, 2000 + std::uint64_t(l));
    const Probed dzv = times(dz.data(), B, out, pv), dwv = times(dW, in, out, pv);
    for (std::size_t i = 0; i < in; ++i)
      if (!probe_matches(dwv, i, a_prev.data() + i, in, dzv, 0, 0,
                         [&] { return tag + "dW probe, row " + std::to_string(i); }))
        return false;
    return true;
  }
};

// The update, every parameter, from the gradients the backend produced.
bool update_correct(const StepView& v, const Layout& lay, Judge& judge) {
  const Config& c = *v.cfg;
  const std::size_t n = lay.total;
  const double urtol = 1e-5;
  if (c.optim == Optim::sgd) {
    for (std::size_t i = 0; i < n; ++i) {
      double w = v.params_before[i], m = v.opt_before[i];
      const double g = double(v.grads[i]) / v.grad_scale;
      sgd_momentum<double>(w, m, g, c.lr, c.momentum);
      if (!judge.check(v.params_after[i], w, urtol * (std::fabs(v.params_before[i]) + c.lr * std::fabs(m)) + kTiny,
                       [&] { return "SGD update of param " + std::to_string(i); }))
        return false;
    }
    return true;
  }
  double c1, c2;
  adam_corrections<double>(v.t_before + 1, c.beta1, c.beta2, c1, c2);
  for (std::size_t i = 0; i < n; ++i) {
    double w = v.params_before[i], m = v.opt_before[i], s = v.opt_before[n + i];
    const double g = double(v.grads[i]) / v.grad_scale;
    adam<double>(w, m, s, g, c.lr, c.beta1, c.beta2, c.eps, c1, c2);
    const double step = std::fabs(w - v.params_before[i]);
    if (!judge.check(v.params_after[i], w, urtol * (std::fabs(v.params_before[i]) + step) + 1e-3 * step + kTiny,
                     [&] { return "Adam update of param " + std::to_string(i); }))
      return false;
  }
  return true;
}
}  // namespace

VerifyResult verify_step(const StepView& v) {
  VerifyResult res;
  Judge judge{res};
  const Config& c = *v.cfg;
  const Layout lay(c);
  const int L = lay.layers();
  const auto B = std::size_t(v.rows);
  const std::vector<int> rows = sample_rows(v.rows);
  if (v.step_skipped) {
    // The tensors of an overflowed step hold infinities by definition; what matters is that no
    // parameter moved.
    for (std::size_t i = 0; i < lay.total; ++i)
      if (!judge.check(v.params_after[i], v.params_before[i], kTiny,
                       [&] { return "skipped step changed param " + std::to_string(i); }))
        return res;
    res.detail = "step skipped on overflow; parameters unchanged";
    return res;
  }
  std::vector<float> a_prev(v.x, v.x + B * std::size_t(c.input));
  std::vector<float> z_prev, dz_prev;
  // Layers are visited in forward order keeping only the previous layer's Z and dZ: dZ_{l-1} is
  // checked once dZ_l is at hand.
  for (int l = 1; l <= L && res.ok; ++l) {
    const auto in = std::size_t(lay.dims[std::size_t(l - 1)]), out = std::size_t(lay.dims[std::size_t(l)]);
    const std::vector<float> z = v.fetch(Tensor::z, l);
    const std::vector<float> dz = v.fetch(Tensor::dz, l);
    if (z.size() != B * out || dz.size() != B * out) {
      res.ok = false;
      res.detail = "layer " + std::to_string(l) + ": tensor has the wrong size";
      return res;
    }
    const LayerCheck lc{v, judge, l, B, in, out, rows,
                        v.params_before + lay.w[std::size_t(l - 1)], v.params_before + lay.b[std::size_t(l - 1)],
                        a_prev, z, dz, "layer " + std::to_string(l) + " "};
    if (!lc.z_rows() || !lc.z_probe()) return res;
    std::vector<float> a_next;
    if (l < L) {
      a_next = v.fetch(Tensor::a, l);
      if (!lc.activations(a_next)) return res;
    } else if (!lc.loss_gradient()) {
      return res;
    }
    if (l >= 2 && !lc.dz_below(z_prev, dz_prev)) return res;
    // The gradients only when they hold this micro-batch alone.
    if (v.grads_single_micro &&
        !lc.gradients(v.grads + lay.w[std::size_t(l - 1)], v.grads + lay.b[std::size_t(l - 1)]))
      return res;
    z_prev = z;
    dz_prev = dz;
    if (l < L) a_prev.swap(a_next);
  }
  if (!update_correct(v, lay, judge)) return res;
  if (res.ok)
    res.detail = fmt("step verified in float64: sampled rows + probes, worst error %.3g of allowed (rtol %.1e)",
                     res.worst, v.rtol, 0);
  return res;
}

}  // namespace gtb::mlp
