// CPU tests of the transformer family: the shared math, the float64 reference against finite
// differences, the CPU step (both attention variants, FP32 and BF16) against the reference, the
// check failing on a planted wrong gradient, bad input, the findings.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "bench/transformer/findings.h"
#include "harness/document/results.h"
#include "kernels/common/errors.h"
#include "kernels/transformer/block.h"
#include "kernels/transformer/cpu/blocks.h"
#include "kernels/transformer/reference.h"
#include "tests/common/small_configs.h"

namespace xf = gtb::xfmr;

namespace {

xf::Config tiny(int layers = 2, int d = 16, int heads = 2, int seq = 9, int batch = 2) {
  return gtb::test::xfmr_config(layers, d, heads, seq, batch);
}

struct Checked {
  xf::CheckResult res;
  xf::RefStep ref;
};

// One checked step of the CPU model from its initial state, against the float64 reference.
Checked checked_step(const xf::Config& c, xf::Attention a, gtb::Precision p) {
  xf::CpuBlocks m(c, a, p);
  const xf::Data d = xf::make_data(c, 5);
  const std::vector<float> p0(m.params(), m.params() + m.layout().total);
  const std::vector<float> z(m.layout().total, 0.0f);
  m.poison();
  const double loss = m.step(d.x.data(), d.target.data());
  Checked out;
  out.ref = xf::reference_step(c, std::vector<double>(p0.begin(), p0.end()), {}, {}, 0, d.x.data(), d.target.data());
  const xf::StepOutputs got{loss, m.grads(), m.params(), m.adam_m(), m.adam_v()};
  out.res = xf::check_step(c, out.ref, p0, z, z, 0, got,
                           p == gtb::Precision::bf16 ? xf::bf16_tolerance(c) : xf::fp32_tolerance());
  return out;
}

}  // namespace

TEST(TransformerMath, LayerNormBackwardMatchesFiniteDifference) {
  // One row of 5, loss = sum(w * LN(x)): the element formula against central differences.
  const int d = 5;
  const double x[d] = {0.3, -1.2, 2.0, 0.7, -0.4}, wt[d] = {0.5, -0.3, 0.8, 0.1, -0.9};
  auto loss = [&](const double* v) {
    double mu = 0, var = 0;
    for (int j = 0; j < d; ++j) mu += v[j] / d;
    for (int j = 0; j < d; ++j) var += (v[j] - mu) * (v[j] - mu) / d;
    const double rs = xf::ln_rstd(var, 1e-5);
    double s = 0;
    for (int j = 0; j < d; ++j) s += wt[j] * xf::ln_forward(v[j], mu, rs, 1.0, 0.0);
    return s;
  };
  double mu = 0, var = 0;
  for (double v : x) mu += v / d;
  for (double v : x) var += (v - mu) * (v - mu) / d;
  const double rs = xf::ln_rstd(var, 1e-5);
  double s1 = 0, s2 = 0;
  for (int j = 0; j < d; ++j) s1 += wt[j] / d, s2 += wt[j] * (x[j] - mu) * rs / d;
  for (int j = 0; j < d; ++j) {
    double xp[d], xm[d];
    for (int k = 0; k < d; ++k) xp[k] = xm[k] = x[k];
    xp[j] += 1e-6, xm[j] -= 1e-6;
    const double fd = (loss(xp) - loss(xm)) / 2e-6;
    EXPECT_NEAR(xf::ln_backward(wt[j], (x[j] - mu) * rs, rs, s1, s2), fd, 1e-6) << "element " << j;
  }
}

TEST(TransformerMath, Bf16RoundingIsToNearestEven) {
  EXPECT_EQ(xf::round_bf16(1.0f), 1.0f);
  EXPECT_EQ(xf::round_bf16(1.0f + 1.0f / 256), 1.0f);              // halfway: to even (down)
  EXPECT_EQ(xf::round_bf16(1.0f + 3.0f / 256), 1.0f + 1.0f / 64);  // halfway: to even (up)
  EXPECT_EQ(xf::round_bf16(1.0f + 1.0f / 256 + 1.0f / 4096), 1.0f + 1.0f / 128);
  EXPECT_TRUE(std::isnan(xf::round_bf16(std::nanf(""))));
  EXPECT_TRUE(std::isinf(xf::round_bf16(INFINITY)));
}

TEST(TransformerMath, FlopCountsFollowTheStatedRule) {
  xf::Config c = tiny(3, 64, 4, 32, 5);
  EXPECT_DOUBLE_EQ(xf::gemm_flops(c), 6.0 * 5 * 32 * 12.0 * 64 * 64 * 3);
  EXPECT_DOUBLE_EQ(xf::attention_flops(c), 6.0 * 5 * 32 * 32 * 64 * 3);
}

TEST(TransformerReference, GradientsMatchFiniteDifferences) {
  const xf::Config c = tiny(2, 8, 2, 5, 2);
  const xf::Layout lay(c);
  const std::vector<float> p0 = xf::init_params(c, lay);
  const std::vector<double> p(p0.begin(), p0.end());
  const xf::Data d = xf::make_data(c, 3);
  const xf::RefStep r = xf::reference_step(c, p, {}, {}, 0, d.x.data(), d.target.data());
  EXPECT_NEAR(r.loss, xf::reference_loss(c, p, d.x.data(), d.target.data()), 1e-15);
  // A few elements of every tensor of every layer.
  for (int l = 0; l < c.layers; ++l)
    for (int k = 0; k < xf::Layout::kCount; ++k)
      for (std::size_t j : {std::size_t(0), lay.n(xf::P(k)) / 2, lay.n(xf::P(k)) - 1}) {
        const std::size_t i = lay.at(l, xf::P(k)) + j;
        std::vector<double> q = p;
        const double h = 1e-5;
        q[i] = p[i] + h;
        const double up = xf::reference_loss(c, q, d.x.data(), d.target.data());
        q[i] = p[i] - h;
        const double dn = xf::reference_loss(c, q, d.x.data(), d.target.data());
        const double fd = (up - dn) / (2 * h);
        EXPECT_NEAR(r.grads[i], fd, 1e-8 + 1e-5 * std::fabs(fd)) << "layer " << l << " " << xf::kParamNames[k] << " [" << j << "]";
      }
}

TEST(TransformerCpu, Fp32StepMatchesFloat64BothAttentions) {
  for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused}) {
    const Checked r = checked_step(tiny(), a, gtb::Precision::fp32);
    EXPECT_TRUE(r.res.ok) << xf::to_string(a) << ": " << r.res.detail;
    EXPECT_LT(r.res.worst_grad_rel, 1e-4);
  }
}

TEST(TransformerCpu, FusedAttentionSpansSeveralBlocks) {
  // seq_len over the fused block size: several query blocks, keys accumulated across them.
  const xf::Config c = tiny(1, 16, 2, xf::kFusedBlock * 2 + 7, 1);
  for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused}) {
    const Checked r = checked_step(c, a, gtb::Precision::fp32);
    EXPECT_TRUE(r.res.ok) << xf::to_string(a) << ": " << r.res.detail;
  }
}

TEST(TransformerCpu, Bf16StepWithinItsToleranceAndCoarserThanFp32) {
  const xf::Config c = tiny(2, 32, 4, 16, 2);
  for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused}) {
    const Checked r = checked_step(c, a, gtb::Precision::bf16);
    EXPECT_TRUE(r.res.ok) << xf::to_string(a) << ": " << r.res.detail;
    // BF16 really rounds: its error is far above FP32's.
    EXPECT_GT(r.res.worst_grad_rel, 1e-4);
  }
}

TEST(TransformerCpu, CheckFailsOnAPlantedWrongGradient) {
  const xf::Config c = tiny();
  const Checked good = checked_step(c, xf::Attention::fused, gtb::Precision::fp32);
  ASSERT_TRUE(good.res.ok) << good.res.detail;
  // The same step judged against a reference whose W_o gradient of layer 1 is off by 1 %.
  xf::CpuBlocks m(c, xf::Attention::fused, gtb::Precision::fp32);
  const xf::Data d = xf::make_data(c, 5);
  const std::vector<float> p0(m.params(), m.params() + m.layout().total), z(m.layout().total, 0.0f);
  const double loss = m.step(d.x.data(), d.target.data());
  xf::RefStep wrong = good.ref;
  const xf::Layout& lay = m.layout();
  for (std::size_t j = 0; j < lay.n(xf::P::w_o); ++j) wrong.grads[lay.at(1, xf::P::w_o) + j] *= 1.01;
  const xf::StepOutputs got{loss, m.grads(), m.params(), m.adam_m(), m.adam_v()};
  const xf::CheckResult r = xf::check_step(c, wrong, p0, z, z, 0, got, xf::fp32_tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("layer 1 attn.w_o gradient"), std::string::npos) << r.detail;
  // A poisoned (never written) update fails too.
  std::vector<float> after(m.params(), m.params() + lay.total);
  after[lay.at(0, xf::P::b_1)] = std::nanf("");
  const xf::StepOutputs bad{loss, m.grads(), after.data(), m.adam_m(), m.adam_v()};
  const xf::CheckResult r2 = xf::check_step(c, good.ref, p0, z, z, 0, bad, xf::fp32_tolerance());
  EXPECT_FALSE(r2.ok);
  EXPECT_NE(r2.detail.find("1 parameters updated wrongly"), std::string::npos) << r2.detail;
}

TEST(TransformerCpu, BadConfigurationsAreRefusedByName) {
  xf::Config c = tiny();
  c.heads = 3;  // 16 is not a multiple of 3
  try {
    xf::CpuBlocks m(c, xf::Attention::fused, gtb::Precision::fp32);
    FAIL() << "accepted d_model 16 with 3 heads";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
  }
  EXPECT_THROW(xf::CpuBlocks(tiny(), xf::Attention::fused, gtb::Precision::fp16), std::invalid_argument);
  EXPECT_THROW(xf::attention_from_string("flash"), std::invalid_argument);
}

TEST(TransformerCpu, MemoryCapTurnsIntoOutOfMemoryAndFusedNeedsLess) {
  const xf::Config c = tiny(1, 16, 2, 256, 2);
  const xf::CpuBlocks mat(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xf::CpuBlocks fused(c, xf::Attention::fused, gtb::Precision::fp32);
  EXPECT_LT(fused.bytes(), mat.bytes());
  EXPECT_THROW(xf::CpuBlocks(c, xf::Attention::materialised, gtb::Precision::fp32, fused.bytes()), gtb::OutOfMemory);
  EXPECT_NO_THROW(xf::CpuBlocks(c, xf::Attention::fused, gtb::Precision::fp32, fused.bytes()));
}

TEST(TransformerCpu, GemmPlanVerifiesAndNamesEverySite) {
  const xf::CpuBlocks m(tiny(), xf::Attention::materialised, gtb::Precision::fp32);
  const auto& ch = m.gemm_plan().choices();
  ASSERT_EQ(ch.size(), 18u);
  for (const auto& c : ch) {
    ASSERT_FALSE(c.tried.empty());
    EXPECT_TRUE(c.tried[std::size_t(c.chosen)].verified) << c.shape.site;
    EXPECT_GT(c.tried[std::size_t(c.chosen)].seconds, 0.0) << c.shape.site;
  }
  EXPECT_NE(m.gemm_plan().summary().find("attn.scores: "), std::string::npos);
}

TEST(TransformerCpu, Bf16PlanListsOneDnnBf16WithTheReasonWhereItCannotRun) {
  namespace pg = xf::cpu_gemm;
  auto named = [](const std::vector<pg::Candidate>& cs) {
    return std::find_if(cs.begin(), cs.end(), [](const pg::Candidate& c) { return c.name == "onednn_bf16"; });
  };
  const auto fp32 = pg::candidates(false), bf16 = pg::candidates(true);
  EXPECT_EQ(named(fp32), fp32.end());  // an FP32 site never gets it
  const auto it = named(bf16);
  ASSERT_NE(it, bf16.end());
  EXPECT_TRUE(it->native_bf16);
  EXPECT_EQ(it->available, pg::native_bf16_unavailable().empty());
  const xf::CpuBlocks m(tiny(), xf::Attention::fused, gtb::Precision::bf16);
  const std::string summary = m.gemm_plan().summary();
  for (const auto& c : m.gemm_plan().choices()) {
    auto t = std::find_if(c.tried.begin(), c.tried.end(), [](const auto& x) { return x.name == "onednn_bf16"; });
    ASSERT_NE(t, c.tried.end()) << c.shape.site;
    std::string why;
    if (!it->available || !pg::native_bf16_serves(c.shape, why)) {
      EXPECT_FALSE(t->available) << c.shape.site;
      EXPECT_FALSE(t->detail.empty()) << c.shape.site;  // the reason, never a silent absence
    } else {
      EXPECT_TRUE(t->verified) << c.shape.site << ": " << t->detail;
    }
  }
  if (!it->available) {
    EXPECT_NE(it->why_not.find("oneDNN"), std::string::npos) << it->why_not;
    EXPECT_NE(summary.find("onednn_bf16 not available: " + it->why_not), std::string::npos) << summary;
  }
  // Products that run one per thread inside a parallel region (the per-head ones) are never offered it, with why.
  pg::Shape inner{"attn.scores", false, true, 8, 8, 4, 12, 12, 8, true};
  std::string why;
  EXPECT_FALSE(pg::native_bf16_serves(inner, why));
  EXPECT_NE(why.find("parallel region"), std::string::npos);
}

TEST(TransformerCpu, LossFallsOverSteps) {
  const xf::Config c = tiny();
  xf::CpuBlocks m(c, xf::Attention::fused, gtb::Precision::fp32);
  const xf::Data d = xf::make_data(c, 9);
  const float first = m.step(d.x.data(), d.target.data());
  float last = first;
  for (int i = 0; i < 30; ++i) last = m.step(d.x.data(), d.target.data());
  EXPECT_LT(last, first);
  EXPECT_EQ(m.steps_taken(), 31);
  EXPECT_GT(m.pieces().attention, 0.0);
  EXPECT_GT(m.pieces().optimizer, 0.0);
}

// ---- findings from synthetic records (machine facts injected, never this machine's) ----
namespace {
gtb::Record rec(const std::string& workload, const std::string& variant, int seq, int batch, double tokens_per_s,
                double bytes, double share) {
  gtb::Record r;
  r.family = "transformer";
  r.workload = workload;
  r.variant = variant;
  r.backend = gtb::Backend::cpu;
  r.params = {{"layers", 2}, {"d_model", 128}, {"heads", 4}, {"seq_len", seq}, {"batch", batch}};
  r.options = {{"precision", "fp32"}, {"memory_cap_mb", 512}};
  r.id = "transformer/" + workload + "/" + variant + "/cpu/seq_len=" + std::to_string(seq);
  r.status = gtb::Status::ok;
  r.value = tokens_per_s;
  gtb::Stats s;
  s.median = double(seq * batch) / tokens_per_s;
  r.stats = s;
  r.counters["host_bytes"] = {bytes, "bytes"};
  r.counters["share_attention"] = {share, "fraction"};
  return r;
}
}  // namespace

TEST(TransformerFindings, MemoryPairsOutOfMemoryPointSharesAndSteps) {
  std::vector<gtb::Record> rs = {rec("seq_sweep", "materialised", 128, 8, 1000, 4e6, 0.2),
                                 rec("seq_sweep", "fused", 128, 8, 900, 1e6, 0.25),
                                 rec("seq_sweep", "fused", 1024, 1, 700, 2e6, 0.6),
                                 rec("seq_sweep", "materialised", 2048, 1, 1, 1, 0.1),
                                 rec("seq_sweep", "fused", 2048, 1, 500, 3e6, 0.7)};
  rs[3].status = gtb::Status::skipped;
  rs[3].value.reset();
  rs[3].status_detail = "out of memory: host allocation of 1 bytes over the cap";
  rs.push_back(rec("seq_sweep", "materialised", 1024, 1, 650, 5e8, 0.5));
  const xf::Findings f = xf::compute_findings(rs);
  ASSERT_EQ(f.memory.size(), 3u);
  EXPECT_NEAR(*f.memory[0].memory_saved_fraction, 0.75, 1e-12);  // seq 128: 1e6 of 4e6
  EXPECT_NEAR(*f.memory[0].fused_speedup, 0.9, 1e-12);
  ASSERT_EQ(f.materialised_oom.size(), 1u);
  EXPECT_EQ(f.materialised_oom[0].seq_len, 2048);
  ASSERT_EQ(f.attention_share.size(), 2u);  // materialised, fused
  const auto& fused = f.attention_share[0].variant == "fused" ? f.attention_share[0] : f.attention_share[1];
  EXPECT_EQ(fused.variant, "fused");
  ASSERT_EQ(fused.points.size(), 3u);
  EXPECT_EQ(fused.points[0].seq_len, 128);  // sorted
  EXPECT_EQ(fused.points[2].share_attention, 0.7);
  // Every ok record is a measured step in the cost model's shape; the skipped one is not.
  ASSERT_EQ(f.steps.size(), 5u);
  EXPECT_EQ(f.steps[0].config["model"], "transformer");
  EXPECT_EQ(f.steps[0].config["seq_len"], 128);
  EXPECT_DOUBLE_EQ(f.steps[0].seconds, 1024.0 / 1000);
  // No GPU record: the crossover says why instead of a number.
  EXPECT_FALSE(f.crossover.tokens_per_step);
  EXPECT_NE(f.crossover.cannot_say.find("no GPU record"), std::string::npos);
  gtb::json data;
  xf::to_json(f, data);
  ASSERT_TRUE(data.contains("cost_steps"));
  EXPECT_EQ(data["cost_steps"][0]["backend"], "cpu");
  EXPECT_TRUE(data["crossover"]["tokens_per_step"].is_null());
}

TEST(TransformerFindings, NothingRanGivesEmptyListsNotZeros) {
  const xf::Findings f = xf::compute_findings({});
  EXPECT_TRUE(f.memory.empty());
  EXPECT_TRUE(f.steps.empty());
  gtb::json data;
  xf::to_json(f, data);
  EXPECT_FALSE(data.contains("cost_steps"));
  EXPECT_FALSE(data.contains("memory"));
}

// ---- GPU records beside the CPU ones (planted: no GPU here) ----
namespace {
gtb::Record gpu_rec(const std::string& workload, const std::string& variant, int d, int seq, int batch,
                    double tokens_per_s, const std::string& precision, const std::string& mode) {
  gtb::Record r = rec(workload, variant, seq, batch, tokens_per_s, 0, 0.3);
  r.backend = gtb::Backend::cuda;
  r.params["d_model"] = d;
  r.options = {{"precision", precision}, {"memory_cap_mb", 0}};
  if (!mode.empty()) r.options["mode"] = mode;
  r.counters.erase("host_bytes");
  r.counters["peak_device_bytes"] = {1e9 * seq / 1024.0, "bytes"};
  r.counters["launches_per_step"] = {120, "count"};
  r.id = "transformer/" + workload + "/" + variant + "/cuda/d=" + std::to_string(d) + ",seq=" + std::to_string(seq) +
         "," + precision + "," + mode;
  return r;
}
gtb::Record cpu_config(int d, int seq, int batch, double tokens_per_s, const std::string& precision) {
  gtb::Record r = rec("configs", "fused", seq, batch, tokens_per_s, 1e7, 0.2);
  r.params["d_model"] = d;
  r.options = {{"precision", precision}};
  r.id = "transformer/configs/fused/cpu/d=" + std::to_string(d) + ",seq=" + std::to_string(seq) + "," + precision;
  return r;
}
}  // namespace

TEST(TransformerFindings, CpuAndGpuPairIntoACrossoverInTokensPerStep) {
  // fp32 fused: the CPU ahead at 256 tokens, the GPU from 1024 on (its graph record the faster side).
  std::vector<gtb::Record> rs = {cpu_config(128, 64, 4, 5000, "fp32"), cpu_config(256, 256, 4, 3000, "fp32"),
                                 cpu_config(384, 256, 8, 2000, "fp32"),
                                 gpu_rec("configs", "fused", 128, 64, 4, 4000, "fp32", "eager"),
                                 gpu_rec("configs", "fused", 128, 64, 4, 4500, "fp32", "graph"),
                                 gpu_rec("configs", "fused", 256, 256, 4, 2000, "fp32", "eager"),
                                 gpu_rec("configs", "fused", 256, 256, 4, 9000, "fp32", "graph"),
                                 gpu_rec("configs", "fused", 384, 256, 8, 50000, "fp32", "eager"),
                                 gpu_rec("configs", "fused", 384, 256, 8, 60000, "fp32", "graph"),
                                 gpu_rec("configs", "fused", 384, 256, 8, 70000, "tf32", "eager")};
  const xf::Findings f = xf::compute_findings(rs);
  ASSERT_EQ(f.crossover.points.size(), 3u);  // tf32 has no CPU side
  EXPECT_EQ(f.crossover.points[0].tokens_per_step, 256);
  EXPECT_EQ(f.crossover.points[1].gpu_tokens_per_s, 9000);  // the faster of eager and graph
  EXPECT_NE(f.crossover.points[1].gpu_record.find("graph"), std::string::npos);
  ASSERT_TRUE(f.crossover.tokens_per_step);
  EXPECT_EQ(*f.crossover.tokens_per_step, 1024);
  // The graph saving at each problem that ran both modes: 1 - t_graph / t_eager.
  ASSERT_EQ(f.graph.size(), 3u);
  EXPECT_NEAR(f.graph[0].saved_fraction, 1.0 - 4000.0 / 4500.0, 1e-12);
  EXPECT_EQ(*f.graph[0].launches_per_step, 120);
  EXPECT_FALSE(f.graph[0].options.contains("mode"));
  // The configs rows carry the backend and the device's high-water mark as the memory.
  ASSERT_EQ(f.configs.size(), rs.size());
  EXPECT_EQ(f.configs[3].backend, gtb::Backend::cuda);
  EXPECT_DOUBLE_EQ(f.configs[3].bytes, 1e9 * 64 / 1024.0);
  EXPECT_DOUBLE_EQ(f.configs[0].bytes, 1e7);
  gtb::json data;
  xf::to_json(f, data);
  EXPECT_EQ(data["crossover"]["tokens_per_step"], 1024);
  EXPECT_EQ(data["crossover"]["points"].size(), 3u);
  EXPECT_EQ(data["graph"].size(), 3u);
  EXPECT_EQ(data["configs"][3]["backend"], "cuda");
}

TEST(TransformerFindings, CpuAheadEverywhereSaysSoInOneLine) {
  const xf::Findings f = xf::compute_findings({cpu_config(128, 64, 4, 5000, "fp32"),
                                               gpu_rec("configs", "fused", 128, 64, 4, 100, "fp32", "eager")});
  EXPECT_FALSE(f.crossover.tokens_per_step);
  EXPECT_NE(f.crossover.cannot_say.find("the CPU is ahead at every problem"), std::string::npos);
  EXPECT_NE(f.crossover.cannot_say.find("256 tokens"), std::string::npos);
  EXPECT_TRUE(f.graph.empty());  // eager only
}

TEST(TransformerFindings, MaterialisedVsFusedAndOutOfMemoryPerBackend) {
  // The same problem on both backends: a pair each, and the GPU's out-of-memory point its own.
  std::vector<gtb::Record> rs = {rec("seq_sweep", "materialised", 128, 8, 1000, 4e6, 0.2),
                                 rec("seq_sweep", "fused", 128, 8, 900, 1e6, 0.25),
                                 gpu_rec("seq_sweep", "materialised", 128, 128, 8, 9e4, "fp32", ""),
                                 gpu_rec("seq_sweep", "fused", 128, 128, 8, 1e5, "fp32", ""),
                                 gpu_rec("seq_sweep", "materialised", 128, 4096, 1, 1, "fp32", ""),
                                 gpu_rec("seq_sweep", "fused", 128, 4096, 1, 8e4, "fp32", "")};
  rs[4].status = gtb::Status::skipped;
  rs[4].value.reset();
  rs[4].status_detail = "out of memory: cudaMalloc of 2 GB over the cap";
  const xf::Findings f = xf::compute_findings(rs);
  ASSERT_EQ(f.memory.size(), 3u);
  EXPECT_EQ(f.memory[0].backend, gtb::Backend::cpu);
  EXPECT_EQ(f.memory[1].backend, gtb::Backend::cuda);
  EXPECT_NEAR(*f.memory[1].fused_speedup, 1e5 / 9e4, 1e-12);
  ASSERT_EQ(f.materialised_oom.size(), 1u);
  EXPECT_EQ(f.materialised_oom[0].backend, gtb::Backend::cuda);
  EXPECT_EQ(f.materialised_oom[0].seq_len, 4096);
  ASSERT_EQ(f.attention_share.size(), 4u);  // per backend and variant
  gtb::json data;
  xf::to_json(f, data);
  EXPECT_EQ(data["materialised_oom"][0]["backend"], "cuda");
}

TEST(TransformerFindings, PercentOfGemmPeakFromTheMergedDocument) {
  // A family publishing a measured peak and a transformer step: after the merge the step's record
  // carries pct_of_gemm_peak, and findings derived from the merged records show it in the table.
  gtb::Record step = cpu_config(128, 128, 4, 2000, "bf16");
  step.counters["tflops"] = {0.25, "TFLOP/s"};
  step.info["gemm_precision"] = "bf16";
  const gtb::json families = gtb::json::array(
      {{{"name", "peak_source"}, {"publishes", {{"peaks", "best_rate"}}}}, {{"name", "transformer"}}});
  const gtb::json findings = {{"peak_source", {{"best_rate", {{"cpu", {{"bf16", {{"tflops", 2.0}}}, {"fp32", 1.0}}}}}}}};
  const gtb::json doc = gtb::make_merged_document(gtb::json::object(), "quick", families, {step}, findings, 1);
  EXPECT_TRUE(xf::compute_findings({step}).configs[0].pct_of_gemm_peak == std::nullopt);  // before the merge
  const xf::Findings f = xf::compute_findings(gtb::records_of(doc));
  ASSERT_EQ(f.configs.size(), 1u);
  ASSERT_TRUE(f.configs[0].pct_of_gemm_peak);
  EXPECT_NEAR(*f.configs[0].pct_of_gemm_peak, 100.0 * 0.25 / 2.0, 1e-9);  // the bf16 peak, not fp32's
}

TEST(TransformerFindings, FusedGpuAttentionIsSaidToBeScalarWithoutTensorCores) {
  const std::string note = xf::fused_gpu_attention_note(
      {rec("seq_sweep", "fused", 128, 8, 900, 1e6, 0.25), gpu_rec("configs", "fused", 128, 64, 4, 4000, "fp32", "eager")});
  EXPECT_NE(note.find("without tensor cores"), std::string::npos) << note;
  EXPECT_NE(note.find("scalar FP32"), std::string::npos) << note;
  // No fused GPU record: CPU fused and GPU materialised records say nothing of the GPU kernel.
  EXPECT_EQ(xf::fused_gpu_attention_note({rec("seq_sweep", "fused", 128, 8, 900, 1e6, 0.25),
                                          gpu_rec("configs", "materialised", 128, 64, 4, 4000, "fp32", "eager")}),
            "");
  EXPECT_EQ(xf::fused_gpu_attention_note({}), "");
  // Another family's fused GPU record is not the transformer's.
  gtb::Record other = gpu_rec("configs", "fused", 128, 64, 4, 4000, "fp32", "eager");
  other.family = "pitfalls";
  EXPECT_EQ(xf::fused_gpu_attention_note({other}), "");
}
