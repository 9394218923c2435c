// gtb diagnose across ranks (a job) and between two traces (--diff): planted traces whose answers are
// known, and the DDP traces of tests/fixtures/traces/ddp (tests/fixtures/traces/ddp/ddp-traces.py: gloo on the CPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>
#include <vector>
#include <string>

#include "harness/driver/diagnose/diagnose_job.h"
#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"

using gtb::json;
using namespace gtb::diagnose;

namespace {

const std::string kDdp = std::string(GTB_FIXTURE_DIR) + "/traces/ddp/";

// One rank of a planted two-step GPU job: each step a compute kernel of `compute_us`, then an NCCL
// all-reduce of 25e6 floats (100 MB) lasting `comm_us` on this rank. Step k's host interval starts at
// k * 10000; its kernels at k * 10000 + 100.
std::string gpu_rank(int rank, double compute_us, double comm_us, int steps = 2, int buckets = 1) {
  std::string ev;
  for (int k = 0; k < steps; ++k) {
    const double t0 = k * 10000.0;
    const std::string c1 = std::to_string(2 * k + 1), c2 = std::to_string(2 * k + 2);
    ev += R"(,{"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(k) + R"(","pid":1,"tid":1,"ts":)" +
          std::to_string(t0) + R"(,"dur":9000})";
    ev += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(t0 + 10) +
          R"(,"dur":5,"args":{"correlation":)" + c1 + "}}";
    ev += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(t0 + 20) +
          R"(,"dur":5,"args":{"correlation":)" + c2 + "}}";
    ev += R"(,{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":)" + std::to_string(t0 + 100) +
          R"(,"dur":)" + std::to_string(compute_us) + R"(,"args":{"stream":7,"device":0,"correlation":)" + c1 + "}}";
    for (int b = 0; b < buckets; ++b)
      ev += R"(,{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":9,"ts":)" +
            std::to_string(t0 + 100 + compute_us + b * comm_us) + R"(,"dur":)" + std::to_string(comm_us) +
            R"(,"args":{"stream":9,"device":0,"correlation":)" + (b == 0 ? c2 : std::to_string(1000 + 2 * k + b)) +
            R"(,"Collective name":"allreduce","dtype":"Float","In msg nelems":25000000,"Out msg nelems":25000000,"Group size":2}})";
  }
  return R"({"deviceProperties":[{"id":0,"name":"NVIDIA A100-PG509-200"}],"distributedInfo":{"backend":"nccl","rank":)" +
         std::to_string(rank) + R"(,"world_size":2},"traceEvents":[{"ph":"i","name":"start","ts":0})" + ev + "]}";
}

RankInput rank_of(const std::string& text, const std::string& file) {
  const Trace t = read_trace_text(text);
  RankInput r;
  r.file = file;
  r.rank = t.rank.value_or(-1);
  r.rank_from = "distributedInfo";
  r.diagnosis = diagnose_trace(t, file);
  r.calls = communication_calls(t);
  return r;
}

RankInput rank_file(const std::string& path) {
  const Trace t = read_trace(path);
  RankInput r;
  r.file = path.substr(path.find_last_of('/') + 1);
  r.rank = t.rank ? *t.rank : rank_from_file_name(r.file).value_or(-1);
  r.rank_from = t.rank ? "distributedInfo" : "file name";
  r.diagnosis = diagnose_trace(t, r.file);
  r.calls = communication_calls(t);
  return r;
}

// A results file with an all-reduce term on that GPU: 10 us + bytes / 100 GB/s, and the measured overlap.
json results_with_allreduce() {
  json gpu = {{"available", true}, {"devices", json::array({{{"index", 0}, {"name", "NVIDIA A100-PG509-200"}}})}};
  return {{"schema", "gtb-results"}, {"context", {{"gpu", gpu}}}};
}

}  // namespace

TEST(DiagnoseRules, CollectiveKindsDtypesAndBusBandwidth) {
  EXPECT_EQ(collective_kind("gloo:all_reduce"), "allreduce");
  EXPECT_EQ(collective_kind("ncclDevKernel_AllGather_RING_LL"), "allgather");
  EXPECT_EQ(collective_kind("ncclKernel_ReduceScatter_RING_LL_Sum_float"), "reducescatter");
  EXPECT_EQ(collective_kind("ncclKernel_Reduce_RING_LL_Sum_float"), "reduce");
  EXPECT_EQ(collective_kind("aten::mm"), "");
  EXPECT_EQ(dtype_bytes("BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("Float"), 4);
  EXPECT_EQ(dtype_bytes("Long"), 8);
  // 1 GB in 10 ms among 8 ranks: 100 GB/s algorithm bandwidth, x 2*7/8 for all-reduce.
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps("allreduce", 1e9, 0.01, 8), 175);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps("allgather", 1e9, 0.01, 8), 87.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps("broadcast", 1e9, 0.01, 8), 100);
  EXPECT_TRUE(std::isnan(bus_bandwidth_gbps("allreduce", -1, 0.01, 8)));
  EXPECT_EQ(rank_from_file_name("trainer_rank-12.pt.trace.json.gz").value_or(-1), 12);
  EXPECT_EQ(rank_from_file_name("host_rank3.json").value_or(-1), 3);
  EXPECT_FALSE(rank_from_file_name("trace.json").has_value());
}

// Rank 1 computes 3000 us before the all-reduce, rank 0 1000 us: rank 0 arrives 2000 us early and its
// all-reduce lasts 4000 us against rank 1's 2000 us. The straggler is rank 1; rank 0 waits 2000 us a step.
TEST(DiagnoseJob, PlantedStragglerItsWaitAndTheBusBandwidth) {
  const std::vector<RankInput> ranks = {rank_of(gpu_rank(0, 1000, 4000), "r0"), rank_of(gpu_rank(1, 3000, 2000), "r1")};
  const json j = diagnose_job(ranks, nullptr, "");
  EXPECT_EQ(j["kind"], "job");
  EXPECT_TRUE(j["step_count"]["agree"].get<bool>());
  ASSERT_EQ(j["steps"].size(), 2u);
  for (const auto& s : j["steps"]) {
    EXPECT_EQ(s["straggler"]["rank"], 1);
    EXPECT_DOUBLE_EQ(s["straggler"]["longest_wait_us"].get<double>(), 2000);
    EXPECT_DOUBLE_EQ(s["wait_us_by_rank"]["0"].get<double>(), 2000);
    EXPECT_DOUBLE_EQ(s["wait_us_by_rank"]["1"].get<double>(), 0);
  }
  EXPECT_EQ(j["straggler"]["rank"], 1);
  EXPECT_DOUBLE_EQ(j["straggler"]["others_wait_per_step_us"].get<double>(), 2000);
  // Per rank: rank 0's communication is 4000 us, all of it exposed (nothing computes beside it).
  EXPECT_DOUBLE_EQ(j["ranks"][0]["median_per_step"]["communication_us"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["median_per_step"]["exposed_communication_us"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(j["across_ranks"]["compute_us"]["spread"].get<double>(), 2000);
  EXPECT_EQ(j["across_ranks"]["compute_us"]["max_rank"], 3000 > 1000 ? 1 : 0);
  // 100 MB over the shortest duration, 2000 us: 50 GB/s, x 2(2-1)/2.
  ASSERT_EQ(j["collectives"].size(), 1u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["collective"], "allreduce");
  EXPECT_DOUBLE_EQ(c["bytes"].get<double>(), 1e8);
  EXPECT_DOUBLE_EQ(c["achieved_busbw_gbps"].get<double>(), 50);
  EXPECT_TRUE(c["measured_busbw_gbps"].is_null());
  // The straggler's saving is the others' wait, from the traces alone.
  bool straggler_fix = false;
  for (const auto& f : j["pricing"]["fixes"])
    if (f["symptom"] == "straggler") {
      straggler_fix = true;
      EXPECT_DOUBLE_EQ(f["saving_per_step_s"].get<double>(), 2000e-6);
    }
  EXPECT_TRUE(straggler_fix);
}

TEST(DiagnoseJob, MeasuredBusBandwidthFromTheResults) {
  const std::vector<RankInput> ranks = {rank_of(gpu_rank(0, 1000, 4000), "r0"), rank_of(gpu_rank(1, 3000, 2000), "r1")};
  json r = results_with_allreduce();
  r["findings"]["parallel"]["terms"] = json::array(
      {{{"name", "allreduce"}, {"backend", "cuda"}, {"where", {{"ranks", 2}}}, {"form", "latency_bandwidth"},
        {"x", "bytes"}, {"latency_s", 1e-5}, {"per_second", 1e11}, {"x_min", 4096.0}, {"x_max", 1e9},
        {"records", {"syn-ar"}}},
       {{"name", "comm_overlap"}, {"backend", "cuda"}, {"where", json::object()}, {"form", "constant"},
        {"value", 0.5}, {"unit", "fraction"}, {"records", {"syn-ov"}}}});
  const json j = diagnose_job(ranks, &r, "synthetic");
  const auto& c = j["collectives"][0];
  // Measured: 10 us + 1e8 B / 1e11 B/s = 1010 us for 100 MB: 99.0 GB/s bus bandwidth; achieved 50.
  ASSERT_TRUE(c["measured_busbw_gbps"].is_number()) << c.dump();
  EXPECT_NEAR(c["measured_busbw_gbps"].get<double>(), 1e8 / 1010e-6 / 1e9, 1e-9);
  EXPECT_NEAR(c["achieved_share_of_measured"].get<double>(), 50 / (1e8 / 1010e-6 / 1e9), 1e-12);
  EXPECT_EQ(c["records"][0], "syn-ar");
  // Overlap: the median exposed communication (3000 us: ranks 4000 and 2000) x 0.5.
  bool overlap = false;
  for (const auto& f : j["pricing"]["fixes"])
    if (f["symptom"] == "exposed_communication") {
      overlap = true;
      ASSERT_TRUE(f["saving_per_step_s"].is_number()) << f.dump();
      EXPECT_NEAR(f["saving_per_step_s"].get<double>(), 3000e-6 * 0.5, 1e-12);
    }
  EXPECT_TRUE(overlap);
  // Another GPU's records give no measured figure, and say why.
  r["context"]["gpu"]["devices"][0]["name"] = "NVIDIA H100 80GB HBM3";
  const json k = diagnose_job(ranks, &r, "other");
  EXPECT_TRUE(k["collectives"][0]["measured_busbw_gbps"].is_null());
  EXPECT_NE(k["collectives"][0]["measured_cannot_say"].get<std::string>().find("H100"), std::string::npos);
}

TEST(DiagnoseJob, RanksThatDisagreeOnStepsAreReportedNotGuessed) {
  const std::vector<RankInput> ranks = {rank_of(gpu_rank(0, 1000, 4000, 3), "r0"), rank_of(gpu_rank(1, 3000, 2000, 2), "r1")};
  const json j = diagnose_job(ranks, nullptr, "");
  EXPECT_FALSE(j["step_count"]["agree"].get<bool>());
  EXPECT_EQ(j["step_count"]["by_rank"]["0"], 3);
  EXPECT_EQ(j["step_count"]["by_rank"]["1"], 2);
  EXPECT_EQ(j["step_count"]["common_steps"], 2);
  ASSERT_EQ(j["step_count"]["missing"].size(), 1u);
  EXPECT_EQ(j["step_count"]["missing"][0]["rank"], 1);
  EXPECT_EQ(j["step_count"]["missing"][0]["lacks"][0], "ProfilerStep#2");
  EXPECT_EQ(j["steps"].size(), 2u);  // only the common ones are compared
  EXPECT_FALSE(render_job_text(j).empty());
  EXPECT_FALSE(render_job_markdown(j).empty());
}

// The DDP jobs: the planted straggler (it sleeps 30 ms before its backward pass) is found in every
// step, and the others wait most of those 30 ms in the all-reduce.
TEST(DiagnoseJob, DdpPlantedStragglerIsFound) {
  for (const auto& [dir, n, straggler] : std::vector<std::tuple<std::string, int, int>>{
           {"job2-straggler", 2, 1}, {"job4-straggler", 4, 2}}) {
    std::vector<RankInput> ranks;
    for (int r = 0; r < n; ++r) ranks.push_back(rank_file(kDdp + dir + "/rank-" + std::to_string(r) + ".json.gz"));
    const json j = diagnose_job(ranks, nullptr, "");
    ASSERT_TRUE(j["straggler"].is_object()) << dir;
    EXPECT_EQ(j["straggler"]["rank"], straggler) << dir;
    EXPECT_EQ(j["straggler"]["straggler_in_steps"], j["straggler"]["of_steps"]) << dir;
    EXPECT_GT(j["straggler"]["others_wait_per_step_us"].get<double>(), 15000) << dir;
    EXPECT_LT(j["straggler"]["others_wait_per_step_us"].get<double>(), 60000) << dir;
    EXPECT_TRUE(j["step_count"]["agree"].get<bool>()) << dir;
  }
  // Without the planted sleep nobody waits that long.
  std::vector<RankInput> ranks = {rank_file(kDdp + "job2/rank-0.json.gz"), rank_file(kDdp + "job2/rank-1.json.gz")};
  const json j = diagnose_job(ranks, nullptr, "");
  EXPECT_LT(j["straggler"]["others_wait_per_step_us"].get<double>(), 15000);
}

namespace {
json diff_of(const std::string& a, const std::string& b) {
  const Trace ta = read_trace(kDdp + "diff/" + a + ".json.gz"), tb = read_trace(kDdp + "diff/" + b + ".json.gz");
  return diagnose_diff(diagnose_trace(ta, a), name_tallies(ta), diagnose_trace(tb, b), name_tallies(tb));
}
bool named(const json& list, const std::string& name) {
  for (const auto& r : list["largest"])
    if (r["name"] == name) return true;
  return false;
}
}  // namespace

// Each diff pair made one change; the diff names it.
TEST(DiagnoseDiff, TheOneChangeIsNamed) {
  {
    const json d = diff_of("base", "slower-loader");  // the loader sleeps 20 ms
    EXPECT_TRUE(d["categories"]["step_us"]["beyond_noise"].get<bool>());
    EXPECT_TRUE(d["categories"]["data_loader_us"]["beyond_noise"].get<bool>());
    EXPECT_GT(d["categories"]["data_loader_us"]["change"].get<double>(), 15000);
    ASSERT_FALSE(d["names"]["changed"]["largest"].empty());
    EXPECT_EQ(d["names"]["changed"]["largest"][0]["name"], "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  }
  {
    const json d = diff_of("base", "sync-every-step");  // loss.item() each step
    EXPECT_TRUE(named(d["names"]["appeared"], "aten::item"));
    bool came = false;
    for (const auto& s : d["symptoms"]["came"]) came |= s["symptom"].get<std::string>().find("scalar reads") != std::string::npos;
    EXPECT_TRUE(came);
  }
  {
    const json d = diff_of("base", "larger-model");  // hidden 64 -> 512
    EXPECT_TRUE(d["categories"]["step_us"]["beyond_noise"].get<bool>());
    EXPECT_GT(d["categories"]["step_us"]["change"].get<double>(), 0);
    EXPECT_TRUE(d["names"]["appeared"]["largest"].empty());
  }
  {
    // DDP's no_sync every other step: the all-reduce runs in half the steps.
    const json d = diff_of("base", "no-sync-every-2");
    bool halved = false;
    for (const auto& r : d["names"]["changed"]["largest"])
      if (r["name"] == "gloo:all_reduce") {
        halved = r["count_changed"].get<bool>();
        EXPECT_DOUBLE_EQ(r["before"]["mean_count_per_step"].get<double>(), 1);
        EXPECT_DOUBLE_EQ(r["after"]["mean_count_per_step"].get<double>(), 0.5);
      }
    EXPECT_TRUE(halved);
  }
  {
    // A trace against itself: nothing beyond the noise, nothing came, went or changed.
    const json d = diff_of("base", "base");
    EXPECT_FALSE(d["categories"]["step_us"]["beyond_noise"].get<bool>());
    EXPECT_NE(d["verdict"].get<std::string>().find("within the steps' noise"), std::string::npos);
    EXPECT_EQ(d["names"]["changed"]["total"], 0);
    EXPECT_EQ(d["names"]["appeared"]["total"], 0);
    EXPECT_TRUE(d["symptoms"]["came"].empty());
    EXPECT_FALSE(render_diff_text(d).empty());
    EXPECT_FALSE(render_diff_markdown(d).empty());
  }
}

// Ranks whose collectives lasted the same: nobody waited, so no straggler is named.
TEST(DiagnoseJob, NoWaitNoStraggler) {
  const std::vector<RankInput> ranks = {rank_of(gpu_rank(0, 1000, 3000), "r0"), rank_of(gpu_rank(1, 1000, 3000), "r1")};
  const json j = diagnose_job(ranks, nullptr, "");
  EXPECT_TRUE(j["straggler"].is_null());
  for (const auto& s : j["steps"]) EXPECT_TRUE(s["straggler"].is_null());
}

// Bucket size: two all-reduces of 100 MB per step merged into one of 200 MB saves one latency per step
// at the measured latency and bandwidth (10 us + bytes / 100 GB/s): 2 x 1010 us - 2010 us = 10 us.
TEST(DiagnoseJob, LargerBucketsArePricedFromTheMeasuredAllReduce) {
  const std::vector<RankInput> ranks = {rank_of(gpu_rank(0, 1000, 4000, 2, 2), "r0"),
                                        rank_of(gpu_rank(1, 3000, 2000, 2, 2), "r1")};
  json r = results_with_allreduce();
  r["findings"]["parallel"]["terms"] = json::array(
      {{{"name", "allreduce"}, {"backend", "cuda"}, {"where", {{"ranks", 2}}}, {"form", "latency_bandwidth"},
        {"x", "bytes"}, {"latency_s", 1e-5}, {"per_second", 1e11}, {"x_min", 4096.0}, {"x_max", 1e9},
        {"records", {"syn-ar"}}}});
  const json j = diagnose_job(ranks, &r, "synthetic");
  bool seen = false;
  for (const auto& f : j["pricing"]["fixes"])
    if (f["symptom"] == "bucket_size") {
      seen = true;
      EXPECT_DOUBLE_EQ(f["allreduce_per_step"].get<double>(), 2);
      ASSERT_TRUE(f["saving_per_step_s"].is_number()) << f.dump();
      EXPECT_NEAR(f["saving_per_step_s"].get<double>(), 1e-5, 1e-12);
    }
  EXPECT_TRUE(seen);
  // Without results it says what would price it.
  const json k = diagnose_job(ranks, nullptr, "");
  for (const auto& f : k["pricing"]["fixes"])
    if (f["symptom"] == "bucket_size") EXPECT_NE(f["cannot_say"].get<std::string>().find("--results"), std::string::npos);
}

// ---- PyTorch 2.x traces (tests/fixtures/traces/ddp/pt2-*: gloo's collectives carry their tensor) ----

namespace {

const std::string kResults = std::string(GTB_FIXTURE_DIR) + "/../../results/gtb-cpu-Intel-Xeon-2vcpu-20261207.json";
constexpr double kBucket25Bytes = 283656.0 * 4;  // the model's 283656 float parameters in one bucket

std::vector<RankInput> pt2_job(const std::string& dir) {
  return {rank_file(kDdp + dir + "/rank-0.json.gz"), rank_file(kDdp + dir + "/rank-1.json.gz")};
}

json hta_fixture(const std::string& name) {
  std::ifstream in(std::string(GTB_FIXTURE_DIR) + "/traces/hta/" + name + ".json");
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

}  // namespace

// PyTorch 2.x writes gloo:all_reduce's tensor ("Input Dims" [[n]], "Input type" ["float"]): the call's
// bytes. 1.13's legacy export writes no arguments: the size stays unknown.
TEST(DiagnoseJob, HostCollectivesCarryTheirSizeInPyTorch2Traces) {
  const auto calls = communication_calls(read_trace(kDdp + "pt2-job2/rank-0.json.gz"));
  ASSERT_EQ(calls.size(), 4u);
  for (const auto& c : calls) {
    EXPECT_EQ(c.collective, "allreduce");
    EXPECT_FALSE(c.on_gpu);
    EXPECT_DOUBLE_EQ(c.bytes, kBucket25Bytes);
    EXPECT_DOUBLE_EQ(c.out_bytes, kBucket25Bytes);
  }
  for (const auto& c : communication_calls(read_trace(kDdp + "job2/rank-0.json.gz"))) EXPECT_LT(c.bytes, 0);
  // A host collective's arguments in a planted trace: the type's namespace is dropped (c10::BFloat16).
  const Trace t = read_trace_text(
      R"({"traceEvents":[{"ph":"X","cat":"user_annotation","name":"gloo:all_gather","ts":1,"dur":2,"tid":1,)"
      R"("args":{"Input Dims":[[8, 16]],"Input type":["c10::BFloat16"]}}]})");
  const auto planted = communication_calls(t);
  ASSERT_EQ(planted.size(), 1u);
  EXPECT_EQ(planted[0].collective, "allgather");
  EXPECT_DOUBLE_EQ(planted[0].bytes, 8 * 16 * 2);
  // Arguments that do not say one tensor's size: unknown (-1), not guessed. Two tensors; a type gtb
  // does not know; no type; no dims.
  for (const std::string args : {R"("Input Dims":[[4],[4]],"Input type":["float","float"])", R"("Input Dims":[[4]],"Input type":["Scalar"])",
                                 R"("Input Dims":[[4]])", R"("Input Dims":[],"Input type":["float"])"}) {
    const auto calls = communication_calls(read_trace_text(
        R"({"traceEvents":[{"ph":"X","cat":"user_annotation","name":"gloo:all_reduce","ts":1,"dur":2,"tid":1,"args":{)" +
        args + "}}]}"));
    ASSERT_EQ(calls.size(), 1u) << args;
    EXPECT_EQ(calls[0].collective, "allreduce") << args;
    EXPECT_LT(calls[0].bytes, 0) << args;
  }
}

// The achieved bus bandwidth of the gloo all-reduce beside the results file's measured one (the
// parallel family's MPI all-reduce on the same machine kind), and the bucket fix priced on a real trace.
TEST(DiagnoseJob, GlooBusBandwidthAgainstTheMeasuredAllReduce) {
  const json results = json::parse(std::ifstream(kResults));
  const json* term = nullptr;
  for (const auto& t : results["findings"]["parallel"]["terms"])
    if (t["name"] == "allreduce" && t["backend"] == "cpu" && t["where"]["ranks"] == 2) term = &t;
  ASSERT_NE(term, nullptr);
  const json j = diagnose_job(pt2_job("pt2-job2"), &results, "r");
  ASSERT_EQ(j["collectives"].size(), 1u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["collective"], "allreduce");
  EXPECT_DOUBLE_EQ(c["bytes"].get<double>(), kBucket25Bytes);
  // The transfer: each step's shortest duration among the ranks, from HTA's own reading of the traces
  // (whole microseconds), their median; all-reduce among 2 ranks: bus = algorithm bandwidth.
  const json h = hta_fixture("ddp-pt2-job2");
  std::vector<double> shortest;
  for (std::size_t k = 0; k < 4; ++k)
    shortest.push_back(std::min(h["ranks"]["0"]["collectives"][k]["dur"].get<double>(),
                                h["ranks"]["1"]["collectives"][k]["dur"].get<double>()));
  std::sort(shortest.begin(), shortest.end());
  const double med_us = (shortest[1] + shortest[2]) / 2;
  EXPECT_NEAR(c["median_transfer_us"].get<double>(), med_us, 2.0);
  EXPECT_NEAR(c["achieved_busbw_gbps"].get<double>(), kBucket25Bytes / c["median_transfer_us"].get<double>() / 1e3, 1e-12);
  const double measured_s = (*term)["latency_s"].get<double>() + kBucket25Bytes / (*term)["per_second"].get<double>();
  ASSERT_TRUE(c["measured_busbw_gbps"].is_number()) << c.dump();
  EXPECT_NEAR(c["measured_busbw_gbps"].get<double>(), kBucket25Bytes / measured_s / 1e9, 1e-9);
  EXPECT_NEAR(c["achieved_share_of_measured"].get<double>(),
              c["achieved_busbw_gbps"].get<double>() / c["measured_busbw_gbps"].get<double>(), 1e-12);
  EXPECT_FALSE(c["outside_measured"].get<bool>());
  // Smaller buckets: two all-reduces per step (67.6 kB and 1.07 MB), priced against one of their total.
  const json k = diagnose_job(pt2_job("pt2-job2-bucket-0.25"), &results, "r");
  ASSERT_EQ(k["collectives"].size(), 2u);
  bool priced = false;
  for (const auto& f : k["pricing"]["fixes"])
    if (f["symptom"] == "bucket_size") {
      EXPECT_DOUBLE_EQ(f["allreduce_per_step"].get<double>(), 2);
      ASSERT_TRUE(f["saving_per_step_s"].is_number()) << f.dump();
      // One latency saved per step: the term's latency (its bandwidth part is the same bytes either way).
      EXPECT_NEAR(f["saving_per_step_s"].get<double>(), (*term)["latency_s"].get<double>(), 1e-12);
      priced = true;
    }
  EXPECT_TRUE(priced);
}

// bucket_cap_mb 25 -> 0.25 on the same model: the diff names the collectives' change (one all-reduce of
// 1.13 MB per step -> two, of 67.6 kB and 1.07 MB; the same bytes per step).
TEST(DiagnoseDiff, BucketSizeChangeIsNamedByItsCollectives) {
  const Trace a = read_trace(kDdp + "pt2-job2/rank-0.json.gz"), b = read_trace(kDdp + "pt2-job2-bucket-0.25/rank-0.json.gz");
  const json d = diagnose_diff(diagnose_trace(a, "a"), name_tallies(a), diagnose_trace(b, "b"), name_tallies(b));
  ASSERT_EQ(d["collectives"].size(), 1u);
  const auto& c = d["collectives"][0];
  EXPECT_EQ(c["collective"], "allreduce");
  EXPECT_TRUE(c["changed"].get<bool>());
  EXPECT_TRUE(c["calls_changed"].get<bool>());
  EXPECT_DOUBLE_EQ(c["before"]["calls_per_step"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(c["after"]["calls_per_step"].get<double>(), 2);
  EXPECT_EQ(c["before"]["sizes"], json::array({kBucket25Bytes}));
  EXPECT_EQ(c["after"]["sizes"], json::array({16896.0 * 4, 266760.0 * 4}));
  EXPECT_DOUBLE_EQ(c["before"]["bytes_per_step"].get<double>(), kBucket25Bytes);
  EXPECT_DOUBLE_EQ(c["after"]["bytes_per_step"].get<double>(), kBucket25Bytes);
  EXPECT_NE(render_diff_text(d).find("allreduce: 1 call of 1.13 MB (1.13 MB per step) -> 2 calls of 67.6 kB, 1.07 MB"),
            std::string::npos)
      << render_diff_text(d);
  // The collectives are their own section, not kernels or CPU operators.
  for (const auto& list : {"appeared", "vanished", "changed"})
    for (const auto& r : d["names"][list]["largest"]) EXPECT_NE(r["kind"], "collective");
  // A trace against itself: unchanged.
  const json same = diagnose_diff(diagnose_trace(a, "a"), name_tallies(a), diagnose_trace(a, "a"), name_tallies(a));
  EXPECT_FALSE(same["collectives"][0]["changed"].get<bool>());
  // 1.13's legacy traces: the calls are counted, their size unknown (null bytes).
  const json old = diff_of("base", "no-sync-every-2");
  ASSERT_EQ(old["collectives"].size(), 1u);
  EXPECT_TRUE(old["collectives"][0]["before"]["bytes_per_step"].is_null());
  EXPECT_DOUBLE_EQ(old["collectives"][0]["after"]["calls_per_step"].get<double>(), 0.5);
}

// Against HolisticTraceAnalysis (tests/fixtures/traces/ddp/hta-ddp.py wrote its figures): per rank, each
// step's duration and each collective's duration, step and size agree with HTA's reading (within 2 us:
// HTA rounds the traces' nanosecond timestamps down to whole microseconds); HTA's temporal breakdown and communication/computation overlap have no answer
// on a CPU-only job (no GPU kernels), and gtb gives none either (no whole-trace GPU figures, no
// exposed communication).
TEST(DiagnoseJob, HtaAgreesPerRankOnPyTorch2Jobs) {
  for (const std::string dir : {"pt2-job2", "pt2-job2-bucket-0.25"}) {
    const json h = hta_fixture("ddp-" + dir);
    const auto ranks = pt2_job(dir);
    const json j = diagnose_job(ranks, nullptr, "");
    for (const auto& r : ranks) {
      const json& hr = h["ranks"][std::to_string(r.rank)];
      const json& steps = r.diagnosis["steps"];
      ASSERT_EQ(steps.size(), hr["steps"].size()) << dir;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i]["name"], hr["steps"][i]["name"]) << dir;
        EXPECT_NEAR(steps[i]["host_us"].get<double>(), hr["steps"][i]["dur"].get<double>(), 2.0) << dir;
      }
      ASSERT_EQ(r.calls.size(), hr["collectives"].size()) << dir;
      for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const auto& hc = hr["collectives"][i];
        EXPECT_NEAR(r.calls[i].dur, hc["dur"].get<double>(), 2.0) << dir << " call " << i;
        EXPECT_EQ(steps[static_cast<std::size_t>(r.calls[i].step)]["name"], hc["step"]) << dir << " call " << i;
        EXPECT_EQ(hc["type"], "float");
        EXPECT_DOUBLE_EQ(r.calls[i].bytes, hc["elements"].get<double>() * 4) << dir << " call " << i;
      }
      EXPECT_TRUE(hr["comm_comp_overlap_pctg"].is_null()) << dir;
      EXPECT_TRUE(hr["temporal_breakdown"].contains("error")) << dir;
    }
    for (const auto& row : j["ranks"]) {
      EXPECT_FALSE(row.contains("whole_trace")) << dir;
      EXPECT_TRUE(row["median_per_step"]["exposed_communication_us"].is_null()) << dir;
    }
  }
}
