// OpenBLAS wrappers (row-major CBLAS) and its thread/config queries.
#include "kernels/cpu/blas.h"

#include <cblas.h>  // OpenBLAS's cblas.h also declares openblas_get_config() and friends

namespace gtb::cpu {

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
}
void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
}

int blas_threads() { return openblas_get_num_threads(); }
void set_blas_threads(int n) { openblas_set_num_threads(n); }
std::string blas_config() { return openblas_get_config(); }
std::string blas_corename() { return openblas_get_corename(); }

}  // namespace gtb::cpu
