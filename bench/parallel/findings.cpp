// Parallel family findings: busbw at the largest size, the plain-loop yardstick, and for the
// data-parallel step the best bucket, the overlap gain, the communication fraction and scaling.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include "harness/runtime/gtb.h"
#include "kernels/parallel/projection.h"

namespace {

using gtb::json;

double counter(const gtb::Record& r, const std::string& name) {
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
BusbwPick busbw_at(const std::vector<gtb::Record>& records, const Pred& pred, double bucket_bytes) {
  BusbwPick best;
  double best_d = 0, best_bytes = 0;
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != gtb::Status::ok || r.variant == "mpi_plain_loop" ||
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

// What a projected row states, the same for the CPU ranks and the GPUs.
json projected_fields(const gtb::parallel::StepProjection& p) {
  return {{"comm_s", p.comm_s},
          {"step_s_no_overlap", p.step_no_overlap_s},
          {"step_s_full_overlap", p.step_full_overlap_s},
          {"scaling_efficiency_no_overlap", p.efficiency_no_overlap},
          {"scaling_efficiency_full_overlap", p.efficiency_full_overlap}};
}

// The N-rank step projected from the one-rank step measured here and a busbw: given by the user
// (GTB_PARALLEL_BUSBW_GBPS, with GTB_PARALLEL_PROJECT_RANKS, default 8) or this run's all-reduce
// busbw at the size of the model's bucket. Kept under its own key, labelled projected, never beside
// measured rows.
template <class One, class Buckets>
void project(const std::vector<gtb::Record>& records, const One& one, const Buckets& bucket_mib, json& out) {
  const ProjectionInput given;
  json rows = json::array();
  for (const auto& [m, r] : one) {
    if (r->backend != gtb::Backend::cpu) continue;  // the GPU step has its own projection
    const double compute_s = r->stats ? r->stats->median : 0;
    const double bytes = counter(*r, "gradient_bytes");
    if (!(compute_s > 0) || !(bytes > 0)) continue;
    auto [busbw, source, ranks] = given;
    if (!(busbw > 0)) {
      const auto it = bucket_mib.find(m);
      const BusbwPick pick = busbw_at(records, [](const gtb::Record& c) { return c.backend == gtb::Backend::cpu; },
                                      bucket_bytes_of(it == bucket_mib.end() ? 0 : it->second, bytes));
      busbw = pick.busbw, source = pick.source, ranks = pick.ranks;
    }
    if (!(busbw > 0)) continue;
    const gtb::parallel::StepProjection p = gtb::parallel::project_step(compute_s, bytes, ranks, busbw);
    rows.push_back({{"label", "projected"},
                    {"width", std::get<0>(m)},
                    {"depth", std::get<1>(m)},
                    {"rows_per_rank", std::get<2>(m)},
                    {"inputs", {{"ranks", ranks},
                                {"busbw_gbps", busbw},
                                {"busbw_source", source},
                                {"one_rank_step_s", compute_s},
                                {"one_rank_record", r->id},
                                {"gradient_bytes", bytes}}}});
    rows.back().update(projected_fields(p));
  }
  if (!rows.empty())
    out["projected"] = {{"label", "projected"},
                        {"method", "step = one-rank step + gradient_bytes * 2(n-1)/n / busbw (no overlap), or the "
                                   "larger of the two (full overlap); not measured"},
                        {"rows", rows}};
}

// The N-GPU step projected from the measured one-GPU step (dp_step/one_rank on cuda: the compute) and
// a busbw: user-given (GTB_PARALLEL_BUSBW_GBPS, ranks from GTB_PARALLEL_PROJECT_RANKS, default 8) or
// this run's NCCL all-reduce busbw at the bucket's size when it spans two or more GPUs. Its own key,
// every row labelled projected with its inputs; measured rows never sit beside it.
void project_gpu(const std::vector<gtb::Record>& records, json& out) {
  const ProjectionInput given;
  json rows = json::array();
  for (const auto& r : records) {
    if (r.workload != "dp_step" || r.variant != "one_rank" || r.backend != gtb::Backend::cuda ||
        r.status != gtb::Status::ok || !r.stats || !(r.stats->median > 0) || !(counter(r, "gradient_bytes") > 0))
      continue;
    auto [busbw, source, ranks] = given;
    if (!(busbw > 0)) {
      const BusbwPick pick = busbw_at(
          records, [](const gtb::Record& c) { return c.variant == "nccl" && c.info.value("gpus", 1) >= 2; },
          bucket_bytes_of(r.params.value("bucket_mb", 0.0), counter(r, "gradient_bytes")));
      busbw = pick.busbw, source = pick.source, ranks = pick.ranks;
    }
    if (!(busbw > 0)) continue;
    const gtb::parallel::StepProjection p =
        gtb::parallel::project_step(r.stats->median, counter(r, "gradient_bytes"), ranks, busbw);
    rows.push_back({{"label", "projected"},
                    {"params", r.params},
                    {"inputs", {{"gpus", ranks},
                                {"busbw_gbps", busbw},
                                {"busbw_source", source},
                                {"one_gpu_step_s", r.stats->median},
                                {"one_gpu_record", r.id},
                                {"gradient_bytes", counter(r, "gradient_bytes")}}}});
    rows.back().update(projected_fields(p));
  }
  if (!rows.empty())
    out["projected_gpu"] = {{"label", "projected"},
                            {"method", "N-GPU step = measured one-GPU step + gradient_bytes * 2(n-1)/n / busbw (every "
                                       "bucket's ring all-reduce, no overlap), or the larger of the two (full "
                                       "overlap); bucket latencies ignored; not measured"},
                            {"rows", rows}};
}

// Collectives whose busbw falls far below the all-reduce's at the same size and backend: busbw
// normalises each collective to a bandwidth-optimal ring, so a large gap means the library ran
// another algorithm at that size, or latency dominates. Said where it is printed, with the figures.
void collective_notes(const std::vector<gtb::Record>& records, json& out) {
  std::map<std::string, const gtb::Record*> all_reduce;  // variant/bytes/dtype
  auto key = [](const gtb::Record& r) {
    return r.variant + "/" + std::to_string(r.params.value("bytes", std::int64_t(0))) + "/" + r.options.value("dtype", "");
  };
  for (const auto& r : records)
    if (r.workload == "collective" && r.status == gtb::Status::ok && r.params.value("collective", "") == "all_reduce")
      all_reduce[key(r)] = &r;
  json notes = json::array();
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != gtb::Status::ok || r.params.value("collective", "") == "all_reduce")
      continue;
    const auto it = all_reduce.find(key(r));
    if (it == all_reduce.end() || !(counter(*it->second, "busbw") > 0)) continue;
    const double ratio = counter(r, "busbw") / counter(*it->second, "busbw");
    if (ratio >= 0.5) continue;
    notes.push_back({{"record", r.id},
                     {"all_reduce_record", it->second->id},
                     {"ratio", ratio},
                     {"note", r.params.value("collective", "") + " reached " + std::to_string(ratio).substr(0, 4) +
                                  "x the all-reduce's busbw at the same size: busbw assumes a bandwidth-optimal "
                                  "ring, and at this size the library ran another algorithm or latency dominated"}});
  }
  if (!notes.empty()) out["collective_notes"] = notes;
}

void findings(const std::vector<gtb::Record>& records, json& out) {
  // Collectives: the largest size of each collective and backend.
  std::map<std::string, const gtb::Record*> largest;
  const gtb::Record* plain = nullptr;
  for (const auto& r : records) {
    if (r.workload != "collective" || r.status != gtb::Status::ok) continue;
    if (r.variant == "mpi_plain_loop") {
      plain = &r;
      continue;
    }
    const std::string key = r.variant + "/" + r.params.value("collective", "") + "/" +
                            (r.options.contains("dtype") ? r.options["dtype"].get<std::string>() : "");
    const gtb::Record*& cur = largest[key];
    if (!cur || r.params.value("bytes", std::int64_t(0)) > cur->params.value("bytes", std::int64_t(0))) cur = &r;
  }
  json coll = json::array();
  for (const auto& [key, r] : largest)
    coll.push_back({{"record", r->id},
                    {"bytes", r->params.value("bytes", std::int64_t(0))},
                    {"algbw_gbps", r->value.value_or(0)},
                    {"busbw_gbps", counter(*r, "busbw")},
                    {"ranks", r->info.value("ranks", r->info.value("gpus", 0))}});
  if (!coll.empty()) out["largest_size"] = coll;
  if (plain) {
    for (const auto& [key, r] : largest) {
      if (r->variant != "mpi" || r->params.value("collective", "") != "all_reduce" ||
          r->params.value("bytes", std::int64_t(0)) != plain->params.value("bytes", std::int64_t(-1)))
        continue;
      const double ratio = r->value.value_or(0) / plain->value.value_or(1);
      out["vs_plain_loop"] = {{"bytes", plain->params.value("bytes", std::int64_t(0))},
                              {"measured_gbps", r->value.value_or(0)},
                              {"plain_loop_gbps", plain->value.value_or(0)},
                              {"ratio", ratio},
                              {"target", 0.9},
                              {"met", ratio >= 0.9},
                              {"note", "same ranks, same run, one after the other; algbw ratio = busbw ratio"}};
    }
  }

  // Data-parallel step, per model: best bucket per overlap setting, overlap gain, scaling.
  using Model = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string>;  // ..., backend
  std::map<Model, std::map<std::string, const gtb::Record*>> best;  // overlap -> best record
  std::map<Model, const gtb::Record*> one;
  std::map<Model, double> bucket_of;  // the best measured step's bucket, MiB
  for (const auto& r : records) {
    if (r.workload != "dp_step" || r.status != gtb::Status::ok) continue;
    const Model m{r.params.value("width", std::int64_t(0)), r.params.value("depth", std::int64_t(0)),
                  r.params.value("rows_per_rank", std::int64_t(0)), gtb::to_string(r.backend)};
    if (r.variant == "one_rank") {
      one[m] = &r;
      continue;
    }
    const gtb::Record*& cur = best[m][r.options.value("overlap", "off")];
    if (!cur || r.value.value_or(0) > cur->value.value_or(0)) cur = &r;
  }
  json dp = json::array();
  for (const auto& [m, by] : best) {
    json e = {{"backend", std::get<3>(m)},
              {"width", std::get<0>(m)},
              {"depth", std::get<1>(m)},
              {"rows_per_rank", std::get<2>(m)}};
    for (const auto& [ov, r] : by) {
      e["overlap_" + ov] = {{"record", r->id},
                            {"best_bucket_mb", r->params.value("bucket_mb", 0.0)},
                            {"throughput", r->value.value_or(0)},
                            {"comm_fraction", counter(*r, "comm_fraction")}};
    }
    const gtb::Record* on = by.count("on") ? by.at("on") : nullptr;
    const gtb::Record* off = by.count("off") ? by.at("off") : nullptr;
    if (on && off) {
      const double gain = on->value.value_or(0) / off->value.value_or(1);
      e["overlap_gain"] = gain;
      // Overlap hides communication only where something else drives it (a spare core, a copy
      // engine); otherwise the reduction competes with the compute it was meant to hide behind.
      if (gain < 1)
        e["overlap_note"] = "overlap made this step slower (" + std::to_string(gain).substr(0, 4) +
                            "x): the reductions in flight ran on the cores the backward pass needs" +
                            (on->backend == gtb::Backend::cpu ? " (no core is left to drive them)" : "") +
                            ", so hiding them cost more than it saved";
    }
    const gtb::Record* top = on && (!off || on->value > off->value) ? on : off;
    if (top) bucket_of[m] = top->params.value("bucket_mb", 0.0);
    if (top && one.count(m)) {
      const double n = top->info.value("ranks", 1);
      e["scaling_efficiency"] = {
          {"value", top->value.value_or(0) / (n * one.at(m)->value.value_or(1))},
          {"ranks", n},
          {"one_rank_throughput", one.at(m)->value.value_or(0)},
          {"note", "throughput of N ranks / (N x one rank with the same per-rank resources); below 1 by the "
                   "communication that overlap does not hide and by ranks sharing memory bandwidth"}};
    }
    dp.push_back(e);
  }
  if (!dp.empty()) out["dp_step"] = dp;
  project(records, one, bucket_of, out);
  project_gpu(records, out);
  collective_notes(records, out);

  // One GPU: the step's slowdown with reductions in flight.
  std::map<std::string, std::map<std::string, const gtb::Record*>> intf;
  for (const auto& r : records)
    if (r.workload == "interference" && r.status == gtb::Status::ok) intf[r.params.dump()][r.options.value("reduction", "")] = &r;
  json sl = json::array();
  for (const auto& [p, by] : intf)
    if (by.count("on") && by.count("off") && by.at("off")->value.value_or(0) > 0)
      sl.push_back({{"params", by.at("on")->params},
                    {"backward_ms_alone", by.at("off")->value.value_or(0)},
                    {"backward_ms_with_reduction", by.at("on")->value.value_or(0)},
                    {"slowdown", by.at("on")->value.value_or(0) / by.at("off")->value.value_or(1)}});
  if (!sl.empty()) out["interference"] = sl;
}

const bool kRegistered = gtb::add_findings("parallel", findings);

}  // namespace
