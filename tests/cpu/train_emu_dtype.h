// What the train family's stand-in kernel tests share about its storage types (FP32, FP16, BF16):
// a unit in the last place of each, its name, and whole vectors converted to and from it. Compiled
// with the host stand-in of tests/cpu/cuda_emu, after the kernels' translation unit.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/train/cuda/mlp_dtype.h"

namespace gtb_train_emu {
namespace gm = gtb::cuda::mlp;

// One unit in the last place of the storage format, relative: what a rounding to it may differ by.
inline double ulp(gm::DType t) {
  return t == gm::DType::f32 ? 1e-6 : t == gm::DType::f16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
}
inline const char* name(gm::DType t) { return t == gm::DType::f32 ? "f32" : t == gm::DType::f16 ? "f16" : "bf16"; }

template <class T>
std::vector<T> narrow(const std::vector<float>& v) {
  std::vector<T> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = gm::from_f<T>(v[i]);
  return r;
}
template <class T>
std::vector<float> widen(const std::vector<T>& v) {
  std::vector<float> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = gm::to_f(v[i]);
  return r;
}

}  // namespace gtb_train_emu
