// Summary statistics: order statistics with numpy's default interpolation, moments in double.
#include "harness/document/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace gtb {

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (q <= 0) return s.front();
  if (q >= 1) return s.back();
  const double pos = q * double(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - double(lo);
  return s[lo] + frac * (s[hi] - s[lo]);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, q);
}

double median_inplace(std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("median of an empty sample");
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lo + 0.5 * (hi - lo);  // as quantile_sorted(sorted, 0.5) computes it, to the last bit
}

double median(std::vector<double> v) { return median_inplace(v); }

Stats compute_stats(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample");
  for (double x : samples)
    if (!std::isfinite(x)) throw std::invalid_argument("statistics of a sample with a non-finite value");
  std::vector<double> s(samples);
  std::sort(s.begin(), s.end());
  Stats st;
  st.count = static_cast<std::int64_t>(s.size());
  st.min = s.front();
  st.max = s.back();
  st.median = quantile_sorted(s, 0.5);
  st.q1 = quantile_sorted(s, 0.25);
  st.q3 = quantile_sorted(s, 0.75);
  st.iqr = st.q3 - st.q1;
  st.mean = std::accumulate(s.begin(), s.end(), 0.0) / double(s.size());
  double ss = 0;
  for (double x : s) ss += (x - st.mean) * (x - st.mean);
  st.stddev = s.size() > 1 ? std::sqrt(ss / double(s.size() - 1)) : 0.0;
  st.cv = st.mean != 0 ? st.stddev / st.mean : 0.0;
  return st;
}

Stats compute_stats_of_runs(const std::vector<std::vector<double>>& runs) {
  std::size_t n = 0;
  bool equal = true;
  for (const auto& r : runs) {
    if (n && r.size() != n) equal = false;
    n = std::max(n, r.size());
  }
  std::vector<double> pooled;
  for (const auto& r : runs) {
    if (r.empty()) continue;
    if (equal) {
      pooled.insert(pooled.end(), r.begin(), r.end());
      continue;
    }
    std::vector<double> s(r);
    std::sort(s.begin(), s.end());
    for (std::size_t j = 0; j < n; ++j) pooled.push_back(quantile_sorted(s, (double(j) + 0.5) / double(n)));
  }
  Stats st = compute_stats(pooled);
  std::int64_t count = 0;
  for (const auto& r : runs) count += static_cast<std::int64_t>(r.size());
  st.count = count;  // the samples kept, not the stand-ins
  return st;
}

namespace {
// Ranks of a ~95% CI for the median of n sorted samples: n/2 -+ 1.96 sqrt(n)/2 (binomial, normal
// approximation). n >= 6.
std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n) {
  const double half = 1.96 * std::sqrt(double(n)) / 2.0;
  const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(double(n) / 2.0 - half)));
  const auto hi = static_cast<std::size_t>(std::min(double(n - 1), std::ceil(double(n) / 2.0 + half) - 1.0));
  return {lo, hi};
}
}  // namespace

double median_ci_relative_halfwidth(const std::vector<double>& samples) {
  const std::size_t n = samples.size();
  if (n < 6) return std::numeric_limits<double>::infinity();
  std::vector<double> s(samples);
  std::sort(s.begin(), s.end());
  const auto [lo, hi] = median_ci_ranks(n);
  const double med = quantile_sorted(s, 0.5);
  if (med <= 0) return std::numeric_limits<double>::infinity();
  return (s[hi] - s[lo]) / (2.0 * med);
}

std::optional<MedianInterval> median_interval(std::vector<double> s) {
  if (s.size() < 6) return std::nullopt;
  for (double x : s)
    if (!std::isfinite(x)) throw std::invalid_argument("median_interval: a non-finite value");
  std::sort(s.begin(), s.end());
  const auto [lo, hi] = median_ci_ranks(s.size());
  return MedianInterval{quantile_sorted(s, 0.5), s[lo], s[hi]};
}

double median_noise_relative_halfwidth(const std::vector<std::vector<double>>& groups) {
  std::vector<double> pooled, medians;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    pooled.insert(pooled.end(), g.begin(), g.end());
    medians.push_back(median(g));
  }
  const double within = median_ci_relative_halfwidth(pooled);
  if (medians.size() < 2 || !std::isfinite(within)) return within;
  std::sort(medians.begin(), medians.end());
  const double mid = quantile_sorted(medians, 0.5);
  if (mid <= 0) return std::numeric_limits<double>::infinity();
  const double between = medians.size() >= 6 ? median_ci_relative_halfwidth(medians)
                                             : (medians.back() - medians.front()) / (2.0 * mid);
  return std::max(within, between);
}

}  // namespace gtb
