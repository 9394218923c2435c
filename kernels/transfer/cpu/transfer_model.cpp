// The transfer family's pure math: least-squares latency/bandwidth fit, break-even, overlap, idle.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/transfer/transfer.h"

namespace gtb::transfer {
namespace {
bool positive_finite(double x) { return std::isfinite(x) && x > 0; }
}  // namespace

LatencyBandwidthFit fit_latency_bandwidth(const std::vector<double>& bytes, const std::vector<double>& seconds,
                                          FitWeighting weighting) {
  if (bytes.size() != seconds.size())
    throw std::invalid_argument("fit_latency_bandwidth: " + std::to_string(bytes.size()) + " sizes but " +
                                std::to_string(seconds.size()) + " times");
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (!positive_finite(bytes[i]) || !positive_finite(seconds[i]))
      throw std::invalid_argument("fit_latency_bandwidth: point " + std::to_string(i) +
                                  " is not positive and finite (bytes " + std::to_string(bytes[i]) + ", seconds " +
                                  std::to_string(seconds[i]) + ")");
  LatencyBandwidthFit fit;
  fit.points = bytes.size();
  if (bytes.empty()) {
    fit.note = "no points";
    return fit;
  }
  const auto [mn, mx] = std::minmax_element(bytes.begin(), bytes.end());
  if (*mx <= *mn) {
    fit.note = "need at least two distinct sizes";
    return fit;
  }
  // Sizes scaled to [0, 1] and times to the largest time keep the normal equations well conditioned.
  const double xs = *mx;
  const double ys = *std::max_element(seconds.begin(), seconds.end());
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double x = bytes[i] / xs, y = seconds[i] / ys;
    const double w = weighting == FitWeighting::relative ? 1.0 / (y * y) : 1.0;
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  double intercept = (sy - slope * sx) / sw;
  if (intercept < 0) {
    // A negative latency is noise at the small end; the through-origin fit is the honest model.
    slope = sxy / sxx;
    intercept = 0;
    fit.note = "latency clamped to 0";
  }
  if (!(slope > 0) || !std::isfinite(slope)) {
    fit.note = "time does not grow with size: no bandwidth term";
    return fit;
  }
  fit.latency_seconds = intercept * ys;
  fit.bandwidth_bytes_per_second = xs / (slope * ys);
  fit.ok = true;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    fit.max_rel_residual =
        std::max(fit.max_rel_residual, std::fabs(model_seconds(fit, bytes[i]) - seconds[i]) / seconds[i]);
  return fit;
}

double model_seconds(const LatencyBandwidthFit& fit, double bytes) {
  return fit.latency_seconds + bytes / fit.bandwidth_bytes_per_second;
}

double half_peak_bytes(const LatencyBandwidthFit& fit) {
  if (!fit.ok) throw std::invalid_argument("half_peak_bytes: the fit failed (" + fit.note + ")");
  return fit.latency_seconds * fit.bandwidth_bytes_per_second;
}

std::optional<double> break_even_reuse(double pin_extra_seconds, double pageable_copy_seconds,
                                       double pinned_copy_seconds) {
  for (double v : {pin_extra_seconds, pageable_copy_seconds, pinned_copy_seconds})
    if (!std::isfinite(v) || v < 0)
      throw std::invalid_argument("break_even_reuse: times must be finite and >= 0, got " + std::to_string(v));
  const double saved = pageable_copy_seconds - pinned_copy_seconds;
  if (!(saved > 0)) return std::nullopt;
  return pin_extra_seconds / saved;
}

double overlap_fraction(double copy_seconds, double compute_seconds, double total_seconds) {
  if (!positive_finite(copy_seconds) || !positive_finite(compute_seconds) || !positive_finite(total_seconds))
    throw std::invalid_argument("overlap_fraction: times must be positive and finite");
  return (copy_seconds + compute_seconds - total_seconds) / std::min(copy_seconds, compute_seconds);
}

double idle_fraction(const std::vector<double>& busy_start, const std::vector<double>& busy_end) {
  if (busy_start.size() != busy_end.size())
    throw std::invalid_argument("idle_fraction: start and end counts differ");
  if (busy_start.empty()) throw std::invalid_argument("idle_fraction: no intervals");
  std::vector<std::pair<double, double>> iv(busy_start.size());
  for (std::size_t i = 0; i < iv.size(); ++i) {
    if (!(busy_end[i] >= busy_start[i]) || !std::isfinite(busy_start[i]) || !std::isfinite(busy_end[i]))
      throw std::invalid_argument("idle_fraction: interval " + std::to_string(i) + " ends before it starts");
    iv[i] = {busy_start[i], busy_end[i]};
  }
  std::sort(iv.begin(), iv.end());
  double busy = 0, cur_s = iv[0].first, cur_e = iv[0].second, last = iv[0].second;
  for (std::size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].first > cur_e) {
      busy += cur_e - cur_s;
      cur_s = iv[i].first;
      cur_e = iv[i].second;
    } else {
      cur_e = std::max(cur_e, iv[i].second);
    }
    last = std::max(last, iv[i].second);
  }
  busy += cur_e - cur_s;
  const double span = last - iv[0].first;
  if (!(span > 0)) return 0.0;
  return std::clamp(1.0 - busy / span, 0.0, 1.0);
}

std::optional<std::int64_t> smallest_fed_workers(const std::vector<std::pair<std::int64_t, double>>& workers_idle,
                                                 double max_idle) {
  std::optional<std::int64_t> best;
  for (const auto& [w, idle] : workers_idle)
    if (idle <= max_idle && (!best || w < *best)) best = w;
  return best;
}

std::optional<std::int64_t> smallest_near_best(const std::vector<std::pair<std::int64_t, double>>& workers_throughput,
                                               double fraction) {
  if (!(fraction > 0 && fraction <= 1)) throw std::invalid_argument("smallest_near_best: fraction must be in (0, 1]");
  double best = 0;
  for (const auto& [w, x] : workers_throughput) best = std::max(best, x);
  std::optional<std::int64_t> out;
  for (const auto& [w, x] : workers_throughput)
    if (x >= fraction * best && (!out || w < *out)) out = w;
  return out;
}

std::vector<std::int64_t> log_sizes(std::int64_t lo, std::int64_t hi, std::int64_t factor) {
  if (lo <= 0 || hi < lo || factor < 2)
    throw std::invalid_argument("log_sizes: need 0 < lo <= hi and factor >= 2");
  std::vector<std::int64_t> out;
  for (std::int64_t s = lo; s <= hi; s *= factor) {
    out.push_back(s);
    if (s > hi / factor) break;
  }
  return out;
}

}  // namespace gtb::transfer
