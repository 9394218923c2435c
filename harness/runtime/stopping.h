// The stopping rule (warm-up, minimum samples, a noise target and a time budget per record) and the
// suites, one table of default rules that registrations change only where they must.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/document/stats.h"
#include "harness/document/types.h"  // json
#include "kernels/common/clock.h"  // gtb::host_seconds
#include "kernels/common/names.h"

namespace gtb {

// quick: a few seconds per family, the points that show the shape; full: every point, larger budgets.
GTB_NAMED_ENUM(Suite, kSuiteNames, quick, full);
inline Suite suite_from_string(const std::string& s) { return parse_name(kSuiteNames, s, "suite"); }

// The stopping rule's fields, listed once (type, name, default, meaning): StopRule, RuleChange's
// setters, how changes merge and the rule's JSON form (gtb list) all come from this list.
#define GTB_STOP_RULE_FIELDS(X)                                                                        \
  X(int, warmup_samples, 1, "untimed-for-the-record samples run first")                               \
  X(double, warmup_seconds, 0.02, "...and at least this long")                                        \
  X(int, min_samples, 10, "samples before the noise target may stop sampling")                        \
  X(int, max_samples, 1000, "samples at the most")                                                    \
  X(double, noise_target, 0.01, "stop when the median's relative CI half-width is below this")        \
  X(double, budget_seconds, 1.0, "stop sampling after this (once min_samples, or hard_min, are in)")  \
  X(int, hard_min_samples, 3, "a slow case still gets this many samples, whatever the budget")        \
  X(double, min_sample_seconds, 50e-6, "fast operations are repeated until one sample lasts this long") \
  X(std::int64_t, max_reps, std::int64_t(1) << 20, "repetitions per sample at the most")

struct StopRule {
#define GTB_STOP_RULE_MEMBER(type, name, value, what) type name = value;
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_MEMBER)
#undef GTB_STOP_RULE_MEMBER
};

// The rule as JSON, one key per field (gtb list, --gtb_list).
json to_json(const StopRule& rule);

// What a registration changes in its suite's default rule: only the fields it sets, e.g.
//   RuleChange().min_samples(5).budget_seconds(0.2)
class RuleChange {
 public:
#define GTB_STOP_RULE_SETTER(type, name, value, what) \
  RuleChange& name(type v) {                          \
    name##_ = v;                                      \
    return *this;                                     \
  }
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_SETTER)
#undef GTB_STOP_RULE_SETTER

  // `base` with this change's fields over it; a later change over an earlier one wins field by field.
  StopRule applied_to(StopRule base) const;
  RuleChange& then(const RuleChange& later);

 private:
#define GTB_STOP_RULE_CHANGE(type, name, value, what) std::optional<type> name##_;
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_CHANGE)
#undef GTB_STOP_RULE_CHANGE
};

// The suites' default stopping rules (one table, in stopping.cpp).
const StopRule& suite_rule(Suite s);

// The full suite's change for a step that takes a second or more on a CPU (a training step at its
// widest): one warm-up sample and three samples at the least, rather than the full rule's three and five.
inline RuleChange slow_step_full_rule() { return RuleChange().warmup_samples(1).hard_min_samples(3); }

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

// run_samples()'s first part alone: calibrates the repetitions per sample and warms up; the set's
// reps_per_sample and warmup_samples are filled, no sample kept (a pair's side before its rounds).
SampleSet calibrate_and_warm_up(const StopRule& rule, const Sampler& sampler,
                                const std::function<double()>& now = nullptr);

// Rounds of a group of cases measured alternately (the declared A/B pairs, docs/harness.md): every
// round takes one sample of each member. A pair's interval needs kMinPairedRounds rounds at least
// (median_interval); a pair gets kPairRounds where it can (its interval then leaves out the rounds'
// extremes), within kSlowPairBudgets times the members' budgets added up or kSlowPairSeconds,
// whichever is longer (a pair of whole training steps on a slow CPU).
inline constexpr int kMinPairedRounds = 6;
inline constexpr int kPairRounds = 10;
inline constexpr double kSlowPairBudgets = 8.0;
inline constexpr double kSlowPairSeconds = 10.0;
// In the rounds a side whose sample takes at most kRoundSettleMaxSeconds runs untimed samples of its
// own before each timed one, at least one and until kRoundSettleSeconds have passed, so that it is
// measured after itself as alone: right after the other side, a sample meets what that side left (its
// data in the caches, its idle OpenMP threads still spinning on the other core) and the side's samples
// alternate between two speeds with the round's order. The side gets its speed back over a time, not
// a sample: on the 2-core VM of docs/harness.md a 0.6 ms training step ran an eighth slower in rounds
// after a one-step settle than alone, and its paired copy cost read a fifth higher than after 2 ms.
// A longer sample carries that start in a small share of its time, and doubling it would cost the most.
inline constexpr double kRoundSettleMaxSeconds = 0.005;
inline constexpr double kRoundSettleSeconds = 0.002;
// The rounds' stopping rule, pure (exposed for tests): `rules` and `samples` one per member (a
// member's samples, one a round), `pairs` the members' indices (a, b) of the declared pairs,
// `elapsed` the seconds since the first round. Stops on "max_samples" (a member's max_samples), on
// "noise_target" once every member has its min_samples (and every pair kPairRounds) and its own median
// and every pair's median difference are within the members' noise targets (a pair's at A's median's
// scale), or on "time_budget": after the members' budgets added up, once that minimum is in. A group
// without pairs so slow that its minimum would take over twice the budget stops at hard_min_samples (a
// record's rule); a group with pairs, where kPairRounds would take longer than that cap, at
// kMinPairedRounds, and at hard_min_samples where those would too (its pairs' intervals then cannot be
// said). Returns an empty string to go on.
std::string rounds_stop_decision(const std::vector<StopRule>& rules, const std::vector<std::vector<double>>& samples,
                                 const std::vector<std::pair<int, int>>& pairs, double elapsed);

// Calibrates repetitions, warms up, samples until the rule says stop. `now` is injectable for tests
// (defaults to a monotonic host clock used only for the budget, never for the samples themselves).
SampleSet run_samples(const StopRule& rule, const Sampler& sampler,
                      const std::function<double()>& now = nullptr);

}  // namespace gtb
