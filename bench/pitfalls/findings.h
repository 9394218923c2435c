// The pitfalls family's findings: each habit's cost per step against the clean loop, where it stops
// dominating, and each build's slowdown against the project's default build.
#pragma once

#include <vector>

#include "harness/document/types.h"

namespace gtb::pitfalls {

// findings.pitfalls = {
//   "steps": [{backend, pitfall, variant, width, batch, clean_us, step_us, extra_us, pct_of_clean,
//              dominates, [loss_reads_per_step, us_per_read]}],
//   "dominance": [{backend, pitfall, variant, batch, widths, dominates_up_to_width,
//                  stops_dominating_at_width, under_10pct_from_width}],
//   "builds": [{backend, workload, n, variant, baseline, time_us, baseline_us, slowdown, slowdown_q1,
//               slowdown_q3, samples, rel_norm_err, baseline_rel_norm_err, flags}]}
// A habit dominates when it costs at least as much as the clean step itself (the step takes twice
// as long or more); it stops mattering from the first width above every width where it cost 10% or
// more. Only ok records take part.
void compute_findings(const std::vector<Record>& records, json& findings);

}  // namespace gtb::pitfalls
