// The stopping rule (warm-up, minimum samples, a noise target and a time budget per record) and the
// suites, one table of default rules that registrations change only where they must.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/document/stats.h"
#include "kernels/common/clock.h"  // gtb::host_seconds
#include "kernels/common/names.h"

namespace gtb {

// quick: a few seconds per family, the points that show the shape; full: every point, larger budgets.
enum class Suite { quick, full };
inline constexpr NameTable<Suite, 2> kSuiteNames = {{{Suite::quick, "quick"}, {Suite::full, "full"}}};
inline const char* to_string(Suite s) { return name_of(kSuiteNames, s); }
inline Suite suite_from_string(const std::string& s) { return parse_name(kSuiteNames, s, "suite"); }

struct StopRule {
  int warmup_samples = 1;          // untimed-for-the-record samples run first
  double warmup_seconds = 0.02;    // ...and at least this long
  int min_samples = 10;
  int max_samples = 1000;
  double noise_target = 0.01;      // stop when the median's relative CI half-width is below this
  double budget_seconds = 1.0;     // stop sampling after this (once min_samples, or hard_min, are in)
  int hard_min_samples = 3;        // a slow case still gets this many samples, whatever the budget
  double min_sample_seconds = 50e-6;  // fast operations are repeated until one sample lasts this long
  std::int64_t max_reps = 1 << 20;
};

// What a registration changes in its suite's default rule: only the fields it sets, e.g.
//   RuleChange().min_samples(5).budget_seconds(0.2)
class RuleChange {
 public:
  RuleChange& warmup_samples(int v) { return set(warmup_samples_, v); }
  RuleChange& warmup_seconds(double v) { return set(warmup_seconds_, v); }
  RuleChange& min_samples(int v) { return set(min_samples_, v); }
  RuleChange& max_samples(int v) { return set(max_samples_, v); }
  RuleChange& noise_target(double v) { return set(noise_target_, v); }
  RuleChange& budget_seconds(double v) { return set(budget_seconds_, v); }
  RuleChange& hard_min_samples(int v) { return set(hard_min_samples_, v); }
  RuleChange& min_sample_seconds(double v) { return set(min_sample_seconds_, v); }
  RuleChange& max_reps(std::int64_t v) { return set(max_reps_, v); }

  // `base` with this change's fields over it; a later change over an earlier one wins field by field.
  StopRule applied_to(StopRule base) const;
  RuleChange& then(const RuleChange& later);

 private:
  template <class T, class V>
  RuleChange& set(std::optional<T>& field, V v) {
    field = v;
    return *this;
  }
  std::optional<int> warmup_samples_, min_samples_, max_samples_, hard_min_samples_;
  std::optional<double> warmup_seconds_, noise_target_, budget_seconds_, min_sample_seconds_;
  std::optional<std::int64_t> max_reps_;
};

// The suites' default stopping rules (one table, in stopping.cpp).
const StopRule& suite_rule(Suite s);

// Runs `reps` repetitions of the measured operation and returns their total seconds.
using Sampler = std::function<double(std::int64_t reps)>;

struct SampleSet {
  std::vector<double> seconds_per_rep;  // one entry per kept sample
  std::int64_t reps_per_sample = 1;
  std::int64_t warmup_samples = 0;
  std::string stop_reason;  // "noise_target", "time_budget", "max_samples"
  double total_seconds = 0;
  Stats stats;
};

// Pure decision used by run_samples(): should sampling stop, and why? Exposed for tests.
// Returns an empty string to continue.
std::string stop_decision(const StopRule& rule, const std::vector<double>& samples, double elapsed_seconds);

// Calibrates repetitions, warms up, samples until the rule says stop. `now` is injectable for tests
// (defaults to a monotonic host clock used only for the budget, never for the samples themselves).
SampleSet run_samples(const StopRule& rule, const Sampler& sampler,
                      const std::function<double()>& now = nullptr);

}  // namespace gtb
