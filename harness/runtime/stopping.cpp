// The stopping rule and the sampling loop every measurement goes through.
#include "harness/runtime/stopping.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace gtb {

// The suites and their default rules. quick: a 2 % noise target within a quarter second per record;
// full: 0.5 % within three seconds, and more warm-up. Built on first use, so registrations that run
// during static initialisation may already ask for it.
const StopRule& suite_rule(Suite s) {
  static const std::pair<Suite, StopRule> table[] = {
      {Suite::quick, RuleChange()
                         .warmup_samples(1)
                         .warmup_seconds(0.01)
                         .min_samples(7)
                         .max_samples(200)
                         .noise_target(0.02)
                         .budget_seconds(0.25)
                         .hard_min_samples(3)
                         .applied_to(StopRule{})},
      {Suite::full, RuleChange()
                        .warmup_samples(3)
                        .warmup_seconds(0.1)
                        .min_samples(20)
                        .max_samples(2000)
                        .noise_target(0.005)
                        .budget_seconds(3.0)
                        .hard_min_samples(5)
                        .applied_to(StopRule{})},
  };
  for (const auto& [suite, rule] : table)
    if (suite == s) return rule;
  throw std::invalid_argument("no stopping rule for suite " + std::to_string(static_cast<int>(s)));
}

StopRule RuleChange::applied_to(StopRule r) const {
#define GTB_STOP_RULE_APPLY(type, name, value, what) \
  if (name##_) r.name = *name##_;
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_APPLY)
#undef GTB_STOP_RULE_APPLY
  return r;
}

RuleChange& RuleChange::then(const RuleChange& later) {
#define GTB_STOP_RULE_THEN(type, name, value, what) \
  if (later.name##_) name##_ = later.name##_;
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_THEN)
#undef GTB_STOP_RULE_THEN
  return *this;
}

json to_json(const StopRule& rule) {
  json j = json::object();
#define GTB_STOP_RULE_JSON(type, name, value, what) j[#name] = rule.name;
  GTB_STOP_RULE_FIELDS(GTB_STOP_RULE_JSON)
#undef GTB_STOP_RULE_JSON
  return j;
}

std::string stop_decision(const StopRule& rule, const std::vector<double>& samples, double elapsed) {
  const auto n = static_cast<int>(samples.size());
  if (n >= rule.max_samples) return "max_samples";
  if (n >= rule.min_samples && median_ci_relative_halfwidth(samples) <= rule.noise_target) return "noise_target";
  // The budget ends sampling once the minimum is in. A case so slow that reaching the minimum would
  // take over twice the budget stops at hard_min_samples instead.
  if (elapsed >= rule.budget_seconds) {
    if (n >= rule.min_samples) return "time_budget";
    const double projected = elapsed / std::max(1, n) * rule.min_samples;
    if (n >= rule.hard_min_samples && projected > 2.0 * rule.budget_seconds) return "time_budget";
  }
  return {};
}

namespace {
void check_rule(const StopRule& rule) {
  if (rule.min_samples < 1 || rule.max_samples < rule.min_samples || rule.hard_min_samples < 1 ||
      rule.budget_seconds <= 0 || rule.noise_target <= 0)
    throw std::invalid_argument("invalid stopping rule");
}
double checked_sample(const Sampler& sampler, std::int64_t reps) {
  const double t = sampler(reps);
  if (!std::isfinite(t) || t < 0) throw std::runtime_error("sampler returned a non-finite or negative time");
  return t;
}
}  // namespace

SampleSet calibrate_and_warm_up(const StopRule& rule, const Sampler& sampler, const std::function<double()>& now_fn) {
  check_rule(rule);
  const auto now = now_fn ? now_fn : std::function<double()>(host_seconds);
  auto take = [&](std::int64_t reps) { return checked_sample(sampler, reps); };
  SampleSet out;
  const double start = now();

  // Calibrate: repeat fast operations until one sample lasts min_sample_seconds, so clock resolution
  // and per-call overhead stay small against the sample.
  std::int64_t reps = 1;
  double t = take(reps);
  out.warmup_samples = 1;
  while (t < rule.min_sample_seconds && reps < rule.max_reps) {
    const double want = t > 0 ? rule.min_sample_seconds / t : 16.0;
    const auto grow = static_cast<std::int64_t>(std::ceil(std::min(16.0, std::max(2.0, want * 1.2))));
    reps = std::min(rule.max_reps, reps * grow);
    t = take(reps);
    ++out.warmup_samples;
  }
  out.reps_per_sample = reps;

  // Warm-up at the final repetition count: caches, clocks, lazy initialisation.
  const double warm_start = now();
  for (int i = 1; i < rule.warmup_samples || now() - warm_start < rule.warmup_seconds; ++i) {
    if (now() - start > rule.budget_seconds) break;
    take(reps);
    ++out.warmup_samples;
  }
  out.total_seconds = now() - start;
  return out;
}

SampleSet run_samples(const StopRule& rule, const Sampler& sampler, const std::function<double()>& now_fn) {
  const auto now = now_fn ? now_fn : std::function<double()>(host_seconds);
  const double start = now();
  SampleSet out = calibrate_and_warm_up(rule, sampler, now);
  const std::int64_t reps = out.reps_per_sample;
  const double sample_start = now();
  while (true) {
    out.seconds_per_rep.push_back(checked_sample(sampler, reps) / double(reps));
    const std::string why = stop_decision(rule, out.seconds_per_rep, now() - sample_start);
    if (!why.empty()) {
      out.stop_reason = why;
      break;
    }
  }
  out.total_seconds = now() - start;
  out.stats = compute_stats(out.seconds_per_rep);
  return out;
}

std::string rounds_stop_decision(const std::vector<StopRule>& rules, const std::vector<std::vector<double>>& samples,
                                 const std::vector<std::pair<int, int>>& pairs, double elapsed) {
  if (rules.empty() || rules.size() != samples.size()) throw std::invalid_argument("rounds_stop_decision: one rule a member");
  std::size_t n = samples.front().size();
  for (const auto& s : samples) n = std::min(n, s.size());
  int min_samples = 0, max_samples = 0, hard_min = 0;
  double budget = 0;
  for (const StopRule& r : rules) {
    min_samples = std::max(min_samples, r.min_samples);
    max_samples = max_samples == 0 ? r.max_samples : std::min(max_samples, r.max_samples);
    hard_min = std::max(hard_min, r.hard_min_samples);
    budget += r.budget_seconds;
  }
  const int rounds = int(n);
  const int want = pairs.empty() ? min_samples : std::max(min_samples, kPairRounds);
  if (rounds >= max_samples && rounds >= std::min(want, kPairRounds)) return "max_samples";
  const bool enough = rounds >= want;
  if (enough) {
    bool quiet = true;
    for (std::size_t i = 0; i < rules.size() && quiet; ++i)
      quiet = median_ci_relative_halfwidth(samples[i]) <= rules[i].noise_target;
    for (const auto& [a, b] : pairs) {
      if (!quiet) break;
      std::vector<double> d;
      for (std::size_t i = 0; i < n; ++i) d.push_back(samples[std::size_t(a)][i] - samples[std::size_t(b)][i]);
      const auto ci = median_interval(d);
      const double scale = median(samples[std::size_t(a)]);
      quiet = ci && scale > 0 && ci->halfwidth() <= rules[std::size_t(a)].noise_target * scale;
    }
    if (quiet) return "noise_target";
  }
  // The budget ends the rounds once the minimum is in; a slow group stops earlier (see stopping.h).
  if (elapsed >= budget) {
    if (enough) return "time_budget";
    const double per_round = elapsed / std::max(1, rounds);
    if (pairs.empty()) {
      if (rounds >= hard_min && per_round * min_samples > 2.0 * budget) return "time_budget";
    } else {
      const double cap = std::max(kSlowPairBudgets * budget, kSlowPairSeconds);
      if (rounds >= std::max(hard_min, kMinPairedRounds) && per_round * want > cap) return "time_budget";
      if (rounds >= hard_min && per_round * kMinPairedRounds > cap) return "time_budget";
    }
  }
  return {};
}

}  // namespace gtb
