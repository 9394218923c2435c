// The transfer family's derived results: the latency and bandwidth model of each copy, the best
// bandwidth and percent of it, the pinning break-even, the loader threads that keep a consumer fed,
// and the copy/compute overlap speedup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"
#include "kernels/transfer/transfer.h"

namespace gtb::transfer {

// A consumer idle at most this fraction of the time counts as fed.
inline constexpr double kFedIdle = 0.10;
// The copy model is trusted when every point is within this relative residual.
inline constexpr double kGoodFitResidual = 0.25;

// t(bytes) = latency + bytes / bandwidth fitted to one copy curve.
struct CopyModel {
  std::string key;  // workload/backend/variant, and /memory=M/clock=C on the GPU
  LatencyBandwidthFit fit;
  double half_peak_bytes = 0;  // with fit.ok
  bool good_fit = false;       // with fit.ok: max_rel_residual <= kGoodFitResidual
  double latency_us() const { return fit.latency_seconds * 1e6; }
  double bandwidth_gbps() const { return fit.bandwidth_bytes_per_second / 1e9; }
};

// Pinning `bytes` by `method` against the pageable and pinned H2D copies of that size (host clock).
struct PinBreakEven {
  std::string method;
  std::int64_t bytes = 0;
  double pin_ms = 0;
  std::optional<double> pageable_alloc_ms;  // cudaHostAlloc: the fresh pageable allocation it replaces
  double pageable_copy_ms = 0, pinned_copy_ms = 0;
  std::optional<double> break_even_copies;  // empty: pinned copies are not faster at this size
  // > 0: the per-copy saving (pageable_copy_ms - pinned_copy_ms) is the median of the two copies'
  // paired rounds (measured as a pair); pinned_copy_ms is then pageable_copy_ms minus it
  int paired_rounds = 0;
};

// One loader sweep over worker counts (everything else fixed).
struct Loader {
  std::string key;  // backend/variant/{params but workers}/{options}
  double max_idle_fraction = kFedIdle;
  std::optional<std::int64_t> smallest_fed_workers, smallest_workers_within_10pct_of_best;
  std::vector<std::pair<std::string, double>> idle_fraction_by_workers, samples_per_s_by_workers;  // workers as text
};

// findings.transfer holds each non-empty part under its name: copy_model {key: model},
// best_bandwidth_gbps {workload/backend: GB/s}, percent_of_best {record id: percent},
// pinning_break_even {method: {bytes: ...}}, loader {key: ...}, overlap_speedup_vs_1_stream
// {record id: speedup}. Keyed lists hold each key once, in the order it was first found.
struct Findings {
  std::vector<CopyModel> copy_model;
  std::vector<std::pair<std::string, double>> best_bandwidth_gbps, percent_of_best;
  std::vector<PinBreakEven> pinning_break_even;
  std::vector<Loader> loader;
  std::vector<std::pair<std::string, double>> overlap_speedup_vs_1_stream;
  // h2d_copy / d2h_copy (latency and bandwidth per host memory kind), batch_gather (seconds per
  // sample by sample bytes) and loader (samples/s by workers) per backend, for the cost model.
  std::vector<cost::Term> terms;
};
Findings compute_findings(const std::vector<Record>& records);
// The pairs of records the pinning break-even compares (pageable against pinned or registered copies of
// one size, on the host clock), for the harness to measure as pairs (gtb::add_pairs).
std::vector<std::pair<std::string, std::string>> compared_pairs(const std::vector<Record>& planned);
void to_json(const Findings& found, json& data);

}  // namespace gtb::transfer
