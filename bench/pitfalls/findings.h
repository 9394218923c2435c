// The pitfalls family's findings: each habit's cost per step against the clean loop, where it stops
// dominating, and each build's slowdown against the project's default build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::pitfalls {

// findings.pitfalls = {
//   "steps": [{backend, pitfall, variant, width, batch, clean_us, step_us, extra_us, pct_of_clean,
//              dominates, [loss_reads_per_step, us_per_read]}],
//   "dominance": [{backend, pitfall, variant, batch, widths, dominates_up_to_width,
//                  stops_dominating_at_width (null when it never dominated), under_10pct_from_width}],
//   "builds": [{backend, workload, n, variant, baseline, time_us, baseline_us, slowdown, slowdown_q1,
//               slowdown_q3, samples, rel_norm_err, baseline_rel_norm_err, flags}]}
// A habit dominates when it costs at least as much as the clean step itself (the step takes twice
// as long or more); it stops mattering from the first width above every width where it cost 10% or
// more. Only ok records take part.
struct Step {
  std::string backend, pitfall, variant;
  std::int64_t width = 0, batch = 0;
  double clean_us = 0, step_us = 0, extra_us = 0, pct_of_clean = 0;
  bool dominates = false;
  std::optional<double> loss_reads_per_step, us_per_read;  // loss_read every_<k> only, both or neither
  int paired_runs = 0;  // >= 2: extra_us is the median of the runs' own costs (steps paired by run)
  // > 0: extra_us is the median of the rounds' own costs, the habit's step and the clean one measured
  // as a pair (alternating rounds; docs/harness.md), whatever the runs
  int paired_rounds = 0;
};
struct Dominance {
  std::string backend, pitfall, variant;
  std::int64_t batch = 0;
  std::vector<std::int64_t> widths;
  std::optional<std::int64_t> dominates_up_to_width, stops_dominating_at_width, under_10pct_from_width;
};
struct Build {
  std::string backend, workload;
  std::int64_t n = 0;
  std::string variant, baseline;
  double time_us = 0, baseline_us = 0, slowdown = 0;
  std::optional<double> slowdown_q1, slowdown_q3;  // both or neither
  std::size_t samples = 0;
  double rel_norm_err = -1, baseline_rel_norm_err = -1;
  std::optional<json> flags, isa;  // the record's info, when it has them
};
// The cost model's evidence: host_sync (seconds per loss read) and redundant_copy (seconds per step,
// by kind) terms per backend, the measured steps (loss_read and copies records) for its validation,
// and the pairs among them: a habit's step against the clean step (fewer_syncs, drop_copy).
struct Findings : cost::Evidence {
  std::vector<Step> steps;
  std::vector<Dominance> dominance;
  std::vector<Build> builds;
};
Findings compute_findings(const std::vector<Record>& records);
// Writes `found` as findings.pitfalls's data: each non-empty list under its name.
void to_json(const Findings& found, json& data);

}  // namespace gtb::pitfalls
