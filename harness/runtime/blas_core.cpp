// OpenBLAS core-type selection for a family process: decide, verify in a probe child, re-execute.
#include "gtb/blas_core.h"

#include <cblas.h>  // OpenBLAS's: also declares openblas_get_corename()
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "gtb/context.h"
#include "harness/runtime/process.h"
#include "harness/runtime/startup.h"

namespace gtb {

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

const char* rank_isa(int rank) {
  static const char* names[] = {"SSE", "AVX", "AVX2", "AVX-512"};
  return rank >= 0 && rank <= 3 ? names[rank] : "unknown";
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

struct Probe {
  std::string corename;
  bool verified = false;
  double gflops = 0;
};

// Random operands (never zeros), every transpose combination and sizes that leave partial tiles;
// the largest one is also the speed test (best of a few, all threads).
Probe probe_here() {
  Probe p;
  p.corename = openblas_get_corename();
  std::mt19937 gen(12345);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  p.verified = true;
  struct Shape {
    int m, n, k;
    bool ta, tb;
  };
  const Shape shapes[] = {{67, 45, 83, false, false}, {33, 70, 129, true, false}, {50, 41, 37, false, true},
                          {29, 31, 200, true, true},  {256, 192, 320, false, false}};
  for (const Shape& s : shapes) {
    std::vector<float> a(std::size_t(s.m) * s.k), b(std::size_t(s.k) * s.n), c(std::size_t(s.m) * s.n, NAN);
    for (float& x : a) x = nd(gen);
    for (float& x : b) x = nd(gen);
    const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f,
                a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    double err2 = 0, ref2 = 0;
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double r = 0;
        for (int q = 0; q < s.k; ++q)
          r += double(s.ta ? a[std::size_t(q) * lda + i] : a[std::size_t(i) * lda + q]) *
               double(s.tb ? b[std::size_t(j) * ldb + q] : b[std::size_t(q) * ldb + j]);
        const double got = c[std::size_t(i) * s.n + j];
        if (!std::isfinite(got)) p.verified = false;
        err2 += (got - r) * (got - r);
        ref2 += r * r;
      }
    // FP32 accumulation over k terms: relative Frobenius error well under 1e-5 for these k.
    if (!(std::sqrt(err2 / ref2) < 1e-5)) p.verified = false;
  }
  if (!p.verified) return p;
  const int n = 512;
  std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size());
  for (float& x : a) x = nd(gen);
  for (float& x : b) x = nd(gen);
  double best = 1e30;
  for (int r = 0; r < 6; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, s);  // the first call pays for thread start-up
  }
  p.gflops = 2.0 * n * n * n / best / 1e9;
  return p;
}

// Runs this binary as `--gtb_blas_probe` with OPENBLAS_CORETYPE=core; empty corename on failure.
Probe probe_child(const std::string& core, std::string& why) {
  Probe p;
  ProcessSpec spec;
  spec.program = "/proc/self/exe";
  spec.args = {"--gtb_blas_probe"};
  spec.set_env = {{kEnvCoretype, core}};
  spec.out = Redirect::capture();
  spec.err = Redirect::null();
  const ProcessResult r = run_process(spec);
  if (!r.started()) {
    why = "cannot start the probe: " + std::string(r.error_number ? std::strerror(r.error_number) : r.error.c_str());
    return p;
  }
  std::istringstream is(r.output);
  int ok = 0;
  if (!(is >> p.corename >> ok >> p.gflops)) {
    p.corename.clear();
    why = r.signal ? "the probe died with signal " + std::to_string(r.signal) : "the probe printed no result";
    return p;
  }
  p.verified = ok == 1;
  return p;
}

}  // namespace

int openblas_core_rank(const std::string& corename) {
  const std::string c = lower(corename);
  static const char* sse[] = {"katmai", "coppermine", "northwood", "prescott", "banias", "atom", "core2", "penryn",
                              "dunnington", "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "bobcat",
                              "nano", "generic"};
  static const char* avx[] = {"sandybridge", "bulldozer", "piledriver", "steamroller"};
  static const char* avx2[] = {"haswell", "zen", "excavator"};
  static const char* avx512[] = {"skylakex", "cooperlake", "sapphirerapids"};
  for (const char* n : sse)
    if (c == n) return 0;
  for (const char* n : avx)
    if (c == n) return 1;
  for (const char* n : avx2)
    if (c == n) return 2;
  for (const char* n : avx512)
    if (c == n) return 3;
  return -1;
}

std::string matching_openblas_core(const std::vector<std::string>& f) {
  auto has = [&](const char* x) { return std::find(f.begin(), f.end(), x) != f.end(); };
  // OpenBLAS's SkylakeX kernels need F, DQ, BW and VL; Cooperlake adds BF16 (only sbgemm uses it).
  if (has("avx512f") && has("avx512dq") && has("avx512bw") && has("avx512vl"))
    return has("avx512_bf16") ? "Cooperlake" : "SkylakeX";
  if (has("avx2") && has("fma")) return "Haswell";
  if (has("avx")) return "Sandybridge";
  return "";
}

CoreChoice choose_openblas_core(const std::vector<std::string>& isa_flags, const std::string& detected) {
  const std::string match = matching_openblas_core(isa_flags);
  const int have = openblas_core_rank(detected), want = openblas_core_rank(match);
  if (match.empty()) return {"", "the CPU has no AVX: OpenBLAS's choice " + detected + " stands"};
  if (have < 0) return {"", "OpenBLAS chose " + detected + ", a core type gtb does not rank: kept"};
  if (have >= want)
    return {"", "OpenBLAS's own choice " + detected + " uses the widest vector ISA this CPU has (" +
                    rank_isa(want) + ")"};
  return {match, "OpenBLAS chose " + detected + " (" + rank_isa(have) + " kernels) on a CPU with " + rank_isa(want) +
                     ": " + match + " matches its ISA"};
}

int blas_probe_main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--gtb_blas_probe") != 0) return -1;
  const Probe p = probe_here();
  std::printf("%s %d %.3f\n", p.corename.c_str(), p.verified ? 1 : 0, p.gflops);
  return p.verified ? 0 : 1;
}

void select_openblas_core(char** argv) {
  if (env(kEnvCoretype)) return;  // the user's, or ours after re-execution: both are final
  if (const char* a = env(kEnvAutocore); a && std::strcmp(a, "0") == 0) {
    set_openblas_core_note(std::string(kEnvAutocore) + "=0: OpenBLAS's own choice kept");
    return;
  }
  const std::string detected = openblas_get_corename();
  const CoreChoice choice = choose_openblas_core(cpu_isa_flags(), detected);
  if (choice.core.empty()) {
    set_openblas_core_note(choice.reason);
    return;
  }
  std::string why;
  const Probe child = probe_child(choice.core, why);
  if (child.corename.empty()) {
    set_openblas_core_note(choice.reason + "; not used: " + why);
    return;
  }
  if (lower(child.corename) != lower(choice.core)) {
    set_openblas_core_note(choice.reason + "; not used: OpenBLAS ran " + child.corename + " when asked for " + choice.core);
    return;
  }
  if (!child.verified) {
    set_openblas_core_note(choice.reason + "; not used: its SGEMM failed the float64 check");
    return;
  }
  const Probe here = probe_here();
  char speeds[160];
  std::snprintf(speeds, sizeof speeds, "SGEMM 512^3 %.1f GFLOP/s vs %.1f with %s", child.gflops, here.gflops,
                here.corename.c_str());
  if (!(child.gflops > 1.1 * here.gflops)) {
    set_openblas_core_note(choice.reason + "; not used: not faster (" + speeds + ")");
    return;
  }
  const std::string reason = choice.reason + "; verified against float64 and faster (" + speeds + ")";
  ::setenv(kEnvCoretype, choice.core.c_str(), 1);
  ::setenv(kEnvDetected, detected.c_str(), 1);
  ::setenv(kEnvReason, reason.c_str(), 1);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv);
  const int err = errno;  // execv returns only on failure: carry on with the detected core
  ::unsetenv(kEnvCoretype);
  ::unsetenv(kEnvDetected);
  ::unsetenv(kEnvReason);
  set_openblas_core_note(choice.reason + "; not used: re-executing failed: " + std::strerror(err));
}

bool install_openblas_core_selection() {
  return add_startup({"openblas_core", blas_probe_main, select_openblas_core});
}

}  // namespace gtb
