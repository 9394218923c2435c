// The vectorize family's findings from its records (see findings.h for the shape).
#include "bench/vectorize/findings.h"

#include <algorithm>

#include <cmath>
#include <functional>
#include <string>
#include <utility>

namespace gtb::vectorize {

namespace {

// The denominator record: same workload and params (and options if asked); across options (the
// launch loop's chunks) the fastest one, so a speedup is never inflated by a poor chunk.
const Record* find(const std::vector<Record>& recs, const Record& like, const std::string& variant, Backend backend,
                   bool same_options) {
  const Record* best = nullptr;
  for (const auto& r : recs)
    if (r.status == Status::ok && r.value && r.workload == like.workload && r.variant == variant &&
        r.backend == backend && r.params == like.params && (!same_options || r.options == like.options) &&
        (!best || *r.value > *best->value))
      best = &r;
  return best;
}

// A term of work done per second, a table by the work a record does (work_per_rep, under `axis`) over
// the records `pick` takes.
cost::Term rate_term(const std::string& name, Backend be, const json& where, const std::string& axis,
                     const std::string& y, const std::vector<Record>& recs,
                     const std::function<bool(const Record&)>& pick, const std::string& what) {
  return cost::table_term(
      name, be, where, {axis}, y, recs, pick, [axis](const Record& r) { return json{{axis, r.work_per_rep}}; },
      [](const Record& r) { return r.stats->median > 0 ? r.work_per_rep / r.stats->median : 0.0; }, what);
}
// The bytes per second of a pass (the stream_bandwidth term).
cost::Term bandwidth_term(Backend be, const json& where, const std::vector<Record>& recs,
                          const std::function<bool(const Record&)>& pick, const std::string& what) {
  return rate_term(cost::term::kStreamBandwidth, be, where, "bytes", "bytes_per_s", recs, pick, what);
}
bool any_workload(const std::vector<Record>& recs, const std::string& workload) {
  return std::any_of(recs.begin(), recs.end(), [&](const Record& r) { return r.workload == workload; });
}

}  // namespace

const std::vector<Speedup>* Findings::rows(const std::string& name) const {
  for (const auto& q : ratios)
    if (q.name == name) return &q.rows;
  return nullptr;
}

// {name, numerator variant, denominator variant, backend, match options}
struct RatioSpec {
  const char* name;
  const char* num;
  const char* den;
  Backend backend;
  bool same_options;
};
const RatioSpec kSpecs[] = {
      {"graph_over_launch_loop", "graph", "launch_loop", Backend::cuda, true},
      {"vec4_over_scalar", "vec4", "scalar", Backend::cuda, false},
      {"vec4_over_launch_loop", "vec4", "launch_loop", Backend::cuda, false},
      {"vec4_over_serial", "vec4", "serial", Backend::cuda, false},
      {"fused_over_unfused", "vec4", "unfused", Backend::cuda, false},
      {"thrust_over_vec4", "thrust", "vec4", Backend::cuda, false},
      {"autovec_over_scalar", "autovec", "scalar", Backend::cpu, false},
      {"openmp_over_scalar", "openmp", "scalar", Backend::cpu, false},
};

std::vector<std::pair<std::string, std::string>> compared_pairs(const std::vector<Record>& planned) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& q : kSpecs)
    for (const auto& r : planned)
      if (r.variant == q.num && r.backend == q.backend)
        for (const auto& d : planned)
          if (d.workload == r.workload && d.variant == q.den && d.backend == q.backend && d.params == r.params &&
              (!q.same_options || d.options == r.options))
            out.emplace_back(r.id, d.id);
  return out;
}

Findings compute_findings(const std::vector<Record>& recs) {
  Findings f;
  for (const auto& q : kSpecs) {
    Ratio ratio{q.name, {}};
    for (const auto& r : recs) {
      if (r.status != Status::ok || !r.value || r.variant != q.num || r.backend != q.backend) continue;
      const Record* d = find(recs, r, q.den, q.backend, q.same_options);
      if (!d || *d->value <= 0) continue;
      // For the graph the ratio of bandwidths is the ratio of times: the launch overhead removed. Read
      // from the pair's rounds where the two were measured as a pair.
      const auto v = value_ratio(r, *d);
      if (!v) continue;
      ratio.rows.push_back({r.workload, r.params, q.same_options && !r.options.empty() ? r.options : json(),
                            v->ratio, v->rounds});
    }
    if (!ratio.rows.empty()) f.ratios.push_back(std::move(ratio));
  }
  // Launch cost: a loop of n/chunk small launches (or their captured graph) over the same work, per
  // launch; the smallest chunk measured is the one least diluted by the work itself.
  for (const auto& [variant, mode] : {std::pair{"launch_loop", "eager"}, std::pair{"graph", "graph"}}) {
    const Record* best = nullptr;
    double best_chunk = 0;
    for (const auto& r : recs) {
      if (!usable(r) || !r.stats || r.backend != Backend::cuda || r.variant != variant || r.workload != "axpy") continue;
      const double chunk = r.options.value("chunk", r.params.value("chunk", 0.0));
      if (chunk > 0 && (!best || chunk < best_chunk)) best = &r, best_chunk = chunk;
    }
    if (!best) {
      f.terms.push_back(cost::cannot_say_term(
          cost::term::kLaunch, Backend::cuda, json{{"mode", mode}}, "constant",
          cost::reason_none(recs, Backend::cuda, [v = std::string(variant)](const Record& r) { return r.variant == v; },
                            std::string(variant) + " launch")));
      continue;
    }
    const double launches = best->params.value("n", 0.0) / best_chunk;
    cost::Term t;
    t.name = cost::term::kLaunch;
    t.backend = Backend::cuda;
    t.where = {{"mode", mode}};
    t.form = "constant";
    t.unit = "s";
    t.value = launches > 0 ? best->stats->median / launches : std::nan("");
    t.records = {best->id};
    t.note = "seconds per kernel of a loop of small launches, their work included (an upper bound)";
    if (launches > 0) f.terms.push_back(std::move(t));
  }
  for (const Backend be : {Backend::cpu, Backend::cuda})
    f.terms.push_back(bandwidth_term(
        be, json::object(), recs, [](const Record& r) { return r.workload == "axpy" && !r.options.contains("chunk"); },
        "axpy"));
  // The scale -> bias -> GELU chain: the rate of an elementwise pass that computes a GELU.
  for (const Backend be : {Backend::cpu, Backend::cuda})
    f.terms.push_back(bandwidth_term(
        be, json{{"op", "gelu"}}, recs,
        [](const Record& r) { return r.workload == "chain" && !r.options.contains("chunk"); }, "GELU chain"));
  // An Adam update, per byte it moves: the optimizer part of a step that runs Adam.
  if (any_workload(recs, "adam"))
    f.terms.push_back(bandwidth_term(Backend::cpu, json{{"op", "adam"}}, recs,
                                     [](const Record& r) { return r.workload == "adam"; }, "Adam update"));
  // The MLP step's SGD-with-momentum update, per byte it moves, on all threads (op sgd) and on one
  // (op sgd_one_thread): the optimizer part of a native step that runs SGD. The MLP step's loss
  // (softmax cross-entropy, two exponentials per logit), per logit, on one thread and over all
  // threads: what its loss pass costs beyond the bytes it moves.
  for (const bool all : {false, true}) {
    const char* variant = all ? "openmp" : "autovec";
    if (any_workload(recs, "sgd"))
      f.terms.push_back(bandwidth_term(
          Backend::cpu, json{{"op", all ? "sgd" : "sgd_one_thread"}}, recs,
          [variant](const Record& r) { return r.workload == "sgd" && r.variant == variant; },
          all ? "SGD-momentum update on all cores" : "SGD-momentum update on one thread"));
  }
  for (const bool all : {false, true}) {
    const char* variant = all ? "openmp" : "autovec";
    if (any_workload(recs, "softmax_xent"))
      f.terms.push_back(rate_term(
          cost::term::kSoftmaxXent, Backend::cpu, json{{"threads", all ? "all" : "one"}}, "logits", "logits_per_s", recs,
          [variant](const Record& r) { return r.workload == "softmax_xent" && r.variant == variant; },
          all ? "softmax cross-entropy on all cores" : "softmax cross-entropy on one thread"));
  }
  // A plain pass on one thread (the compiler-vectorized loop): what a step run on one thread streams at.
  if (std::any_of(recs.begin(), recs.end(), [](const Record& r) { return r.workload == "axpy" && r.variant == "autovec"; }))
    f.terms.push_back(bandwidth_term(
        Backend::cpu, json{{"op", "one_thread"}}, recs,
        [](const Record& r) { return r.workload == "axpy" && r.variant == "autovec" && !r.options.contains("chunk"); },
        "axpy on one thread"));
  // How many threads the CPU's OpenMP loops ran on (the all-core axpy's): how a native CPU step
  // divides its rows.
  for (const auto& r : recs)
    if (usable(r) && r.backend == Backend::cpu && r.workload == "axpy" && r.variant == "openmp" &&
        r.info.contains("threads") && r.info["threads"].is_number() && r.info["threads"].get<double>() >= 1) {
      cost::Term t;
      t.name = cost::term::kCpuThreads;
      t.backend = Backend::cpu;
      t.form = "constant";
      t.unit = "count";
      t.value = r.info["threads"].get<double>();
      t.records = {r.id};
      t.note = "OpenMP threads of the all-core loops";
      f.terms.push_back(std::move(t));
      break;
    }
  // A pass over data other threads wrote last, per byte it moves: a parallel step's optimizer.
  if (any_workload(recs, "handoff"))
    f.terms.push_back(bandwidth_term(Backend::cpu, json{{"op", "handoff"}}, recs,
                                     [](const Record& r) { return r.workload == "handoff"; },
                                     "pass over data other threads wrote"));
  return f;
}

void to_json(const Findings& found, json& f) {
  cost::write_evidence(f, found.terms, {});
  for (const auto& q : found.ratios) {
    json rows = json::array();
    for (const auto& s : q.rows) {
      json row = {{"workload", s.workload}, {"params", s.params}};
      if (!s.options.is_null()) row["options"] = s.options;
      row["speedup"] = s.speedup;
      if (s.paired_rounds > 0) row["paired_rounds"] = s.paired_rounds;  // measured as a pair
      rows.push_back(std::move(row));
    }
    f[q.name] = std::move(rows);
  }
}

}  // namespace gtb::vectorize
