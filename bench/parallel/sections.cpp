// The parallel family's findings for the report and plots: collective bandwidth at the largest
// size, the data-parallel step (buckets, overlap, scaling), interference, and, apart, projections.
#include "harness/runtime/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;

json get(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j.at(key) : json(nullptr); }
json get(const json& j, const char* a, const char* b) { return get(get(j, a), b); }

const bool kSections = gtb::add_sections("parallel", "Data parallelism", 60,
                                         [](const std::vector<gtb::Record>& recs, const json& data,
                                            gtb::findings::Family& f) {
  auto& c = f.section("collectives", "Collectives");
  c.say("busbw as nccl-tests defines it (GB = 10^9 bytes); one rank has busbw 0 by definition.");
  auto& ct = c.table("largest_size", {{"collective at its largest size"}, {"size", "", Hint::bytes},
                                      {"algbw", "GB/s", Hint::bandwidth}, {"busbw", "GB/s", Hint::bandwidth},
                                      {"ranks", "", Hint::count}});
  if (data.contains("largest_size"))
    for (const auto& e : data.at("largest_size"))
      ct.rows.push_back({get(e, "record"), get(e, "bytes"), get(e, "algbw_gbps"), get(e, "busbw_gbps"), get(e, "ranks")});
  if (ct.rows.empty()) c.not_measured = "no collective ran (" + gtb::findings::why_none(recs, gtb::Backend::cpu) + ")";
  if (const json p = get(data, "vs_plain_loop"); p.is_object())
    c.line("vs_plain_loop", "all-reduce in gtb over a plain MPI_Allreduce loop", get(p, "ratio"), "", Hint::ratio,
           "at " + gtb::findings::format(get(p, "bytes"), Hint::bytes, "") + ", target >= 0.9x");
  if (!gtb::findings::any_number(recs, gtb::Backend::cuda))
    c.say("NCCL: " + gtb::findings::why_none(recs, gtb::Backend::cuda) + ".");
  if (data.contains("collective_notes"))
    for (const auto& e : data.at("collective_notes"))
      if (get(e, "note").is_string()) c.say(get(e, "record").get<std::string>() + ": " + get(e, "note").get<std::string>() + ".");
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
  if (data.contains("dp_step"))
    for (const auto& e : data.at("dp_step"))
      st.rows.push_back({get(e, "backend").is_string() ? get(e, "backend") : json("cpu"), get(e, "width"), get(e, "depth"), get(e, "rows_per_rank"), get(e, "overlap_on", "best_bucket_mb"),
                         get(e, "overlap_off", "best_bucket_mb"), get(e, "overlap_gain"),
                         get(e, "overlap_off", "comm_fraction"), get(e, "scaling_efficiency", "value"),
                         get(e, "scaling_efficiency", "ranks")});
  if (st.rows.empty()) {
    s.not_measured = "no data-parallel step ran with several ranks";
  } else {
    s.say("Scaling efficiency = throughput of N ranks / (N x one rank with the same per-rank resources); below 1 by "
          "the communication that overlap does not hide and by ranks sharing memory bandwidth.");
    for (const auto& e : data.at("dp_step"))
      if (get(e, "overlap_note").is_string())
        s.say("Width " + get(e, "width").dump() + ", depth " + get(e, "depth").dump() + ": " +
              get(e, "overlap_note").get<std::string>() + ".");
  }
  auto& gs = s.figure("parallel_dp_buckets", "Data-parallel step throughput vs bucket size (measured)");
  gs.where = {{"workload", "dp_step"}, {"variant!", "one_rank"}};
  gs.x = {"params.bucket_mb"};
  gs.series = {"backend", "options.overlap", "params.width"};
  gs.logx = 10;
  gs.xlabel = "bucket size (MiB; the first bucket is 1 MiB)";
  gs.ylabel = "samples/s (global batch)";

  if (data.contains("interference")) {
    auto& i = f.section("interference", "One GPU: backward with a reduction in flight");
    i.say("Backward alone against backward while a bucket-sized reduction runs on a second stream: compute and "
          "communication contend for the same memory.");
    auto& it = i.table("interference", {{"model"}, {"backward alone", "ms", Hint::duration},
                                        {"with a reduction", "ms", Hint::duration}, {"slowdown", "", Hint::ratio}});
    for (const auto& e : data.at("interference"))
      it.rows.push_back({gtb::findings::params_text(get(e, "params")), get(e, "backward_ms_alone"),
                         get(e, "backward_ms_with_reduction"), get(e, "slowdown")});
  }

  if (const json p = get(data, "projected_gpu"); p.is_object()) {
    auto& pr = f.section("projected_gpu", "N-GPU step from the measured one-GPU step");
    pr.projected = true;
    if (get(p, "method").is_string()) pr.say(get(p, "method").get<std::string>());
    auto& pt = pr.table("projected_gpu", {{"model"}, {"GPUs", "", Hint::count}, {"busbw", "GB/s", Hint::bandwidth},
                                          {"busbw from"}, {"one-GPU step", "s", Hint::duration},
                                          {"step, no overlap", "s", Hint::duration}, {"step, full overlap", "s", Hint::duration},
                                          {"efficiency, no overlap", "", Hint::number},
                                          {"efficiency, full overlap", "", Hint::number}});
    if (p.contains("rows"))
      for (const auto& e : p.at("rows"))
        pt.rows.push_back({gtb::findings::params_text(get(e, "params")), get(e, "inputs", "gpus"), get(e, "inputs", "busbw_gbps"),
                           get(e, "inputs", "busbw_source"), get(e, "inputs", "one_gpu_step_s"), get(e, "step_s_no_overlap"),
                           get(e, "step_s_full_overlap"), get(e, "scaling_efficiency_no_overlap"),
                           get(e, "scaling_efficiency_full_overlap")});
  }

  if (const json p = get(data, "projected"); p.is_object()) {
    auto& pr = f.section("projected", "N-rank CPU step from the measured one-rank step");
    pr.projected = true;
    if (get(p, "method").is_string()) pr.say(get(p, "method").get<std::string>());
    auto& pt = pr.table("projected", {{"width", "", Hint::count}, {"depth", "", Hint::count}, {"rows per rank", "", Hint::count},
                                      {"ranks", "", Hint::count}, {"busbw", "GB/s", Hint::bandwidth}, {"busbw from"},
                                      {"one-rank step", "s", Hint::duration}, {"step, no overlap", "s", Hint::duration},
                                      {"step, full overlap", "s", Hint::duration}, {"efficiency, no overlap", "", Hint::number},
                                      {"efficiency, full overlap", "", Hint::number}});
    if (p.contains("rows"))
      for (const auto& e : p.at("rows"))
        pt.rows.push_back({get(e, "width"), get(e, "depth"), get(e, "rows_per_rank"), get(e, "inputs", "ranks"),
                           get(e, "inputs", "busbw_gbps"), get(e, "inputs", "busbw_source"), get(e, "inputs", "one_rank_step_s"),
                           get(e, "step_s_no_overlap"), get(e, "step_s_full_overlap"), get(e, "scaling_efficiency_no_overlap"),
                           get(e, "scaling_efficiency_full_overlap")});
  }
});

}  // namespace
