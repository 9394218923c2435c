// Transfer-family math written once: latency/bandwidth fit, half-peak size, pinning break-even,
// overlap and idle fractions, and the per-element functions the CPU and the GPU both evaluate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/hd.h"
#include "kernels/common/random.h"

namespace gtb::transfer {

// ---- per-element math shared by host and device -------------------------------------------------

// Word i of batch `batch` in the loader: every word distinct, so a misplaced or stale batch fails.
GTB_HD std::uint64_t loader_word(std::uint64_t seed, std::uint64_t batch, std::uint64_t i) {
  return mix64(seed ^ (batch * 0x9E3779B97F4A7C15ULL) ^ (i * 0xD1B54A32D192ED03ULL));
}

// The overlap workload's compute: `iters` steps of a contraction towards 1, so float error stays
// bounded however long the kernel is made.
GTB_HD float overlap_step(float x) { return x * 0.9990234375f + 0.0009765625f; }
GTB_HD float overlap_compute(float x, int iters) {
  for (int k = 0; k < iters; ++k) x = overlap_step(x);
  return x;
}

// ---- latency + bandwidth model -----------------------------------------------------------------

// t(bytes) = latency + bytes / bandwidth, fitted by least squares over (bytes, seconds) points.
struct LatencyBandwidthFit {
  bool ok = false;
  std::string note;                       // why not ok, or what was adjusted (latency clamped to 0)
  double latency_seconds = 0;             // L
  double bandwidth_bytes_per_second = 0;  // B
  double max_rel_residual = 0;            // max |model - measured| / measured over the points
  std::size_t points = 0;
};

// relative: minimise sum ((t_i - model_i) / t_i)^2, so 1 KiB and 1 GiB points count alike (plain
// least squares lets the largest sizes decide everything and leaves L as noise).
enum class FitWeighting { absolute, relative };

// Throws std::invalid_argument on mismatched lengths or non-positive/non-finite inputs. Returns
// ok = false (with a note) when fewer than two distinct sizes or time does not grow with size.
LatencyBandwidthFit fit_latency_bandwidth(const std::vector<double>& bytes, const std::vector<double>& seconds,
                                          FitWeighting weighting = FitWeighting::relative);
double model_seconds(const LatencyBandwidthFit& fit, double bytes);
// Transfer size at which the model reaches half its peak bandwidth: L * B.
double half_peak_bytes(const LatencyBandwidthFit& fit);

// ---- pinning break-even --------------------------------------------------------------------------

// Number of copies n after which pinning pays back: n * t_pageable >= pin_extra + n * t_pinned, i.e.
// n = pin_extra / (t_pageable - t_pinned). nullopt when pinned copies are not faster (never pays).
// Throws std::invalid_argument on negative or non-finite inputs.
std::optional<double> break_even_reuse(double pin_extra_seconds, double pageable_copy_seconds,
                                       double pinned_copy_seconds);

// ---- overlap and idle ----------------------------------------------------------------------------

// (t_copy + t_compute - t_total) / min(t_copy, t_compute): 0 = serial, 1 = the shorter part fully
// hidden. Not clamped, so a measurement problem shows. Throws on non-positive inputs.
double overlap_fraction(double copy_seconds, double compute_seconds, double total_seconds);

// Fraction of [first start, last end] during which no busy interval is running (the consumer
// waited for data). Intervals may be in any order and may overlap. Throws on end < start.
double idle_fraction(const std::vector<double>& busy_start, const std::vector<double>& busy_end);

// Smallest worker count whose idle fraction is at most `max_idle`; nullopt if none.
std::optional<std::int64_t> smallest_fed_workers(const std::vector<std::pair<std::int64_t, double>>& workers_idle,
                                                 double max_idle);

// Smallest worker count whose throughput is at least `fraction` of the best in the sweep: where
// adding workers stops paying. nullopt on an empty sweep. Throws unless 0 < fraction <= 1.
std::optional<std::int64_t> smallest_near_best(const std::vector<std::pair<std::int64_t, double>>& workers_throughput,
                                               double fraction);

// ---- sizes ---------------------------------------------------------------------------------------

// lo, lo*factor, ... up to and including hi when it lands on the sequence. Throws on bad input.
std::vector<std::int64_t> log_sizes(std::int64_t lo, std::int64_t hi, std::int64_t factor);

}  // namespace gtb::transfer
