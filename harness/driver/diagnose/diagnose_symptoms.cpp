// The symptoms: interval arithmetic over the GPU timeline, the idle-cause rule, copy, sync, kernel,
// GEMM, communication and data-loader tallies, per profiler step and overall.
#include "harness/driver/diagnose/diagnose_symptoms.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "harness/document/stats.h"
#include "harness/driver/diagnose/diagnose_job.h"

namespace gtb::diagnose {


namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

using Interval = std::pair<double, double>;  // [begin, end) in microseconds

// Sorted, disjoint intervals covering the input.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}
double length(const std::vector<Interval>& m) {
  double s = 0;
  for (const auto& iv : m) s += iv.second - iv.first;
  return s;
}
// Length of the intersection of two merged lists.
double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return s;
}
// Length of [lo, hi) covered by a merged list.
double covered(const std::vector<Interval>& m, double lo, double hi) {
  auto it = std::lower_bound(m.begin(), m.end(), Interval{lo, lo},
                             [](const Interval& x, const Interval& y) { return x.second < y.first; });
  double s = 0;
  for (; it != m.end() && it->first < hi; ++it) {
    const double a = std::max(lo, it->first), b = std::min(hi, it->second);
    if (b > a) s += b - a;
  }
  return s;
}

// The quantile gtb uses everywhere (harness/document/stats.h); NaN (null in the JSON) without data.
double quantile_or_nan(const std::vector<double>& v, double q) { return v.empty() ? NAN : quantile(v, q); }

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Everything the per-window tallies need, computed once from the trace.
struct Prepared {
  const Trace* t = nullptr;
  std::vector<std::size_t> order;            // GPU events (not cuda_sync markers) by start time
  double max_dur = 0;
  std::unordered_map<std::int64_t, double> launch_ts;  // correlation -> host call start
  std::vector<double> sync_ends;             // host sync calls' end times, sorted
  std::vector<int> gpu_step;                 // step index of each GPU event, -1 outside every step
  std::vector<int> host_step;
  // Per step, its GPU events in `order`'s order and its host events in trace order (a step's sections
  // read only its own events: a trace of thousands of steps is not read once per step).
  std::vector<std::vector<std::size_t>> order_by_step, host_by_step;
  std::vector<std::size_t> host_all;         // 0 .. host.size()-1: the whole trace's host events
  std::vector<GemmKind> gemm_of;             // per name id
  std::vector<bool> comm;                    // per name id
  std::vector<CopyKind> copy;                // per name id
  std::vector<std::string> tc_precision;     // per name id: tensor_core_precision of a tensor-core GEMM's name
  double launch_us = NAN;                    // median host launch call in this trace
  std::vector<std::string> device_names;
};

bool is_sync(HostKind k) {
  return k == HostKind::stream_sync || k == HostKind::device_sync || k == HostKind::event_sync ||
         k == HostKind::sync_copy;
}

int step_of(const std::vector<Step>& steps, double ts) {
  // Steps are few and sorted by start; the last one starting at or before ts that still covers it.
  auto it = std::upper_bound(steps.begin(), steps.end(), ts, [](double x, const Step& s) { return x < s.ts; });
  while (it != steps.begin()) {
    --it;
    if (ts <= it->ts + it->dur) return static_cast<int>(it - steps.begin());
    break;
  }
  return -1;
}

struct Window {
  double lo = 0, hi = 0;
  int step = -1;  // -1: the whole trace
};

json examples(const Trace& t, const std::vector<const GpuEvent*>& ev) {
  json out = json::array();
  for (std::size_t i = 0; i < ev.size() && i < 3; ++i)
    out.push_back({{"ts_us", ev[i]->ts}, {"dur_us", ev[i]->dur}, {"correlation", ev[i]->correlation},
                   {"name", t.name_of(ev[i]->name)}});
  return out;
}

using StreamKey = std::pair<int, int>;  // device, stream
using ByStream = std::map<StreamKey, std::vector<const GpuEvent*>>;

// The idle-cause rule (docs/diagnose.md): a gap ends when the next event starts. The part of a
// stream's gap another stream spent copying is "copy"; of the rest, a gap in which a host sync
// call returned is "sync" (the host waited for the GPU to drain, then had nothing queued); a gap
// whose next event was launched by the host after the gap began is "host launch"; anything else
// (work queued in time that still waited, e.g. on another stream's event) is "other". `gaps`, when
// given, receives each gap with its cause (the timeline figure draws them).
json idle_by_cause(const Prepared& p, const std::vector<Interval>& busy_m, const std::vector<const GpuEvent*>& sorted_ev,
                   const std::vector<Interval>* other_copies, double lo, double hi, json* gaps) {
  json causes = {{"host_launch_us", 0.0}, {"sync_us", 0.0}, {"copy_us", 0.0}, {"other_us", 0.0}};
  double hl = 0, sy = 0, cp = 0, ot = 0;
  std::size_t next_ev = 0;
  double prev_end = lo;
  std::size_t n_gaps = 0;
  for (std::size_t i = 0; i <= busy_m.size(); ++i) {
    const double g0 = prev_end, g1 = i < busy_m.size() ? busy_m[i].first : hi;
    if (i < busy_m.size()) prev_end = busy_m[i].second;
    if (g1 <= g0) continue;
    ++n_gaps;
    double rest = g1 - g0;
    if (other_copies) {
      const double c = covered(*other_copies, g0, g1);
      cp += c;
      rest -= c;
    }
    if (rest <= 0) continue;
    auto s = std::lower_bound(p.sync_ends.begin(), p.sync_ends.end(), g0);
    if (s != p.sync_ends.end() && *s <= g1) {
      sy += rest;
      if (gaps) gaps->push_back({g0, g1, "sync"});
      continue;
    }
    // The event that ended the gap: the first one starting at g1.
    while (next_ev < sorted_ev.size() && sorted_ev[next_ev]->ts < g1) ++next_ev;
    const GpuEvent* e = next_ev < sorted_ev.size() ? sorted_ev[next_ev] : nullptr;
    auto l = e ? p.launch_ts.find(e->correlation) : p.launch_ts.end();
    const bool host = l != p.launch_ts.end() && l->second >= g0;
    (host ? hl : ot) += rest;
    if (gaps) gaps->push_back({g0, g1, host ? "host_launch" : "other"});
  }
  causes["host_launch_us"] = hl;
  causes["sync_us"] = sy;
  causes["copy_us"] = cp;
  causes["other_us"] = ot;
  causes["gaps"] = n_gaps;
  return causes;
}

// One step drawn by cause: each stream's events by kind, the GPU's idle gaps by cause. Events
// closer than a pixel would merge anyway; the cap keeps a huge step's figure file small.
json timeline_json(const Prepared& p, const Window& w, const std::vector<const GpuEvent*>& sorted_all, double span_lo,
                   double span_hi, const json& gaps) {
  json ev = json::array();
  for (const auto* e : sorted_all) {
    if (ev.size() >= 20000) break;
    const std::string kind = e->kind != GpuKind::kernel                   ? "memory"
                             : p.comm[static_cast<std::size_t>(e->name)] ? "communication"
                                                                         : "compute";
    ev.push_back({e->stream, std::max(w.lo, e->ts), std::min(w.hi, e->ts + e->dur), kind});
  }
  return {{"begin_us", span_lo}, {"end_us", span_hi}, {"events", ev}, {"gaps", gaps},
          {"events_capped", sorted_all.size() > 20000}};
}

// Each stream: its busy time, its own span and idle time, its gaps by cause (the copies of the
// device's other streams count as copy). Sorts each stream's events by start.
json streams_json(const Prepared& p, const Window& w, ByStream& by_stream, double window) {
  json streams = json::array();
  for (auto& [key, ev] : by_stream) {
    std::sort(ev.begin(), ev.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
    std::vector<Interval> iv;
    std::size_t kernels = 0;
    for (const auto* e : ev) {
      iv.push_back({std::max(w.lo, e->ts), std::min(w.hi, e->ts + e->dur)});
      kernels += e->kind == GpuKind::kernel;
    }
    const auto m = merged(iv);
    std::vector<Interval> others;
    for (const auto& [k2, ev2] : by_stream)
      if (k2.first == key.first && k2.second != key.second)
        for (const auto* e : ev2)
          if (e->kind == GpuKind::memcpy) others.push_back({e->ts, e->ts + e->dur});
    const auto m_others = merged(others);
    const double s_busy = length(m);
    const double s_lo = m.empty() ? w.lo : m.front().first, s_hi = m.empty() ? w.lo : m.back().second;
    json s;
    s["device"] = key.first;
    s["stream"] = key.second;
    s["events"] = ev.size();
    s["kernels"] = kernels;
    s["busy_us"] = s_busy;
    // A stream's own idle time is between its first and last event, as trace viewers draw it.
    s["span_us"] = s_hi - s_lo;
    s["idle_us"] = (s_hi - s_lo) - s_busy;
    s["busy_share_of_window"] = window > 0 ? num(s_busy / window) : json(nullptr);
    const json c = idle_by_cause(p, m, ev, &m_others, s_lo, s_hi, nullptr);
    s["idle_by_cause"] = c;
    streams.push_back(s);
  }
  return streams;
}

// The kernels launched in a window (by their launch, so a step owns the kernels it queued), tallied
// in one pass: durations, those shorter than a launch, GEMMs by kind (FP32 SIMT ones by shape),
// communication.
struct KernelTally {
  std::vector<double> durs;
  double launch_bound = 0, launch_bound_us = 0;
  double gemm_us = 0, tc_us = 0, simt_us = 0, simt64_us = 0, ugemm_us = 0, comm_us = 0, kernel_us = 0;
  std::size_t gemm_n = 0, tc_n = 0, simt_n = 0, simt64_n = 0, ugemm_n = 0, comm_n = 0;
  std::map<std::string, std::size_t> tc_prec;
  std::vector<const GpuEvent*> simt_ev, comm_ev, short_ev;
  std::map<std::tuple<double, double, double>, std::pair<std::size_t, double>> simt_shapes;
  double simt_no_shape_us = 0;
};

KernelTally tally_kernels(const Prepared& p, const std::vector<const GpuEvent*>& assigned) {
  const Trace& t = *p.t;
  KernelTally k;
  for (const auto* e : assigned) {
    if (e->kind != GpuKind::kernel) continue;
    k.durs.push_back(e->dur);
    k.kernel_us += e->dur;
    if (std::isfinite(p.launch_us) && e->dur < p.launch_us) {
      ++k.launch_bound;
      k.launch_bound_us += e->dur;
      if (k.short_ev.size() < 3) k.short_ev.push_back(e);
    }
    const auto id = static_cast<std::size_t>(e->name);
    if (p.comm[id]) {
      ++k.comm_n;
      k.comm_us += e->dur;
      if (k.comm_ev.size() < 3) k.comm_ev.push_back(e);
    }
    switch (p.gemm_of[id]) {
      case GemmKind::not_gemm: break;
      case GemmKind::tensor_core:
        ++k.gemm_n, ++k.tc_n, k.gemm_us += e->dur, k.tc_us += e->dur;
        ++k.tc_prec[p.tc_precision[id]];
        break;
      case GemmKind::simt_fp32:
        ++k.gemm_n, ++k.simt_n, k.gemm_us += e->dur, k.simt_us += e->dur;
        if (k.simt_ev.size() < 3) k.simt_ev.push_back(e);
        if (auto sh = t.matmul_shapes.find(e->external_id); sh != t.matmul_shapes.end()) {
          auto& acc = k.simt_shapes[{sh->second.m, sh->second.n, sh->second.k}];
          ++acc.first;
          acc.second += e->dur;
        } else {
          k.simt_no_shape_us += e->dur;
        }
        break;
      case GemmKind::simt_fp64: ++k.gemm_n, ++k.simt64_n, k.gemm_us += e->dur, k.simt64_us += e->dur; break;
      case GemmKind::unknown_gemm: ++k.gemm_n, ++k.ugemm_n, k.gemm_us += e->dur, k.ugemm_us += e->dur; break;
    }
  }
  return k;
}

json kernels_json(const Prepared& p, KernelTally& k) {
  std::sort(k.durs.begin(), k.durs.end());  // once for both quantiles
  json j;
  j["count"] = k.durs.size();
  j["total_us"] = k.kernel_us;
  j["p50_us"] = k.durs.empty() ? json(nullptr) : num(quantile_sorted(k.durs, 0.5));
  j["p90_us"] = k.durs.empty() ? json(nullptr) : num(quantile_sorted(k.durs, 0.9));
  j["max_us"] = k.durs.empty() ? json(nullptr) : json(*std::max_element(k.durs.begin(), k.durs.end()));
  j["launch_us"] = num(p.launch_us);
  j["shorter_than_launch"] = k.launch_bound;
  j["shorter_than_launch_us"] = k.launch_bound_us;
  j["shorter_than_launch_share"] =
      k.durs.empty() ? json(nullptr) : json(k.launch_bound / static_cast<double>(k.durs.size()));
  j["examples_short"] = examples(*p.t, k.short_ev);
  return j;
}

json gemm_json(const Prepared& p, const KernelTally& k) {
  json shapes = json::array();
  for (const auto& [mnk, acc] : k.simt_shapes)
    shapes.push_back({{"m", std::get<0>(mnk)}, {"n", std::get<1>(mnk)}, {"k", std::get<2>(mnk)},
                      {"count", acc.first}, {"us", acc.second}});
  json prec = json::object();
  for (const auto& [name, n] : k.tc_prec) prec[name.empty() ? "unstated" : name] = n;
  return {{"count", k.gemm_n},
          {"us", k.gemm_us},
          {"share_of_kernel_time", k.kernel_us > 0 ? num(k.gemm_us / k.kernel_us) : json(nullptr)},
          {"tensor_core", {{"count", k.tc_n}, {"us", k.tc_us}, {"precision", prec}}},
          {"simt_fp32",
           {{"count", k.simt_n},
            {"us", k.simt_us},
            {"shapes", shapes},
            {"us_without_shape", k.simt_no_shape_us},
            {"examples", examples(*p.t, k.simt_ev)}}},
          {"simt_fp64", {{"count", k.simt64_n}, {"us", k.simt64_us}}},
          {"unknown", {{"count", k.ugemm_n}, {"us", k.ugemm_us}}}};
}

json communication_json(const Prepared& p, const KernelTally& k, const std::vector<Interval>& m_comm,
                        const std::vector<Interval>& m_compute) {
  const double comm_union = length(m_comm), comm_overlap = overlap(m_comm, m_compute);
  return {{"count", k.comm_n},
          {"us", k.comm_us},
          {"union_us", comm_union},
          {"overlapped_us", comm_overlap},
          {"exposed_us", comm_union - comm_overlap},
          {"overlap_share", comm_union > 0 ? num(comm_overlap / comm_union) : json(nullptr)},
          {"examples", examples(*p.t, k.comm_ev)}};
}

// Copies by direction and memory kind (g["copies"]), and memsets (g["memsets"]).
void add_copies(const Prepared& p, const std::vector<const GpuEvent*>& assigned, json& g) {
  const Trace& t = *p.t;
  struct Acc {
    std::size_t n = 0, unknown_bytes = 0;
    double bytes = 0, us = 0;
    std::map<double, std::size_t> sizes;
    std::vector<const GpuEvent*> ex;
    std::string name;
  };
  std::map<std::pair<std::string, std::string>, Acc> copies;
  Acc memset;
  for (const auto* e : assigned) {
    if (e->kind == GpuKind::memset) {
      ++memset.n;
      memset.us += e->dur;
      if (e->bytes >= 0) memset.bytes += e->bytes;
      continue;
    }
    if (e->kind != GpuKind::memcpy) continue;
    const auto& ck = p.copy[static_cast<std::size_t>(e->name)];
    Acc& a = copies[{ck.direction, ck.memory}];
    ++a.n;
    a.us += e->dur;
    a.name = t.name_of(e->name);
    if (e->bytes >= 0) {
      a.bytes += e->bytes;
      if (a.sizes.size() < 64 || a.sizes.count(e->bytes)) ++a.sizes[e->bytes];
    } else {
      ++a.unknown_bytes;
    }
    if (a.ex.size() < 3) a.ex.push_back(e);
  }
  json cps = json::array();
  for (const auto& [key, a] : copies) {
    json sizes = json::array();
    for (const auto& [b, n] : a.sizes) sizes.push_back({{"bytes", b}, {"count", n}});
    cps.push_back({{"direction", key.first},
                   {"memory", key.second},
                   {"event_name", a.name},
                   {"count", a.n},
                   {"bytes", a.unknown_bytes == a.n ? json(nullptr) : json(a.bytes)},
                   {"bytes_unknown", a.unknown_bytes},
                   {"us", a.us},
                   {"gbps", a.us > 0 && a.unknown_bytes == 0 ? num(a.bytes / a.us / 1e3) : json(nullptr)},
                   {"sizes", sizes},
                   {"examples", examples(t, a.ex)}});
  }
  g["copies"] = cps;
  g["memsets"] = {{"count", memset.n}, {"bytes", memset.bytes}, {"us", memset.us}};
}

json gpu_section(const Prepared& p, const Window& w, const std::vector<const GpuEvent*>& in_window,
                 const std::vector<const GpuEvent*>& assigned, json* timeline = nullptr) {
  std::vector<Interval> all, compute, comm, mem;
  ByStream by_stream;
  std::map<int, std::vector<Interval>> copies_by_device;
  for (const auto* e : in_window) {
    const Interval iv{std::max(w.lo, e->ts), std::min(w.hi, e->ts + e->dur)};
    all.push_back(iv);
    if (e->kind == GpuKind::kernel) (p.comm[static_cast<std::size_t>(e->name)] ? comm : compute).push_back(iv);
    else mem.push_back(iv);
    if (e->kind == GpuKind::memcpy) copies_by_device[e->device].push_back(iv);
    by_stream[{e->device, e->stream}].push_back(e);
  }
  const auto m_all = merged(all), m_compute = merged(compute), m_comm = merged(comm), m_mem = merged(mem);
  const double busy = length(m_all);
  double span_lo = w.lo, span_hi = w.hi;
  if (!m_all.empty() && w.step < 0) {
    span_lo = m_all.front().first;
    span_hi = m_all.back().second;
  }
  const double window = span_hi - span_lo;

  std::vector<const GpuEvent*> sorted_all = in_window;
  std::sort(sorted_all.begin(), sorted_all.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
  json gaps = json::array();
  json g;
  g["window_us"] = window;
  g["busy_us"] = busy;
  g["idle_us"] = window - busy;
  g["busy_share"] = window > 0 ? num(busy / window) : json(nullptr);
  g["idle_by_cause"] = idle_by_cause(p, m_all, sorted_all, nullptr, span_lo, span_hi, timeline ? &gaps : nullptr);
  if (timeline) *timeline = timeline_json(p, w, sorted_all, span_lo, span_hi, gaps);
  g["split"] = {{"compute_us", length(m_compute)},
                {"communication_us", length(m_comm)},
                {"memory_us", length(m_mem)},
                {"non_compute_us", busy - length(m_compute)}};
  g["streams"] = streams_json(p, w, by_stream, window);
  KernelTally k = tally_kernels(p, assigned);
  g["kernels"] = kernels_json(p, k);
  g["gemm_kernels"] = gemm_json(p, k);
  g["communication"] = communication_json(p, k, m_comm, m_compute);
  add_copies(p, assigned, g);
  return g;
}

json host_section(const Prepared& p, const Window& w) {
  const Trace& t = *p.t;
  std::map<std::string, std::size_t> sync_by_name;
  std::size_t stream_sync = 0, device_sync = 0, event_sync = 0, sync_copy = 0, item = 0, lsd = 0;
  double sync_us = 0;
  std::vector<Interval> loader;
  std::size_t loader_n = 0;
  for (const auto i : w.step >= 0 ? p.host_by_step[static_cast<std::size_t>(w.step)] : p.host_all) {
    const auto& h = t.host[i];
    switch (h.kind) {
      case HostKind::stream_sync: ++stream_sync; break;
      case HostKind::device_sync: ++device_sync; break;
      case HostKind::event_sync: ++event_sync; break;
      case HostKind::sync_copy: ++sync_copy; break;
      case HostKind::scalar_read:
        (t.name_of(h.name) == "aten::item" ? item : lsd)++;
        break;
      case HostKind::data_loader:
        ++loader_n;
        loader.push_back({h.ts, h.ts + h.dur});
        break;
      default: break;
    }
    if (is_sync(h.kind)) {
      ++sync_by_name[t.name_of(h.name)];
      sync_us += h.dur;
    }
  }
  // A copy to pageable memory is synchronous for the host whatever call issued it.
  std::size_t pageable_d2h = 0;
  for (const auto idx : w.step >= 0 ? p.order_by_step[static_cast<std::size_t>(w.step)] : p.order) {
    const auto& e = t.gpu[idx];
    if (e.kind != GpuKind::memcpy) continue;
    const auto& ck = p.copy[static_cast<std::size_t>(e.name)];
    if (ck.direction == "DtoH" && ck.memory == "pageable") ++pageable_d2h;
  }
  json names = json::object();
  for (const auto& [n, c] : sync_by_name) names[n] = c;
  json h;
  h["syncs"] = {{"stream_sync", stream_sync},
                {"device_sync", device_sync},
                {"event_sync", event_sync},
                {"sync_copy_calls", sync_copy},
                {"pageable_d2h_copies", pageable_d2h},
                {"total", stream_sync + device_sync + event_sync + sync_copy},
                {"host_blocked_us", sync_us},
                {"by_name", names}};
  h["scalar_reads"] = {{"aten::item", item}, {"aten::_local_scalar_dense", lsd}, {"count", std::max(item, lsd)}};
  const auto ml = merged(loader);
  h["data_loader"] = {{"events", loader_n}, {"us", length(ml)}};
  return h;
}

}  // namespace

bool is_communication(const std::string& kernel_name) {
  const auto n = upper(kernel_name);
  return has(n, "NCCL") || has(n, "RCCL");
}

// Kernel names are matched upper-cased: library names mix cases (sgemm, Cijk_, cutlass_80_tensorop).
GemmKind gemm_kind(const std::string& kernel_name) {
  const auto n = upper(kernel_name);
  const bool rocm = kernel_name.rfind("Cijk_", 0) == 0;
  // FBGEMM (fbgemm_gpu::...) names a library of embedding and quantisation kernels, not matmuls.
  const bool matmul = (has(n, "GEMM") && !has(n, "FBGEMM")) || rocm || has(n, "XMMA") || has(n, "SPLITKREDUCE") || has(n, "GEMV");
  if (!matmul) return GemmKind::not_gemm;
  if (has(n, "TENSOROP") || has(n, "XMMA") || has(n, "HMMA") || has(n, "WGMMA") || has(n, "GMMA") ||
      has(n, "1688") || has(n, "16816") || has(n, "884") || has(n, "TF32") || has(n, "BF16") || has(n, "FP16") ||
      has(n, "F16") || has(n, "IMMA") || has(n, "MFMA") || (rocm && has(kernel_name, "_MI")))
    return GemmKind::tensor_core;
  if (has(n, "DGEMM")) return GemmKind::simt_fp64;
  if (has(n, "SGEMM") || has(n, "SIMT") || (rocm && !has(kernel_name, "_MI"))) return GemmKind::simt_fp32;
  return GemmKind::unknown_gemm;
}

std::string tensor_core_precision(const std::string& kernel_name) {
  const auto n = upper(kernel_name);
  if (has(n, "BF16")) return "bf16";
  if (has(n, "E4M3") || has(n, "E5M2") || has(n, "FP8")) return "fp8";
  if (has(n, "I8816") || has(n, "IMMA") || has(n, "INT8")) return "int8";
  if (has(n, "TF32") || has(n, "S1688") || has(n, "S16816")) return "tf32";
  if (has(n, "H1688") || has(n, "H16816") || has(n, "H884") || has(n, "FP16") || has(n, "F16")) return "fp16";
  if (kernel_name.rfind("Cijk_", 0) == 0 && has(kernel_name, "_SB_")) return "fp32 (MFMA)";
  return "";
}

CopyKind copy_kind(const std::string& name) {
  CopyKind k{"other", "unknown"};
  for (const char* d : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "DtoA", "AtoD"})
    if (has(name, d)) {
      k.direction = d;
      break;
    }
  if (has(name, "Pinned")) k.memory = "pinned";
  else if (has(name, "Pageable")) k.memory = "pageable";
  else if (k.direction == "DtoD" || k.direction == "PtoP") k.memory = "device";
  return k;
}

namespace {

// Steps: sorted, one per name (a ProfilerStep also appears as a GPU-side annotation on some traces,
// and those are not read as steps).
std::vector<Step> unique_steps(const Trace& t) {
  std::vector<Step> steps = t.steps;
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  std::set<std::string> seen;
  std::vector<Step> unique;
  for (const auto& s : steps)
    if (seen.insert(s.name).second) unique.push_back(s);
  return unique;
}

// What every window's tallies read: each name's kinds, the launches and syncs on the host, the GPU
// events by start and the step of each event.
Prepared prepare(const Trace& t, const std::vector<Step>& steps) {
  Prepared p;
  p.t = &t;
  p.gemm_of.resize(t.names.size());
  p.comm.resize(t.names.size());
  p.copy.resize(t.names.size());
  p.tc_precision.resize(t.names.size());
  for (std::size_t i = 0; i < t.names.size(); ++i) {
    p.gemm_of[i] = gemm_kind(t.names[i]);
    p.comm[i] = is_communication(t.names[i]);
    p.copy[i] = copy_kind(t.names[i]);
    if (p.gemm_of[i] == GemmKind::tensor_core) p.tc_precision[i] = tensor_core_precision(t.names[i]);
  }
  std::vector<double> launch_durs;
  for (const auto& h : t.host) {
    if ((h.kind == HostKind::launch || h.kind == HostKind::sync_copy) && h.correlation >= 0)
      p.launch_ts.emplace(h.correlation, h.ts);
    if (is_sync(h.kind)) p.sync_ends.push_back(h.ts + h.dur);
    if (h.kind == HostKind::launch && has(t.name_of(h.name), "LaunchKernel")) launch_durs.push_back(h.dur);
  }
  std::sort(p.sync_ends.begin(), p.sync_ends.end());
  p.launch_us = quantile_or_nan(launch_durs, 0.5);

  for (std::size_t i = 0; i < t.gpu.size(); ++i)
    if (t.gpu[i].kind != GpuKind::sync) p.order.push_back(i);
  std::sort(p.order.begin(), p.order.end(), [&](std::size_t a, std::size_t b) { return t.gpu[a].ts < t.gpu[b].ts; });
  p.gpu_step.assign(t.gpu.size(), -1);
  for (std::size_t i = 0; i < t.gpu.size(); ++i) {
    const auto& e = t.gpu[i];
    p.max_dur = std::max(p.max_dur, e.dur);
    auto l = p.launch_ts.find(e.correlation);
    p.gpu_step[i] = step_of(steps, l != p.launch_ts.end() ? l->second : e.ts);
  }
  p.host_step.assign(t.host.size(), -1);
  for (std::size_t i = 0; i < t.host.size(); ++i) p.host_step[i] = step_of(steps, t.host[i].ts);
  p.order_by_step.assign(steps.size(), {});
  p.host_by_step.assign(steps.size(), {});
  for (const auto i : p.order)
    if (p.gpu_step[i] >= 0) p.order_by_step[static_cast<std::size_t>(p.gpu_step[i])].push_back(i);
  p.host_all.resize(t.host.size());
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    p.host_all[i] = i;
    if (p.host_step[i] >= 0) p.host_by_step[static_cast<std::size_t>(p.host_step[i])].push_back(i);
  }
  return p;
}

std::string vendor_of(const Trace& t, bool has_gpu) {
  std::string vendor = "none";
  for (const auto& n : t.device_names) {
    const auto l = lower(n);
    if (has(l, "nvidia")) vendor = "nvidia";
    else if (has(l, "amd") || has(l, "radeon") || has(l, "instinct")) vendor = "amd";
  }
  if (t.amd_runtime) vendor = "amd";
  else if (vendor == "none" && has_gpu) vendor = "nvidia (by its runtime call names)";
  return vendor;
}

json rules() {
  return {
      {"busy", "GPU busy = the union of kernel, memcpy and memset intervals (all streams for the GPU, per "
               "stream for a stream); idle = window minus busy. The whole-trace window runs from the first "
               "GPU event's start to the last one's end. The steps' windows tile the timeline: a step's window "
               "starts where the step before ended (the first step: at the first GPU event it launched) and "
               "ends where the next step's first launched event on the stream of this step's last-ending "
               "event starts (where the next step used no such stream: at its first event, but not before "
               "this step's last event ends; the last step: at the end of its last event). A stream's idle "
               "time is between its own first and last event."},
      {"idle_cause", "Each idle gap ends when the next event starts. The part of a stream's gap in which "
                     "another stream of the same GPU was copying is 'copy'; of the rest, a gap in which a "
                     "host synchronisation call returned is 'sync'; a gap whose next event the host "
                     "launched after the gap began is 'host launch'; anything else is 'other' (work "
                     "queued in time that still waited, e.g. on another stream's event)."},
      {"split", "compute = kernels that are not communication; communication = kernel names containing "
                "nccl or rccl; memory = memcpy and memset; each the union of its intervals."},
      {"launch_bound", "A kernel is shorter than a launch when its duration is below the median duration "
                       "of the host's kernel-launch calls in the same trace."},
      {"gemm_kernels", "GEMM kernels: names containing GEMM, GEMV, XMMA or SPLITKREDUCE in any case, or "
                       "starting Cijk_ (ROCm). Tensor-core when the name also has TENSOROP, XMMA, HMMA, GMMA, "
                       "WGMMA, MFMA, IMMA, 1688, 16816, 884, TF32, BF16, F16 (or _MI on ROCm); FP32 SIMT when "
                       "it has SGEMM or SIMT (or a ROCm Cijk_ kernel without _MI); FP64 when DGEMM; otherwise "
                       "'unknown' (e.g. cuBLAS split-K reductions)."},
      {"copies", "Copy kind from the event name: Pinned, Pageable, or Device for device-to-device. "
                 "GB/s = bytes / duration, GB = 1e9 bytes."},
      {"syncs", "Host calls that block until the GPU is done: *StreamSynchronize, *DeviceSynchronize, "
                "*EventSynchronize, and copy calls without Async (cudaMemcpy, hipMemcpyWithStream). A "
                "device-to-pageable copy is counted apart: it blocks the host whatever call issued it."},
      {"steps", "An event belongs to the ProfilerStep#N whose host interval holds its launch call (or, "
                "when the trace has no launch for it, its own start)."}};
}

// What the trace cannot say, and why.
json cannot_say_list(const Trace& t, const Prepared& p, const std::vector<Step>& steps, bool has_gpu,
                     const std::string& vendor) {
  json cannot = json::array();
  auto cannot_say = [&](const std::string& what, const std::string& why) {
    cannot.push_back({{"symptom", what}, {"why", why}});
  };
  if (!has_gpu) {
    cannot_say("GPU busy and idle time, copies, kernels, GEMM, communication",
               t.runtime_calls == 0 ? "the trace has no GPU events and no GPU runtime calls: a CPU-only "
                                      "profile (profiled without ProfilerActivity.CUDA, or on a machine "
                                      "without a GPU)"
                                    : "the trace has GPU runtime calls but no GPU events: the GPU activity "
                                      "was not recorded (ProfilerActivity.CUDA off, or CUPTI unavailable)");
  }
  if (steps.empty())
    cannot_say("per-step symptoms", "the trace has no ProfilerStep#N events (the profiled loop did not "
                                     "call profiler.step()); only whole-trace figures are given");
  if (has_gpu && !std::isfinite(p.launch_us))
    cannot_say("kernels shorter than a launch", "the trace has no kernel-launch runtime calls to time a launch by");
  if (has_gpu && t.gpu_events_lack_stream)
    cannot_say("per-stream figures for some events", "some GPU events carry no stream id; their thread id "
                                                      "is used as the stream");
  if (t.missing_fields > 0)
    cannot_say("some events", std::to_string(t.missing_fields) + " events lack ts or dur and were left out");
  bool unknown_copy_memory = false, unknown_bytes = false;
  for (const auto& e : t.gpu)
    if (e.kind == GpuKind::memcpy) {
      const auto& ck = p.copy[static_cast<std::size_t>(e.name)];
      if (ck.memory == "unknown" && (ck.direction == "HtoD" || ck.direction == "DtoH")) unknown_copy_memory = true;
      if (e.bytes < 0) unknown_bytes = true;
    }
  if (unknown_copy_memory)
    cannot_say("pinned or pageable host memory of some copies",
               vendor == "amd" ? "ROCm's copy events say 'Host', not whether the host memory was pinned"
                               : "the copy event names do not say whether the host memory was pinned");
  if (unknown_bytes)
    cannot_say("bytes and GB/s of some copies", "their copy events carry no byte count and no runtime call gave one");
  if (vendor == "amd")
    cannot_say("tensor-core rule", "the kernel-name rules are NVIDIA's and ROCm's rocBLAS/Tensile (Cijk_, _MI "
                                   "for matrix cores); other ROCm GEMM libraries may be read as 'unknown'");
  if (t.matmul_shapes.empty() && has_gpu)
    cannot_say("matmul shapes", "the trace recorded no shapes (record_shapes=False) or no aten::mm/addmm/bmm/linear "
                                "ops: a GEMM kernel cannot be priced at its shape");
  bool any_loader = false;
  for (const auto& h : t.host) any_loader |= h.kind == HostKind::data_loader;
  if (!any_loader)
    cannot_say("data-loader time", "the trace has no DataLoader events (the loader iterated outside the "
                                   "profiled region, or a custom loader without record_function)");
  return cannot;
}

// The GPU events that overlap [lo, hi).
std::vector<const GpuEvent*> window_events(const Prepared& p, double lo, double hi) {
  const Trace& t = *p.t;
  std::vector<const GpuEvent*> v;
  auto it = std::lower_bound(p.order.begin(), p.order.end(), lo - p.max_dur,
                             [&](std::size_t i, double x) { return t.gpu[i].ts < x; });
  for (; it != p.order.end() && t.gpu[*it].ts < hi; ++it) {
    const auto& e = t.gpu[*it];
    if (e.ts + e.dur > lo) v.push_back(&e);
  }
  return v;
}

// One window's GPU (where the trace has GPU events) and host sections; `timeline`, when given,
// receives the window drawn by cause.
json window_section(const Prepared& p, const Window& w, bool has_gpu, json* timeline) {
  const Trace& t = *p.t;
  json s;
  std::vector<const GpuEvent*> assigned;
  for (const auto i : w.step >= 0 ? p.order_by_step[static_cast<std::size_t>(w.step)] : p.order)
    assigned.push_back(&t.gpu[i]);
  if (has_gpu) s["gpu"] = gpu_section(p, w, window_events(p, w.lo, w.hi), assigned, timeline);
  s["host"] = host_section(p, w);
  return s;
}

// cuda_sync events mark the GPU side of a host wait; they are not work, so not busy time. A reader that
// counts them as work (HTA does) calls busy every marker microsecond outside gtb's busy time: those
// inside gtb's window, and those before or after it, by which such a reader's window is longer.
json sync_markers(const Prepared& p, double lo, double hi) {
  const Trace& t = *p.t;
  std::vector<Interval> busy_iv, sync_iv;
  for (const auto i : p.order) busy_iv.push_back({t.gpu[i].ts, t.gpu[i].ts + t.gpu[i].dur});
  for (const auto& e : t.gpu)
    if (e.kind == GpuKind::sync) sync_iv.push_back({e.ts, e.ts + e.dur});
  const auto mb = merged(busy_iv), ms = merged(sync_iv);
  const double outside = length(ms) - overlap(ms, mb);
  std::vector<Interval> clipped;
  for (const auto& iv : ms) clipped.push_back({std::max(lo, iv.first), std::min(hi, iv.second)});
  const auto mc = merged(clipped);
  const double in_window = length(mc) - overlap(mc, mb);
  double stretch = 0;
  if (!ms.empty()) stretch = std::max(0.0, lo - ms.front().first) + std::max(0.0, ms.back().second - hi);
  return {{"count", sync_iv.size()},
          {"us", length(ms)},
          {"us_outside_busy", outside},
          {"us_outside_busy_in_window", in_window},
          {"window_stretch_us", stretch}};
}

// Each step's host interval and its window on the GPU timeline. The step windows tile the timeline:
// each starts where the step's first GPU event starts. The step drawn in the timeline figure is the
// one of median GPU window (a typical step, not the first, which often carries warm-up).
json steps_json(const Prepared& p, const std::vector<Step>& steps, bool has_gpu, json& timeline, unsigned threads) {
  const Trace& t = *p.t;
  std::vector<double> first(steps.size(), INFINITY), last(steps.size(), -INFINITY);
  std::vector<StreamKey> last_stream(steps.size());
  std::vector<std::map<StreamKey, double>> first_on(steps.size());
  for (const auto i : p.order) {
    const int s = p.gpu_step[i];
    if (s < 0) continue;
    const auto k = static_cast<std::size_t>(s);
    const auto& e = t.gpu[i];
    first[k] = std::min(first[k], e.ts);
    if (e.ts + e.dur > last[k]) last[k] = e.ts + e.dur, last_stream[k] = {e.device, e.stream};
    first_on[k].emplace(StreamKey{e.device, e.stream}, e.ts);  // p.order is by start: the first one stays
  }
  // The windows tile the timeline: a step starts where the one before it ended and ends where the next
  // step's first event on the stream of this step's last-ending event starts (the next step's first event
  // anywhere if it used no such stream, but never before this step's own last event ends), so an early
  // side-stream copy of the next step does not take this step's tail.
  std::vector<double> lo(steps.size(), INFINITY), hi(steps.size(), INFINITY);
  double prev_hi = -INFINITY;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!std::isfinite(first[i])) continue;
    lo[i] = std::isfinite(prev_hi) ? prev_hi : first[i];
    hi[i] = last[i];
    for (std::size_t j = i + 1; j < steps.size(); ++j)
      if (std::isfinite(first[j])) {
        const auto on = first_on[j].find(last_stream[i]);
        hi[i] = on != first_on[j].end() ? on->second : std::max(first[j], last[i]);
        break;
      }
    hi[i] = std::max(hi[i], lo[i]);
    prev_hi = hi[i];
  }
  std::vector<std::pair<double, std::size_t>> lengths;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (std::isfinite(first[i])) lengths.push_back({hi[i] - lo[i], i});
  std::sort(lengths.begin(), lengths.end());
  const std::size_t drawn = lengths.empty() ? steps.size() : lengths[lengths.size() / 2].second;
  // Each step's section reads only the prepared trace: `threads` build them at once, each taking the next
  // step not yet taken, and the array lists them in step order whatever order they were built in.
  std::vector<json> built(steps.size());
  auto section = [&](std::size_t i) {
    json s;
    s["name"] = steps[i].name;
    s["host_ts_us"] = steps[i].ts;
    s["host_us"] = steps[i].dur;
    Window w{0, 0, static_cast<int>(i)};
    if (std::isfinite(first[i])) {
      w.lo = lo[i];
      w.hi = hi[i];
      s["gpu_window"] = {{"begin_us", w.lo}, {"end_us", w.hi}};
    }
    json sec = window_section(p, w, has_gpu, i == drawn ? &timeline : nullptr);
    if (i == drawn) timeline["step"] = steps[i].name;
    if (!std::isfinite(first[i])) sec.erase("gpu");
    s.update(sec);
    built[i] = std::move(s);
  };
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto worker = [&] {
    try {
      for (std::size_t i; (i = next++) < steps.size();) section(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
      next = steps.size();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < std::min<std::size_t>(threads, steps.size()); ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  json js = json::array();
  for (auto& s : built) js.push_back(std::move(s));
  return js;
}

}  // namespace

json diagnose_trace(const Trace& t, const std::string& label, unsigned threads) {
  const std::vector<Step> steps = unique_steps(t);
  const Prepared p = prepare(t, steps);
  const bool has_gpu = !p.order.empty();
  const std::string vendor = vendor_of(t, has_gpu);

  json d;
  d["tool"] = "gtb diagnose";
  d["format_version"] = 1;
  d["trace"] = {{"file", label},
                {"json_bytes", t.bytes_read},
                {"events", t.events_seen},
                {"gpu_events", t.gpu.size()},
                {"runtime_calls", t.runtime_calls},
                {"devices", t.device_names},
                {"vendor", vendor},
                {"distributed_backend", t.distributed_backend},
                {"rank", t.rank ? json(*t.rank) : json(nullptr)},
                {"world_size", t.world_size ? json(*t.world_size) : json(nullptr)},
                {"steps", steps.size()}};
  d["rules"] = rules();
  const json cannot = cannot_say_list(t, p, steps, has_gpu, vendor);

  // Windows: the whole trace, then each step.
  double lo = 0, hi = 0;
  if (has_gpu) {
    lo = t.gpu[p.order.front()].ts;
    for (const auto i : p.order) hi = std::max(hi, t.gpu[i].ts + t.gpu[i].dur);
  }
  d["overall"] = window_section(p, Window{lo, hi, -1}, has_gpu, nullptr);
  if (has_gpu) d["overall"]["gpu"]["sync_markers"] = sync_markers(p, lo, hi);
  {
    double host_lo = steps.empty() ? 0 : steps.front().ts, host_hi = 0;
    for (const auto& s : steps) host_hi = std::max(host_hi, s.ts + s.dur);
    d["overall"]["steps_host_us"] = host_hi - host_lo;
  }
  json timeline;
  d["steps"] = steps_json(p, steps, has_gpu, timeline, threads);
  if (timeline.is_null() && has_gpu) {
    // No steps: the whole trace is drawn.
    window_section(p, Window{lo, hi, -1}, has_gpu, &timeline);
    timeline["step"] = "whole trace";
  }
  if (!timeline.is_null()) d["timeline"] = timeline;
  d["cannot_say"] = cannot;
  return d;
}

std::string collective_kind(const std::string& name) {
  std::string n;
  for (char c : name)
    if (c != '_' && c != ' ' && c != '-') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* k : {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv", "reduce",
                        "send", "recv", "barrier"})
    if (n.find(k) != std::string::npos) return k;
  return "";
}

double dtype_bytes(const std::string& dtype) {
  auto d = lower(dtype);
  if (const auto colon = d.rfind("::"); colon != std::string::npos) d = d.substr(colon + 2);  // c10::BFloat16
  if (d == "float" || d == "float32" || d == "int" || d == "int32" || d == "uint32") return 4;
  if (d == "double" || d == "float64" || d == "long" || d == "int64" || d == "uint64" || d == "complexfloat") return 8;
  if (d == "half" || d == "float16" || d == "bfloat16" || d == "short" || d == "int16") return 2;
  if (d == "byte" || d == "char" || d == "bool" || d == "int8" || d == "uint8" || has(d, "float8")) return 1;
  return 0;
}

double bus_bandwidth_gbps(const std::string& c, double bytes, double seconds, std::int64_t n) {
  if (!(bytes > 0) || !(seconds > 0) || n < 1) return NAN;
  const double alg = bytes / seconds / 1e9, nn = static_cast<double>(n);
  if (c == "allreduce") return alg * 2 * (nn - 1) / nn;
  if (c == "allgather" || c == "reducescatter" || c == "alltoall") return alg * (nn - 1) / nn;
  if (c == "broadcast" || c == "reduce") return alg;
  return NAN;
}

std::vector<CommCall> communication_calls(const Trace& t) {
  const std::vector<Step> steps = unique_steps(t);
  const Prepared p = prepare(t, steps);
  std::vector<CommCall> out;
  // The collective's own arguments (kind, size, group), where the trace wrote them.
  auto with_args = [&t](CommCall& c, std::int32_t index) {
    if (index < 0) return;
    const auto& a = t.collectives[static_cast<std::size_t>(index)];
    if (a.name >= 0) c.collective = collective_kind(t.name_of(a.name));
    const double eb = a.dtype >= 0 ? dtype_bytes(t.name_of(a.dtype)) : 0;
    if (eb > 0 && a.in_elements >= 0) c.bytes = a.in_elements * eb;
    if (eb > 0 && a.out_elements >= 0) c.out_bytes = a.out_elements * eb;
    c.group_size = a.group_size;
  };
  for (const auto i : p.order) {
    const auto& e = t.gpu[i];
    if (e.kind != GpuKind::kernel || !p.comm[static_cast<std::size_t>(e.name)]) continue;
    CommCall c;
    c.step = p.gpu_step[i];
    c.ts = e.ts;
    c.dur = e.dur;
    c.on_gpu = true;
    c.collective = collective_kind(t.name_of(e.name));
    with_args(c, e.collective);
    out.push_back(c);
  }
  if (!out.empty()) return out;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const auto& h = t.host[i];
    if (h.kind != HostKind::collective) continue;
    CommCall c;
    c.step = p.host_step[i];
    c.ts = h.ts;
    c.dur = h.dur;
    c.collective = collective_kind(t.name_of(h.name));
    with_args(c, h.collective);
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const CommCall& a, const CommCall& b) { return a.ts < b.ts; });
  return out;
}

std::vector<NameTally> name_tallies(const Trace& t) {
  const std::vector<Step> steps = unique_steps(t);
  const Prepared p = prepare(t, steps);
  const std::size_t n = std::max<std::size_t>(1, steps.size());
  std::map<std::pair<std::string, std::int32_t>, NameTally> by;
  auto add = [&](const char* kind, std::int32_t name, int step, double dur) {
    if (!steps.empty() && step < 0) return;
    auto& x = by[{kind, name}];
    if (x.count.empty()) {
      x.name = t.name_of(name);
      x.kind = kind;
      x.count.assign(n, 0);
      x.us.assign(n, 0);
    }
    const auto k = static_cast<std::size_t>(std::max(0, step));
    x.count[k] += 1;
    x.us[k] += dur;
  };
  for (const auto i : p.order) add("kernel", t.gpu[i].name, p.gpu_step[i], t.gpu[i].dur);
  for (const auto& op : t.cpu_ops) add("cpu_op", op.name, steps.empty() ? 0 : step_of(steps, op.ts), op.dur);
  std::vector<NameTally> out;
  for (auto& [k, v] : by) out.push_back(std::move(v));
  // Collectives by kind: calls, time and bytes per step, and the sizes of the calls.
  std::map<std::string, NameTally> coll;
  std::map<std::string, std::set<double>> sizes;
  for (const auto& c : communication_calls(t)) {
    if (!steps.empty() && c.step < 0) continue;
    const std::string kind = c.collective.empty() ? "unknown" : c.collective;
    auto& x = coll[kind];
    if (x.count.empty()) {
      x.name = kind;
      x.kind = "collective";
      x.count.assign(n, 0);
      x.us.assign(n, 0);
      x.bytes.assign(n, 0);
    }
    const auto k = static_cast<std::size_t>(std::max(0, c.step));
    x.count[k] += 1;
    x.us[k] += c.dur;
    const double b = kind == "allgather" ? c.out_bytes : c.bytes;
    x.bytes[k] += b >= 0 ? b : NAN;
    if (b >= 0) sizes[kind].insert(b);
  }
  for (auto& [k, v] : coll) {
    v.sizes.assign(sizes[k].begin(), sizes[k].end());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gtb::diagnose
