// The transfer family's findings from its records (see findings.h for the shape).
#include "bench/transfer/findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gtb/findings.h"

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
  auto record_of = [&](const char* workload, Backend be, std::int64_t bytes, const std::string& memory,
                       const std::string& method) -> const Record* {
    for (const auto& r : recs)
      if (measured(r) && r.workload == workload && r.backend == be && bytes_of(r) == bytes &&
          (memory.empty() || (opt(r, "memory") == memory && opt(r, "clock") == "host")) &&
          (method.empty() || opt(r, "method") == method))
        return &r;
    return nullptr;
  };
  auto median_of = [&](const char* workload, Backend be, std::int64_t bytes, const std::string& memory,
                       const std::string& method) -> double {
    const Record* r = record_of(workload, be, bytes, memory, method);
    return r ? r->stats->median : -1;
  };
  for (const auto& r : recs) {
    if (!measured(r) || r.workload != "pin_cost" || r.backend != Backend::cuda) continue;
    PinBreakEven e;
    e.method = opt(r, "method");
    e.bytes = bytes_of(r);
    const Record* rp = record_of("copy_h2d", Backend::cuda, e.bytes, "pageable", "");
    const Record* rq = record_of("copy_h2d", Backend::cuda, e.bytes, e.method == "host_register" ? "registered" : "pinned", "");
    if (!rp || !rq) continue;
    const double pageable = rp->stats->median;
    double pinned = rq->stats->median;
    // Measured as a pair: the per-copy saving is the median of the rounds' own savings.
    if (const auto d = paired_estimate(*rp, 1.0, *rq, 1.0)) {
      pinned = pageable - d->difference;
      e.paired_rounds = d->rounds;
    }
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

// The copy terms: on the GPU one per direction and host memory kind, from the host clock (what a
// training loop waits for) when it was measured, else the device clock; the CPU has no
// host-to-device copy in its step and publishes none.
void copy_terms(const std::vector<Record>& recs, Findings& f) {
  struct Dir {
    const char* term;
    const char* workload;
  };
  for (const Dir d : {Dir{cost::term::kH2dCopy, "copy_h2d"}, Dir{cost::term::kD2hCopy, "copy_d2h"}})
    for (const char* memory : {"pageable", "pinned"}) {
      const CopyModel* best = nullptr;
      for (const char* clock : {"host", "device"}) {
        const std::string key = std::string(d.workload) + "/cuda/";
        for (const auto& m : f.copy_model)
          if (m.fit.ok && m.key.rfind(key, 0) == 0 &&
              m.key.find("/memory=" + std::string(memory) + "/clock=" + clock) != std::string::npos) {
            best = &m;
            break;
          }
        if (best) break;
      }
      const json where = {{"memory", memory}};
      if (!best) {
        f.terms.push_back(cost::cannot_say_term(
            d.term, Backend::cuda, where, "latency_bandwidth",
            cost::reason_none(recs, Backend::cuda,
                              [&](const Record& r) { return r.workload == d.workload && opt(r, "memory") == memory; },
                              std::string(memory) + " " + d.workload)));
        continue;
      }
      cost::Term t;
      t.name = d.term;
      t.backend = Backend::cuda;
      t.where = where;
      t.form = "latency_bandwidth";
      t.x = "bytes";
      t.latency_s = best->fit.latency_seconds;
      t.per_second = best->fit.bandwidth_bytes_per_second;
      t.x_min = 1e300;
      // The records of that curve: workload/backend/variant/memory/clock as the key was built.
      for (const auto& r : recs) {
        if (!measured(r) || r.workload != d.workload || r.backend != Backend::cuda) continue;
        const std::string k = r.workload + "/cuda/" + r.variant + "/memory=" + opt(r, "memory") + "/clock=" + opt(r, "clock");
        if (k != best->key) continue;
        t.records.push_back(r.id);
        t.x_min = std::min(t.x_min, double(bytes_of(r)));
        t.x_max = std::max(t.x_max, double(bytes_of(r)));
      }
      if (!best->good_fit) t.note = "the latency and bandwidth line fits these sizes loosely (largest residual above 25%)";
      f.terms.push_back(std::move(t));
    }
}

void input_terms(const std::vector<Record>& recs, Findings& f) {
  for (const Backend be : {Backend::cpu, Backend::cuda}) {
    // Gathering a batch: the fastest way measured, seconds per sample by sample size.
    f.terms.push_back(cost::table_term(
        cost::term::kBatchGather, be, json::object(), {"sample_bytes"}, "seconds", recs,
        [](const Record& r) { return r.workload == "batching" && r.params.value("samples", 0) > 0; },
        [](const Record& r) { return json{{"sample_bytes", r.params.value("sample_bytes", 0)}}; },
        [](const Record& r) { return r.stats->median / r.params.value("samples", 1.0); }, "batching", true));
    // The loader: one term per measured per-sample cost (the sweep's other parameters alike).
    std::set<double> costs;
    for (const auto& r : recs)
      if (r.workload == "loader" && r.backend == be && measured(r)) costs.insert(r.params.value("sample_us", 0.0));
    if (costs.empty()) {
      f.terms.push_back(cost::cannot_say_term(
          cost::term::kLoader, be, json::object(), "table",
          cost::reason_none(recs, be, [](const Record& r) { return r.workload == "loader"; }, "loader")));
      continue;
    }
    for (const double us : costs) {
      const Record* any = nullptr;
      for (const auto& r : recs)
        if (r.workload == "loader" && r.backend == be && measured(r) && r.params.value("sample_us", 0.0) == us) any = &r;
      json where = {{"sample_us", us}};
      if (any) where["consume_us"] = any->params.value("consume_us", 0.0), where["batch_samples"] = any->params.value("batch_samples", 0);
      cost::Term t = cost::table_term(
          cost::term::kLoader, be, where, {"workers"}, "samples_per_s", recs,
          [&](const Record& r) { return r.workload == "loader" && r.params.value("sample_us", 0.0) == us; },
          [](const Record& r) { return json{{"workers", r.params.value("workers", 0)}}; },
          [](const Record& r) { return *r.value; }, "loader");
      t.note = "delivered samples/s with a consumer of consume_us per batch: a fed consumer caps the rate";
      f.terms.push_back(std::move(t));
    }
  }
}

}  // namespace

Findings compute_findings(const std::vector<Record>& records) {
  return findings::by_passes<Findings>(
      records, {copy_findings, pin_findings, loader_findings, overlap_findings, copy_terms, input_terms});
}

void to_json(const Findings& found, json& f) {
  cost::write_evidence(f, found.terms, {});
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
    if (e.paired_rounds > 0) j["paired_rounds"] = e.paired_rounds;  // measured as a pair
    if (e.break_even_copies)
      j["break_even_copies"] = *e.break_even_copies;
    else
      j["break_even_copies"] = "never (pinned copies are not faster at this size)";
    f["pinning_break_even"][e.method][std::to_string(e.bytes)] = j;
  }
  using gtb::findings::or_null;
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

std::vector<std::pair<std::string, std::string>> compared_pairs(const std::vector<Record>& planned) {
  // A copy from pageable memory and the same copy (direction, size, clock) from pinned or registered memory.
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : planned)
    if (a.workload.rfind("copy_", 0) == 0 && opt(a, "memory") == "pageable")
      for (const auto& b : planned)
        if (b.workload == a.workload && b.backend == a.backend && b.variant == a.variant && b.params == a.params &&
            opt(b, "clock") == opt(a, "clock") && (opt(b, "memory") == "pinned" || opt(b, "memory") == "registered"))
          out.emplace_back(a.id, b.id);
  return out;
}

}  // namespace gtb::transfer
