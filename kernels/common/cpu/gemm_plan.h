// The CPU training steps' GEMM layer (the MLP's and the transformer's): every matrix product of a step
// has a site with one fixed shape, and each site runs the library that was verified and fastest for
// that shape and precision on this machine (chosen once per model, outside the timed region).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/cpu/blas.h"

namespace gtb::cpu::plan {

// One matrix product of the step: C[m x n] = op(A) op(B) + beta C, row-major. `inner` products run
// on one thread inside a parallel region (attention, one head per task); the others are cut into
// one slice per thread.
struct Shape {
  std::string site;  // "qkv", "attn.scores", ...
  bool ta = false, tb = false;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool inner = false;
};

// A library a site can use. For BF16 the FP32 libraries run on operands rounded to bfloat16, which
// is a BF16 product with FP32 accumulation computed at FP32 speed; oneMKL's BF16 GEMM
// (cblas_gemm_bf16bf16f32), Debian's oneDNN 2.6 BF16 matmul (native with AVX512-BF16) and the
// current oneDNN 3's (AMX tiles, AVX512-BF16, or BF16 converted in AVX-512 registers: the kernel its
// ISA has) take the operands as BF16 words, packed inside the call (the packing counts against them).
struct Candidate {
  std::string name;           // "openblas", "onednn", "mkl", "mkl_bf16", "onednn_bf16", "onednn3_bf16"
  cpu::GemmLib lib{};         // the FP32 library it calls (the BF16 ones: unused)
  bool native_bf16 = false;   // oneDNN 2.6's BF16 matmul: BF16 operands in, FP32 out
  bool mkl_bf16 = false;      // oneMKL's cblas_gemm_bf16bf16f32: BF16 operands in, FP32 out
  bool onednn3_bf16 = false;  // oneDNN 3's BF16 matmul: BF16 operands in, FP32 out
  bool available = false;
  std::string why_not;        // when not available
};

// The facts of the machine the candidates depend on ("" = can run). this_machine() probes them;
// tests inject others (a CPU with or without AMX, AVX512-BF16, AVX-512).
struct Machine {
  std::string native_bf16_unavailable;   // why oneDNN 2.6's BF16 matmul cannot run
  std::string mkl_unavailable;           // why oneMKL cannot run
  std::vector<std::string> only;         // when not empty: the only candidates offered (a test's pick)
  std::string onednn3_bf16_unavailable;  // why oneDNN 3's BF16 matmul cannot run
  std::string isa;                       // the ISA oneDNN 3 dispatches to ("avx512_core_amx", ...; "" unknown)
};
Machine this_machine();

// The candidates for a precision: every cpu::GemmLib the build has, in kGemmLibNames order (so a
// library added there becomes a candidate here); for BF16 also oneMKL's BF16 GEMM where oneMKL
// loads, and each oneDNN's BF16 matmul (2.6's, then 3's) where it has a kernel for this CPU (not its
// reference implementation).
std::vector<Candidate> candidates(bool bf16, const Machine& machine);
std::vector<Candidate> candidates(bool bf16);  // on this_machine()
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

// The choice among the candidates tried on one site: the fastest verified one by cpu::clearly_faster
// (a challenger at least 5 % faster than the best so far); -1 when none verified.
int pick(const std::vector<Choice::Tried>& tried);

class Plan {
 public:
  // Verifies every available candidate on each shape (random operands against DGEMM) and times the
  // verified ones; pick() names the site's library. Choices are remembered per shape for the process.
  // `round_operands` (BF16 only): the step hands over FP32 operands and each product rounds them to
  // BF16 as they enter it (autocast); otherwise BF16 operands arrive already rounded. The timing
  // includes that rounding, so the choice is made on the path the step runs.
  void choose(const std::vector<Shape>& shapes, bool bf16, bool round_operands = false);
  void choose(const std::vector<Shape>& shapes, bool bf16, bool round_operands, const Machine& machine);
  // Runs site `i` (the index in the vector given to choose). alpha is 1.
  void run(std::size_t i, const float* a, const float* b, float beta, float* c) const;
  // run() on the calling thread's host clock (the call's fork and join included): seconds. For a
  // measurement that times a step's products one by one inside it (the gemm family's sequence).
  double run_timed(std::size_t i, const float* a, const float* b, float beta, float* c) const;
  // Same shape as site i but m (and for fused attention n and k) changed: a block of a site.
  void run_sized(std::size_t i, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  const std::vector<Choice>& choices() const { return choices_; }
  // "qkv: openblas; attn.scores: onednn; ...", then each candidate that no site could run, with why.
  std::string summary() const;

 private:
  void call(const Shape& s, cpu::GemmLib lib, int m, int n, int k, const float* a, const float* b, float beta,
            float* c) const;
  void call_native(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  void call_mkl_bf16(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  void call_onednn3(const Shape& s, int m, int n, int k, const float* a, const float* b, float beta, float* c) const;
  void call_candidate(const Candidate& cand, const Shape& s, int m, int n, int k, const float* a, const float* b,
                      float beta, float* c) const;
  std::vector<Choice> choices_;
  std::vector<Candidate> chosen_;  // site i's candidate
  bool round_ = false;             // FP32 operands rounded to BF16 as they enter each product
};

}  // namespace gtb::cpu::plan
