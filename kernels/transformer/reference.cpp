// The transformer step's float64 reference (DGEMM for the matrix products, plain loops for the rest)
// and the check of a backend's step against it.
#include "kernels/transformer/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/random.h"

namespace gtb::xfmr {

using dvec = std::vector<double>;

std::vector<float> init_params(const Config& c, const Layout& lay) {
  c.validate();
  std::vector<float> p(lay.total, 0.0f);
  const float bd = 1.0f / std::sqrt(float(c.d_model)), bf = 1.0f / std::sqrt(float(c.ffn()));
  std::uint64_t s = c.seed;
  for (int l = 0; l < c.layers; ++l)
    for (int t = 0; t < Layout::kCount; ++t) {
      const P k = P(t);
      float* q = p.data() + lay.at(l, k);
      const std::size_t n = lay.n(k);
      ++s;
      if (k == P::ln1_g || k == P::ln2_g) {
        fill_uniform(q, n, s, 0.9f, 1.1f);
      } else if (k == P::ln1_b || k == P::ln2_b) {
        fill_uniform(q, n, s, -0.1f, 0.1f);
      } else {
        const float b = (k == P::w_2 || k == P::b_2) ? bf : bd;  // fan_in 4d for the second MLP matrix
        fill_uniform(q, n, s, -b, b);
      }
    }
  return p;
}

Data make_data(const Config& c, std::uint64_t seed) {
  c.validate();
  Data d;
  const std::size_t n = std::size_t(c.tokens()) * std::size_t(c.d_model);
  d.x.resize(n);
  d.target.resize(n);
  fill_normal(d.x.data(), n, seed, 1.0f);
  fill_normal(d.target.data(), n, seed + 1, 1.0f);
  return d;
}

namespace {

// C = op(A) op(B) (+ C when acc), row-major; with GemmOperands' rounding, of rounded copies of the
// operands (attention: one of the attention's products).
struct Mm {
  const GemmOperands* ops = nullptr;
  void operator()(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                  double* c, int ldc, bool acc = false, bool attention = false) const {
    if (ops && ops->round && (!attention || ops->attention)) {
      dvec ra = rounded(a, ta ? k : m, ta ? m : k, lda), rb = rounded(b, tb ? n : k, tb ? k : n, ldb);
      cpu::dgemm(ta, tb, m, n, k, 1.0, ra.data(), ta ? m : k, rb.data(), tb ? k : n, acc ? 1.0 : 0.0, c, ldc);
      return;
    }
    cpu::dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, acc ? 1.0 : 0.0, c, ldc);
  }
  dvec rounded(const double* x, int rows, int cols, int ld) const {
    dvec r(std::size_t(rows) * std::size_t(cols));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) r[std::size_t(i) * cols + j] = ops->round(x[std::size_t(i) * ld + j]);
    return r;
  }
};

struct LayerCache {
  dvec xin, h1, mean1, rstd1, qkv, p, o, x1, h2, mean2, rstd2, u, g;
};

struct Forward {
  std::vector<LayerCache> layers;
  dvec y;
  double loss = 0;
};

void layer_norm(const dvec& x, std::size_t T, std::size_t d, const double* g, const double* b, double eps, dvec& y,
                dvec& mean, dvec& rstd) {
  y.assign(T * d, 0.0);
  mean.assign(T, 0.0);
  rstd.assign(T, 0.0);
  for (std::size_t t = 0; t < T; ++t) {
    const double* xr = x.data() + t * d;
    double mu = 0;
    for (std::size_t j = 0; j < d; ++j) mu += xr[j];
    mu /= double(d);
    double var = 0;
    for (std::size_t j = 0; j < d; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= double(d);
    const double rs = ln_rstd(var, eps);
    mean[t] = mu, rstd[t] = rs;
    for (std::size_t j = 0; j < d; ++j) y[t * d + j] = ln_forward(xr[j], mu, rs, g[j], b[j]);
  }
}

// dx += LN backward of dy; dgamma, dbeta accumulated.
void layer_norm_backward(const dvec& dy, const dvec& x, const dvec& mean, const dvec& rstd, std::size_t T,
                         std::size_t d, const double* g, double* dg, double* db, dvec& dx) {
  dvec dxhat(d), xhat(d);
  for (std::size_t t = 0; t < T; ++t) {
    double s1 = 0, s2 = 0;
    for (std::size_t j = 0; j < d; ++j) {
      xhat[j] = (x[t * d + j] - mean[t]) * rstd[t];
      const double gy = dy[t * d + j];
      dg[j] += gy * xhat[j];
      db[j] += gy;
      dxhat[j] = gy * g[j];
      s1 += dxhat[j];
      s2 += dxhat[j] * xhat[j];
    }
    s1 /= double(d), s2 /= double(d);
    for (std::size_t j = 0; j < d; ++j) dx[t * d + j] += ln_backward(dxhat[j], xhat[j], rstd[t], s1, s2);
  }
}

void add_bias(dvec& y, std::size_t T, std::size_t n, const double* b) {
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < n; ++j) y[t * n + j] += b[j];
}
void col_sums(const dvec& y, std::size_t T, std::size_t n, double* out) {
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < n; ++j) out[j] += y[t * n + j];
}

Forward forward(const Config& c, const Layout& lay, const dvec& w, const float* x, const float* target, const Mm& mm) {
  const std::size_t T = std::size_t(c.tokens()), d = std::size_t(c.d_model), f = std::size_t(c.ffn());
  const int S = c.seq_len, H = c.heads, dh = c.head_dim(), D = c.d_model;
  const double scale = 1.0 / std::sqrt(double(dh));
  Forward fw;
  dvec cur(x, x + T * d);
  for (int l = 0; l < c.layers; ++l) {
    LayerCache L;
    L.xin = cur;
    auto W = [&](P k) { return w.data() + lay.at(l, k); };
    layer_norm(L.xin, T, d, W(P::ln1_g), W(P::ln1_b), c.ln_eps, L.h1, L.mean1, L.rstd1);
    L.qkv.assign(T * 3 * d, 0.0);
    mm(false, false, int(T), 3 * D, D, L.h1.data(), D, W(P::w_qkv), 3 * D, L.qkv.data(), 3 * D);
    add_bias(L.qkv, T, 3 * d, W(P::b_qkv));
    L.p.assign(std::size_t(c.batch) * H * S * S, 0.0);
    L.o.assign(T * d, 0.0);
    for (int b = 0; b < c.batch; ++b)
      for (int h = 0; h < H; ++h) {
        const double* q = L.qkv.data() + std::size_t(b) * S * 3 * d + std::size_t(h) * dh;
        const double* k = q + d;
        const double* v = q + 2 * d;
        double* p = L.p.data() + (std::size_t(b) * H + h) * S * S;
        mm(false, true, S, S, dh, q, 3 * D, k, 3 * D, p, S, false, true);
        for (int i = 0; i < S; ++i) {
          double* r = p + std::size_t(i) * S;
          double mx = -std::numeric_limits<double>::infinity();
          for (int j = 0; j <= i; ++j) mx = std::max(mx, scale * r[j]);
          double sum = 0;
          for (int j = 0; j <= i; ++j) sum += std::exp(scale * r[j] - mx);
          for (int j = 0; j <= i; ++j) r[j] = softmax_p(r[j], scale, mx, 1.0 / sum);
          for (int j = i + 1; j < S; ++j) r[j] = 0;
        }
        mm(false, false, S, dh, S, p, S, v, 3 * D, L.o.data() + std::size_t(b) * S * d + std::size_t(h) * dh, D, false,
           true);
      }
    L.x1 = L.xin;
    mm(false, false, int(T), D, D, L.o.data(), D, W(P::w_o), D, L.x1.data(), D, true);
    add_bias(L.x1, T, d, W(P::b_o));
    layer_norm(L.x1, T, d, W(P::ln2_g), W(P::ln2_b), c.ln_eps, L.h2, L.mean2, L.rstd2);
    L.u.assign(T * f, 0.0);
    mm(false, false, int(T), int(f), D, L.h2.data(), D, W(P::w_1), int(f), L.u.data(), int(f));
    add_bias(L.u, T, f, W(P::b_1));
    L.g.resize(T * f);
    for (std::size_t i = 0; i < T * f; ++i) L.g[i] = gelu(L.u[i]);
    cur = L.x1;
    mm(false, false, int(T), D, int(f), L.g.data(), int(f), W(P::w_2), D, cur.data(), D, true);
    add_bias(cur, T, d, W(P::b_2));
    fw.layers.push_back(std::move(L));
  }
  fw.y = cur;
  double s = 0;
  for (std::size_t i = 0; i < T * d; ++i) s += (cur[i] - double(target[i])) * (cur[i] - double(target[i]));
  fw.loss = 0.5 * s / double(T * d);
  return fw;
}

}  // namespace

double reference_loss(const Config& c, const std::vector<double>& params, const float* x, const float* target) {
  const Layout lay(c);
  return forward(c, lay, params, x, target, Mm{}).loss;
}

RefStep reference_step(const Config& c, const std::vector<double>& params, const std::vector<double>& m0,
                       const std::vector<double>& v0, int t, const float* x, const float* target,
                       const GemmOperands& operands) {
  c.validate();
  const Layout lay(c);
  if (params.size() != lay.total || (!m0.empty() && m0.size() != lay.total) || (!v0.empty() && v0.size() != lay.total))
    throw std::invalid_argument("reference_step: parameter or moment vector of the wrong size");
  const std::size_t T = std::size_t(c.tokens()), d = std::size_t(c.d_model), f = std::size_t(c.ffn());
  const int S = c.seq_len, H = c.heads, dh = c.head_dim(), D = c.d_model, F = c.ffn();
  const double scale = 1.0 / std::sqrt(double(dh));
  const Mm mm{&operands};
  Forward fw = forward(c, lay, params, x, target, mm);
  RefStep out;
  out.loss = fw.loss;
  out.grads.assign(lay.total, 0.0);
  dvec dx(T * d);
  for (std::size_t i = 0; i < T * d; ++i) dx[i] = (fw.y[i] - double(target[i])) / double(T * d);
  dvec dg(T * f), dh2(T * d), dob(T * d), dqkv(T * 3 * d), dh1(T * d), dp(std::size_t(S) * S);
  for (int l = c.layers - 1; l >= 0; --l) {
    const LayerCache& L = fw.layers[std::size_t(l)];
    auto W = [&](P k) { return params.data() + lay.at(l, k); };
    auto G = [&](P k) { return out.grads.data() + lay.at(l, k); };
    // MLP: out = x1 + W2 gelu(W1 LN2(x1))
    mm(true, false, F, D, int(T), L.g.data(), F, dx.data(), D, G(P::w_2), D);
    col_sums(dx, T, d, G(P::b_2));
    mm(false, true, int(T), F, D, dx.data(), D, W(P::w_2), D, dg.data(), F);
    for (std::size_t i = 0; i < T * f; ++i) dg[i] *= gelu_derivative(L.u[i]);
    mm(true, false, D, F, int(T), L.h2.data(), D, dg.data(), F, G(P::w_1), F);
    col_sums(dg, T, f, G(P::b_1));
    mm(false, true, int(T), D, F, dg.data(), F, W(P::w_1), F, dh2.data(), D);
    layer_norm_backward(dh2, L.x1, L.mean2, L.rstd2, T, d, W(P::ln2_g), G(P::ln2_g), G(P::ln2_b), dx);  // dx = d x1
    // attention: x1 = xin + Wo attn(LN1(xin))
    mm(true, false, D, D, int(T), L.o.data(), D, dx.data(), D, G(P::w_o), D);
    col_sums(dx, T, d, G(P::b_o));
    mm(false, true, int(T), D, D, dx.data(), D, W(P::w_o), D, dob.data(), D);
    for (int b = 0; b < c.batch; ++b)
      for (int h = 0; h < H; ++h) {
        const std::size_t qo = std::size_t(b) * S * 3 * d + std::size_t(h) * dh;
        const double* q = L.qkv.data() + qo;
        const double* k = q + d;
        const double* v = q + 2 * d;
        const double* p = L.p.data() + (std::size_t(b) * H + h) * S * S;
        const double* go = dob.data() + std::size_t(b) * S * d + std::size_t(h) * dh;
        double* gq = dqkv.data() + qo;
        mm(true, false, S, dh, S, p, S, go, D, gq + 2 * d, 3 * D, false, true);  // dV = P^T dO
        mm(false, true, S, S, dh, go, D, v, 3 * D, dp.data(), S, false, true);   // dP = dO V^T
        for (int i = 0; i < S; ++i) {
          const double* pr = p + std::size_t(i) * S;
          double* r = dp.data() + std::size_t(i) * S;
          double dot = 0;
          for (int j = 0; j <= i; ++j) dot += pr[j] * r[j];
          for (int j = 0; j <= i; ++j) r[j] = softmax_backward(pr[j], r[j], dot, scale);
          for (int j = i + 1; j < S; ++j) r[j] = 0;
        }
        mm(false, false, S, dh, S, dp.data(), S, k, 3 * D, gq, 3 * D, false, true);     // dQ = dS K
        mm(true, false, S, dh, S, dp.data(), S, q, 3 * D, gq + d, 3 * D, false, true);  // dK = dS^T Q
      }
    mm(true, false, D, 3 * D, int(T), L.h1.data(), D, dqkv.data(), 3 * D, G(P::w_qkv), 3 * D);
    col_sums(dqkv, T, 3 * d, G(P::b_qkv));
    mm(false, true, int(T), D, 3 * D, dqkv.data(), 3 * D, W(P::w_qkv), 3 * D, dh1.data(), D);
    layer_norm_backward(dh1, L.xin, L.mean1, L.rstd1, T, d, W(P::ln1_g), G(P::ln1_g), G(P::ln1_b), dx);  // dx = d xin
  }
  // AdamW step t + 1.
  out.params_after = params;
  out.m_after = m0.empty() ? dvec(lay.total, 0.0) : m0;
  out.v_after = v0.empty() ? dvec(lay.total, 0.0) : v0;
  double c1, c2;
  mlp::adam_corrections(t + 1, double(c.beta1), double(c.beta2), c1, c2);
  for (std::size_t i = 0; i < lay.total; ++i)
    adamw(out.params_after[i], out.m_after[i], out.v_after[i], out.grads[i], double(c.lr), double(c.beta1),
          double(c.beta2), double(c.eps), double(c.weight_decay), c1, c2);
  return out;
}

Tolerance fp32_tolerance() { return Tolerance{1e-5, 1e-4, 1e-4}; }

Tolerance bf16_tolerance(const Config& c) {
  // docs/transformer.md: sqrt(18 * layers) rounded products on a gradient's path, each with a
  // relative error of standard deviation sqrt(2/3) * 2^-8, summed in quadrature, times a margin of 3.
  const double per_product = std::sqrt(2.0 / 3.0) * std::ldexp(1.0, -8);
  const double g = 3.0 * std::sqrt(18.0 * c.layers) * per_product;
  return Tolerance{g, g, 1e-4};
}

CheckResult check_step(const Config& c, const RefStep& ref, const std::vector<float>& params_before,
                       const std::vector<float>& m_before, const std::vector<float>& v_before, int t,
                       const StepOutputs& got, const Tolerance& tol) {
  const Layout lay(c);
  CheckResult r;
  if (params_before.size() != lay.total || m_before.size() != lay.total || v_before.size() != lay.total ||
      ref.grads.size() != lay.total || !got.grads || !got.params_after || !got.m_after || !got.v_after) {
    r.detail = "check_step: the state or the outputs are incomplete";
    return r;
  }
  std::ostringstream bad;
  r.loss_rel = std::fabs(got.loss - ref.loss) / std::max(std::fabs(ref.loss), 1e-30);
  if (!(r.loss_rel <= tol.loss_rtol))
    bad << "loss " << got.loss << " vs float64 " << ref.loss << " (relative error " << r.loss_rel << " over "
        << tol.loss_rtol << "); ";
  // A tensor whose exact gradient is (near) zero -- the key bias: softmax ignores a shift common to
  // a row -- is judged against the largest gradient norm of its layer instead of its own.
  for (int l = 0; l < c.layers && bad.tellp() < 400; ++l) {
    double layer_norm = 0;
    for (int k = 0; k < Layout::kCount; ++k) {
      double s = 0;
      for (std::size_t i = 0; i < lay.n(P(k)); ++i) s += ref.grads[lay.at(l, P(k)) + i] * ref.grads[lay.at(l, P(k)) + i];
      layer_norm = std::max(layer_norm, std::sqrt(s));
    }
    for (int k = 0; k < Layout::kCount; ++k) {
      const std::size_t o = lay.at(l, P(k)), n = lay.n(P(k));
      double num = 0, den = 0;
      bool finite = true;
      for (std::size_t i = 0; i < n; ++i) {
        const double g = got.grads[o + i], e = ref.grads[o + i];
        finite = finite && std::isfinite(g);
        num += (g - e) * (g - e);
        den += e * e;
      }
      const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-3 * layer_norm + 1e-300);
      r.worst_grad_rel = std::max(r.worst_grad_rel, finite ? rel : INFINITY);
      if (!finite || !(rel <= tol.grad_rtol))
        bad << "layer " << l << " " << kParamNames[k] << " gradient: " << (finite ? "" : "not finite, ")
            << "relative error " << rel << " over " << tol.grad_rtol << "; ";
    }
  }
  // The update from the backend's own gradients: AdamW recomputed in float64.
  double c1, c2;
  mlp::adam_corrections(t + 1, double(c.beta1), double(c.beta2), c1, c2);
  std::size_t first = lay.total, count = 0;
  const double ulp = 4.0 * std::ldexp(1.0, -24);
  for (int l = 0; l < c.layers; ++l)
    for (int k = 0; k < Layout::kCount; ++k)
      for (std::size_t j = 0; j < lay.n(P(k)); ++j) {
        // Only the tensors: the padding between them is never written by a step.
        const std::size_t i = lay.at(l, P(k)) + j;
        double w = params_before[i], m = m_before[i], v = v_before[i];
        const double w0 = w;
        adamw(w, m, v, double(got.grads[i]), double(c.lr), double(c.beta1), double(c.beta2), double(c.eps),
              double(c.weight_decay), c1, c2);
        const bool ok =
            std::fabs(double(got.params_after[i]) - w) <= tol.update_rtol * std::fabs(w - w0) + ulp * std::fabs(w) + 1e-30 &&
            std::fabs(double(got.m_after[i]) - m) <= 1e-5 * std::fabs(m) + 1e-30 &&
            std::fabs(double(got.v_after[i]) - v) <= 1e-5 * std::fabs(v) + 1e-38;
        if (!ok) {
          if (first == lay.total) first = i;
          ++count;
        }
      }
  if (count) bad << count << " parameters updated wrongly (first at offset " << first << "); ";
  r.ok = bad.tellp() == 0;
  std::ostringstream det;
  if (r.ok)
    det << "one step against float64: loss relative error " << r.loss_rel << ", worst gradient relative norm error "
        << r.worst_grad_rel << " (tolerance " << tol.grad_rtol << "), every update elementwise";
  else
    det << bad.str();
  r.detail = det.str();
  return r;
}

}  // namespace gtb::xfmr
