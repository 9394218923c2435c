// The transfer family's findings from its records (see findings.h for the shape).
#include "bench/transfer/findings.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gtb::transfer {

namespace {

std::string opt(const Record& r, const char* name) {
  if (!r.options.contains(name)) return "";
  const auto& v = r.options.at(name);
  return v.is_string() ? v.get<std::string>() : v.dump();
}
// Usable and with samples: the copy model fits the median seconds.
bool measured(const Record& r) { return usable(r) && r.stats; }
std::int64_t bytes_of(const Record& r) { return r.params.value("bytes", std::int64_t(0)); }

// Sets `key` in a keyed list: a key found again keeps its place and takes the new value.
template <class K, class V>
void set_keyed(std::vector<std::pair<K, V>>& list, const K& key, V value) {
  for (auto& [k, v] : list)
    if (k == key) {
      v = std::move(value);
      return;
    }
  list.emplace_back(key, std::move(value));
}

void copy_findings(const std::vector<Record>& recs, Findings& f) {
  // One curve per workload x backend x variant x memory x clock.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> curves;
  std::map<std::string, double> best;  // per workload x backend
  for (const auto& r : recs) {
    if (!measured(r) || r.workload.rfind("copy_", 0) != 0) continue;
    std::string key = r.workload + "/" + to_string(r.backend) + "/" + r.variant;
    if (r.backend == Backend::cuda) key += "/memory=" + opt(r, "memory") + "/clock=" + opt(r, "clock");
    auto& c = curves[key];
    c.first.push_back(double(bytes_of(r)));
    c.second.push_back(r.stats->median);
    double& b = best[r.workload + "/" + to_string(r.backend)];
    b = std::max(b, *r.value);
  }
  for (const auto& [key, c] : curves) {
    CopyModel m;
    m.key = key;
    m.fit = fit_latency_bandwidth(c.first, c.second);
    if (m.fit.ok) {
      m.half_peak_bytes = half_peak_bytes(m.fit);
      // Host memcpy crosses cache levels (L1/L2/DRAM): one latency + one bandwidth cannot fit it,
      // and the residual says so.
      m.good_fit = m.fit.max_rel_residual <= kGoodFitResidual;
    }
    f.copy_model.push_back(std::move(m));
  }
  for (const auto& [k, v] : best) f.best_bandwidth_gbps.emplace_back(k, v);
  for (const auto& r : recs) {
    if (!measured(r) || r.workload.rfind("copy_", 0) != 0) continue;
    const double b = best[r.workload + "/" + to_string(r.backend)];
    if (b > 0) set_keyed(f.percent_of_best, r.id, 100.0 * *r.value / b);
  }
}

void pin_findings(const std::vector<Record>& recs, Findings& f) {
  // Per size: pin cost (minus a fresh pageable allocation for cudaHostAlloc, which replaces one) against
  // the per-copy saving of pinned over pageable H2D, both on the host clock.
  auto median_of = [&](const char* workload, Backend be, std::int64_t bytes, const std::string& memory,
                       const std::string& method) -> double {
    for (const auto& r : recs)
      if (measured(r) && r.workload == workload && r.backend == be && bytes_of(r) == bytes &&
          (memory.empty() || (opt(r, "memory") == memory && opt(r, "clock") == "host")) &&
          (method.empty() || opt(r, "method") == method))
        return r.stats->median;
    return -1;
  };
  for (const auto& r : recs) {
    if (!measured(r) || r.workload != "pin_cost" || r.backend != Backend::cuda) continue;
    PinBreakEven e;
    e.method = opt(r, "method");
    e.bytes = bytes_of(r);
    const double pageable = median_of("copy_h2d", Backend::cuda, e.bytes, "pageable", "");
    const double pinned =
        median_of("copy_h2d", Backend::cuda, e.bytes, e.method == "host_register" ? "registered" : "pinned", "");
    if (pageable < 0 || pinned < 0) continue;
    double extra = r.stats->median;
    e.pin_ms = extra * 1e3;
    if (e.method == "host_alloc") {
      const double fresh = median_of("pin_cost", Backend::cpu, e.bytes, "", "");
      if (fresh >= 0) {
        e.pageable_alloc_ms = fresh * 1e3;
        extra = std::max(0.0, extra - fresh);
      }
    }
    e.pageable_copy_ms = pageable * 1e3;
    e.pinned_copy_ms = pinned * 1e3;
    if (const auto n = break_even_reuse(extra, pageable, pinned)) e.break_even_copies = std::ceil(*n);
    // One entry per method and size: a later record of the same takes its place.
    const auto same = std::find_if(f.pinning_break_even.begin(), f.pinning_break_even.end(),
                                   [&](const PinBreakEven& p) { return p.method == e.method && p.bytes == e.bytes; });
    if (same != f.pinning_break_even.end())
      *same = std::move(e);
    else
      f.pinning_break_even.push_back(std::move(e));
  }
}

void loader_findings(const std::vector<Record>& recs, Findings& f) {
  // Group by everything but the worker count; the smallest W whose consumer idles <= kFedIdle.
  // Also the smallest W within 10% of the sweep's best throughput: where more workers stop paying.
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> idle, rate;
  for (const auto& r : recs) {
    if (!measured(r) || r.workload != "loader" || !r.counters.count("idle_fraction")) continue;
    json p = r.params;
    p.erase("workers");
    const std::string key = std::string(to_string(r.backend)) + "/" + r.variant + "/" + p.dump() + "/" + r.options.dump();
    const std::int64_t w = r.params.value("workers", std::int64_t(0));
    idle[key].push_back({w, r.counters.at("idle_fraction").value});
    rate[key].push_back({w, *r.value});
  }
  for (const auto& [key, v] : idle) {
    Loader l;
    l.key = key;
    l.max_idle_fraction = kFedIdle;
    l.smallest_fed_workers = smallest_fed_workers(v, kFedIdle);
    l.smallest_workers_within_10pct_of_best = smallest_near_best(rate[key], 0.9);
    for (const auto& [workers, x] : v) set_keyed(l.idle_fraction_by_workers, std::to_string(workers), x);
    for (const auto& [workers, x] : rate[key]) set_keyed(l.samples_per_s_by_workers, std::to_string(workers), x);
    f.loader.push_back(std::move(l));
  }
}

void overlap_findings(const std::vector<Record>& recs, Findings& f) {
  // Speedup of each stream count over streams=1 on the same problem.
  for (const auto& r : recs) {
    if (!measured(r) || r.workload != "overlap") continue;
    for (const auto& s : recs)
      if (measured(s) && s.workload == "overlap" && s.params == r.params && opt(s, "streams") == "1")
        set_keyed(f.overlap_speedup_vs_1_stream, r.id, s.stats->median / r.stats->median);
  }
}

}  // namespace

Findings compute_findings(const std::vector<Record>& records) {
  Findings f;
  copy_findings(records, f);
  pin_findings(records, f);
  loader_findings(records, f);
  overlap_findings(records, f);
  return f;
}

void to_json(const Findings& found, json& f) {
  for (const auto& m : found.copy_model) {
    json j = {{"points", m.fit.points}, {"ok", m.fit.ok}};
    if (!m.fit.note.empty()) j["note"] = m.fit.note;
    if (m.fit.ok) {
      j["latency_us"] = m.latency_us();
      j["bandwidth_gbps"] = m.bandwidth_gbps();
      j["half_peak_bytes"] = m.half_peak_bytes;
      j["max_rel_residual"] = m.fit.max_rel_residual;
      j["good_fit"] = m.good_fit;
    }
    f["copy_model"][m.key] = j;
  }
  for (const auto& [k, v] : found.best_bandwidth_gbps) f["best_bandwidth_gbps"][k] = v;
  for (const auto& [id, v] : found.percent_of_best) f["percent_of_best"][id] = v;
  for (const auto& e : found.pinning_break_even) {
    json j = {{"pin_ms", e.pin_ms}};
    if (e.pageable_alloc_ms) j["pageable_alloc_ms"] = *e.pageable_alloc_ms;
    j["pageable_copy_ms"] = e.pageable_copy_ms;
    j["pinned_copy_ms"] = e.pinned_copy_ms;
    if (e.break_even_copies)
      j["break_even_copies"] = *e.break_even_copies;
    else
      j["break_even_copies"] = "never (pinned copies are not faster at this size)";
    f["pinning_break_even"][e.method][std::to_string(e.bytes)] = j;
  }
  auto or_null = [](std::optional<std::int64_t> v) { return v ? json(*v) : json(nullptr); };
  for (const auto& l : found.loader) {
    json j = {{"max_idle_fraction", l.max_idle_fraction}};
    j["smallest_fed_workers"] = or_null(l.smallest_fed_workers);
    j["smallest_workers_within_10pct_of_best"] = or_null(l.smallest_workers_within_10pct_of_best);
    for (const auto& [w, x] : l.idle_fraction_by_workers) j["idle_fraction_by_workers"][w] = x;
    for (const auto& [w, x] : l.samples_per_s_by_workers) j["samples_per_s_by_workers"][w] = x;
    f["loader"][l.key] = j;
  }
  for (const auto& [id, v] : found.overlap_speedup_vs_1_stream) f["overlap_speedup_vs_1_stream"][id] = v;
}

}  // namespace gtb::transfer
