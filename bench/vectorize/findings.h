// The vectorize family's derived results: how much each step from loop to vectorized kernel buys,
// per workload and size.
#pragma once

#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::vectorize {

// One numerator record over its denominator: same workload and params (and options where the ratio
// asks); across options the fastest denominator, so a speedup is never inflated by a poor chunk.
struct Speedup {
  std::string workload;
  json params;
  json options;  // set only for ratios that match options (and then only when non-empty)
  double speedup = 0;
  int paired_rounds = 0;  // > 0: from the two records' paired rounds (measured as a pair), else their medians
};

// The speedups of one ratio ("vec4_over_scalar": vec4 over scalar on the GPU).
struct Ratio {
  std::string name;
  std::vector<Speedup> rows;
};

// findings.vectorize = {<ratio name>: [{workload, params, [options], speedup}]}, for each ratio with
// at least one row, in a fixed order: graph_over_launch_loop, vec4_over_scalar,
// vec4_over_launch_loop, vec4_over_serial, fused_over_unfused, thrust_over_vec4,
// autovec_over_scalar, openmp_over_scalar. Only ok records take part.
struct Findings {
  std::vector<Ratio> ratios;  // non-empty ones only
  // launch (seconds per kernel, eager and graph) and stream_bandwidth (bytes moved per second by
  // size, the fastest variant) per backend, for the cost model.
  std::vector<cost::Term> terms;
  // The rows of ratio `name`; nullptr when it has none.
  const std::vector<Speedup>* rows(const std::string& name) const;
};
Findings compute_findings(const std::vector<Record>& records);
// The pairs of records the ratios compare (a numerator with each record it may be divided by), for the
// harness to measure as pairs (gtb::add_pairs).
std::vector<std::pair<std::string, std::string>> compared_pairs(const std::vector<Record>& planned);
void to_json(const Findings& found, json& data);

}  // namespace gtb::vectorize
