// oneMKL loaded at run time (dlopen): its SGEMM and BF16 GEMM, threads and version.
// This file never includes OpenBLAS's cblas.h: the two declare the same CBLAS names differently.
#include "kernels/common/cpu/mkl.h"

#include <omp.h>

#include <atomic>
#include <mutex>
#include <stdexcept>

#include "kernels/common/errors.h"

#if GTB_HAVE_MKL
#include "kernels/common/cpu/loader.h"
#include <mkl_cblas.h>
#include <mkl_service.h>
#endif

namespace gtb::cpu {

// Element order within a row matches the source, so the GEMM reads the same matrix in bfloat16.
void to_bf16_rows(const float* src, int rows, int cols, int ld, std::uint16_t* dst) {
  for (int r = 0; r < rows; ++r) {
    const float* s = src + std::size_t(r) * std::size_t(ld);
    std::uint16_t* d = dst + std::size_t(r) * std::size_t(cols);
#pragma omp simd
    for (int j = 0; j < cols; ++j) d[j] = to_bf16(s[j]);
  }
}

namespace mkl {

namespace {
// Threads asked for before the library was loaded (0: none asked: as many as OpenMP has). Setting
// them must not load a library of a gigabyte into a process that never uses it.
std::atomic<int> g_wanted_threads{0};
std::atomic<bool> g_loaded{false};
}  // namespace

#if GTB_HAVE_MKL
namespace {
struct Api : LoadedLibrary {
  decltype(&::cblas_sgemm) sgemm = nullptr;
  decltype(&::cblas_gemm_bf16bf16f32) gemm_bf16 = nullptr;
  int (*set_layer)(int) = nullptr;
  void (*set_threads)(int) = nullptr;
  int (*get_threads)() = nullptr;
  void (*get_version)(MKLVersion*) = nullptr;
};

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    // Through the handle only: MKL's cblas_sgemm must not answer the calls meant for OpenBLAS.
    // libmkl_rt loads its layers into the global scope itself, but after OpenBLAS (which the
    // process loaded at start), so the process's CBLAS lookups still find OpenBLAS; and MKL imports
    // no name that OpenBLAS defines, so none of its own calls can land in OpenBLAS.
    if (!a.open("oneMKL", GTB_MKL_LIBRARY, RTLD_NOW | RTLD_LOCAL)) return;
    a.bind(a.sgemm, "cblas_sgemm");
    a.bind(a.gemm_bf16, "cblas_gemm_bf16bf16f32");
    a.bind(a.set_layer, "MKL_Set_Threading_Layer");
    a.bind(a.set_threads, "MKL_Set_Num_Threads");
    a.bind(a.get_threads, "MKL_Get_Max_Threads");
    a.bind(a.get_version, "MKL_Get_Version");
    if (!a.reason.empty()) return;
    // The threading layer is fixed by the first MKL call: GNU, so that MKL's threads are the
    // process's libgomp threads (Intel's libiomp5 beside libgomp would be two OpenMP runtimes
    // spinning on the same cores).
    if (a.set_layer(MKL_THREADING_GNU) != MKL_THREADING_GNU) {
      a.reason = "oneMKL refused its GNU OpenMP threading layer (libmkl_gnu_thread)";
      return;
    }
    const int wanted = g_wanted_threads.load();
    a.set_threads(wanted > 0 ? wanted : omp_get_max_threads());
    g_loaded = true;
  });
  return a;
}
}  // namespace

bool built() { return true; }
bool available() { return api().reason.empty(); }
std::string unavailable_reason() { return api().reason; }

namespace {
// What MKL_Get_Version reports (oneMKL available).
MKLVersion version_info() {
  MKLVersion v{};
  api().get_version(&v);
  return v;
}
}  // namespace

std::string version() {
  if (!available()) return "";
  const MKLVersion v = version_info();
  return "oneMKL " + std::to_string(v.MajorVersion) + "." + std::to_string(v.UpdateVersion) + "." +
         std::to_string(v.PatchVersion) + " (build " + (v.Build ? v.Build : "?") + ")";
}
std::string processor() {
  if (!available()) return "";
  const MKLVersion v = version_info();
  return v.Processor ? v.Processor : "";
}
std::string threading() { return "gnu_thread (the process's libgomp)"; }
int threads() { return available() ? api().get_threads() : 0; }
void set_threads(int n) {
  g_wanted_threads = n;
  if (g_loaded) api().set_threads(n);
}

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  require();
  api().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
}

void gemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
               const std::uint16_t* b, int ldb, float beta, float* c, int ldc) {
  require();
  api().gemm_bf16(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
                  lda, b, ldb, beta, c, ldc);
}

#else  // !GTB_HAVE_MKL

#ifndef GTB_MKL_REASON
#define GTB_MKL_REASON "built without oneMKL"
#endif
bool built() { return false; }
bool available() { return false; }
std::string unavailable_reason() { return GTB_MKL_REASON; }
std::string version() { return ""; }
std::string processor() { return ""; }
std::string threading() { return ""; }
int threads() { return 0; }
void set_threads(int n) { g_wanted_threads = n, g_loaded = false; }
void sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) { require(); }
void gemm_bf16(bool, bool, int, int, int, float, const std::uint16_t*, int, const std::uint16_t*, int, float, float*,
               int) {
  require();
}

#endif

void require() {
  if (!available()) throw gtb::Skip(unavailable_reason());
}

}  // namespace mkl
}  // namespace gtb::cpu
