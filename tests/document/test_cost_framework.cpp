// The cost model for a step PyTorch runs (StepConfig::framework pytorch-*): PyTorch's own GEMM,
// elementwise and optimizer terms in place of gtb's, a planted change in each moving the prediction,
// the operators priced whole leaving the dispatch count, validation never using the step's own
// record, the DataLoader priced from PyTorch's records, and the compile / CUDA graph fixes priced
// only from measured mode times. Synthetic round numbers, not measurements.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/model/cost_model.h"
#include "harness/document/results.h"

using namespace gtb;
using namespace gtb::cost;

namespace {

std::vector<Term> fwc_native() { return terms_from_document(load_document(std::string(GTB_FIXTURE_DIR) + "/cost_synthetic.json")); }

Term fwc_table(const std::string& name, Backend be, json where, std::vector<std::string> axes, const std::string& y,
               std::vector<Point> points) {
  Term t;
  t.family = "fw", t.name = name, t.backend = be, t.form = "table", t.y = y;
  t.where = std::move(where), t.axes = std::move(axes), t.points = std::move(points);
  for (const auto& p : t.points)
    if (std::find(t.records.begin(), t.records.end(), p.record) == t.records.end()) t.records.push_back(p.record);
  return t;
}

// PyTorch's terms on the CPU: 3 us per plain operator at n = 256 and 11 us at n = 2^20; 6 us per
// autograd-recorded operator; 59 operators per MLP step of depth 4 (two records); torch.mm at
// 1e10 FLOP/s in every orientation around the step's shapes; SGD 100 us per step with 24 operators.
std::vector<Term> fwc_pytorch(bool kernels = true) {
  std::vector<Term> t = fwc_native();
  const Backend be = Backend::cpu;
  const json eager = {{"framework", "pytorch-eager"}};
  t.push_back(fwc_table("framework_op", be, eager, {"n"}, "seconds",
                        {{{{"n", 256}}, 3e-6, "fw/op/256"}, {{{"n", 1 << 20}}, 11e-6, "fw/op/1M"}}));
  t.push_back(fwc_table("framework_step_op", be, eager, {"n"}, "seconds", {{{{"n", 256}}, 6e-6, "fw/autograd/256"}}));
  t.push_back(fwc_table("framework_ops", be, {{"framework", "pytorch-eager"}, {"model", "mlp"}, {"optimizer", "sgd"}}, {"depth"},
                        "count", {{{{"depth", 4}, {"batch", 1}}, 59, "fw/step/b1"}, {{{"depth", 4}, {"batch", 32}}, 59, "fw/step/b32"}}));
  if (!kernels) return t;
  for (const char* o : {"nn", "tn", "nt"}) {
    std::vector<Point> pts;
    for (double m : {16.0, 4096.0})
      for (double n : {16.0, 1024.0})
        for (double k : {16.0, 4096.0})
          pts.push_back({{{"m", m}, {"n", n}, {"k", k}}, 1e10, std::string("fw/mm/") + o});
    t.push_back(fwc_table("framework_matmul", be, {{"framework", "pytorch"}, {"precision", "fp32"}, {"orientation", o}},
                          {"m", "n", "k"}, "flop_per_s", pts));
  }
  const json sgd = {{"framework", "pytorch"}, {"optimizer", "sgd"}};
  t.push_back(fwc_table("framework_optimizer", be, sgd, {"params", "tensors"}, "seconds",
                        {{{{"params", 1e4}, {"tensors", 8}}, 100e-6, "fw/opt/a"}, {{{"params", 1e6}, {"tensors", 8}}, 100e-6, "fw/opt/b"}}));
  t.push_back(fwc_table("framework_optimizer_ops", be, sgd, {"tensors"}, "count", {{{{"tensors", 8}}, 24, "fw/opt/a"}}));
  return t;
}

StepConfig fwc_step(int batch = 32, const std::string& stack = "pytorch-eager") {
  return config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", batch}, {"framework", stack}});
}

const Part& fwc_part(const Prediction& p, const std::string& name) {
  for (const auto& x : p.parts)
    if (x.name == name) return x;
  throw std::runtime_error("no part " + name);
}

void fwc_scale(std::vector<Term>& terms, const std::string& name, double factor) {
  for (auto& t : terms)
    if (t.name == name)
      for (auto& p : t.points) p.y *= factor;
}

bool fwc_has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(CostModelPyTorch, ItsOwnKernelsPriceTheCompute) {
  const auto terms = fwc_pytorch();
  const Prediction p = predict(terms, fwc_step(), Backend::cpu);
  ASSERT_TRUE(p.total.seconds) << p.total.cannot_say;
  // 11 GEMMs of a depth-4 MLP at 1e10 FLOP/s: their FLOPs / 1e10.
  const StepConfig c = fwc_step();
  EXPECT_NEAR(*fwc_part(p, "matmul").estimate.seconds, flops_per_step(c) / 1e10, 1e-12);
  EXPECT_TRUE(fwc_has(fwc_part(p, "matmul").estimate.records, "fw/mm/nn"));
  EXPECT_NEAR(*fwc_part(p, "optimizer").estimate.seconds, 100e-6, 1e-15);
  // Dispatch: 59 operators less the 11 GEMM calls and the optimizer's 24, at the autograd operator's 6 us;
  // and the 11 GEMMs, priced whole at a plain call's seconds, each pay autograd's 6 - 3 us more.
  EXPECT_NEAR(*fwc_part(p, "dispatch").estimate.seconds, (59 - 11 - 24) * 6e-6 + 11 * 3e-6, 1e-12);
  // Planted: a plain operator as costly as an autograd-recorded one leaves the GEMMs nothing more to pay.
  auto plain_slow = terms;
  for (auto& t : plain_slow)
    if (t.name == "framework_op") t.points[0].y = 6e-6;
  EXPECT_NEAR(*fwc_part(predict(plain_slow, c, Backend::cpu), "dispatch").estimate.seconds, (59 - 11 - 24) * 6e-6, 1e-12);
  // Planted: torch.mm half as fast doubles the matmul part; gtb's own GEMM tables move nothing.
  auto slow = terms;
  fwc_scale(slow, "framework_matmul", 0.5);
  EXPECT_NEAR(*fwc_part(predict(slow, c, Backend::cpu), "matmul").estimate.seconds, 2 * flops_per_step(c) / 1e10, 1e-12);
  auto native_slow = terms;
  fwc_scale(native_slow, "matmul", 0.5);
  EXPECT_NEAR(*predict(native_slow, c, Backend::cpu).total.seconds, *p.total.seconds, 1e-15);
  // Nor does the share of their back-to-back rate gtb's own GEMMs keep inside a step (measured on
  // gtb's library calls); under native, the same planted share does move the step.
  auto in_step = terms;
  in_step.push_back(fwc_table("matmul_in_step", Backend::cpu, {{"precision", "fp32"}}, {"bytes"}, "fraction",
                              {{{{"bytes", 1e3}}, 0.5, "gemm/seq/a"}, {{{"bytes", 1e10}}, 0.5, "gemm/seq/b"}}));
  EXPECT_NEAR(*predict(in_step, c, Backend::cpu).total.seconds, *p.total.seconds, 1e-15);
  StepConfig native = c;
  native.framework = Framework::native;
  EXPECT_GT(*fwc_part(predict(in_step, native, Backend::cpu), "matmul").estimate.seconds,
            1.5 * *fwc_part(predict(terms, native, Backend::cpu), "matmul").estimate.seconds);
  // Nor the share they keep with their operands in memory, here for any working set above 1 byte.
  auto from_memory = terms;
  from_memory.push_back(fwc_table("matmul_from_memory", Backend::cpu, {{"precision", "fp32"}}, {"flop"}, "fraction",
                                  {{{{"flop", 1e3}}, 0.5, "gemm/cold/a"}, {{{"flop", 1e12}}, 0.5, "gemm/cold/b"}}));
  from_memory.back().x = "working_set_bytes";
  from_memory.back().x_min = 1;
  EXPECT_NEAR(*predict(from_memory, c, Backend::cpu).total.seconds, *p.total.seconds, 1e-15);
  EXPECT_NEAR(*fwc_part(predict(from_memory, native, Backend::cpu), "matmul").estimate.seconds,
              2 * *fwc_part(predict(terms, native, Backend::cpu), "matmul").estimate.seconds, 1e-12);
  // Planted: a slower optimizer step moves the optimizer part by exactly that.
  auto opt = terms;
  fwc_scale(opt, "framework_optimizer", 3.0);
  EXPECT_NEAR(*predict(opt, c, Backend::cpu).total.seconds - *p.total.seconds, 200e-6, 1e-12);
}

TEST(CostModelPyTorch, ElementwisePassesAtTheOperatorCostBySizeLessItsDispatch) {
  const auto terms = fwc_pytorch();
  // Batch 4096 x width 256: the ReLU's forward pass moves 8 MiB, n = 2^20: 11 - 3 us.
  const StepConfig c = fwc_step(4096);
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part& ew = fwc_part(p, "elementwise");
  ASSERT_TRUE(ew.estimate.seconds) << ew.estimate.cannot_say;
  EXPECT_GT(*ew.estimate.seconds, 8e-6 * 3) << "three forward ReLU passes of 8 MiB at least";
  EXPECT_TRUE(fwc_has(ew.estimate.records, "fw/op/1M"));
  auto big = terms;
  for (auto& t : big)
    if (t.name == "framework_op")
      for (auto& pt : t.points)
        if (pt.at["n"] == 1 << 20) pt.y = 19e-6;  // twice the work above the 3 us floor
  const Prediction p2 = predict(big, c, Backend::cpu);  // kept: the part below refers into it
  const Part& ew2 = fwc_part(p2, "elementwise");
  EXPECT_GT(*ew2.estimate.seconds, 1.5 * *ew.estimate.seconds);
}

TEST(CostModelPyTorch, WrittenOutAttentionPaysItsOwnPasses) {
  const auto terms = fwc_pytorch();
  json j = {{"model", "transformer"}, {"layers", 2}, {"d_model", 128}, {"heads", 4}, {"seq_len", 128}, {"batch", 4},
            {"optimizer", "adamw"}, {"framework", "pytorch-eager"}, {"attention", "materialised"}};
  const StepConfig written = config_from_json(j);
  const Prediction p = predict(terms, written, Backend::cpu);
  const Part& ew = fwc_part(p, "elementwise");
  ASSERT_TRUE(ew.estimate.seconds) << ew.estimate.cannot_say;
  // gtb's own step: 12 passes a layer (two norms and two residuals forward and backward, the GELU, the
  // softmax); PyTorch's written-out attention 13 more a layer (4 over the scores, 8 head copies, a cat).
  EXPECT_NE(ew.what.find("50 elementwise passes"), std::string::npos) << ew.what;
  EXPECT_NE(ew.what.find("26 of them the written-out attention's"), std::string::npos) << ew.what;
  // Under gtb's native stack the same step has only its own 24.
  j["framework"] = "native";
  const Prediction n = predict(terms, config_from_json(j), Backend::cpu);
  EXPECT_NE(fwc_part(n, "elementwise").what.find("24 elementwise passes"), std::string::npos) << fwc_part(n, "elementwise").what;
  // Priced: without its 13 passes a block the written-out step would move less than the fused one (whose
  // softmax passes cover three quarters of the scores, three times); with them it moves more.
  j["framework"] = "pytorch-eager";
  j["attention"] = "fused";
  const Prediction f = predict(terms, config_from_json(j), Backend::cpu);
  ASSERT_TRUE(fwc_part(f, "elementwise").estimate.seconds);
  EXPECT_GT(*ew.estimate.seconds, 1.2 * *fwc_part(f, "elementwise").estimate.seconds);
}

TEST(CostModelPyTorch, AttentionProductsAtTorchBmmRatesWhereMeasured) {
  auto terms = fwc_pytorch();
  const StepConfig c = config_from_json({{"model", "transformer"}, {"layers", 2}, {"d_model", 128}, {"heads", 4},
                                         {"seq_len", 128}, {"batch", 4}, {"optimizer", "adamw"},
                                         {"framework", "pytorch-eager"}, {"attention", "materialised"}});
  // torch.bmm at 1e10 FLOP/s (of the whole batch) in every orientation around attention's shapes.
  auto with_bmm = [&](double rate) {
    auto t = terms;
    for (const char* o : {"nn", "tn", "nt"}) {
      std::vector<Point> pts;
      for (double m : {16.0, 1024.0})
        for (double n : {16.0, 1024.0})
          for (double k : {16.0, 1024.0}) pts.push_back({{{"m", m}, {"n", n}, {"k", k}}, rate, std::string("fw/bmm/") + o});
      t.push_back(fwc_table("framework_matmul_batched", Backend::cpu,
                            {{"framework", "pytorch"}, {"precision", "fp32"}, {"orientation", o}}, {"m", "n", "k"},
                            "flop_per_s", pts));
    }
    return t;
  };
  const Prediction p = predict(with_bmm(1e10), c, Backend::cpu);
  const Part& mm = fwc_part(p, "matmul");
  ASSERT_TRUE(mm.estimate.seconds) << mm.estimate.cannot_say;
  EXPECT_TRUE(fwc_has(mm.estimate.records, "fw/bmm/nt"));
  EXPECT_NE(mm.what.find("torch.bmm"), std::string::npos) << mm.what;
  // Every GEMM at 1e10 FLOP/s (torch.mm's and torch.bmm's): the step's FLOPs / 1e10.
  EXPECT_NEAR(*mm.estimate.seconds, flops_per_step(c) / 1e10, 1e-9);
  // Planted: torch.bmm half as fast adds exactly the attention products' time again: per block six
  // products of 2 x 128 x 128 x 32 FLOPs for each of 4 samples x 4 heads.
  const double attention_flops = 2 * 6 * 2.0 * 128 * 128 * 32 * 16;
  EXPECT_NEAR(*fwc_part(predict(with_bmm(0.5e10), c, Backend::cpu), "matmul").estimate.seconds,
              *mm.estimate.seconds + attention_flops / 1e10, 1e-9);
  // An MLP, which has no per-head products, says torch.mm's alone whatever torch.bmm records exist.
  const Prediction mlp_p = predict(with_bmm(1e10), fwc_step(), Backend::cpu);  // kept: the part refers into it
  const Part& mlp = fwc_part(mlp_p, "matmul");
  EXPECT_EQ(mlp.what.find("torch.bmm"), std::string::npos) << mlp.what;
  // Without torch.bmm's records gtb's own batched rates stand in (the fixture's), and the part says
  // torch.mm's alone.
  const Prediction native_p = predict(terms, c, Backend::cpu);
  const Part& native = fwc_part(native_p, "matmul");
  EXPECT_EQ(native.what.find("torch.bmm"), std::string::npos) << native.what;
}

TEST(CostModelPyTorch, WithoutItsKernelsGtbsTermsStandInAndSaySo) {
  const auto terms = fwc_pytorch(false);
  const StepConfig c = fwc_step();
  const Prediction p = predict(terms, c, Backend::cpu);
  StepConfig n = c;
  n.framework = Framework::native;
  const Prediction native = predict(terms, n, Backend::cpu);
  ASSERT_TRUE(p.total.seconds && native.total.seconds) << p.total.cannot_say;
  EXPECT_NEAR(*fwc_part(p, "matmul").estimate.seconds, *fwc_part(native, "matmul").estimate.seconds, 1e-15);
  EXPECT_NE(fwc_part(p, "matmul").estimate.note.find("gtb's native GEMM rates"), std::string::npos);
  EXPECT_NE(fwc_part(p, "optimizer").estimate.note.find("gtb's rates"), std::string::npos);
  // Nothing priced whole: all 59 operators are dispatch.
  EXPECT_NEAR(*fwc_part(p, "dispatch").estimate.seconds, 59 * 6e-6, 1e-12);
}

TEST(CostModelPyTorch, ValidationNeverUsesTheStepsOwnRecord) {
  auto terms = fwc_pytorch();
  // The step's own record also published an absurd operator count: were it used, the prediction would move.
  for (auto& t : terms)
    if (t.name == "framework_ops") {
      t.points.push_back({{{"depth", 4}, {"batch", 512}}, 5900, "fw/step/b512"});
      t.records.push_back("fw/step/b512");
    }
  Step s;
  s.family = "fw", s.record = "fw/step/b512", s.backend = Backend::cpu, s.seconds = 1e-3, s.leave_out = "record";
  s.config = to_json(fwc_step(512));
  const Validation v = validate(terms, {s});
  ASSERT_EQ(v.rows.size(), 1u);
  ASSERT_TRUE(v.rows[0].predicted.seconds) << v.rows[0].predicted.cannot_say;
  EXPECT_FALSE(fwc_has(v.rows[0].predicted.records, "fw/step/b512"));
  auto without = terms;
  for (auto& t : without)
    if (t.name == "framework_ops") t.points.pop_back();
  EXPECT_NEAR(*v.rows[0].predicted.seconds, *predict(without, fwc_step(512), Backend::cpu).total.seconds, 1e-15);
  // A step whose only operator count is its own cannot be said, and says why.
  auto alone = fwc_pytorch();
  for (auto& t : alone)
    if (t.name == "framework_ops") t.points.resize(1), t.records.resize(1);
  s.record = "fw/step/b1";
  const Validation a = validate(alone, {s});
  EXPECT_FALSE(a.rows[0].predicted.seconds);
  EXPECT_NE(a.rows[0].predicted.cannot_say.find("own record"), std::string::npos) << a.rows[0].predicted.cannot_say;
}

// PyTorch's DataLoader at 1000 us per sample: 25 ms per 16 samples with no worker, 12 with one, 0.625 ms
// (the consumer's own period) with two.
std::vector<Term> fwc_with_loader() {
  auto t = fwc_pytorch();
  const double per[] = {0.025 / 16, 0.012 / 16, 0.000625 / 16};
  for (int w = 0; w < 3; ++w)
    t.push_back(fwc_table("framework_loader", Backend::cpu, {{"framework", "pytorch"}, {"num_workers", w}}, {"sample_us"},
                          "seconds", {{{{"sample_us", 1000}}, per[w], "fw/loader/" + std::to_string(w)}}));
  return t;
}

TEST(CostModelPyTorch, MoreDataLoaderWorkersArePricedFromPyTorchsLoader) {
  const auto terms = fwc_with_loader();
  StepConfig c = fwc_step();
  c.workers = 1, c.sample_us = 1000;
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part& l = fwc_part(p, "loader");
  ASSERT_TRUE(l.estimate.seconds) << l.estimate.cannot_say;
  EXPECT_TRUE(fwc_has(l.estimate.records, "fw/loader/1"));
  const double rest = *p.total.seconds - *l.estimate.seconds;
  EXPECT_NEAR(*l.estimate.seconds, std::max(0.0, 32 * 0.012 / 16 - rest), 1e-12);
  // The fix: the measured worker counts only (2), priced from PyTorch's records.
  const auto fixes = rank_fixes(terms, c, Backend::cpu, p);
  const auto it = std::find_if(fixes.begin(), fixes.end(), [](const Fix& f) { return f.id == "more_workers"; });
  ASSERT_NE(it, fixes.end());
  ASSERT_TRUE(it->saving_s) << it->cannot_say;
  EXPECT_NE(it->change.find("1 -> 2"), std::string::npos) << it->change;
  EXPECT_TRUE(fwc_has(it->records, "fw/loader/2"));
  // gtb's own loader term does not move it.
  auto planted = terms;
  for (auto& t : planted)
    if (t.name == "loader") fwc_scale(planted, "loader", 10.0);
  EXPECT_NEAR(*predict(planted, c, Backend::cpu).total.seconds, *p.total.seconds, 1e-15);
  // A worker count PyTorch's loader was not measured at: gtb's loader term, with a note.
  c.workers = 4;
  const Prediction p4 = predict(terms, c, Backend::cpu);  // kept: the part below refers into it
  const Part& l4 = fwc_part(p4, "loader");
  EXPECT_NE(l4.estimate.note.find("no PyTorch DataLoader record at num_workers 4"), std::string::npos) << l4.estimate.note;
}

TEST(CostModelPyTorch, CompileAndGraphFixesOnlyFromMeasuredModeTimes) {
  auto terms = fwc_pytorch();
  Term skipped;
  skipped.family = "fw", skipped.name = "framework_mode_time", skipped.backend = Backend::cpu, skipped.form = "table";
  skipped.where = {{"framework", "pytorch-compiled"}};
  skipped.cannot_say = "no usable PyTorch compiled step record on cpu (skipped: torch 1.13 has no torch.compile)";
  terms.push_back(skipped);
  const StepConfig c = fwc_step();
  const Prediction p = predict(terms, c, Backend::cpu);
  auto fixes = rank_fixes(terms, c, Backend::cpu, p);
  auto compile = std::find_if(fixes.begin(), fixes.end(), [](const Fix& f) { return f.id == "compile"; });
  ASSERT_NE(compile, fixes.end());
  EXPECT_FALSE(compile->saving_s) << "never a guessed number";
  EXPECT_NE(compile->cannot_say.find("not measured here"), std::string::npos) << compile->cannot_say;
  EXPECT_NE(compile->cannot_say.find("no torch.compile"), std::string::npos) << compile->cannot_say;
  // Measured: the compiled step kept 40% of eager's time at this configuration: 60% saved.
  terms.push_back(fwc_table("framework_mode_time", Backend::cpu, {{"framework", "pytorch-compiled"}}, {"width", "depth", "batch"},
                            "fraction", {{{{"width", 256}, {"depth", 4}, {"batch", 32}}, 0.4, "fw/step/compiled"}}));
  std::swap(terms[terms.size() - 1], terms[terms.size() - 2]);  // the usable one first
  fixes = rank_fixes(terms, c, Backend::cpu, p);
  compile = std::find_if(fixes.begin(), fixes.end(), [](const Fix& f) { return f.id == "compile"; });
  ASSERT_TRUE(compile->saving_s) << compile->cannot_say;
  EXPECT_NEAR(*compile->saving_s, 0.6 * *p.total.seconds, 1e-12);
  EXPECT_TRUE(fwc_has(compile->records, "fw/step/compiled"));
  // The transformer has no measured mode time: it says so rather than borrowing the MLP's.
  StepConfig t = config_from_json({{"model", "transformer"}, {"layers", 2}, {"d_model", 128}, {"heads", 4}, {"seq_len", 128},
                                   {"batch", 4}, {"optimizer", "adamw"}, {"framework", "pytorch-eager"}});
  const auto tf = rank_fixes(terms, t, Backend::cpu, predict(terms, t, Backend::cpu));
  const auto tc = std::find_if(tf.begin(), tf.end(), [](const Fix& f) { return f.id == "compile"; });
  ASSERT_NE(tc, tf.end());
  EXPECT_FALSE(tc->saving_s);
}

TEST(CostModelPyTorch, BadTermsAndConfigurationsAreRefusedOrIgnored) {
  auto terms = fwc_pytorch();
  // A loader term without its worker count, a matmul table of another library: neither is used.
  terms.push_back(fwc_table("framework_loader", Backend::cpu, {{"framework", "pytorch"}}, {"sample_us"}, "seconds",
                            {{{{"sample_us", 1000}}, 1.0, "fw/loader/bad"}}));
  terms.push_back(fwc_table("framework_matmul", Backend::cpu, {{"framework", "jax"}, {"precision", "fp32"}, {"orientation", "nn"}},
                            {"m", "n", "k"}, "flop_per_s", {{{{"m", 32}, {"n", 256}, {"k", 256}}, 1.0, "fw/mm/jax"}}));
  StepConfig c = fwc_step();
  c.workers = 2, c.sample_us = 1000;
  const Prediction p = predict(terms, c, Backend::cpu);
  for (const auto& part : p.parts) {
    EXPECT_FALSE(fwc_has(part.estimate.records, "fw/loader/bad")) << part.name;
    EXPECT_FALSE(fwc_has(part.estimate.records, "fw/mm/jax")) << part.name;
  }
  EXPECT_THROW(config_from_json({{"model", "mlp"}, {"width", 8}, {"depth", 2}, {"batch", 1}, {"framework", "pytorch"}}), ConfigError);
  json bad = to_json(terms.back());
  bad["points"][0].erase("at");
  EXPECT_THROW(term_from_json(bad, "fw"), std::runtime_error);
}

}  // namespace
