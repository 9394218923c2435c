// Statistics behind gtb compare: a seeded bootstrap of the median ratio, Mann-Whitney U, Student's t.
#pragma once

#include <cstdint>
#include <vector>

namespace gtb::compare {

// Small deterministic generator (splitmix64): the same seed gives the same verdicts on every
// platform, which std:: distributions do not promise.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();                   // [0, 1)
  std::size_t index(std::size_t n);   // [0, n)
  double normal();                    // standard normal (Box-Muller)

 private:
  std::uint64_t state_;
};

// Ratio of medians median(num) / median(den) and its bootstrap percentile interval: both sides are
// resampled independently `resamples` times. `confidence` is two-sided (0.99 -> 0.5% and 99.5%).
struct RatioInterval {
  double ratio = 1.0;
  double low = 1.0;
  double high = 1.0;
};
RatioInterval bootstrap_median_ratio(const std::vector<double>& num, const std::vector<double>& den,
                                     double confidence, int resamples, std::uint64_t seed);

// One-sided Mann-Whitney U test of H1 "values in `x` tend to be smaller than values in `y`".
// Exact distribution for small samples without ties, normal approximation with tie and continuity
// corrections otherwise. Returns the p-value (1.0 when either side is empty).
double mann_whitney_less(const std::vector<double>& x, const std::vector<double>& y);

// Student's t distribution with an integer number of degrees of freedom `df` >= 1: the CDF
// P(T <= t) in closed form (Abramowitz & Stegun 26.7.3/26.7.4), and its inverse by bisection.
double student_t_cdf(double t, int df);
double student_t_quantile(double p, int df);

}  // namespace gtb::compare
