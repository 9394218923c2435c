// Device functors of the vectorize family: the shared elementwise math as y = op(x, y), used by the
// hand-written kernels and by Thrust. Include only from .cu files.
#pragma once

#include "kernels/vectorize/elementwise.h"

namespace gtb::cuda::ops {

// kReadsX / kReadsY say which inputs a kernel must load, so in-place stages load only y.
struct Axpy {
  static constexpr bool kReadsX = true, kReadsY = true;
  float a;
  GTB_HD float operator()(float x, float y) const { return gtb::axpy(a, x, y); }
};
struct Chain {
  static constexpr bool kReadsX = true, kReadsY = false;
  ChainParams p;
  GTB_HD float operator()(float x, float /*y*/) const { return gtb::chain(x, p); }
};
// The chain's stages as separate passes: scale reads x, bias and activation update y in place.
struct Scale {
  static constexpr bool kReadsX = true, kReadsY = false;
  ChainParams p;
  GTB_HD float operator()(float x, float /*y*/) const { return gtb::chain_scale(x, p); }
};
struct Bias {
  static constexpr bool kReadsX = false, kReadsY = true;
  ChainParams p;
  GTB_HD float operator()(float /*x*/, float y) const { return gtb::chain_bias(y, p); }
};
struct Activation {
  static constexpr bool kReadsX = false, kReadsY = true;
  GTB_HD float operator()(float /*x*/, float y) const { return gtb::chain_activation(y); }
};

// Unary form of Chain for thrust::transform(x -> y).
struct ChainUnary {
  ChainParams p;
  GTB_HD float operator()(float x) const { return gtb::chain(x, p); }
};

}  // namespace gtb::cuda::ops
