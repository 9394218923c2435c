// Helpers for the compare tests: synthetic records and documents with lognormal samples.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "harness/driver/common/compare_stats.h"
#include "harness/document/results.h"
#include "harness/document/stats.h"
#include "harness/document/types.h"

namespace gtb::testing {

inline std::vector<double> lognormal(compare::Rng& rng, std::size_t n, double median_s, double sigma) {
  std::vector<double> v(n);
  for (auto& x : v) x = median_s * std::exp(sigma * rng.normal());
  return v;
}

// An ok rate record (GB/s) whose value is computed from its samples, as the harness does.
inline Record rate_record(const std::string& workload, json params, std::vector<double> samples,
                          const std::string& family = "transfer", Backend be = Backend::cuda) {
  Record r;
  r.family = family;
  r.workload = workload;
  r.variant = "v";
  r.backend = be;
  r.params = std::move(params);
  r.metric = MetricSpec{"bandwidth", "GB/s", 1e9, MetricKind::rate};
  r.work_per_rep = 1e9;
  r.samples = std::move(samples);
  r.stats = compute_stats(r.samples);
  r.value = r.metric_of_seconds(r.stats->median);
  r.id = make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  return r;
}

inline json context_json(const std::string& gpu_name, const std::string& cpu_model = "Test CPU") {
  json c;
  c["host"] = {{"hostname", "synthetic-fixture"}, {"cpu_model", cpu_model}, {"logical_cpus", 4}, {"omp_threads", 4}};
  if (gpu_name.empty())
    c["gpu"] = {{"available", false}, {"reason", "no GPU in this test"}};
  else
    c["gpu"] = {{"available", true}, {"devices", json::array({json{{"index", 0}, {"name", gpu_name}}})}};
  return c;
}

inline json doc_of(const std::vector<Record>& records, const std::string& gpu_name = "Test GPU",
                   const std::string& cpu_model = "Test CPU") {
  json doc = make_document(context_json(gpu_name, cpu_model), "quick", json::array(), records, json::object());
  validate_document(doc);
  return doc;
}

}  // namespace gtb::testing
