// The CPU BLAS (OpenBLAS, and oneDNN's SGEMM where built): row-major SGEMM/DGEMM wrappers and thread control.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/common/names.h"

namespace gtb::cpu {

// C[m x n] = alpha * op(A) * op(B) + beta * C, row-major, leading dimensions = row lengths.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda,
           const double* b, int ldb, double beta, double* c, int ldc);

// The libraries an FP32 GEMM can go through. oneDNN's dnnl_sgemm and oneMKL (kernels/common/cpu/mkl.h)
// pick their kernels from the CPU's ISA at run time and run on one thread when called inside an
// OpenMP parallel region.
GTB_NAMED_ENUM(GemmLib, kGemmLibNames, openblas, onednn, mkl);
bool gemm_lib_available(GemmLib lib);  // onednn: only when built with it; mkl: when it loads

// One FP32 GEMM library's brief timing of a step (seconds); `available` false where it is not built
// in or does not load here (its seconds are then not read).
struct LibraryTiming {
  GemmLib lib;
  bool available = true;
  double seconds = 0;
};
// A challenger replaces the best timing so far only when at least 5 % faster, so that timing noise on a
// busy machine does not flip a choice: the rule of every CPU library choice (the steps' libraries, the
// GEMM plan's sites).
inline bool clearly_faster(double challenger_s, double best_s) { return challenger_s < 0.95 * best_s; }
// The library a CPU step runs: the fastest available one, in the order given, by clearly_faster.
// Throws std::invalid_argument when none is available or a timing is not positive.
GemmLib fastest_library(const std::vector<LibraryTiming>& timed);
// Each FP32 GEMM library (kGemmLibNames' order: OpenBLAS, oneDNN, oneMKL) with the seconds
// `seconds_on(lib)` gives for it (called only for an available one): what fastest_library chooses from.
std::vector<LibraryTiming> time_libraries(const std::function<double(GemmLib)>& seconds_on);
void sgemm(GemmLib lib, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

bool dnnl_built();           // compiled against oneDNN
std::string dnnl_version();  // "2.6.3" (empty when not built)

int blas_threads();
void set_blas_threads(int n);  // OpenBLAS's pool, and oneMKL's where it is loaded, alike
// The BLAS thread count set to `n` for a scope and restored after it.
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(int n) : saved_(blas_threads()) { set_blas_threads(n); }
  ~BlasThreadsScope() { set_blas_threads(saved_); }
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

 private:
  int saved_;
};
std::string blas_config();    // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"
std::string blas_corename();  // the kernel set OpenBLAS selected, e.g. "Haswell"

}  // namespace gtb::cpu
