// The ceilings family's findings from its records (see findings.h for the shape).
#include "bench/ceilings/findings.h"

#include <algorithm>
#include <utility>

namespace gtb::ceilings {

namespace {

// A record that counts towards a ceiling: ok, of the workload and backend, and (on the host) not
// cache-resident.
bool counts_for_ceiling(const Record& r, const char* workload, Backend be) {
  if (r.status != Status::ok || r.workload != workload || r.backend != be || !r.value) return false;
  return !(r.info.contains("cache_resident") && r.info["cache_resident"] == true);
}

// Why a ceiling has no value: the host sizes could not leave the cache, or what became of the
// records that would have measured it.
std::string missing_reason(const std::vector<Record>& recs, const char* workload, Backend be) {
  for (const auto& r : recs)
    if (r.workload == workload && r.backend == be && r.info.contains("ceiling_missing") &&
        r.info["ceiling_missing"].is_string())
      return r.info["ceiling_missing"].get<std::string>();
  int cached = 0, total = 0, skipped = 0;
  std::string other;
  for (const auto& r : recs) {
    if (r.workload != workload || r.backend != be) continue;
    ++total;
    if (r.status == Status::ok && r.value) {
      ++cached;
    } else {
      skipped += r.status == Status::skipped;
      if (other.empty()) other = std::string(to_string(r.status)) + (r.status_detail.empty() ? "" : ": " + r.status_detail);
    }
  }
  if (total == 0) return "not run";
  // Every record skipped (no GPU, say): the skip says it all; the summary does not warn again.
  if (skipped == total) return other;
  if (!other.empty()) return "no record at a size that measures memory was ok (" + other + ")";
  return "every measured size (" + std::to_string(cached) + ") was cache-resident";
}

}  // namespace

std::vector<std::pair<std::string, double>> Findings::measured() const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& c : ceilings)
    if (c.value) out.emplace_back(c.name, *c.value);
  return out;
}

// The ceilings other families divide by: the best rate of each kind over sizes and store kinds,
// host bandwidth only from sizes that are not cache-resident. The stream ceilings of a side are also
// published as their best (`..._stream_gbps`): a streaming kernel with two reads per write may beat
// a plain copy, and is judged against the better of the two.
Findings compute_findings(const std::vector<Record>& recs) {
  auto best = [&](const char* workload, Backend be) {
    double v = 0;
    for (const auto& r : recs)
      if (counts_for_ceiling(r, workload, be) && *r.value > v) v = *r.value;
    return v;
  };
  struct Kind {
    const char* name;
    const char* workload;
    Backend backend;
  };
  const Kind all[] = {{"host_copy_gbps", "stream_copy", Backend::cpu},
                      {"host_triad_gbps", "stream_triad", Backend::cpu},
                      {"host_fma_fp32_tflops", "fma_peak", Backend::cpu},
                      {"device_copy_gbps", "stream_copy", Backend::cuda},
                      {"device_triad_gbps", "stream_triad", Backend::cuda}};
  Findings f;
  for (const auto& c : all) {
    const double v = best(c.workload, c.backend);
    if (v > 0)
      f.ceilings.push_back({c.name, v, ""});
    else
      f.ceilings.push_back({c.name, std::nullopt, missing_reason(recs, c.workload, c.backend)});
  }
  for (const char* side : {"host", "device"}) {
    const std::string copy = std::string(side) + "_copy_gbps", triad = std::string(side) + "_triad_gbps";
    double v = 0;
    for (const auto& c : f.ceilings)
      if (c.value && (c.name == copy || c.name == triad)) v = std::max(v, *c.value);
    if (v > 0) f.ceilings.push_back({std::string(side) + "_stream_gbps", v, ""});
  }
  // Every size counts here, cache-resident ones too: a small step's elementwise work runs from cache.
  for (const Backend be : {Backend::cpu, Backend::cuda})
    f.terms.push_back(cost::table_term(
        cost::term::kStreamBandwidth, be, json::object(), {"bytes"}, "bytes_per_s", recs,
        [](const Record& r) { return r.workload == "stream_copy" || r.workload == "stream_triad"; },
        [](const Record& r) { return json{{"bytes", r.work_per_rep}}; },
        [](const Record& r) { return r.stats->median > 0 ? r.work_per_rep / r.stats->median : 0.0; }, "stream"));
  return f;
}

void to_json(const Findings& found, json& f) {
  for (const auto& c : found.ceilings) {
    if (c.value)
      f["ceilings"][c.name] = *c.value;
    else
      f["ceilings_missing"][c.name] = c.missing;
  }
  cost::write_evidence(f, found.terms, {});
}

}  // namespace gtb::ceilings
