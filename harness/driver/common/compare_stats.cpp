// Statistics behind gtb compare: a seeded bootstrap of the median ratio, Mann-Whitney U, Student's t.
#include "harness/driver/common/compare_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "harness/document/stats.h"

namespace gtb::compare {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::size_t Rng::index(std::size_t n) {
  // 53 random bits scaled: the bias is negligible for sample counts in the thousands.
  const auto i = static_cast<std::size_t>(uniform() * static_cast<double>(n));
  return i < n ? i : n - 1;
}

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

namespace {

void resample(const std::vector<double>& from, std::vector<double>& to, Rng& rng) {
  to.resize(from.size());
  for (auto& x : to) x = from[rng.index(from.size())];
}

}  // namespace

RatioInterval bootstrap_median_ratio(const std::vector<double>& num, const std::vector<double>& den,
                                     double confidence, int resamples, std::uint64_t seed) {
  RatioInterval out;
  if (num.empty() || den.empty()) return out;
  std::vector<double> a = num, b = den;
  out.ratio = gtb::median_inplace(a) / gtb::median_inplace(b);
  out.low = out.high = out.ratio;
  if (resamples <= 0) return out;
  Rng rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    resample(num, a, rng);
    resample(den, b, rng);
    ratios.push_back(gtb::median_inplace(a) / gtb::median_inplace(b));
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  out.low = gtb::quantile_sorted(ratios, tail);
  out.high = gtb::quantile_sorted(ratios, 1.0 - tail);
  return out;
}

namespace {

// Upper tail P(U >= u) under H0 for sizes m, n without ties, U = #pairs (x < y), for every u.
// Counts arrangements by the largest element: a y on top adds m pairs, an x on top adds none.
// Depends only on (m, n), so it is cached: calibration asks for the same sizes many times.
const std::vector<double>& exact_upper_tails(std::size_t m, std::size_t n) {
  thread_local std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cache;
  auto it = cache.find({m, n});
  if (it != cache.end()) return it->second;
  // prev[j] / cur[j]: count distributions for sizes (i-1, j) / (i, j).
  std::vector<std::vector<double>> prev(n + 1), cur(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = {1.0};
  for (std::size_t i = 1; i <= m; ++i) {
    cur[0] = {1.0};
    for (std::size_t j = 1; j <= n; ++j) {
      auto& d = cur[j];
      d.assign(i * j + 1, 0.0);
      for (std::size_t k = 0; k < cur[j - 1].size(); ++k) d[k + i] += cur[j - 1][k];
      for (std::size_t k = 0; k < prev[j].size(); ++k) d[k] += prev[j][k];
    }
    std::swap(prev, cur);
  }
  const auto& dist = prev[n];
  double total = 0;
  for (double c : dist) total += c;
  std::vector<double> tails(dist.size() + 1, 0.0);
  for (std::size_t k = dist.size(); k-- > 0;) tails[k] = tails[k + 1] + dist[k] / total;
  return cache.emplace(std::make_pair(m, n), std::move(tails)).first->second;
}

}  // namespace

double mann_whitney_less(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t m = x.size(), n = y.size();
  if (m == 0 || n == 0) return 1.0;
  // Ranks of the pooled sample, average ranks for ties.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(m + n);
  for (double v : x) pooled.emplace_back(v, 0);
  for (double v : y) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::size_t total = m + n;
  double rank_sum_y = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j + 1 < total && pooled[j + 1].first == pooled[i].first) ++j;
    const double avg_rank = 0.5 * static_cast<double>(i + j) + 1.0;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    for (std::size_t k = i; k <= j; ++k)
      if (pooled[k].second == 1) rank_sum_y += avg_rank;
    i = j + 1;
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  // U = #pairs with x < y (+ half the ties): large when x tends to be smaller.
  const double u = rank_sum_y - dn * (dn + 1.0) / 2.0;
  if (!ties && m <= 40 && n <= 40) {
    const auto& tails = exact_upper_tails(m, n);
    const auto k = static_cast<std::size_t>(std::llround(u));
    return std::min(1.0, tails[std::min(k, tails.size() - 1)]);
  }
  const double dt = static_cast<double>(total);
  const double mean = dm * dn / 2.0;
  const double var = dm * dn / 12.0 * ((dt + 1.0) - tie_term / (dt * (dt - 1.0)));
  if (var <= 0) return 1.0;
  const double z = (u - mean - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

double student_t_cdf(double t, int df) {
  if (df < 1 || std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  // A = P(|T| < |t|) as a finite series in cos(theta), theta = atan(|t| / sqrt(df)).
  const double theta = std::atan(std::fabs(t) / std::sqrt(static_cast<double>(df)));
  const double c2 = std::cos(theta) * std::cos(theta);
  const double sn = std::sin(theta);
  double a = 0;
  if (df % 2 == 1) {
    double sum = 0;
    if (df > 1) {
      double term = 1;
      sum = 1;
      for (int k = 3; k <= df - 2; k += 2) {
        term *= c2 * (k - 1) / k;
        sum += term;
      }
      sum *= sn * std::cos(theta);
    }
    a = 2.0 / 3.141592653589793 * (theta + sum);
  } else {
    double term = 1, sum = 1;
    for (int k = 2; k <= df - 2; k += 2) {
      term *= c2 * (k - 1) / k;
      sum += term;
    }
    a = sn * sum;
  }
  a = std::clamp(a, 0.0, 1.0);
  return t >= 0 ? 0.5 + 0.5 * a : 0.5 - 0.5 * a;
}

double student_t_quantile(double p, int df) {
  if (!(p > 0.0 && p < 1.0) || df < 1) return std::numeric_limits<double>::quiet_NaN();
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace gtb::compare
