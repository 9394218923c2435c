// The host loops of the build-flag A/B. This file is compiled once per variant (-O0, -O2, -O3, -O3
// with an ISA) with GTB_PF_VARIANT naming the variant; the project's own flags do not reach it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if !defined(GTB_PF_VARIANT) || !defined(GTB_PF_FLAGS) || !defined(GTB_PF_ISA)
#error "compile with -DGTB_PF_VARIANT=<name> -DGTB_PF_FLAGS=\"...\" -DGTB_PF_ISA=\"...\""
#endif

#define GTB_PF_CAT2(a, b) a##b
#define GTB_PF_CAT(a, b) GTB_PF_CAT2(a, b)
#define GTB_PF_STR2(a) #a
#define GTB_PF_STR(a) GTB_PF_STR2(a)
#define GTB_PF_NS GTB_PF_CAT(v_, GTB_PF_VARIANT)
#define GTB_PF_TABLE GTB_PF_CAT(host_kernels_, GTB_PF_VARIANT)

// The shared math goes into a namespace of this variant's own: its inline functions would otherwise
// be one symbol in every object, merged at link time, and the -O0 loop could call an -O3 (or an
// AVX-512) copy. tests/tools/check_pitfall_flags.py checks that no gtb:: symbol is shared.
#define gtb GTB_PF_CAT(gtb_variant_, GTB_PF_VARIANT)
#include "kernels/pitfalls/flag_math.h"
#undef gtb
namespace math = GTB_PF_CAT(gtb_variant_, GTB_PF_VARIANT);

#include "kernels/pitfalls/cpu/flag_kernels.h"

namespace gtb::pitfalls {
namespace GTB_PF_NS {
namespace {

// Signed loop indices: OpenMP wants them, and they keep the loops the same in every variant.
void chain(const float* __restrict x, float* __restrict y, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sn; ++i) y[i] = math::chain(x[i], math::pitfalls::kFlagChain);
}

void act(const float* __restrict z, const float* __restrict bias, const float* __restrict g, float* __restrict a,
         float* __restrict dz, std::size_t rows, std::size_t width) {
  const auto sr = static_cast<long long>(rows);
#pragma omp parallel for schedule(static)
  for (long long r = 0; r < sr; ++r) {
    const std::size_t o = static_cast<std::size_t>(r) * width;
    for (std::size_t j = 0; j < width; ++j) math::pitfalls::act_fwd_bwd(z[o + j], bias[j], g[o + j], a[o + j], dz[o + j]);
  }
}

void xent(const float* logits, const int* labels, float* grad, float* loss, std::size_t rows, int classes) {
  const auto sr = static_cast<long long>(rows);
  const auto c = static_cast<std::size_t>(classes);
#pragma omp parallel for schedule(static)
  for (long long r = 0; r < sr; ++r) {
    const std::size_t o = static_cast<std::size_t>(r) * c;
    loss[r] = math::pitfalls::xent_row(logits + o, labels[r], grad + o, classes);
  }
}

void reduce(const float* __restrict x, float* __restrict partial, std::size_t n) {
  const auto blocks = static_cast<long long>(n / math::pitfalls::kReduceBlock);
#pragma omp parallel for schedule(static)
  for (long long b = 0; b < blocks; ++b) {
    const float* p = x + static_cast<std::size_t>(b) * math::pitfalls::kReduceBlock;
    float s = 0.0f;
    for (std::size_t i = 0; i < math::pitfalls::kReduceBlock; ++i) s += p[i] * p[i];
    partial[b] = s;
  }
}

}  // namespace
}  // namespace GTB_PF_NS

const HostKernels& GTB_PF_TABLE() {
  static const HostKernels k{GTB_PF_STR(GTB_PF_VARIANT), GTB_PF_FLAGS, GTB_PF_ISA,
                             GTB_PF_NS::chain,           GTB_PF_NS::act, GTB_PF_NS::xent, GTB_PF_NS::reduce};
  return k;
}

}  // namespace gtb::pitfalls
