// The parallel family's findings for the report and plots: collective bandwidth at the largest
// size, the data-parallel step (buckets, overlap, scaling), interference, and, apart, projections.
#include "bench/parallel/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace pl = gtb::parallel;

template <class T, class F>
json field(const T* x, F f) {
  return x ? json(f(*x)) : json(nullptr);
}

void sections(const std::vector<gtb::Record>& recs, const pl::Findings& found, gtb::findings::Family& f) {
  auto& c = f.section("collectives", "Collectives");
  c.say("busbw as nccl-tests defines it (GB = 10^9 bytes); one rank has busbw 0 by definition.");
  auto& ct = c.table("largest_size", {{"collective at its largest size"}, {"size", "", Hint::bytes},
                                      {"algbw", "GB/s", Hint::bandwidth}, {"busbw", "GB/s", Hint::bandwidth},
                                      {"ranks", "", Hint::count}});
  for (const auto& e : found.largest_size) ct.rows.push_back({e.record, e.bytes, e.algbw_gbps, e.busbw_gbps, e.ranks});
  if (ct.rows.empty()) c.not_measured = "no collective ran (" + gtb::findings::why_none(recs, gtb::Backend::cpu) + ")";
  if (const auto& p = found.vs_plain_loop)
    c.line("vs_plain_loop", "all-reduce in gtb over a plain MPI_Allreduce loop", p->ratio, "", Hint::ratio,
           "at " + gtb::findings::format(p->bytes, Hint::bytes, "") + ", target >= 0.9x");
  if (!gtb::findings::any_number(recs, gtb::Backend::cuda))
    c.say("NCCL: " + gtb::findings::why_none(recs, gtb::Backend::cuda) + ".");
  for (const auto& e : found.collective_notes) c.say(e.record + ": " + e.note + ".");
  auto& g = c.figure("parallel_busbw", "Collective bus bandwidth vs size (measured)");
  g.where = {{"workload", "collective"}, {"variant!", "mpi_plain_loop"}};
  g.x = {"params.bytes"};
  g.y = "counters.busbw";
  g.series = {"backend", "variant", "params.collective", "options.dtype"};
  g.logx = 2;
  g.xlabel = "size (bytes, nccl-tests' convention)";
  g.ylabel = "busbw (GB/s, measured)";

  auto& s = f.section("dp_step", "Data-parallel training step");
  auto& st = s.table("dp_step", {{"backend"}, {"width", "", Hint::count}, {"depth", "", Hint::count}, {"rows per rank", "", Hint::count},
                                 {"best bucket, overlap", "MiB", Hint::number}, {"best bucket, no overlap", "MiB", Hint::number},
                                 {"overlap gain", "", Hint::ratio}, {"communication, no overlap", "", Hint::fraction},
                                 {"scaling efficiency", "", Hint::number}, {"ranks", "", Hint::count}});
  auto bucket = [](const pl::OverlapBest& b) { return b.best_bucket_mb; };
  auto comm = [](const pl::OverlapBest& b) { return b.comm_fraction; };
  for (const auto& e : found.dp_step) {
    const pl::Scaling* sc = e.scaling_efficiency ? &*e.scaling_efficiency : nullptr;
    st.rows.push_back({e.backend, e.width, e.depth, e.rows_per_rank, field(e.at("on"), bucket), field(e.at("off"), bucket),
                       e.overlap_gain ? json(*e.overlap_gain) : json(nullptr), field(e.at("off"), comm),
                       field(sc, [](const pl::Scaling& x) { return x.value; }),
                       field(sc, [](const pl::Scaling& x) { return x.ranks; })});
  }
  if (st.rows.empty()) {
    s.not_measured = "no data-parallel step ran with several ranks";
  } else {
    s.say("Scaling efficiency = throughput of N ranks / (N x one rank with the same per-rank resources); below 1 by "
          "the communication that overlap does not hide and by ranks sharing memory bandwidth.");
    for (const auto& e : found.dp_step)
      if (!e.overlap_note.empty())
        s.say("Width " + std::to_string(e.width) + ", depth " + std::to_string(e.depth) + ": " + e.overlap_note + ".");
  }
  auto& gs = s.figure("parallel_dp_buckets", "Data-parallel step throughput vs bucket size (measured)");
  gs.where = {{"workload", "dp_step"}, {"variant!", "one_rank"}};
  gs.x = {"params.bucket_mb"};
  gs.series = {"backend", "options.overlap", "params.width"};
  gs.logx = 10;
  gs.xlabel = "bucket size (MiB; the first bucket is 1 MiB)";
  gs.ylabel = "samples/s (global batch)";

  if (!found.interference.empty()) {
    auto& i = f.section("interference", "One GPU: backward with a reduction in flight");
    i.say("Backward alone against backward while a bucket-sized reduction runs on a second stream: compute and "
          "communication contend for the same memory.");
    auto& it = i.table("interference", {{"model"}, {"backward alone", "ms", Hint::duration},
                                        {"with a reduction", "ms", Hint::duration}, {"slowdown", "", Hint::ratio}});
    for (const auto& e : found.interference)
      it.rows.push_back({gtb::findings::params_text(e.params), e.backward_ms_alone, e.backward_ms_with_reduction, e.slowdown});
  }

  if (!found.projected_gpu.empty()) {
    auto& pr = f.section("projected_gpu", "N-GPU step from the measured one-GPU step");
    pr.projected = true;
    pr.say(pl::kProjectedGpuMethod);
    auto& pt = pr.table("projected_gpu", {{"model"}, {"GPUs", "", Hint::count}, {"busbw", "GB/s", Hint::bandwidth},
                                          {"busbw from"}, {"one-GPU step", "s", Hint::duration},
                                          {"step, no overlap", "s", Hint::duration}, {"step, full overlap", "s", Hint::duration},
                                          {"efficiency, no overlap", "", Hint::number},
                                          {"efficiency, full overlap", "", Hint::number}});
    for (const auto& e : found.projected_gpu)
      pt.rows.push_back({gtb::findings::params_text(e.params), e.inputs.ranks, e.inputs.busbw_gbps, e.inputs.busbw_source,
                         e.inputs.one_step_s, e.step.step_no_overlap_s, e.step.step_full_overlap_s,
                         e.step.efficiency_no_overlap, e.step.efficiency_full_overlap});
  }

  if (!found.projected.empty()) {
    auto& pr = f.section("projected", "N-rank CPU step from the measured one-rank step");
    pr.projected = true;
    pr.say(pl::kProjectedMethod);
    auto& pt = pr.table("projected", {{"width", "", Hint::count}, {"depth", "", Hint::count}, {"rows per rank", "", Hint::count},
                                      {"ranks", "", Hint::count}, {"busbw", "GB/s", Hint::bandwidth}, {"busbw from"},
                                      {"one-rank step", "s", Hint::duration}, {"step, no overlap", "s", Hint::duration},
                                      {"step, full overlap", "s", Hint::duration}, {"efficiency, no overlap", "", Hint::number},
                                      {"efficiency, full overlap", "", Hint::number}});
    for (const auto& e : found.projected)
      pt.rows.push_back({e.width, e.depth, e.rows_per_rank, e.inputs.ranks, e.inputs.busbw_gbps, e.inputs.busbw_source,
                         e.inputs.one_step_s, e.step.step_no_overlap_s, e.step.step_full_overlap_s,
                         e.step.efficiency_no_overlap, e.step.efficiency_full_overlap});
  }
}

const bool kFindings = gtb::add_family_findings<pl::Findings>("parallel", "Data parallelism", 60, pl::compute_findings,
                                                              pl::to_json, sections);

}  // namespace
