// Summary statistics over the kept samples of a record.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gtb {

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0;
  double q1 = 0, q3 = 0, iqr = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double cv = 0;      // stddev / mean
  std::int64_t count = 0;
};

// Throws std::invalid_argument on an empty input or a non-finite sample.
Stats compute_stats(const std::vector<double>& samples);
// The statistics of several runs' samples, each run weighing the same however many samples it
// kept: each run stands in as `n` of its own quantiles at (j + 0.5) / n, n the largest run's count
// (the runs' samples as they are when every run kept the same count). A disturbed run whose
// stopping rule kept sampling longer so counts no more than a calm one. Throws as compute_stats.
Stats compute_stats_of_runs(const std::vector<std::vector<double>>& runs);
// Linear-interpolated quantile (Hyndman-Fan type 7, as numpy's default) of sorted data.
double quantile_sorted(const std::vector<double>& sorted, double q);
// The same quantile of data in any order (sorts a copy). Throws std::invalid_argument when empty.
double quantile(std::vector<double> v, double q);
// The median (the mean of the two middle values of an even count), the one definition every part of
// gtb uses. median_inplace reorders `v` instead of copying it (for loops that resample).
double median(std::vector<double> v);
double median_inplace(std::vector<double>& v);
// Relative half-width of a ~95% distribution-free confidence interval of the median (order
// statistics, normal approximation to the binomial). Shrinks as samples accumulate even when each
// sample is noisy, so it is the stopping rule's noise measure. Returns +inf below 6 samples.
double median_ci_relative_halfwidth(const std::vector<double>& samples);
// The median with its ~95% distribution-free confidence interval (the order statistics above), in
// the samples' own unit: what a paired difference reports (it may be negative or zero, so no relative
// width). Empty below 6 samples: too few to say.
struct MedianInterval {
  double median = 0, low = 0, high = 0;
  double halfwidth() const { return (high - low) / 2.0; }
};
std::optional<MedianInterval> median_interval(std::vector<double> samples);
// The noise of a median whose samples came in groups measured apart (the repetitions of a run, the
// runs of a file). Samples of one group share the machine's moment, so pooled they are not independent
// draws of the measurement, and median_ci_relative_halfwidth over them reads too little noise when that
// moment moved between groups (a host that sometimes puts two threads on one core). Returns the larger
// of that and the spread of the groups' own medians, relative to their median: with six groups or more
// the same order-statistic interval over the group medians, with two to five half their range. Empty
// groups are left out; one group: median_ci_relative_halfwidth of it. +inf below 6 samples in all.
double median_noise_relative_halfwidth(const std::vector<std::vector<double>>& groups);

}  // namespace gtb
