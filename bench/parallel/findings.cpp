// The parallel family's findings from its records (see findings.h for the shape).
#include "bench/parallel/findings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <tuple>

namespace gtb::parallel {

namespace {

double counter(const Record& r, const std::string& name) {
  const auto it = r.counters.find(name);
  return it == r.counters.end() ? 0.0 : it->second.value;
}

// A projection's busbw when the user gives one (GTB_PARALLEL_BUSBW_GBPS, for GTB_PARALLEL_PROJECT_RANKS
// ranks, default 8); busbw stays 0 otherwise, and the caller looks for a measured one.
struct ProjectionInput {
  double busbw = 0;
  std::string source;
  int ranks = 8;
  ProjectionInput() {
    if (const char* r = std::getenv("GTB_PARALLEL_PROJECT_RANKS")) ranks = std::max(2, std::atoi(r));
    if (const char* b = std::getenv("GTB_PARALLEL_BUSBW_GBPS"); b && std::atof(b) > 0) {
      busbw = std::atof(b);
      source = "user-given (GTB_PARALLEL_BUSBW_GBPS)";
    }
  }
};

// The all-reduce busbw a projection divides by: measured at the size nearest the bucket each
// all-reduce moves (nearest on a log scale; the larger size on a tie). The busbw of the largest size
// would overstate a 1 MiB bucket's bandwidth several times over.
struct BusbwPick {
  double busbw = 0;
  std::string source;
  int ranks = 0;
};
template <class Pred>
BusbwPick busbw_at(const std::vector<Record>& records, const Pred& pred, double bucket_bytes) {
  BusbwPick best;
  double best_d = 0, best_bytes = 0;
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != Status::ok || r.variant == "mpi_plain_loop" ||
        r.params.value("collective", "") != "all_reduce" || !pred(r) || !(counter(r, "busbw") > 0))
      continue;
    const double bytes = double(r.params.value("bytes", std::int64_t(0)));
    if (!(bytes > 0)) continue;
    const double d = std::fabs(std::log(bytes / bucket_bytes));
    if (best.busbw > 0 && (d > best_d + 1e-9 || (std::fabs(d - best_d) <= 1e-9 && bytes < best_bytes))) continue;
    best_d = d, best_bytes = bytes;
    best.busbw = counter(r, "busbw");
    best.ranks = std::max(2, int(r.info.value("ranks", r.info.value("gpus", 2))));
    best.source = "measured: " + r.id + " (all-reduce of " + std::to_string(std::llround(bytes / 1048576.0)) +
                  " MiB, the size nearest the " + std::to_string(std::llround(bucket_bytes / 1048576.0)) +
                  " MiB bucket)";
  }
  return best;
}

// The bucket a model's all-reduces move: the best measured data-parallel step's bucket (capped by
// the gradient), else the 25 MiB of the one-rank step and of PyTorch DDP's default.
constexpr double kDefaultBucketMiB = 25;
double bucket_bytes_of(double bucket_mib, double gradient_bytes) {
  const double b = (bucket_mib > 0 ? bucket_mib : kDefaultBucketMiB) * 1048576.0;
  return gradient_bytes > 0 ? std::min(b, gradient_bytes) : b;
}

// The N-rank step projected from the one-rank step measured here and a busbw: given by the user
// (GTB_PARALLEL_BUSBW_GBPS, with GTB_PARALLEL_PROJECT_RANKS, default 8) or this run's all-reduce
// busbw at the size of the model's bucket. Kept under its own key, labelled projected, never beside
// measured rows.
template <class One, class Buckets>
void project(const std::vector<Record>& records, const One& one, const Buckets& bucket_mib, Findings& out) {
  const ProjectionInput given;
  for (const auto& [m, r] : one) {
    if (r->backend != Backend::cpu) continue;  // the GPU step has its own projection
    const double compute_s = r->stats ? r->stats->median : 0;
    const double bytes = counter(*r, "gradient_bytes");
    if (!(compute_s > 0) || !(bytes > 0)) continue;
    auto [busbw, source, ranks] = given;
    if (!(busbw > 0)) {
      const auto it = bucket_mib.find(m);
      const BusbwPick pick = busbw_at(records, [](const Record& c) { return c.backend == Backend::cpu; },
                                      bucket_bytes_of(it == bucket_mib.end() ? 0 : it->second, bytes));
      busbw = pick.busbw, source = pick.source, ranks = pick.ranks;
    }
    if (!(busbw > 0)) continue;
    out.projected.push_back({std::get<0>(m), std::get<1>(m), std::get<2>(m),
                             ProjectionInputs{ranks, busbw, source, compute_s, r->id, bytes},
                             project_step(compute_s, bytes, ranks, busbw)});
  }
}

// The N-GPU step projected from the measured one-GPU step (dp_step/one_rank on cuda: the compute) and
// a busbw: user-given (GTB_PARALLEL_BUSBW_GBPS, ranks from GTB_PARALLEL_PROJECT_RANKS, default 8) or
// this run's NCCL all-reduce busbw at the bucket's size when it spans two or more GPUs. Its own key,
// every row labelled projected with its inputs; measured rows never sit beside it.
void project_gpu(const std::vector<Record>& records, Findings& out) {
  const ProjectionInput given;
  for (const auto& r : records) {
    if (r.workload != "dp_step" || r.variant != "one_rank" || r.backend != Backend::cuda ||
        r.status != Status::ok || !r.stats || !(r.stats->median > 0) || !(counter(r, "gradient_bytes") > 0))
      continue;
    auto [busbw, source, ranks] = given;
    if (!(busbw > 0)) {
      const BusbwPick pick = busbw_at(
          records, [](const Record& c) { return c.variant == "nccl" && c.info.value("gpus", 1) >= 2; },
          bucket_bytes_of(r.params.value("bucket_mb", 0.0), counter(r, "gradient_bytes")));
      busbw = pick.busbw, source = pick.source, ranks = pick.ranks;
    }
    if (!(busbw > 0)) continue;
    out.projected_gpu.push_back(
        {r.params, ProjectionInputs{ranks, busbw, source, r.stats->median, r.id, counter(r, "gradient_bytes")},
         project_step(r.stats->median, counter(r, "gradient_bytes"), ranks, busbw)});
  }
}

// Collectives whose busbw falls far below the all-reduce's at the same size and backend: busbw
// normalises each collective to a bandwidth-optimal ring, so a large gap means the library ran
// another algorithm at that size, or latency dominates. Said where it is printed, with the figures.
void collective_notes(const std::vector<Record>& records, Findings& out) {
  std::map<std::string, const Record*> all_reduce;  // variant/bytes/dtype
  auto key = [](const Record& r) {
    return r.variant + "/" + std::to_string(r.params.value("bytes", std::int64_t(0))) + "/" + r.options.value("dtype", "");
  };
  for (const auto& r : records)
    if (r.workload == "collective" && r.status == Status::ok && r.params.value("collective", "") == "all_reduce")
      all_reduce[key(r)] = &r;
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != Status::ok || r.params.value("collective", "") == "all_reduce")
      continue;
    const auto it = all_reduce.find(key(r));
    if (it == all_reduce.end() || !(counter(*it->second, "busbw") > 0)) continue;
    const double ratio = counter(r, "busbw") / counter(*it->second, "busbw");
    if (ratio >= 0.5) continue;
    out.collective_notes.push_back(
        {r.id, it->second->id, ratio,
         r.params.value("collective", "") + " reached " + std::to_string(ratio).substr(0, 4) +
             "x the all-reduce's busbw at the same size: busbw assumes a bandwidth-optimal ring, and at this size "
             "the library ran another algorithm or latency dominated"});
  }
}

}  // namespace

const OverlapBest* DpStep::at(const std::string& overlap) const {
  for (const auto& b : best)
    if (b.overlap == overlap) return &b;
  return nullptr;
}

namespace {

// t(bytes) = latency + bytes / rate, least squares on the relative residual (every size counts alike,
// as in the copy model of the host-to-device terms).
std::optional<std::pair<double, double>> fit_relative(const std::vector<std::pair<double, double>>& pts) {
  if (pts.size() < 2) return std::nullopt;
  // Minimise sum ((a + b x - t) / t)^2 over a (latency) and b (seconds per byte).
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (const auto& [x, t] : pts) {
    const double w = 1.0 / (t * t);
    s00 += w, s01 += w * x, s11 += w * x * x, r0 += w * t, r1 += w * x * t;
  }
  const double det = s00 * s11 - s01 * s01;
  if (!(std::fabs(det) > 0)) return std::nullopt;
  double a = (r0 * s11 - r1 * s01) / det, b = (s00 * r1 - s01 * r0) / det;
  if (a < 0) {  // a negative latency is no latency: refit the rate alone
    a = 0;
    b = r1 / s11;
  }
  if (!(b > 0)) return std::nullopt;
  return std::pair{a, 1.0 / b};
}

void cost_terms(const std::vector<Record>& records, Findings& out) {
  for (const Backend be : {Backend::cpu, Backend::cuda}) {
    std::map<int, std::vector<const Record*>> by_ranks;
    for (const auto& r : records)
      if (usable(r) && r.stats && r.backend == be && r.workload == "collective" && r.variant != "mpi_plain_loop" &&
          r.params.value("collective", "") == "all_reduce")
        by_ranks[r.info.value("ranks", r.info.value("gpus", 0))].push_back(&r);
    bool any = false;
    for (const auto& [ranks, recs] : by_ranks) {
      std::vector<std::pair<double, double>> pts;
      cost::Term t;
      t.name = cost::term::kAllreduce;
      t.backend = be;
      t.where = {{"ranks", ranks}};
      t.form = "latency_bandwidth";
      t.x = "bytes";
      t.x_min = 1e300;
      for (const Record* r : recs) {
        const double b = r->params.value("bytes", 0.0);
        pts.emplace_back(b, r->stats->median);
        t.records.push_back(r->id);
        t.x_min = std::min(t.x_min, b);
        t.x_max = std::max(t.x_max, b);
      }
      const auto fit = fit_relative(pts);
      if (!fit || ranks < 2) continue;
      t.latency_s = fit->first;
      t.per_second = fit->second;
      t.note = "bytes are the buffer each rank reduces; fitted over " + std::to_string(pts.size()) + " sizes";
      out.terms.push_back(std::move(t));
      any = true;
    }
    if (!any)
      out.terms.push_back(cost::cannot_say_term(
          cost::term::kAllreduce, be, json::object(), "latency_bandwidth",
          cost::reason_none(records, be,
                            [](const Record& r) {
                              return r.workload == "collective" && r.params.value("collective", "") == "all_reduce";
                            },
                            "all-reduce")));
    // comm_overlap: how much of the blocking reduction time the overlapped step hid.
    const cost::Term none = cost::cannot_say_term(
        cost::term::kCommOverlap, be, json::object(), "constant",
        cost::reason_none(records, be, [](const Record& r) { return r.workload == "dp_step"; }, "data-parallel step"));
    std::optional<cost::Term> overlap;
    for (const auto& e : out.dp_step) {
      if (e.backend != to_string(be)) continue;
      const OverlapBest* on = e.at("on");
      const OverlapBest* off = e.at("off");
      if (!on || !off) continue;
      const Record* ron = nullptr;
      const Record* roff = nullptr;
      for (const auto& r : records) {
        if (r.id == on->record) ron = &r;
        if (r.id == off->record) roff = &r;
      }
      if (!ron || !roff || !ron->stats || !roff->stats) continue;
      const double comm = counter(*roff, "comm_ms") * 1e-3;
      if (!(comm > 0)) continue;
      cost::Term t;
      t.name = cost::term::kCommOverlap;
      t.backend = be;
      t.form = "constant";
      t.unit = "fraction";
      const double hidden = (roff->stats->median - ron->stats->median) / comm;
      t.value = std::clamp(hidden, 0.0, 1.0);
      if (hidden < 0) t.note = "overlap made the measured step slower: nothing hidden";
      t.records = {roff->id, ron->id};
      overlap = std::move(t);
      break;
    }
    out.terms.push_back(overlap ? *overlap : none);
  }
  for (const auto& r : records) {
    if (!usable(r) || !r.stats || r.workload != "dp_step") continue;
    const bool alone = r.variant == "one_rank";
    const double step_ms = counter(r, "step_ms");
    json config = {{"model", "mlp"},
                   {"width", r.params.value("width", 0)},
                   {"depth", r.params.value("depth", 0)},
                   {"batch", r.params.value("rows_per_rank", 0)},
                   {"precision", "fp32"},
                   {"optimizer", "sgd"},
                   {"activation", "relu"},
                   {"input_bytes_per_sample", 0},
                   {"ranks", alone ? 1 : r.info.value("ranks", r.params.value("ranks", 1))}};
    // A CPU rank has its share of the machine's cores (the launcher binds each of the world's ranks to
    // one), alone too: rank 0's step runs on its share while the others wait.
    if (alone && r.backend == Backend::cpu) config["core_share"] = 1.0 / std::max(1, r.params.value("ranks", 1));
    if (!alone) {
      config["bucket_bytes"] = r.params.value("bucket_mb", 0.0) * 1048576.0;
      config["overlap"] = r.options.value("overlap", "off") == "on";
    }
    out.measured_steps.push_back({"", r.id, r.backend, step_ms > 0 ? step_ms * 1e-3 : r.stats->median, config});
  }
}

}  // namespace

Findings compute_findings(const std::vector<Record>& records) {
  Findings out;
  // Collectives: the largest size of each collective and backend.
  std::map<std::string, const Record*> largest;
  const Record* plain = nullptr;
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != Status::ok) continue;
    if (r.variant == "mpi_plain_loop") {
      plain = &r;
      continue;
    }
    const std::string key = r.variant + "/" + r.params.value("collective", "") + "/" +
                            (r.options.contains("dtype") ? r.options["dtype"].get<std::string>() : "");
    const Record*& cur = largest[key];
    if (!cur || r.params.value("bytes", std::int64_t(0)) > cur->params.value("bytes", std::int64_t(0))) cur = &r;
  }
  for (const auto& [key, r] : largest)
    out.largest_size.push_back({r->id, r->params.value("bytes", std::int64_t(0)), r->value.value_or(0),
                                counter(*r, "busbw"), r->info.value("ranks", r->info.value("gpus", 0))});
  if (plain) {
    for (const auto& [key, r] : largest) {
      if (r->variant != "mpi" || r->params.value("collective", "") != "all_reduce" ||
          r->params.value("bytes", std::int64_t(0)) != plain->params.value("bytes", std::int64_t(-1)))
        continue;
      out.vs_plain_loop = VsPlainLoop{plain->params.value("bytes", std::int64_t(0)), r->value.value_or(0),
                                      plain->value.value_or(0), r->value.value_or(0) / plain->value.value_or(1)};
    }
  }

  // Data-parallel step, per model: best bucket per overlap setting, overlap gain, scaling.
  using Model = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string>;  // ..., backend
  std::map<Model, std::map<std::string, const Record*>> best;  // overlap -> best record
  std::map<Model, const Record*> one;
  std::map<Model, double> bucket_of;  // the best measured step's bucket, MiB
  for (const auto& r : records) {
    if (r.workload != "dp_step" || r.status != Status::ok) continue;
    const Model m{r.params.value("width", std::int64_t(0)), r.params.value("depth", std::int64_t(0)),
                  r.params.value("rows_per_rank", std::int64_t(0)), to_string(r.backend)};
    if (r.variant == "one_rank") {
      one[m] = &r;
      continue;
    }
    const Record*& cur = best[m][r.options.value("overlap", "off")];
    if (!cur || r.value.value_or(0) > cur->value.value_or(0)) cur = &r;
  }
  for (const auto& [m, by] : best) {
    DpStep e;
    e.backend = std::get<3>(m), e.width = std::get<0>(m), e.depth = std::get<1>(m), e.rows_per_rank = std::get<2>(m);
    for (const auto& [ov, r] : by)
      e.best.push_back({ov, r->id, r->params.value("bucket_mb", 0.0), r->value.value_or(0), counter(*r, "comm_fraction")});
    const Record* on = by.count("on") ? by.at("on") : nullptr;
    const Record* off = by.count("off") ? by.at("off") : nullptr;
    if (on && off) {
      const double gain = on->value.value_or(0) / off->value.value_or(1);
      e.overlap_gain = gain;
      // Overlap hides communication only where something else drives it (a spare core, a copy
      // engine); otherwise the reduction competes with the compute it was meant to hide behind.
      if (gain < 1)
        e.overlap_note = "overlap made this step slower (" + std::to_string(gain).substr(0, 4) +
                            "x): the reductions in flight ran on the cores the backward pass needs" +
                            (on->backend == Backend::cpu ? " (no core is left to drive them)" : "") +
                            ", so hiding them cost more than it saved";
    }
    const Record* top = on && (!off || on->value > off->value) ? on : off;
    if (top) bucket_of[m] = top->params.value("bucket_mb", 0.0);
    if (top && one.count(m)) {
      const double n = top->info.value("ranks", 1);
      e.scaling_efficiency =
          Scaling{top->value.value_or(0) / (n * one.at(m)->value.value_or(1)), n, one.at(m)->value.value_or(0)};
    }
    out.dp_step.push_back(std::move(e));
  }
  project(records, one, bucket_of, out);
  project_gpu(records, out);
  collective_notes(records, out);

  // One GPU: the step's slowdown with reductions in flight.
  std::map<std::string, std::map<std::string, const Record*>> intf;
  for (const auto& r : records)
    if (r.workload == "interference" && r.status == Status::ok) intf[r.params.dump()][r.options.value("reduction", "")] = &r;
  for (const auto& [p, by] : intf)
    if (by.count("on") && by.count("off") && by.at("off")->value.value_or(0) > 0)
      out.interference.push_back({by.at("on")->params, by.at("off")->value.value_or(0), by.at("on")->value.value_or(0),
                                  by.at("on")->value.value_or(0) / by.at("off")->value.value_or(1)});
  cost_terms(records, out);
  out.pairs = cost::pairs_differing_in(out.measured_steps, "overlap", {false}, true, "overlap");
  return out;
}

namespace {

// What a projected row states, the same for the CPU ranks and the GPUs.
json projected_fields(const StepProjection& p) {
  return {{"comm_s", p.comm_s},
          {"step_s_no_overlap", p.step_no_overlap_s},
          {"step_s_full_overlap", p.step_full_overlap_s},
          {"scaling_efficiency_no_overlap", p.efficiency_no_overlap},
          {"scaling_efficiency_full_overlap", p.efficiency_full_overlap}};
}

// What a projection divided by: `count` names the ranks or GPUs, `one` the measured one-rank or
// one-GPU step ("one_rank": one_rank_step_s, one_rank_record).
json inputs_json(const ProjectionInputs& in, const char* count, const std::string& one) {
  return {{count, in.ranks},
          {"busbw_gbps", in.busbw_gbps},
          {"busbw_source", in.busbw_source},
          {one + "_step_s", in.one_step_s},
          {one + "_record", in.one_record},
          {"gradient_bytes", in.gradient_bytes}};
}

}  // namespace

GTB_JSON_WRITE(LargestSize, record, bytes, algbw_gbps, busbw_gbps, ranks)
GTB_JSON_WRITE(OverlapBest, record, best_bucket_mb, throughput, comm_fraction)
GTB_JSON_WRITE(CollectiveNote, record, all_reduce_record, ratio, note)
GTB_JSON_WRITE(Interference, params, backward_ms_alone, backward_ms_with_reduction, slowdown)

void to_json(const Findings& found, json& out) {
  cost::write_evidence(out, found);
  write_nonempty(out, "largest_size", found.largest_size);
  if (const auto& p = found.vs_plain_loop)
    out["vs_plain_loop"] = {{"bytes", p->bytes},
                            {"measured_gbps", p->measured_gbps},
                            {"plain_loop_gbps", p->plain_loop_gbps},
                            {"ratio", p->ratio},
                            {"target", VsPlainLoop::kTarget},
                            {"met", p->met()},
                            {"note", "same ranks, same run, one after the other; algbw ratio = busbw ratio"}};
  json dp = json::array();
  for (const auto& d : found.dp_step) {
    json e = {{"backend", d.backend}, {"width", d.width}, {"depth", d.depth}, {"rows_per_rank", d.rows_per_rank}};
    for (const auto& b : d.best) e["overlap_" + b.overlap] = b;
    if (d.overlap_gain) e["overlap_gain"] = *d.overlap_gain;
    if (!d.overlap_note.empty()) e["overlap_note"] = d.overlap_note;
    if (const auto& s = d.scaling_efficiency)
      e["scaling_efficiency"] = {
          {"value", s->value},
          {"ranks", s->ranks},
          {"one_rank_throughput", s->one_rank_throughput},
          {"note", "throughput of N ranks / (N x one rank with the same per-rank resources); below 1 by the "
                   "communication that overlap does not hide and by ranks sharing memory bandwidth"}};
    dp.push_back(e);
  }
  if (!dp.empty()) out["dp_step"] = dp;
  json rows = json::array();
  for (const auto& p : found.projected) {
    const auto& in = p.inputs;
    rows.push_back({{"label", "projected"},
                    {"width", p.width},
                    {"depth", p.depth},
                    {"rows_per_rank", p.rows_per_rank},
                    {"inputs", inputs_json(in, "ranks", "one_rank")}});
    rows.back().update(projected_fields(p.step));
  }
  if (!rows.empty()) out["projected"] = {{"label", "projected"}, {"method", kProjectedMethod}, {"rows", rows}};
  rows = json::array();
  for (const auto& p : found.projected_gpu) {
    const auto& in = p.inputs;
    rows.push_back({{"label", "projected"}, {"params", p.params}, {"inputs", inputs_json(in, "gpus", "one_gpu")}});
    rows.back().update(projected_fields(p.step));
  }
  if (!rows.empty()) out["projected_gpu"] = {{"label", "projected"}, {"method", kProjectedGpuMethod}, {"rows", rows}};
  write_nonempty(out, "collective_notes", found.collective_notes);
  write_nonempty(out, "interference", found.interference);
}

}  // namespace gtb::parallel
