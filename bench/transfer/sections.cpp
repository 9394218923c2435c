// The transfer family's findings for the report and plots: pinned vs pageable copies, the latency
// and bandwidth model, the pinning break-even, loader threads, copy/compute overlap.
#include <algorithm>
#include <map>

#include "bench/transfer/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;
namespace tx = gtb::transfer;

// A loader key "cpu/cpu_consumer/{params}/{options}" in words: "cpu/cpu_consumer/depth=8, ...".
std::string readable(const std::string& key) {
  std::string out;
  std::size_t i = 0;
  while (i < key.size()) {
    if (key[i] == '{') {
      std::size_t j = key.find("}/", i);
      if (j == std::string::npos) j = key.size() - 1;
      const json o = json::parse(key.substr(i, j - i + 1), nullptr, false);
      if (o.is_object()) {
        out += fx::params_text(o);
        i = j + 1;
        continue;
      }
    }
    out += key[i++];
  }
  return out;
}

void pinned_vs_pageable(const std::vector<gtb::Record>& recs, fx::Family& f) {
  auto& s = f.section("pinned", "Pinned vs pageable host memory");
  auto& t = s.table("pinned", {{"copy"}, {"clock"}, {"size", "", Hint::bytes}, {"pinned", "GB/s", Hint::bandwidth},
                               {"pageable", "GB/s", Hint::bandwidth}, {"pinned speedup", "", Hint::ratio}});
  // The same copy at the largest size both memory kinds ran, the device clock preferred.
  bool paired = false;
  for (const char* wl : {"copy_h2d", "copy_d2h", "copy_bidir"}) {
    std::map<std::string, std::map<double, const gtb::Record*>> by;  // memory/clock -> bytes -> record
    for (const auto& r : recs)
      if (gtb::usable(r) && r.workload == wl && r.backend == gtb::Backend::cuda)
        by[fx::option_text(r, "memory") + "/" + fx::option_text(r, "clock")][fx::param_number(r, "bytes")] = &r;
    for (const char* clock : {"device", "host", ""}) {
      const auto pin = by.find(std::string("pinned/") + clock), page = by.find(std::string("pageable/") + clock);
      if (pin == by.end() || page == by.end()) continue;
      double best = -1;
      for (const auto& [b, v] : pin->second)
        if (page->second.count(b)) best = std::max(best, b);
      if (best < 0) continue;
      const gtb::Record &rp = *pin->second.at(best), &rg = *page->second.at(best);
      // The speedup from the two copies' paired rounds where they were measured as a pair.
      const auto v = gtb::value_ratio(rp, rg);
      if (!v) continue;
      t.rows.push_back({wl, clock[0] ? clock : "-", best, *rp.value, *rg.value, v->ratio});
      paired = paired || v->rounds > 0;
      break;
    }
  }
  if (paired)
    s.say("The pinned speedup is the median of the two copies' per-round ratios: they were measured as a pair, in "
          "alternating rounds, so both met the same moments of the machine.");
  if (t.rows.empty())
    s.not_measured = "no pinned and pageable GPU copy of the same size ran (" + fx::why_none(recs, gtb::Backend::cuda) + ")";
  auto& g = s.figure("transfer_bandwidth", "Copy bandwidth vs size per memory kind and direction (cpu: a host memcpy, the reference)");
  // A host memcpy has no direction: drawn in every direction's panel it made three identical panels.
  // It is the host-to-host reference beside the host-to-device copies only.
  g.where = json::array({json{{"workload", "copy_h2d"}}, json{{"workload", {"copy_d2h", "copy_bidir"}}, {"backend", "cuda"}}});
  g.x = {"params.bytes"};
  g.series = {"backend", "variant", "options.memory", "options.clock"};
  g.panels = {"workload"};
  g.logx = 2;
  g.xlabel = "transfer size (bytes)";
  g.ylabel = "bandwidth (GB/s, 10^9 bytes/s)";
}

void copy_model(const tx::Findings& found, fx::Family& f) {
  auto& s = f.section("copy_model", "Latency, peak bandwidth and half-peak size");
  auto& t = s.table("copy_model", {{"copy"}, {"latency", "us", Hint::duration}, {"peak (fit)", "GB/s", Hint::bandwidth},
                                   {"half-peak size", "", Hint::bytes}, {"note"}});
  for (const auto& m : found.copy_model) {
    if (!m.fit.ok) {
      t.rows.push_back({m.key, nullptr, nullptr, nullptr, "no fit: " + m.fit.note});
      continue;
    }
    // A latency clamped to zero (or a zero half-peak size) is what is left when the times do not
    // follow latency + bytes / bandwidth at all: no finding, so no "0 us" figure either.
    if (!(m.latency_us() > 0) || !(m.half_peak_bytes > 0)) {
      std::string why = m.fit.note;
      if (why.empty()) why = "no positive latency";
      why += ": the times do not follow latency + bytes / bandwidth (max residual " +
             fx::format(m.fit.max_rel_residual, Hint::fraction, "") + ")";
      t.rows.push_back({m.key, nullptr, nullptr, nullptr, "no fit (" + why + ")"});
      continue;
    }
    t.rows.push_back({m.key, m.latency_us(), m.bandwidth_gbps(), m.half_peak_bytes,
                      m.good_fit ? "" : "poor fit (max residual " + fx::format(m.fit.max_rel_residual, Hint::fraction, "") + ")"});
  }
  if (t.rows.empty()) {
    s.not_measured = "no copy ran at several sizes";
    return;
  }
  s.say("Model t(bytes) = latency + bytes / bandwidth; below the half-peak size a copy spends more time in latency "
        "than in moving bytes, so batching small copies pays.");
}

void pinning(const tx::Findings& found, fx::Family& f) {
  auto& s = f.section("pinning", "Pinning break-even");
  auto& t = s.table("pinning", {{"method"}, {"size", "", Hint::bytes}, {"pin cost", "ms", Hint::duration},
                                {"copies to break even", "", Hint::count}});
  // By method, each method's sizes in the order they were found.
  std::vector<std::string> methods;
  for (const auto& e : found.pinning_break_even)
    if (std::find(methods.begin(), methods.end(), e.method) == methods.end()) methods.push_back(e.method);
  for (const auto& method : methods)
    for (const auto& e : found.pinning_break_even)
      if (e.method == method)
        t.rows.push_back({method, double(e.bytes), e.pin_ms,
                          e.break_even_copies ? json(*e.break_even_copies)
                                              : json("never (pinned copies are not faster at this size)")});
  if (t.rows.empty()) s.not_measured = "needs pinned and pageable GPU copies and a pinning cost of the same size";
  auto& g = s.figure("transfer_batching", "Batching small samples into one copy");
  g.where = {{"workload", "batching"}};
  g.x = {"params.samples"};
  g.series = {"backend", "variant"};
  g.panels = {"params.sample_bytes"};
  g.logx = 2;
  g.logy = true;
  g.xlabel = "samples per batch";
  g.ylabel = "samples/s";
}

void loader(const tx::Findings& found, fx::Family& f) {
  auto& s = f.section("loader", "Loader threads needed to keep the consumer fed");
  auto& t = s.table("loader", {{"loader"}, {"workers needed", "", Hint::count}, {"idle allowed", "", Hint::fraction},
                               {"idle by workers"}});
  double fed = 0.1;
  for (const auto& e : found.loader) {
    std::string idle;
    for (const auto& [w, x] : e.idle_fraction_by_workers)
      idle += (idle.empty() ? "" : ", ") + w + ": " + fx::format(x, Hint::fraction, "");
    fed = e.max_idle_fraction;
    t.rows.push_back({readable(e.key), e.smallest_fed_workers ? json(*e.smallest_fed_workers) : json("more than measured"),
                      e.max_idle_fraction, idle});
  }
  if (t.rows.empty()) s.not_measured = "no loader sweep over worker counts ran";
  auto& g = s.figure("loader_idle", "Loader: consumer idle fraction vs worker threads");
  g.where = {{"workload", "loader"}};
  g.x = {"params.workers"};
  g.y = "counters.idle_fraction";
  g.series = {"backend", "variant", "options.memory", "options.preprocess", "params.depth"};
  g.logx = 2;
  g.xlabel = "loader worker threads";
  g.ylabel = "consumer idle fraction";
  g.hlines = {{fed, "fed: idle <= " + fx::format(fed, Hint::fraction, "")}};
}

void overlap(const tx::Findings& found, fx::Family& f) {
  if (found.overlap_speedup_vs_1_stream.empty()) return;
  double best = 0;
  std::string which;
  for (const auto& [id, v] : found.overlap_speedup_vs_1_stream)
    if (v > best) best = v, which = id;
  auto& s = f.section("overlap", "Copy/compute overlap");
  s.line("best_overlap_speedup", "best speedup of several streams over one", best, "", Hint::ratio, which);
}

const bool kFindings = gtb::add_family_findings<tx::Findings>(
    "transfer", "Transfers", 20, tx::compute_findings, tx::to_json,
    [](const std::vector<gtb::Record>& recs, const tx::Findings& found, fx::Family& f) {
      pinned_vs_pageable(recs, f);
      copy_model(found, f);
      pinning(found, f);
      loader(found, f);
      overlap(found, f);
    });
// The copies the break-even compares are measured as pairs (alternating rounds).
const bool kPairs = gtb::add_pairs("transfer", tx::compared_pairs);

}  // namespace
