// OpenBLAS's cblas_sgemm and oneDNN's dnnl_sgemm called directly, nothing of gtb in between: the
// yardstick gtb's CPU SGEMM is held to (run by hand, never timed in CI). Set OPENBLAS_CORETYPE in
// the environment to try another OpenBLAS kernel set.
// usage: sgemm_direct N [repetitions (default 5)] [openblas|onednn (default both)]; prints the median
// and best GFLOP/s. Run one library per process where it matters: OpenBLAS's idle threads spin for a
// while after each call and slow an OpenMP library that runs right after it on a small machine.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

void report(const char* name, int n, int reps, const std::function<void()>& run) {
  run();  // warm-up: thread pools, packing buffers
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  const double flops = 2.0 * n * double(n) * n;
  std::printf("%-34s n=%d  median %.1f GFLOP/s  best %.1f GFLOP/s  (%d samples)\n", name, n, flops / s[s.size() / 2] / 1e9,
              flops / s.front() / 1e9, reps);
}

// Row sample against float64: a library that computes wrong results has no rate worth printing.
bool close(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int n) {
  for (int i : {0, n / 2, n - 1})
    for (int j : {0, n / 3, n - 1}) {
      double r = 0;
      for (int k = 0; k < n; ++k) r += double(a[std::size_t(i) * n + k]) * double(b[std::size_t(k) * n + j]);
      if (!(std::fabs(r - c[std::size_t(i) * n + j]) <= 1e-3 * std::sqrt(double(n)))) return false;
    }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 0, reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string which = argc > 3 ? argv[3] : "both";
  if (n <= 0 || reps <= 0 || (which != "both" && which != "openblas" && which != "onednn")) {
    std::fprintf(stderr, "usage: sgemm_direct N [repetitions] [openblas|onednn]\n");
    return 2;
  }
  std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size(), NAN);
  std::mt19937 gen(1);
  std::normal_distribution<float> nd;
  for (auto& x : a) x = nd(gen);
  for (auto& x : b) x = nd(gen);
  if (which != "onednn") {
    char name[96];
    std::snprintf(name, sizeof name, "OpenBLAS (%s)", openblas_get_corename());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    if (!close(a, b, c, n)) return std::fprintf(stderr, "%s: wrong result\n", name), 1;
    report(name, n, reps, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    });
  }
  if (which == "openblas") return 0;
  std::fill(c.begin(), c.end(), NAN);
  dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  if (!close(a, b, c, n)) return std::fprintf(stderr, "dnnl_sgemm: wrong result\n"), 1;
  report("oneDNN dnnl_sgemm", n, reps,
         [&] { dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n); });
  return 0;
}
