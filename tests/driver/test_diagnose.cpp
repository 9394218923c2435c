// gtb diagnose: the trace reader, the symptom rules on small planted traces, bad input, the shared traces.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "harness/driver/common/diagnose_render.h"
#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"

using gtb::json;
using namespace gtb::diagnose;

namespace {

const std::string kTraces = std::string(GTB_FIXTURE_DIR) + "/traces/";

// A small trace written for the test: one step of 1000 us; stream 7 runs k1 [100,200) and k2
// [300,400); k2 was launched at 250 (after k1 ended: host launch); stream 9 copies [200,260)
// pageable HtoD 6e6 bytes; a cudaStreamSynchronize returns at 280 (inside k1..k2's gap on the
// whole GPU: [260,300)).
std::string planted(const std::string& extra_events = "") {
  return R"JSON({"deviceProperties":[{"id":0,"name":"NVIDIA Test GPU"}],"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":0,"dur":1000},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":50,"dur":10,"args":{"correlation":1}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":150,"dur":5,"args":{"correlation":3}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":160,"dur":120,"args":{"correlation":4}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":290,"dur":10,"args":{"correlation":2}},
 {"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":158,"dur":125},
 {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":100,"dur":100,"args":{"stream":7,"correlation":1,"device":0}},
 {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":300,"dur":100,"args":{"stream":7,"correlation":2,"device":0}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":9,"ts":200,"dur":60,"args":{"stream":9,"correlation":3,"device":0,"bytes":6000000}})JSON" +
         extra_events + "]}";
}

double num(const json& j, std::initializer_list<const char*> path) {
  const json* c = &j;
  for (const char* k : path) c = &c->at(k);
  return c->get<double>();
}

}  // namespace

TEST(DiagnoseRules, GemmKindFromKernelNames) {
  EXPECT_EQ(gemm_kind("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(...)"),
            GemmKind::tensor_core);
  EXPECT_EQ(tensor_core_precision("cutlass_80_tensorop_s1688gemm_64x64"), "tf32");
  EXPECT_EQ(gemm_kind("ampere_sgemm_32x128_tn"), GemmKind::simt_fp32);
  EXPECT_EQ(gemm_kind("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize96x128x32"), GemmKind::tensor_core);
  EXPECT_EQ(tensor_core_precision("sm80_xmma_gemm_bf16bf16_bf16f32"), "bf16");
  EXPECT_EQ(gemm_kind("volta_dgemm_64x64_nn"), GemmKind::simt_fp64);
  EXPECT_EQ(gemm_kind("Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_SN"), GemmKind::tensor_core);
  EXPECT_EQ(gemm_kind("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int)"), GemmKind::not_gemm);
  EXPECT_EQ(gemm_kind("void splitKreduce_kernel<float, float>(cublasSplitKParams<float>)"), GemmKind::unknown_gemm);
  EXPECT_EQ(gemm_kind("void at::native::vectorized_elementwise_kernel<4>"), GemmKind::not_gemm);
  EXPECT_TRUE(is_communication("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_FALSE(is_communication("void at::native::reduce_kernel<512, 1>"));
}

TEST(DiagnoseRules, CopyKindFromEventNames) {
  EXPECT_EQ(copy_kind("Memcpy HtoD (Pinned -> Device)").memory, "pinned");
  EXPECT_EQ(copy_kind("Memcpy DtoH (Device -> Pageable)").direction, "DtoH");
  EXPECT_EQ(copy_kind("Memcpy DtoH (Device -> Pageable)").memory, "pageable");
  EXPECT_EQ(copy_kind("Memcpy DtoD (Device -> Device)").memory, "device");
  EXPECT_EQ(copy_kind("Memcpy HtoD (Host -> Device)").memory, "unknown");
}

TEST(DiagnosePlanted, BusyIdleAndTheIdleCauses) {
  const auto d = diagnose_trace(read_trace_text(planted()), "planted");
  const auto& g = d["overall"]["gpu"];
  // Busy: [100,260) and [300,400) = 260 us of the window [100,400) = 300 us.
  EXPECT_DOUBLE_EQ(num(g, {"window_us"}), 300);
  EXPECT_DOUBLE_EQ(num(g, {"busy_us"}), 260);
  EXPECT_DOUBLE_EQ(num(g, {"idle_us"}), 40);
  // The whole GPU's one gap [260,300): the sync returned at 280, inside it.
  EXPECT_DOUBLE_EQ(num(g, {"idle_by_cause", "sync_us"}), 40);
  // Stream 7's gap [200,300): 60 us while stream 9 copied, the rest after a sync.
  const auto& s7 = g["streams"][0];
  ASSERT_EQ(s7["stream"], 7);
  EXPECT_DOUBLE_EQ(num(s7, {"idle_us"}), 100);
  EXPECT_DOUBLE_EQ(num(s7, {"idle_by_cause", "copy_us"}), 60);
  EXPECT_DOUBLE_EQ(num(s7, {"idle_by_cause", "sync_us"}), 40);
  EXPECT_DOUBLE_EQ(num(g, {"split", "compute_us"}), 200);
  EXPECT_DOUBLE_EQ(num(g, {"split", "memory_us"}), 60);
}

TEST(DiagnosePlanted, WithoutTheSyncTheGapIsTheHostLaunching) {
  // The same trace without the sync call: k2 launched at 290 > 260, the start of the gap.
  std::string t = planted();
  const auto at = t.find(R"( {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize")");
  t.erase(at, t.find('\n', at) - at + 1);
  const auto d = diagnose_trace(read_trace_text(t), "planted");
  EXPECT_DOUBLE_EQ(num(d["overall"]["gpu"], {"idle_by_cause", "host_launch_us"}), 40);
  EXPECT_DOUBLE_EQ(num(d["overall"]["gpu"], {"idle_by_cause", "sync_us"}), 0);
  EXPECT_DOUBLE_EQ(num(d["overall"]["host"], {"syncs", "total"}), 0);
}

TEST(DiagnosePlanted, CopiesSyncsKernelsGemm) {
  const auto d = diagnose_trace(read_trace_text(planted()), "planted");
  const auto& g = d["overall"]["gpu"];
  ASSERT_EQ(g["copies"].size(), 1u);
  EXPECT_EQ(g["copies"][0]["memory"], "pageable");
  EXPECT_EQ(g["copies"][0]["count"], 1);
  EXPECT_DOUBLE_EQ(num(g["copies"][0], {"bytes"}), 6e6);
  EXPECT_DOUBLE_EQ(num(g["copies"][0], {"gbps"}), 100);  // 6e6 B in 60 us
  EXPECT_DOUBLE_EQ(num(d["overall"]["host"], {"syncs", "stream_sync"}), 1);
  EXPECT_DOUBLE_EQ(num(d["overall"]["host"], {"scalar_reads", "count"}), 1);
  EXPECT_DOUBLE_EQ(num(g, {"kernels", "count"}), 2);
  EXPECT_DOUBLE_EQ(num(g, {"kernels", "launch_us"}), 10);
  EXPECT_DOUBLE_EQ(num(g, {"kernels", "shorter_than_launch"}), 0);
  EXPECT_DOUBLE_EQ(num(g, {"gemm_kernels", "simt_fp32", "count"}), 1);
  EXPECT_DOUBLE_EQ(num(g, {"gemm_kernels", "share_of_kernel_time"}), 0.5);
  ASSERT_EQ(d["steps"].size(), 1u);
  EXPECT_EQ(d["steps"][0]["name"], "ProfilerStep#7");
  EXPECT_DOUBLE_EQ(num(d["steps"][0], {"gpu", "kernels", "count"}), 2);
}

TEST(DiagnosePlanted, ShortKernelsAreLaunchBound) {
  const auto d = diagnose_trace(
      read_trace_text(planted(R"(,{"ph":"X","cat":"kernel","name":"tiny","pid":0,"tid":7,"ts":500,"dur":2,"args":{"stream":7,"correlation":9}})")),
      "planted");
  EXPECT_DOUBLE_EQ(num(d["overall"]["gpu"], {"kernels", "shorter_than_launch"}), 1);
}

TEST(DiagnoseBadInput, MalformedJsonNamesTheByteOffset) {
  // The second comma is byte 33.
  const std::string t = R"({"traceEvents":[{"ph":"X","ts":1,,}]})";
  try {
    read_trace_text(t);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("at byte 33 "), std::string::npos) << e.what();
  }
}

TEST(DiagnoseBadInput, NotATrace) {
  EXPECT_THROW(read_trace_text(R"([1,2,3])"), TraceError);
  EXPECT_THROW(read_trace_text(R"({"schema":"gtb-results"})"), TraceError);
  EXPECT_THROW(read_trace(kTraces + "does-not-exist.json"), TraceError);
}

TEST(DiagnoseBadInput, EventsWithoutTimesAreCountedNotUsed) {
  const auto t = read_trace_text(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","args":{"stream":7}}]})");
  EXPECT_EQ(t.missing_fields, 1u);
  const auto d = diagnose_trace(t, "x");
  bool said = false;
  for (const auto& c : d["cannot_say"]) said |= c["why"].get<std::string>().find("lack ts or dur") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(DiagnoseSharedTraces, CpuOnlyTraceSaysWhatItCannotSay) {
  const auto d = diagnose_trace(read_trace(kTraces + "cpu-only.json.gz"), "cpu-only");
  EXPECT_FALSE(d["overall"].contains("gpu"));
  ASSERT_FALSE(d["cannot_say"].empty());
  EXPECT_NE(d["cannot_say"][0]["why"].get<std::string>().find("CPU-only"), std::string::npos);
  EXPECT_FALSE(render_text(d).empty());
  EXPECT_FALSE(render_markdown(d).empty());
}

TEST(DiagnoseSharedTraces, CommunicationKernelsCarryTheirCollectiveArguments) {
  const Trace t = read_trace(kTraces + "a100-nccl-3steps.json.gz");
  int allreduce = 0, broadcast = 0, without = 0;
  for (const auto& g : t.gpu) {
    if (!is_communication(t.name_of(g.name))) continue;
    if (g.collective < 0) {
      ++without;
      continue;
    }
    const auto& a = t.collectives.at(static_cast<std::size_t>(g.collective));
    const std::string name = t.name_of(a.name);
    allreduce += name == "allreduce";
    broadcast += name == "broadcast";
    EXPECT_EQ(a.group_size, 2);
    ASSERT_GE(a.dtype, 0);
    if (name == "allreduce") EXPECT_EQ(t.name_of(a.dtype), "Float");  // the gradients; broadcasts carry Long buffers too
    EXPECT_GT(a.in_elements, 0);
    EXPECT_EQ(a.in_elements, a.out_elements);
  }
  // The trace's 15 all-reduce and 6 broadcast NCCL kernels, each with its own arguments.
  EXPECT_EQ(allreduce, 15);
  EXPECT_EQ(broadcast, 6);
  EXPECT_EQ(without, 0);
  // A planted event: the numbers are the event's own.
  const Trace p = read_trace_text(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL",)"
                                  R"("ts":1,"dur":2,"args":{"stream":7,"Collective name":"allgather","dtype":"BFloat16",)"
                                  R"("In msg nelems":1024,"Out msg nelems":4096,"Group size":4,"Process Group Name":"3"}},)"
                                  R"({"ph":"X","cat":"kernel","name":"gemm","ts":4,"dur":2,"args":{"stream":7}}]})");
  ASSERT_EQ(p.gpu.size(), 2u);
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_EQ(p.gpu[1].collective, -1);
  const auto& a = p.collectives[static_cast<std::size_t>(p.gpu[0].collective)];
  EXPECT_EQ(p.name_of(a.name), "allgather");
  EXPECT_EQ(p.name_of(a.dtype), "BFloat16");
  EXPECT_EQ(p.name_of(a.process_group), "3");
  EXPECT_EQ(a.in_elements, 1024);
  EXPECT_EQ(a.out_elements, 4096);
  EXPECT_EQ(a.group_size, 4);
}

TEST(DiagnoseSharedTraces, AmdTraceIsReadAndItsLimitsSaid) {
  const auto d = diagnose_trace(read_trace(kTraces + "mi250-minitoy-train.json.gz"), "mi250");
  EXPECT_EQ(d["trace"]["vendor"], "amd");
  // The copy's bytes come from its hipMemcpyWithStream call (the GPU event has none).
  EXPECT_DOUBLE_EQ(num(d["overall"]["gpu"]["copies"][0], {"bytes"}), 5120);
  bool pinned_unknown = false;
  for (const auto& c : d["cannot_say"])
    pinned_unknown |= c["symptom"].get<std::string>().find("pinned or pageable") != std::string::npos;
  EXPECT_TRUE(pinned_unknown);
}

// The steps' sections built on several threads make the same document, byte for byte, as on one: each
// step in its place, the drawn step's timeline from the same step.
TEST(DiagnoseSharedTraces, StepSectionsOnThreadsMakeTheSameDocument) {
  const auto t = read_trace(kTraces + "a100-train-6steps.json.gz");
  const std::string one = diagnose_trace(t, "a100", 1).dump(1);
  for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(diagnose_trace(t, "a100", threads).dump(1), one) << threads;
  // A job's trace with a step of no GPU work among others.
  const auto n = read_trace(kTraces + "a100-nccl-3steps.json.gz");
  EXPECT_EQ(diagnose_trace(n, "nccl", 2).dump(1), diagnose_trace(n, "nccl", 1).dump(1));
}

TEST(DiagnoseSharedTraces, TrainingTraceStepsAndSymptoms) {
  const auto d = diagnose_trace(read_trace(kTraces + "a100-train-6steps.json.gz"), "a100");
  ASSERT_EQ(d["steps"].size(), 6u);
  EXPECT_EQ(d["steps"][0]["name"], "ProfilerStep#1009");
  // Every step launched the same work.
  for (const auto& s : d["steps"]) EXPECT_DOUBLE_EQ(num(s, {"gpu", "kernels", "count"}), 1428);
  EXPECT_DOUBLE_EQ(num(d["overall"]["host"], {"syncs", "stream_sync"}), 60);
  EXPECT_GT(num(d["overall"]["gpu"], {"communication", "count"}), 0);
  EXPECT_GT(num(d["overall"]["host"], {"data_loader", "events"}), 0);
  const auto lines = symptom_lines(d);
  EXPECT_GE(lines.size(), 8u);
  for (const auto& l : lines) EXPECT_FALSE(l.from.empty()) << l.label;
}

// Pricing, on a synthetic results file (tests/fixtures/diagnose/results_synthetic_a100.json: made-up
// GPU-like terms, labelled synthetic in the file).
#include <fstream>

#include "harness/driver/diagnose/diagnose_price.h"

namespace {
json synthetic_results() {
  std::ifstream in(std::string(GTB_FIXTURE_DIR) + "/diagnose/results_synthetic_a100.json");
  return json::parse(in);
}
const json* fix_named(const json& d, const std::string& symptom) {
  for (const auto& f : d["pricing"]["fixes"])
    if (f["symptom"] == symptom) return &f;
  return nullptr;
}
}  // namespace

TEST(DiagnosePricing, SameGpuRanksTheFixesWithTheirRecords) {
  auto d = diagnose_trace(read_trace(kTraces + "a100-train-6steps.json.gz"), "a100");
  price_diagnosis(d, synthetic_results(), "synthetic");
  EXPECT_TRUE(d["pricing"]["same_gpu"].get<bool>());
  // 10 syncs per step (the larger of 10 sync calls and 5 item() reads) x 20 us.
  const json* sync = fix_named(d, "syncs");
  ASSERT_TRUE(sync);
  EXPECT_NEAR((*sync)["saving_per_step_s"].get<double>(), 10 * 2e-5, 1e-12);
  EXPECT_EQ((*sync)["records"][0], "syn-sync");
  // Ranked: every priced fix before the unpriced ones, by saving.
  double prev = INFINITY;
  bool unpriced_seen = false;
  for (const auto& f : d["pricing"]["fixes"]) {
    if (!f["saving_per_step_s"].is_number()) {
      unpriced_seen = true;
      continue;
    }
    EXPECT_FALSE(unpriced_seen);
    EXPECT_LE(f["saving_per_step_s"].get<double>(), prev);
    prev = f["saving_per_step_s"].get<double>();
  }
  // No shapes in this trace: the SIMT GEMM fix says so instead of a number.
  const json* gemm = fix_named(d, "gemm_kernels");
  ASSERT_TRUE(gemm);
  EXPECT_TRUE((*gemm)["saving_per_step_s"].is_null());
}

TEST(DiagnosePricing, APlantedCostMovesItsPrice) {
  json r = synthetic_results();
  auto d1 = diagnose_trace(read_trace(kTraces + "a100-train-6steps.json.gz"), "a100");
  auto d2 = d1;
  price_diagnosis(d1, r, "synthetic");
  r["findings"]["pitfalls"]["terms"][0]["value"] = 4e-5;  // a sync twice as dear
  price_diagnosis(d2, r, "synthetic");
  EXPECT_NEAR((*fix_named(d2, "syncs"))["saving_per_step_s"].get<double>(),
              2 * (*fix_named(d1, "syncs"))["saving_per_step_s"].get<double>(), 1e-12);
}

TEST(DiagnosePricing, AnotherGpuOrNoGpuPricesNothing) {
  json r = synthetic_results();
  r["context"]["gpu"]["devices"][0]["name"] = "NVIDIA H100 80GB HBM3";
  auto d = diagnose_trace(read_trace(kTraces + "a100-train-6steps.json.gz"), "a100");
  price_diagnosis(d, r, "other-gpu");
  EXPECT_FALSE(d["pricing"]["same_gpu"].get<bool>());
  for (const auto& f : d["pricing"]["fixes"]) EXPECT_TRUE(f["saving_per_step_s"].is_null()) << f["fix"];
  EXPECT_NE(d["pricing"]["message"].get<std::string>().find("H100"), std::string::npos);
  r["context"]["gpu"] = {{"available", false}, {"reason", "no GPU here"}};
  price_diagnosis(d, r, "no-gpu");
  for (const auto& f : d["pricing"]["fixes"]) EXPECT_TRUE(f["saving_per_step_s"].is_null()) << f["fix"];
  // A trace that names no GPU cannot be matched to any results either.
  auto s = diagnose_trace(read_trace(kTraces + "sampled-rank0-2steps.json.gz"), "sampled");
  price_diagnosis(s, synthetic_results(), "synthetic");
  for (const auto& f : s["pricing"]["fixes"]) EXPECT_TRUE(f["saving_per_step_s"].is_null()) << f["fix"];
}

TEST(DiagnosePricing, BadTermsAreAnError) {
  json r = synthetic_results();
  r["findings"]["pitfalls"]["terms"][0].erase("backend");
  auto d = diagnose_trace(read_trace(kTraces + "a100-event-sync.json.gz"), "es");
  EXPECT_THROW(price_diagnosis(d, r, "bad"), std::runtime_error);
}

// The cuda_sync markers as a reader counting them as work sees them: every marker microsecond outside
// gtb's busy time, those past the last GPU event included, and how far they stretch the window. A
// marker [350,600) after the last event (ends 400): 50 us inside gtb's window, 200 us past it.
TEST(DiagnoseDefects, SyncMarkersAreCountedWholeWithTheWindowTheyStretch) {
  const auto d = diagnose_trace(read_trace_text(planted(
                                    R"(,{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":250,"dur":350,"args":{"stream":7,"device":0}})")),
                                "planted");
  const auto& m = d["overall"]["gpu"]["sync_markers"];
  // Marker [250,600): busy covers [250,260) and [300,400); outside busy: [260,300) and [400,600).
  EXPECT_DOUBLE_EQ(num(m, {"us"}), 350);
  EXPECT_DOUBLE_EQ(num(m, {"us_outside_busy"}), 240);
  EXPECT_DOUBLE_EQ(num(m, {"us_outside_busy_in_window"}), 40);
  EXPECT_DOUBLE_EQ(num(m, {"window_stretch_us"}), 200);
}

// Two steps: step 1 runs a kernel [100,400) on stream 7; step 2 starts a side-stream copy early,
// [300,350) on stream 9, then its own kernel [450,600) on stream 7. Step 1's window ends at step 2's
// first event on stream 7 (450), not at its early copy (300): step 2 does not carry step 1's tail.
TEST(DiagnoseDefects, AStepsWindowEndsAtTheNextStepsFirstEventOnItsStream) {
  const std::string t = R"JSON({"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":2}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":5,"args":{"correlation":3}},
 {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":100,"dur":300,"args":{"stream":7,"correlation":1,"device":0}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":9,"ts":300,"dur":50,"args":{"stream":9,"correlation":2,"device":0,"bytes":100}},
 {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":450,"dur":150,"args":{"stream":7,"correlation":3,"device":0}}]})JSON";
  const auto d = diagnose_trace(read_trace_text(t), "two-steps");
  ASSERT_EQ(d["steps"].size(), 2u);
  EXPECT_DOUBLE_EQ(num(d["steps"][0], {"gpu_window", "begin_us"}), 100);
  EXPECT_DOUBLE_EQ(num(d["steps"][0], {"gpu_window", "end_us"}), 450);
  EXPECT_DOUBLE_EQ(num(d["steps"][0], {"gpu", "window_us"}), 350);
  EXPECT_DOUBLE_EQ(num(d["steps"][0], {"gpu", "idle_us"}), 50);  // [400,450)
  EXPECT_DOUBLE_EQ(num(d["steps"][1], {"gpu_window", "begin_us"}), 450);
  EXPECT_DOUBLE_EQ(num(d["steps"][1], {"gpu", "window_us"}), 150);
  EXPECT_DOUBLE_EQ(num(d["steps"][1], {"gpu", "idle_us"}), 0);
  // The copy still belongs to step 2 (it launched it).
  EXPECT_DOUBLE_EQ(num(d["steps"][1]["gpu"]["copies"][0], {"count"}), 1);
}

// The profiler's legacy export (PyTorch builds without Kineto): a bare event array, CPU operators
// without a category, the collectives of a host library on its own thread.
TEST(DiagnoseReader, TheLegacyArrayExportIsRead) {
  const Trace t = read_trace_text(R"([
 {"name":"ProfilerStep#1","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions","args":{}},
 {"name":"aten::mm","ph":"X","ts":10,"dur":20,"tid":1,"pid":"CPU functions","args":{}},
 {"name":"gloo:all_reduce","ph":"X","ts":40,"dur":50,"tid":2,"pid":"CPU functions","args":{}}])");
  ASSERT_EQ(t.steps.size(), 1u);
  ASSERT_EQ(t.cpu_ops.size(), 2u);
  EXPECT_EQ(t.name_of(t.cpu_ops[0].name), "aten::mm");
  ASSERT_EQ(t.host.size(), 1u);
  EXPECT_EQ(t.host[0].kind, HostKind::collective);
  EXPECT_EQ(t.host[0].tid, 2);
  EXPECT_THROW(read_trace_text(R"([{"name":"x","ph":"X","ts":0,"dur":1}, 3])"), TraceError);
}
