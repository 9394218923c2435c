// gtb compare's calibration: how often the decision rule calls a record slower when both sides are
// drawn from the same samples (a false regression), per record and over the file.
#include "harness/driver/common/compare_core.h"

#include <algorithm>

#include "harness/document/stats.h"
#include "harness/driver/common/compare_common.h"
#include "harness/driver/common/compare_stats.h"

namespace gtb::compare {

using namespace detail;

Calibration calibrate(const json& base, const json& next, const Config& cfg, int trials_per_record) {
  Calibration cal;
  cal.done = true;
  const Indexed bi = index_records(base, "BASE"), ni = index_records(next, "NEW");
  Settings s = cfg.settings;
  // Fewer resamples per simulated compare keep the run short; the interval's bounds move little.
  s.resamples = std::min(s.resamples, 500);
  const auto min_n = static_cast<std::size_t>(s.min_samples);
  for (const auto& r : bi.records) {
    if (r.status != Status::ok || cfg.ignored(r)) continue;
    const auto pool = metric_samples(r);
    if (pool.size() < min_n) continue;
    std::size_t n_new = pool.size();
    const auto it = ni.by_key.find(record_key(r));
    if (it != ni.by_key.end()) {
      const auto other = metric_samples(ni.records[it->second]).size();
      if (other >= min_n) n_new = other;
    }
    const double t = cfg.threshold_for(r);
    Rng rng(s.seed ^ fnv1a(record_key(r)) ^ 0xA5A5A5A5ull);
    std::size_t slower = 0;
    std::vector<double> a(pool.size()), b(n_new);
    for (int k = 0; k < trials_per_record; ++k) {
      for (auto& x : a) x = pool[rng.index(pool.size())];
      for (auto& x : b) x = pool[rng.index(pool.size())];
      const Decision d = decide(gtb::median(a), gtb::median(b), a, b, r.metric.better(), t, s, rng.next());
      cal.trials++;
      if (d.verdict == Verdict::slower) ++slower;
      if (d.verdict == Verdict::faster) cal.false_faster++;
      if (d.verdict == Verdict::noisy) cal.noisy++;
    }
    cal.false_slower += slower;
    cal.records++;
    const double rate = trials_per_record > 0 ? static_cast<double>(slower) / trials_per_record : 0.0;
    cal.expected_false_regressions += rate;
    cal.worst.emplace_back(r.id, rate);
  }
  std::stable_sort(cal.worst.begin(), cal.worst.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (cal.worst.size() > 5) cal.worst.resize(5);
  while (!cal.worst.empty() && cal.worst.back().second <= 0.0) cal.worst.pop_back();
  return cal;
}

}  // namespace gtb::compare
