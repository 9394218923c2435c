// The MLP training step's shape, parameter layout and elementwise math, shared by the CPU and GPU.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/hd.h"
#include "kernels/common/names.h"
#include "kernels/common/native_step.h"

namespace gtb::mlp {

enum class Act : int { relu = 0, gelu = 1 };
enum class Optim : int { sgd = 0, adam = 1 };

inline constexpr NameTable<Act, 2> kActNames = {{{Act::relu, "relu"}, {Act::gelu, "gelu"}}};
inline constexpr NameTable<Optim, 2> kOptimNames = {{{Optim::sgd, "sgd"}, {Optim::adam, "adam"}}};

inline const char* to_string(Act a) { return name_of(kActNames, a); }
inline const char* to_string(Optim o) { return name_of(kOptimNames, o); }
inline Act act_from_string(const std::string& s) { return parse_name(kActNames, s, "activation"); }
inline Optim optim_from_string(const std::string& s) { return parse_name(kOptimNames, s, "optimizer"); }

// depth = number of linear layers: input -> width -> ... -> width -> classes.
struct Config {
  int input = 256;
  int width = 256;
  int depth = 4;
  int classes = 16;
  Act act = Act::relu;
  Optim optim = Optim::sgd;
  float lr = 0.05f;
  float momentum = 0.9f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  std::uint64_t seed = 1234;

  void validate() const {
    if (input < 1 || width < 1 || classes < 2 || depth < 1)
      throw std::invalid_argument("MLP needs input >= 1, width >= 1, classes >= 2, depth >= 1 (got input=" +
                                  std::to_string(input) + " width=" + std::to_string(width) +
                                  " classes=" + std::to_string(classes) + " depth=" + std::to_string(depth) + ")");
    if (!(lr > 0.0f)) throw std::invalid_argument("MLP learning rate must be > 0");
  }
  // dims[0] = input, dims[depth] = classes.
  std::vector<int> dims() const {
    std::vector<int> d(static_cast<std::size_t>(depth) + 1, width);
    d.front() = input;
    d.back() = classes;
    return d;
  }
};

// The model of a benchmark case, as the step families (train, parallel, pitfalls) declare it:
// input = width, kBenchClasses classes, the learning rate customary for the optimizer (SGD with
// momentum 0.05, Adam 1e-3); validated.
inline constexpr int kBenchClasses = 16;
inline Config bench_config(int width, int depth = 4, Act act = Act::relu, Optim optim = Optim::sgd) {
  Config c;
  c.width = width;
  c.input = width;
  c.depth = depth;
  c.classes = kBenchClasses;
  c.act = act;
  c.optim = optim;
  c.lr = optim == Optim::sgd ? 0.05f : 1e-3f;
  c.validate();
  return c;
}

// Flat parameter buffer: all weights, then all biases (so bias gradients form one contiguous range
// that can be cleared in one operation). Every tensor starts on a 64-element boundary, which keeps
// vector loads and tensor-core operands aligned; padding stays zero.
struct Layout {
  std::vector<int> dims;
  std::vector<std::size_t> w, b;  // offsets in elements; W_l is dims[l] x dims[l+1], row-major
  std::size_t bias_begin = 0, total = 0;

  static constexpr std::size_t kAlign = 64;
  static std::size_t pad(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

  explicit Layout(const Config& c) : dims(c.dims()) {
    const std::size_t L = dims.size() - 1;
    std::size_t off = 0;
    for (std::size_t l = 0; l < L; ++l) {
      w.push_back(off);
      off += pad(std::size_t(dims[l]) * std::size_t(dims[l + 1]));
    }
    bias_begin = off;
    for (std::size_t l = 0; l < L; ++l) {
      b.push_back(off);
      off += pad(std::size_t(dims[l + 1]));
    }
    total = off;
  }
  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int max_dim() const {
    int m = 0;
    for (int d : dims) m = d > m ? d : m;
    return m;
  }
  // Sum over layers of in*out: the multiply-adds of one sample's forward GEMMs.
  double macs_per_sample() const {
    double s = 0;
    for (std::size_t l = 0; l + 1 < dims.size(); ++l) s += double(dims[l]) * double(dims[l + 1]);
    return s;
  }
  std::size_t parameters() const {
    std::size_t s = 0;
    for (std::size_t l = 0; l + 1 < dims.size(); ++l) s += std::size_t(dims[l]) * dims[l + 1] + dims[l + 1];
    return s;
  }
};

// FLOPs of one training step under the customary rule: forward GEMM 2*B*in*out, plus the two
// backward GEMMs (weight and input gradient) 4*B*in*out, i.e. 6*B*sum(in*out). It counts the first
// layer's input gradient, which is never computed; elementwise work is not counted.
inline double step_flops(const Layout& lay, double batch) { return 6.0 * batch * lay.macs_per_sample(); }
// The CPU step runs a step of fewer step_flops than this on one thread, and FP32 steps with at least
// kRowsPerThread rows per thread in rows mode (kernels/common/native_step.h: the cost model prices
// the step by the same figures).
inline constexpr double kSerialStepFlops = native::kSerialStepFlops;
inline constexpr int kRowsPerThread = native::kRowsPerThread;
// The GEMM FLOPs the step executes: the customary count less the first layer's input gradient
// (2*B*in*out of layer 0). A percent of a peak divides this.
inline double executed_step_flops(const Layout& lay, double batch) {
  const double first = lay.dims.size() >= 2 ? double(lay.dims[0]) * double(lay.dims[1]) : 0.0;
  return step_flops(lay, batch) - 2.0 * batch * first;
}

// ---- elementwise math, one definition for float (CPU, GPU) and double (the reference) ----
// Float tanh as a clamped rational function (Eigen's fast tanh coefficients; max relative error
// ~3e-7): branch-free, so the CPU loops vectorize it, and the same formula runs on the GPU.
GTB_HD float hd_tanh(float x) {
  const float c = 7.90531110763549805f;
  x = x > c ? c : (x < -c ? -c : x);
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}
GTB_HD double hd_tanh(double x) { return tanh(x); }
GTB_HD float hd_exp(float x) { return expf(x); }
GTB_HD double hd_exp(double x) { return exp(x); }
GTB_HD float hd_log(float x) { return logf(x); }
GTB_HD double hd_log(double x) { return log(x); }
GTB_HD float hd_sqrt(float x) { return sqrtf(x); }
GTB_HD double hd_sqrt(double x) { return sqrt(x); }
GTB_HD float hd_pow(float x, float y) { return powf(x, y); }
GTB_HD double hd_pow(double x, double y) { return pow(x, y); }

// GELU in its tanh form (as GPT-2 and PyTorch's approximate="tanh").
template <class T>
GTB_HD T act_forward(Act a, T z) {
  if (a == Act::relu) return z > T(0) ? z : T(0);
  const T k = T(0.7978845608028654), c = T(0.044715);
  return T(0.5) * z * (T(1) + hd_tanh(k * (z + c * z * z * z)));
}
// d act / d z at z.
template <class T>
GTB_HD T act_derivative(Act a, T z) {
  if (a == Act::relu) return z > T(0) ? T(1) : T(0);
  const T k = T(0.7978845608028654), c = T(0.044715);
  const T t = hd_tanh(k * (z + c * z * z * z));
  return T(0.5) * (T(1) + t) + T(0.5) * z * (T(1) - t * t) * k * (T(1) + T(3) * c * z * z);
}

// Softmax cross-entropy of one row. load(j) gives logit j (bias included); store(j, g) receives
// scale * dLoss/dlogit_j. Returns the row's loss (not scaled). Three passes, no scratch array, so the
// same code runs in one GPU thread per row and in the CPU's row loop.
template <class T, class Load, class Store>
GTB_HD T softmax_xent_row(int classes, int label, T scale, Load load, Store store) {
  T mx = load(0);
  for (int j = 1; j < classes; ++j) {
    const T v = load(j);
    mx = v > mx ? v : mx;
  }
  T sum = T(0);
  for (int j = 0; j < classes; ++j) sum += hd_exp(load(j) - mx);
  const T inv = T(1) / sum;
  for (int j = 0; j < classes; ++j) {
    const T p = hd_exp(load(j) - mx) * inv;
    store(j, (p - (j == label ? T(1) : T(0))) * scale);
  }
  return hd_log(sum) + mx - load(label);
}

// SGD with momentum, PyTorch's form: v = mu v + g; w -= lr v.
template <class T>
GTB_HD void sgd_momentum(T& w, T& v, T g, T lr, T mu) {
  v = mu * v + g;
  w -= lr * v;
}
// An optimizer state that decays (momentum under a zero gradient shrinks by mu every step) falls
// below the smallest normal float within a few hundred steps; on x86 CPUs an operation on such a
// denormal takes a microcode assist, many times the normal cost, so a CPU step slows down as it
// trains (a dead ReLU unit's momentum is enough). The CPU optimizers flush their state to zero
// there, as `torch.set_flush_denormal(True)` does for PyTorch; GPUs compute denormals at full speed.
// The change to a state is under 2^-126 in magnitude, far inside every check's tolerance.
inline float flush_denormal(float x) { return std::fabs(x) < 1.17549435e-38f ? 0.0f : x; }  // FLT_MIN

// Adam; c1 = 1/(1-beta1^t), c2 = 1/(1-beta2^t) are the bias corrections of step t.
template <class T>
GTB_HD void adam(T& w, T& m, T& v, T g, T lr, T b1, T b2, T eps, T c1, T c2) {
  m = b1 * m + (T(1) - b1) * g;
  v = b2 * v + (T(1) - b2) * g * g;
  w -= lr * (m * c1) / (hd_sqrt(v * c2) + eps);
}
template <class T>
GTB_HD void adam_corrections(int t, T b1, T b2, T& c1, T& c2) {
  c1 = T(1) / (T(1) - hd_pow(b1, T(t)));
  c2 = T(1) / (T(1) - hd_pow(b2, T(t)));
}

// Dynamic loss scaling (mixed precision): state kept on the device so that a captured step needs no
// host round trip. A step whose gradients overflowed is skipped and the scale halves; after
// `interval` good steps in a row it doubles (PyTorch GradScaler's defaults: 2^16, x2, x0.5, 2000).
struct ScaleState {
  float scale;
  int found_inf;   // set by the backward kernels, cleared at the end of the step
  int good_steps;
  int skipped;     // steps skipped so far
  int step;        // optimizer steps taken (Adam's t)
};
GTB_HD void loss_scale_end_step(ScaleState& s, bool dynamic, int interval) {
  if (s.found_inf) {
    ++s.skipped;
    s.good_steps = 0;
    if (dynamic) s.scale *= 0.5f;
  } else {
    ++s.step;
    if (dynamic && ++s.good_steps >= interval) {
      s.scale *= 2.0f;
      s.good_steps = 0;
    }
  }
  s.found_inf = 0;
}
GTB_HD bool is_finite(float x) { return x - x == 0.0f; }

// Host conversions for half and bfloat16 (round to nearest even), used to check GPU tensors.
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      bits = sign | (std::uint32_t(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  static_assert(sizeof f == sizeof bits, "float is 32-bit");
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}
inline float bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t(h) << 16;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace gtb::mlp
