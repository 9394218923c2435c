// Self-test family (built for the tests only, never run by default): a steady compute-bound record
// that can be made slower on purpose, so compare's detection rate is measured on real runs, or made
// to hang, so the driver's time limit is tested on a real family binary.
#include <fnmatch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "gtb/gtb.h"

namespace {

// GTB_SELFTEST_SLOWDOWN=FRACTION[@GLOB]: records of this family whose id matches GLOB (default all)
// do FRACTION more work per repetition than they report. Read here only: no other family sees it.
double planted_slowdown(const std::string& id) {
  const char* env = std::getenv("GTB_SELFTEST_SLOWDOWN");
  if (!env || !*env) return 0.0;
  const std::string spec = env;
  const auto at = spec.find('@');
  const std::string frac = spec.substr(0, at);
  char* end = nullptr;
  const double f = std::strtod(frac.c_str(), &end);
  if (frac.empty() || *end != '\0' || !(f >= 0.0 && f <= 10.0))
    throw std::invalid_argument("GTB_SELFTEST_SLOWDOWN: '" + spec + "' is not FRACTION[@GLOB] with FRACTION in [0, 10]");
  if (at != std::string::npos && fnmatch(spec.substr(at + 1).c_str(), id.c_str(), 0) != 0) return 0.0;
  return f;
}

volatile float g_sink = 0;

// How many times this process has run each case (a run of gtb run --repetitions R runs each R times):
// the record's counter `call`, so a test can see which repetition a figure came from.
int call_of(const std::string& id) {
  static std::map<std::string, int> calls;
  return ++calls[id];
}

// GTB_SELFTEST_FAIL_CALL=N[@GLOB]: the N-th run of a matching case (default all) fails its check, as
// a kernel that goes wrong on a later repetition would.
bool planted_failure(const std::string& id, int call) {
  const char* env = std::getenv("GTB_SELFTEST_FAIL_CALL");
  if (!env || !*env) return false;
  const std::string spec = env;
  const auto at = spec.find('@');
  if (at != std::string::npos && fnmatch(spec.substr(at + 1).c_str(), id.c_str(), 0) != 0) return false;
  return std::atoi(spec.substr(0, at).c_str()) == call;
}

// GTB_SELFTEST_HANG=GLOB: a case whose id matches GLOB spins for ever, as a kernel that never
// returns would, so the driver's time limit can be tested on a real family binary.
bool planted_hang(const std::string& id) {
  const char* env = std::getenv("GTB_SELFTEST_HANG");
  return env && *env && fnmatch(env, id.c_str(), 0) == 0;
}

// Four independent chains of x = x * a + b: a fixed amount of dependent arithmetic per step, no
// memory traffic, so run-to-run spread stays small.
float spin(std::int64_t steps, float seed) {
  float x0 = seed, x1 = seed + 0.25f, x2 = seed + 0.5f, x3 = seed + 0.75f;
  for (std::int64_t i = 0; i < steps; ++i) {
    x0 = x0 * 0.999f + 0.001f;
    x1 = x1 * 0.999f + 0.001f;
    x2 = x2 * 0.999f + 0.001f;
    x3 = x3 * 0.999f + 0.001f;
  }
  return x0 + x1 + x2 + x3;
}

double spin_reference(std::int64_t steps, double seed) {
  double sum = 0;
  for (double x : {seed, seed + 0.25, seed + 0.5, seed + 0.75}) {
    // Closed form of the affine recurrence: its fixed point is 1.
    sum += 1.0 + (x - 1.0) * std::pow(0.999, static_cast<double>(steps));
  }
  return sum;
}

void run_spin(gtb::State& st) {
  const std::int64_t steps = st.get_int("steps");
  if (planted_hang(st.record().id))
    for (;;) g_sink = spin(steps, g_sink);
  const double extra = planted_slowdown(st.record().id);
  const auto ballast = static_cast<std::int64_t>(std::llround(extra * static_cast<double>(steps)));
  const float seed = 0.125f + static_cast<float>(std::rand() % 1000) / 8000.0f;  // not a constant the compiler folds
  const int call = call_of(st.record().id);
  const float got = spin(steps, seed) + (planted_failure(st.record().id, call) ? 1.0f : 0.0f);
  const double want = spin_reference(steps, seed);
  const double rel = std::fabs(got - want) / std::fabs(want);
  st.check(rel < 1e-3, "spin sum " + std::to_string(got) + " vs float64 " + std::to_string(want));
  if (rel >= 1e-3) return;
  st.set_work(static_cast<double>(steps));
  if (ballast > 0) st.info("planted_slowdown", extra);
  float acc = 0;
  st.exec([&] {
    acc += spin(steps, seed);
    if (ballast > 0) acc += spin(ballast, seed);
  });
  g_sink = acc;
  st.counter("call", call, "count");
}

auto& spin_bench = gtb::add("selftest", "spin", "scalar", gtb::Backend::cpu, run_spin)
                       .axis("steps", std::vector<std::int64_t>{262144, 1048576})
                       .rate("throughput", "Gsteps/s", 1e9)
                       .describe("4 dependent multiply-add chains; GTB_SELFTEST_SLOWDOWN can plant a slowdown");

}  // namespace
