// The CPU transformer step's GEMM layer: every matrix product of the step has a site with one fixed
// shape, and each site runs the library that was verified and fastest for that shape and precision
// on this machine (chosen once per model, outside the timed region).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/cpu/blas.h"

namespace gtb::xfmr::cpu_gemm {

// One matrix product of the step: C[m x n] = op(A) op(B) + beta C, row-major. `inner` products run
// on one thread inside a parallel region (attention, one head per task); the others are cut into
// one slice per thread.
struct Shape {
  std::string site;  // "qkv", "attn.scores", ...
  bool ta = false, tb = false;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool inner = false;
};

// A library a site can use. For BF16 the FP32 libraries run on operands already rounded to
// bfloat16, which is a BF16 product with FP32 accumulation computed at FP32 speed; a native BF16
// library (oneDNN's BF16 matmul, AMX / AVX512-BF16) takes the same operands where the CPU has one.
struct Candidate {
  std::string name;        // "openblas", "onednn", ..., "onednn_bf16"
  cpu::GemmLib lib{};      // the FP32 library it calls (not used by the native BF16 one)
  bool native_bf16 = false;  // oneDNN's BF16 matmul: BF16 operands in, FP32 out
  bool available = false;
  std::string why_not;     // when not available
};
// The candidates for a precision on this build and CPU: every cpu::GemmLib the build has, in
// kGemmLibNames order (so a library added there becomes a candidate here); for BF16 also oneDNN's
// BF16 matmul, available where oneDNN has a native (not reference) BF16 implementation on this CPU.
std::vector<Candidate> candidates(bool bf16);
// Why oneDNN's BF16 matmul cannot run here ("" when it can): not built in, no implementation for
// this CPU, or only oneDNN's reference one. Probed once per process.
std::string native_bf16_unavailable();
// Whether a native BF16 candidate may serve a site: not the per-head products that run one per
// thread inside the attention's parallel region (reason in why_not).
bool native_bf16_serves(const Shape& s, std::string& why_not);

struct Choice {
  Shape shape;
  int chosen = 0;                      // index into `tried`
  struct Tried {
    std::string name;
    bool available = true;             // false: could not run here (detail says why)
    bool verified = false;
    double seconds = 0;                // the fastest timed run (0 when not verified)
    std::string detail;
  };
  std::vector<Tried> tried;
};

class Plan {
 public:
  // Verifies every available candidate on each shape (random operands against DGEMM) and times the
  // verified ones; the fastest is the site's library. A challenger must beat the first candidate by
  // 5 % (timing noise on a busy machine). Choices are remembered per shape for the process.
  void choose(const std::vector<Shape>& shapes, bool bf16);
  // Runs site `i` (the index in the vector given to choose). alpha is 1.
  void run(std::size_t i, const float* a, const float* b, float beta, float* c) const;
  // Same shape as site i but m (and for fused attention n and k) changed: a block of a site.
  void run_sized(std::size_t i, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  const std::vector<Choice>& choices() const { return choices_; }
  // "qkv: openblas; attn.scores: onednn; ...", then each candidate that no site could run, with why.
  std::string summary() const;

 private:
  void call(const Shape& s, cpu::GemmLib lib, int m, int n, int k, const float* a, const float* b, float beta,
            float* c) const;
  void call_native(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  std::vector<Choice> choices_;
  std::vector<cpu::GemmLib> lib_;
  std::vector<bool> native_;  // site i runs oneDNN's BF16 matmul
};

}  // namespace gtb::xfmr::cpu_gemm
