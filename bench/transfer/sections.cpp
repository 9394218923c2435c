// The transfer family's findings for the report and plots: pinned vs pageable copies, the latency
// and bandwidth model, the pinning break-even, loader threads, copy/compute overlap.
#include <algorithm>
#include <map>

#include "harness/runtime/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;

json get(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j.at(key) : json(nullptr); }

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
  for (const char* wl : {"copy_h2d", "copy_d2h", "copy_bidir"}) {
    std::map<std::string, std::map<double, double>> by;  // memory/clock -> bytes -> GB/s
    for (const auto& r : recs)
      if (gtb::usable(r) && r.workload == wl && r.backend == gtb::Backend::cuda)
        by[fx::option_text(r, "memory") + "/" + fx::option_text(r, "clock")][fx::param_number(r, "bytes")] = *r.value;
    for (const char* clock : {"device", "host", ""}) {
      const auto pin = by.find(std::string("pinned/") + clock), page = by.find(std::string("pageable/") + clock);
      if (pin == by.end() || page == by.end()) continue;
      double best = -1;
      for (const auto& [b, v] : pin->second)
        if (page->second.count(b)) best = std::max(best, b);
      if (best < 0) continue;
      const double pv = pin->second.at(best), gv = page->second.at(best);
      t.rows.push_back({wl, clock[0] ? clock : "-", best, pv, gv, pv / gv});
      break;
    }
  }
  if (t.rows.empty())
    s.not_measured = "no pinned and pageable GPU copy of the same size ran (" + fx::why_none(recs, gtb::Backend::cuda) + ")";
  auto& g = s.figure("transfer_bandwidth", "Copy bandwidth vs size per memory kind and direction");
  g.where = {{"workload", {"copy_h2d", "copy_d2h", "copy_bidir"}}};
  g.x = {"params.bytes"};
  g.series = {"backend", "variant", "options.memory", "options.clock"};
  g.panels = {"workload"};
  g.logx = 2;
  g.xlabel = "transfer size (bytes)";
  g.ylabel = "bandwidth (GB/s, 10^9 bytes/s)";
}

void copy_model(const json& data, fx::Family& f) {
  auto& s = f.section("copy_model", "Latency, peak bandwidth and half-peak size");
  auto& t = s.table("copy_model", {{"copy"}, {"latency", "us", Hint::duration}, {"peak (fit)", "GB/s", Hint::bandwidth},
                                   {"half-peak size", "", Hint::bytes}, {"note"}});
  const json models = get(data, "copy_model");
  if (models.is_object())
    for (const auto& [key, m] : models.items()) {
    if (get(m, "ok") != true) {
      t.rows.push_back({key, nullptr, nullptr, nullptr, "no fit: " + m.value("note", "")});
      continue;
    }
    // A latency clamped to zero (or a zero half-peak size) is what is left when the times do not
    // follow latency + bytes / bandwidth at all: no finding, so no "0 us" figure either.
    if (!(m.value("latency_us", 0.0) > 0) || !(m.value("half_peak_bytes", 0.0) > 0)) {
      std::string why = m.value("note", "");
      if (why.empty()) why = "no positive latency";
      if (get(m, "max_rel_residual").is_number())
        why += ": the times do not follow latency + bytes / bandwidth (max residual " +
               fx::format(get(m, "max_rel_residual"), Hint::fraction, "") + ")";
      t.rows.push_back({key, nullptr, nullptr, nullptr, "no fit (" + why + ")"});
      continue;
    }
    const bool good = get(m, "good_fit") != false;
    t.rows.push_back({key, get(m, "latency_us"), get(m, "bandwidth_gbps"), get(m, "half_peak_bytes"),
                      good ? "" : "poor fit (max residual " + fx::format(get(m, "max_rel_residual"), Hint::fraction, "") + ")"});
  }
  if (t.rows.empty()) {
    s.not_measured = "no copy ran at several sizes";
    return;
  }
  s.say("Model t(bytes) = latency + bytes / bandwidth; below the half-peak size a copy spends more time in latency "
        "than in moving bytes, so batching small copies pays.");
}

void pinning(const json& data, fx::Family& f) {
  auto& s = f.section("pinning", "Pinning break-even");
  auto& t = s.table("pinning", {{"method"}, {"size", "", Hint::bytes}, {"pin cost", "ms", Hint::duration},
                                {"copies to break even", "", Hint::count}});
  if (get(data, "pinning_break_even").is_object())
    for (const auto& [method, sizes] : data.at("pinning_break_even").items())
      if (sizes.is_object())
        for (const auto& [bytes, e] : sizes.items())
          t.rows.push_back({method, std::atof(bytes.c_str()), get(e, "pin_ms"), get(e, "break_even_copies")});
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

void loader(const json& data, fx::Family& f) {
  auto& s = f.section("loader", "Loader threads needed to keep the consumer fed");
  auto& t = s.table("loader", {{"loader"}, {"workers needed", "", Hint::count}, {"idle allowed", "", Hint::fraction},
                               {"idle by workers"}});
  double fed = 0.1;
  if (get(data, "loader").is_object())
    for (const auto& [key, e] : data.at("loader").items()) {
      std::string idle;
      if (get(e, "idle_fraction_by_workers").is_object())
        for (const auto& [w, x] : e.at("idle_fraction_by_workers").items())
          idle += (idle.empty() ? "" : ", ") + w + ": " + fx::format(x, Hint::fraction, "");
      const json w = get(e, "smallest_fed_workers");
      fed = e.value("max_idle_fraction", fed);
      t.rows.push_back({readable(key), w.is_number() ? w : json("more than measured"), get(e, "max_idle_fraction"), idle});
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

void overlap(const json& data, fx::Family& f) {
  const json ov = get(data, "overlap_speedup_vs_1_stream");
  if (!ov.is_object() || ov.empty()) return;
  double best = 0;
  std::string which;
  for (const auto& [id, v] : ov.items())
    if (v.is_number() && v.get<double>() > best) best = v.get<double>(), which = id;
  auto& s = f.section("overlap", "Copy/compute overlap");
  s.line("best_overlap_speedup", "best speedup of several streams over one", best, "", Hint::ratio, which);
}

const bool kSections = gtb::add_sections("transfer", "Transfers", 20,
                                         [](const std::vector<gtb::Record>& recs, const json& data, fx::Family& f) {
                                           pinned_vs_pageable(recs, f);
                                           copy_model(data, f);
                                           pinning(data, f);
                                           loader(data, f);
                                           overlap(data, f);
                                         });

}  // namespace
