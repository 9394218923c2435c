// The framework family's cost terms from records: PyTorch's own GEMM rates by shape and orientation,
// its optimizer step, the operator counts one point per record (so that validation can leave a
// step's own out), the DataLoader's period per sample by workers, and a mode's kept step time.
#include <gtest/gtest.h>

#include <string>

#include "bench/framework/findings.h"
#include "tests/cpu/framework_record.h"

namespace {

namespace fw = gtb::framework;
using gtb::Backend;
using gtb::json;
using gtb::Record;

Record kernel_record(const std::string& workload, json params, json options, double seconds) {
  return gtb::test::framework_record(workload, Backend::cpu, std::move(params), std::move(options), seconds);
}

const gtb::cost::Term* term_named(const fw::Findings& f, const std::string& name, Backend be, const json& where) {
  for (const auto& t : f.terms) {
    if (t.name != name || t.backend != be) continue;
    bool same = true;
    for (const auto& [k, v] : where.items()) same = same && t.where.contains(k) && t.where.at(k) == v;
    if (same) return &t;
  }
  return nullptr;
}

TEST(FrameworkTerms, StepGemmShapesPerOrientation) {
  EXPECT_EQ(fw::step_gemm("nn", 32, 256, 16), (std::array<std::int64_t, 3>{32, 16, 256}));
  EXPECT_EQ(fw::step_gemm("tn", 32, 256, 16), (std::array<std::int64_t, 3>{256, 16, 32}));
  EXPECT_EQ(fw::step_gemm("nt", 32, 256, 16), (std::array<std::int64_t, 3>{32, 256, 16}));
  EXPECT_THROW(fw::step_gemm("tt", 32, 256, 16), std::invalid_argument);
}

TEST(FrameworkTerms, MatmulRatesByShapeAndOrientation) {
  std::vector<Record> recs;
  recs.push_back(kernel_record("matmul", {{"in", 256}, {"out", 16}, {"rows", 32}}, {{"orientation", "tn"}}, 1e-4));
  recs.push_back(kernel_record("matmul", {{"in", 256}, {"out", 16}, {"rows", 32}}, {{"orientation", "nn"}}, 2e-4));
  const fw::Findings f = fw::compute_findings(recs);
  const auto* tn = term_named(f, "framework_matmul", Backend::cpu, {{"orientation", "tn"}, {"framework", "pytorch"}});
  ASSERT_TRUE(tn && tn->usable());
  ASSERT_EQ(tn->points.size(), 1u);
  EXPECT_EQ(tn->points[0].at, (json{{"m", 256}, {"n", 16}, {"k", 32}}));
  EXPECT_NEAR(tn->points[0].y, 2.0 * 256 * 16 * 32 / 1e-4, 1e-3);
  const auto* nt = term_named(f, "framework_matmul", Backend::cpu, {{"orientation", "nt"}});
  ASSERT_TRUE(nt);
  EXPECT_FALSE(nt->usable()) << "no nt record: the term says why";
}

TEST(FrameworkTerms, OperatorCountsKeepOnePointPerRecord) {
  std::vector<Record> recs;
  for (int batch : {1, 32}) {
    Record r = kernel_record("mlp_step", {{"width", 256}, {"depth", 4}, {"batch", batch}}, {{"mode", "eager"}}, 1e-3);
    r.counters["operators_per_step"] = {59, "1"};
    recs.push_back(r);
  }
  for (int d : {128, 256}) {
    Record r = kernel_record("transformer_step", {{"layers", 2}, {"d_model", d}, {"heads", 4}, {"seq_len", 128}, {"batch", 4}},
                             {{"attention", "materialised"}, {"precision", "fp32"}}, 0.05);
    r.counters["operators_per_step"] = {400, "1"};
    recs.push_back(r);
  }
  const fw::Findings f = fw::compute_findings(recs);
  const auto* mlp = term_named(f, "framework_ops", Backend::cpu, {{"model", "mlp"}});
  ASSERT_TRUE(mlp && mlp->usable());
  EXPECT_EQ(mlp->points.size(), 2u) << "each step's own point, so that validation can leave it out";
  const auto* tr = term_named(f, "framework_ops", Backend::cpu, {{"model", "transformer"}, {"attention", "materialised"}});
  ASSERT_TRUE(tr && tr->usable());
  EXPECT_EQ(tr->points.size(), 2u);
  int transformer_steps = 0;
  for (const auto& s : f.measured_steps)
    if (s.config.value("model", "") == "transformer") {
      ++transformer_steps;
      EXPECT_EQ(s.leave_out, "record");
      EXPECT_EQ(s.config.value("optimizer", ""), "adamw");
      EXPECT_EQ(s.config.value("framework", ""), "pytorch-eager");
    }
  EXPECT_EQ(transformer_steps, 2);
}

TEST(FrameworkTerms, OptimizerSecondsAndOperators) {
  std::vector<Record> recs;
  Record r = kernel_record("optimizer", {{"params", 65536}, {"tensors", 8}}, {{"optimizer", "adamw"}}, 2e-4);
  r.counters["operators_per_rep"] = {40, "1"};
  recs.push_back(r);
  const fw::Findings f = fw::compute_findings(recs);
  const auto* s = term_named(f, "framework_optimizer", Backend::cpu, {{"optimizer", "adamw"}});
  const auto* n = term_named(f, "framework_optimizer_ops", Backend::cpu, {{"optimizer", "adamw"}});
  ASSERT_TRUE(s && s->usable() && n && n->usable());
  EXPECT_NEAR(s->points.at(0).y, 2e-4, 1e-15);
  EXPECT_NEAR(n->points.at(0).y, 40, 1e-12);
  EXPECT_EQ(n->axes, std::vector<std::string>{"tensors"});
  EXPECT_FALSE(term_named(f, "framework_optimizer", Backend::cpu, {{"optimizer", "sgd"}})->usable());
}

TEST(FrameworkTerms, LoaderPeriodPerSampleByWorkers) {
  std::vector<Record> recs;
  auto loader = [&](int us, int workers, double idle) {
    Record r = kernel_record("dataloader", {{"sample_us", us}, {"num_workers", workers}, {"batch", 16}, {"step_ms", 10}},
                             {{"pin_memory", "off"}, {"persistent_workers", workers ? "on" : "off"}}, 0.01);
    r.counters["idle_fraction"] = {idle, "1"};
    recs.push_back(r);
  };
  loader(1000, 0, 0.6), loader(1000, 2, 0.0), loader(0, 2, 0.0);
  const fw::Findings f = fw::compute_findings(recs);
  const auto* w0 = term_named(f, "framework_loader", Backend::cpu, {{"num_workers", 0}});
  const auto* w2 = term_named(f, "framework_loader", Backend::cpu, {{"num_workers", 2}});
  ASSERT_TRUE(w0 && w0->usable() && w2 && w2->usable());
  // 10 ms / (1 - 0.6) / 16 samples; idle 0: the step's own period, an upper bound.
  EXPECT_NEAR(w0->points.at(0).y, 0.010 / 0.4 / 16, 1e-12);
  EXPECT_NEAR(w2->points.at(0).y, 0.010 / 16, 1e-12);
  EXPECT_EQ(w2->points.size(), 1u) << "sample_us 0 has no place on a log axis";
}

TEST(FrameworkTerms, ModeTimeIsMeasuredOrSaysWhyNot) {
  std::vector<Record> recs;
  const json p = {{"width", 256}, {"depth", 4}, {"batch", 32}};
  recs.push_back(kernel_record("mlp_step", p, {{"mode", "eager"}}, 4e-3));
  Record g = kernel_record("mlp_step", p, {{"mode", "graph"}}, 1e-3);
  recs.push_back(g);
  Record c = kernel_record("mlp_step", p, {{"mode", "compiled"}}, 1e-3);
  c.status = gtb::Status::skipped;
  c.status_detail = "torch 1.13 has no torch.compile (PyTorch 2.0 added it)";
  c.stats.reset();
  recs.push_back(c);
  const fw::Findings f = fw::compute_findings(recs);
  const auto* graph = term_named(f, "framework_mode_time", Backend::cpu, {{"framework", "pytorch-graph"}});
  ASSERT_TRUE(graph && graph->usable());
  EXPECT_NEAR(graph->points.at(0).y, 0.25, 1e-12);
  const auto* compiled = term_named(f, "framework_mode_time", Backend::cpu, {{"framework", "pytorch-compiled"}});
  ASSERT_TRUE(compiled);
  EXPECT_FALSE(compiled->usable());
  EXPECT_NE(compiled->cannot_say.find("no torch.compile"), std::string::npos) << compiled->cannot_say;
}

}  // namespace

namespace {

TEST(FrameworkTerms, TransformerStepBesideGtbsSameConfiguration) {
  const json p = {{"layers", 2}, {"d_model", 128}, {"heads", 4}, {"seq_len", 128}, {"batch", 4}};
  const auto ids = fw::same_work_ids("transformer_step", Backend::cpu, p, {{"attention", "fused"}, {"precision", "fp32"}});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], "transformer/configs/fused/cpu/layers=2,d_model=128,heads=4,seq_len=128,batch=4,precision=fp32");
  EXPECT_EQ(ids[1], "transformer/seq_sweep/fused/cpu/layers=2,d_model=128,heads=4,seq_len=128,batch=4,precision=fp32,memory_cap_mb=512");
  const auto gpu = fw::same_work_ids("transformer_step", Backend::cuda, p, {{"attention", "materialised"}, {"precision", "bf16"}});
  EXPECT_EQ(gpu.at(0), "transformer/configs/materialised/cuda/layers=2,d_model=128,heads=4,seq_len=128,batch=4,precision=bf16,mode=eager");
  Record r = kernel_record("transformer_step", p, {{"attention", "fused"}, {"precision", "fp32"}}, 0.06);
  r.counters["time_vs_same_work"] = {3.0, "x"};
  r.info["same_work_record"] = ids[0];
  const fw::Findings f = fw::compute_findings({r});
  ASSERT_EQ(f.transformer_steps.size(), 1u);
  EXPECT_NEAR(*f.transformer_steps[0].gtb_ms, 20.0, 1e-9);
  EXPECT_EQ(f.transformer_steps[0].gtb_record, ids[0]);
}

}  // namespace
