// A whole job (one trace per rank) and two traces side by side: what `gtb diagnose` says across ranks
// (per rank and across ranks, the straggler per step, each collective's bus bandwidth) and between a
// trace before and after a change (docs/diagnose.md, "A whole job" and "Two traces side by side").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/document/types.h"
#include "harness/driver/diagnose/diagnose_trace.h"

namespace gtb::diagnose {

// One communication call of a rank: a communication kernel (GPU), or a host library's collective
// (gloo:all_reduce on a CPU job) where the trace has no GPU communication.
struct CommCall {
  int step = -1;               // index into the rank's steps (diagnosis["steps"]), -1 outside every step
  double ts = 0, dur = 0;
  double bytes = -1;           // the buffer each rank contributes: "In msg nelems" x the dtype's size; -1 unknown
  double out_bytes = -1;       // "Out msg nelems" x the dtype's size
  std::string collective;      // allreduce, allgather, reducescatter, broadcast, reduce, alltoall, ... ("" unknown)
  std::int64_t group_size = -1;
  bool on_gpu = false;
};
std::vector<CommCall> communication_calls(const Trace& trace);
// "allreduce" from "allreduce", "gloo:all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"; "" if none.
std::string collective_kind(const std::string& name);
// The bytes of one element of a trace's dtype name (Float 4, BFloat16 2, ...); 0 unknown.
double dtype_bytes(const std::string& dtype);
// Bus bandwidth (GB/s, the nccl-tests convention): algorithm bandwidth times 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce. `bytes` is the
// all-reduce's buffer (all-gather: the gathered output). NaN when the collective is unknown.
double bus_bandwidth_gbps(const std::string& collective, double bytes, double seconds, std::int64_t ranks);

// Per step and name, the count and time of each kernel (by launch) and CPU operator (by start), and
// of each kind of collective (with its bytes): what the diff compares. Steps as diagnosis["steps"] (one "step", the whole trace, without steps).
struct NameTally {
  std::string name, kind;        // kind: "kernel" (GPU events of any kind), "cpu_op", or "collective"
  std::vector<double> count, us;  // per step
  // kind "collective" (name: allreduce, ...; the communication calls as the job reads them): bytes per
  // step (NaN where a call carries no size) and the distinct sizes of its calls, ascending.
  std::vector<double> bytes, sizes;
};
std::vector<NameTally> name_tallies(const Trace& trace);

// One rank as the job analysis needs it: its single-trace diagnosis and its communication calls.
struct RankInput {
  std::string file;
  std::int64_t rank = -1;
  std::string rank_from;  // "distributedInfo" or "file name"
  json diagnosis;
  std::vector<CommCall> calls;
};
// The rank of a trace: distributedInfo's, else the file name's rank-N (rank_N, rankN); nullopt if neither.
std::optional<std::int64_t> rank_from_file_name(const std::string& file_name);

// The job document (tool "gtb diagnose", kind "job"). `results`, when given, prices the fixes and
// gives each collective's measured bus bandwidth.
json diagnose_job(const std::vector<RankInput>& ranks, const json* results, const std::string& results_label);

// The diff document (kind "diff") of two traces' diagnoses and name tallies.
json diagnose_diff(const json& before, const std::vector<NameTally>& before_names, const json& after,
                   const std::vector<NameTally>& after_names);

std::string render_job_text(const json& job);
std::string render_job_markdown(const json& job, int level = 1);
std::string render_diff_text(const json& diff);
std::string render_diff_markdown(const json& diff, int level = 1);

}  // namespace gtb::diagnose
