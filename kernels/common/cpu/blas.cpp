// OpenBLAS wrappers (row-major CBLAS), oneDNN's SGEMM, and OpenBLAS's thread/config queries.
#include "kernels/common/cpu/blas.h"

#include <cblas.h>  // OpenBLAS's cblas.h also declares openblas_get_config() and friends
#include <omp.h>

#include <stdexcept>
#include <string>

#include "kernels/common/cpu/mkl.h"

#if GTB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

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

#if GTB_HAVE_DNNL
bool dnnl_built() { return true; }
std::string dnnl_version() {
  const dnnl_version_t* v = ::dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}
#else
bool dnnl_built() { return false; }
std::string dnnl_version() { return ""; }
#endif

GemmLib fastest_library(const std::vector<LibraryTiming>& timed) {
  const LibraryTiming* best = nullptr;
  for (const LibraryTiming& t : timed) {
    if (!t.available) continue;
    if (!(t.seconds > 0))
      throw std::invalid_argument(std::string("the step's time on ") + to_string(t.lib) + " is not positive");
    if (!best || clearly_faster(t.seconds, best->seconds)) best = &t;
  }
  if (!best) throw std::invalid_argument("no GEMM library is available for the CPU step");
  return best->lib;
}

std::vector<LibraryTiming> time_libraries(const std::function<double(GemmLib)>& seconds_on) {
  std::vector<LibraryTiming> timed;
  for (const auto& [lib, name] : kGemmLibNames)
    timed.push_back(gemm_lib_available(lib) ? LibraryTiming{lib, true, seconds_on(lib)} : LibraryTiming{lib, false, 0});
  return timed;
}

bool gemm_lib_available(GemmLib lib) {
  return lib == GemmLib::openblas || (lib == GemmLib::onednn && dnnl_built()) || (lib == GemmLib::mkl && mkl::available());
}

void sgemm(GemmLib lib, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc) {
  if (lib == GemmLib::openblas) return sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (lib == GemmLib::mkl) return mkl::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#if GTB_HAVE_DNNL
  const dnnl_status_t st =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  // row-major
  if (st != dnnl_success) throw std::runtime_error("dnnl_sgemm failed with status " + std::to_string(int(st)));
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta,
      (void)c, (void)ldc;
  throw std::logic_error("sgemm: built without oneDNN");
#endif
}

int blas_threads() { return openblas_get_num_threads(); }
void set_blas_threads(int n) {
  // OpenBLAS's OpenMP flavour also sets the OpenMP thread count of the calling thread
  // (omp_set_num_threads), which would make every later OpenMP loop of the process run on n
  // threads too. Its GEMMs keep the count given here (it is 1, or OpenMP's own), so give the loops
  // theirs back.
  const int omp_threads = omp_get_max_threads();
  openblas_set_num_threads(n);
  omp_set_num_threads(omp_threads);
  mkl::set_threads(n);
}
std::string blas_config() { return openblas_get_config(); }
std::string blas_corename() { return openblas_get_corename(); }

}  // namespace gtb::cpu
