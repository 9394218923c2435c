// Transformer family: the training step of a stack of pre-LN decoder blocks (causal attention, GELU
// MLP, AdamW) on the CPU, materialised and fused attention, FP32 and BF16 mixed, swept over
// sequence length, batch, width and heads.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gtb/blas_core.h"
#include "bench/transformer/variants.h"
#include "gtb/gemm_plan_info.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/errors.h"
#include "kernels/common/precision.h"
#include "kernels/transformer/block.h"
#include "kernels/transformer/cpu/blocks.h"
#include "kernels/transformer/reference.h"

namespace {

namespace xf = gtb::xfmr;

constexpr std::uint64_t kDataSeed = 4242;
// The float64 reference of a checked step holds every activation and every head's probabilities in
// double: above this many bytes the check runs the same step on fewer sequences (the same code
// path: sequences are independent until the weight-gradient sums) and says so.
constexpr double kReferenceBytes = 1.5e9;

using xf::config_of;
std::size_t cap_of(gtb::State& st) {
  return st.has("memory_cap_mb") ? std::size_t(st.get_int("memory_cap_mb", 0)) * 1000000u : 0u;
}

double reference_bytes(const xf::Config& c) {
  const double T = double(c.tokens()), d = c.d_model;
  const double per_layer = T * d * 14 + double(c.batch) * c.heads * double(c.seq_len) * c.seq_len;
  return 8.0 * (per_layer * c.layers + double(c.seq_len) * c.seq_len);
}

const char* kFlopRule =
    "tflops: (GEMM + attention FLOPs) / step time; GEMM FLOPs 6 * tokens * 12 * d_model^2 per layer (QKV, output "
    "projection, MLP up and down; forward 2*T*in*out, backward twice that); attention FLOPs counted causally, "
    "6 * batch * seq_len^2 * d_model per layer (half of a full seq_len x seq_len); tflops_gemm and tflops_attention: "
    "each count over the time of its own timed pieces";

// The float64 reference of a first step depends on the problem, the initial parameters and the data
// only, not on the precision or the attention variant: the records of one problem (fp32 and bf16,
// materialised and fused) share it, which halves the checks' share of a run. Kept while under
// kReferenceCacheBytes in all; the parameters are compared in full before a reference is reused.
constexpr double kReferenceCacheBytes = 0.6e9;
struct CachedReference {
  std::vector<float> p0, x, target;
  xf::RefStep ref;
  double bytes() const { return 8.0 * double(ref.grads.size() * 4) + 4.0 * double(p0.size() + x.size() + target.size()); }
};
const xf::RefStep& reference_of(const xf::Config& c, const std::vector<float>& p0, const xf::Data& data) {
  static std::map<std::string, CachedReference> cache;
  static double cached_bytes = 0;
  static CachedReference uncached;
  const std::string key = std::to_string(c.layers) + "," + std::to_string(c.d_model) + "," + std::to_string(c.heads) +
                          "," + std::to_string(c.seq_len) + "," + std::to_string(c.batch) + "," + std::to_string(c.seed);
  const std::size_t n = std::size_t(c.tokens()) * std::size_t(c.d_model);
  auto same = [&](const CachedReference& e) {
    return e.p0 == p0 && std::equal(e.x.begin(), e.x.end(), data.x.begin(), data.x.begin() + std::ptrdiff_t(n)) &&
           std::equal(e.target.begin(), e.target.end(), data.target.begin(), data.target.begin() + std::ptrdiff_t(n));
  };
  if (auto it = cache.find(key); it != cache.end() && same(it->second)) return it->second.ref;
  CachedReference e;
  e.ref = xf::reference_step(c, std::vector<double>(p0.begin(), p0.end()), {}, {}, 0, data.x.data(), data.target.data());
  const double bytes = e.bytes() + 4.0 * double(p0.size() + 2 * n);
  if (cached_bytes + bytes > kReferenceCacheBytes) {
    uncached = std::move(e);
    return uncached.ref;
  }
  e.p0 = p0;
  e.x.assign(data.x.begin(), data.x.begin() + std::ptrdiff_t(n));
  e.target.assign(data.target.begin(), data.target.begin() + std::ptrdiff_t(n));
  cached_bytes += bytes;
  auto& slot = cache[key];
  cached_bytes -= slot.bytes();
  slot = std::move(e);
  return slot.ref;
}

// The check: one step from the initial state with poisoned outputs, against the float64 reference.
xf::CheckResult checked_step(const xf::Config& c, xf::Attention attn, gtb::Precision prec, std::size_t cap,
                             xf::CpuBlocks& model, const xf::Data& data, std::string& where) {
  xf::Config cc = c;
  while (cc.batch > 1 && reference_bytes(cc) > kReferenceBytes) cc.batch = (cc.batch + 1) / 2;
  std::unique_ptr<xf::CpuBlocks> small;
  xf::CpuBlocks* m = &model;
  if (cc.batch != c.batch) {
    small = std::make_unique<xf::CpuBlocks>(cc, attn, prec, cap);
    m = small.get();
    where = " (checked on " + std::to_string(cc.batch) + " of the " + std::to_string(c.batch) +
            " sequences: the float64 reference of the whole batch is over " + std::to_string(kReferenceBytes / 1e9) + " GB)";
  }
  const std::size_t n = m->layout().total;
  const std::vector<float> p0(m->params(), m->params() + n), zeros(n, 0.0f);
  m->reset_optimizer();
  m->poison();
  const double loss = m->step(data.x.data(), data.target.data());
  const xf::RefStep& ref = reference_of(cc, p0, data);
  const xf::StepOutputs got{loss, m->grads(), m->params(), m->adam_m(), m->adam_v()};
  xf::CheckResult r = xf::check_step(cc, ref, p0, zeros, zeros, 0, got,
                                     prec == gtb::Precision::bf16 ? xf::bf16_tolerance(cc) : xf::fp32_tolerance());
  if (m == &model) {  // the timed steps start from the initial state again
    model.set_params(p0);
    model.reset_optimizer();
  }
  return r;
}

void cpu_case(gtb::State& st, xf::Attention attn) {
  const xf::Config cfg = config_of(st);
  const gtb::Precision prec =
      st.has("precision") ? gtb::precision_from_string(st.get_string("precision")) : gtb::Precision::fp32;
  if (prec != gtb::Precision::fp32 && prec != gtb::Precision::bf16)
    throw gtb::Skip(std::string("the CPU step runs in fp32 or bf16 (autocast-style), not ") + gtb::to_string(prec));
  const std::size_t cap = cap_of(st);
  xf::CpuBlocks model(cfg, attn, prec, cap);  // over the cap: gtb::OutOfMemory, recorded as the data point
  const xf::Data data = xf::make_data(cfg, kDataSeed);
  std::string where;
  const xf::CheckResult chk = checked_step(cfg, attn, prec, cap, model, data, where);
  st.check(chk.ok, chk.detail + where,
           {{"worst_gradient_rel_error", chk.worst_grad_rel}, {"loss_rel_error", chk.loss_rel}});
  if (!chk.ok) return;
  st.set_work(double(cfg.tokens()));
  st.info("threads", xf::CpuBlocks::threads());
  st.info("blas", gtb::cpu::blas_config());
  st.info("openblas_core", gtb::cpu::blas_corename() + " (chosen by: " + gtb::openblas_core_source() + ")");
  st.info("gemm_plan", gtb::gemm_plan_json(model.gemm_plan()));
  st.info("gemm_path", std::string(prec == gtb::Precision::bf16
                                       ? "BF16 operands (rounded to nearest even), FP32 accumulation, per site: "
                                       : "FP32, per site: ") +
                           model.gemm_plan().summary());
  st.info("attention", attn == xf::Attention::materialised
                           ? "materialised: every head's seq_len x seq_len probabilities stored for the backward"
                           : "fused: query blocks of " + std::to_string(xf::kFusedBlock) +
                                 " rows, only the row log-sum-exp stored; the backward recomputes the probabilities");
  st.info("flop_rule", kFlopRule);
  st.info("gemm_precision", gtb::to_string(gtb::gemm_precision(prec)));
  st.info("loss", "0.5 * mean over tokens and channels of (output - target)^2, targets N(0, 1)");
  model.reset_pieces();
  float last = 0;
  const auto& s = st.exec([&] { last = model.step(data.x.data(), data.target.data()); });
  const double med = s.stats.median;
  const xf::PieceTimes& pc = model.pieces();
  const double total = pc.total();
  st.counter("step_ms", med * 1e3, "ms");
  st.counter("samples_per_s", cfg.batch / med, "samples/s");
  st.counter("tflops", xf::step_flops(cfg) / med / 1e12, "TFLOP/s");
  st.counter("gemm_gflop_per_step", xf::gemm_flops(cfg) / 1e9, "GFLOP");
  st.counter("attention_gflop_per_step", xf::attention_flops(cfg) / 1e9, "GFLOP");
  if (pc.steps > 0 && total > 0) {
    const double per = 1.0 / pc.steps;
    if (pc.projections + pc.mlp > 0)
      st.counter("tflops_gemm", xf::gemm_flops(cfg) / ((pc.projections + pc.mlp) * per) / 1e12, "TFLOP/s");
    if (pc.attention > 0) st.counter("tflops_attention", xf::attention_flops(cfg) / (pc.attention * per) / 1e12, "TFLOP/s");
    st.counter("share_attention", pc.attention / total, "fraction");
    st.counter("share_projections", pc.projections / total, "fraction");
    st.counter("share_mlp", pc.mlp / total, "fraction");
    st.counter("share_elementwise", pc.elementwise / total, "fraction");
    st.counter("share_optimizer", pc.optimizer / total, "fraction");
  }
  st.counter("host_bytes", double(model.bytes()), "bytes");
  st.counter("parameters", double(model.layout().parameters()), "count");
  st.counter("loss_first", chk.ok ? last : 0.0, "nats");
  st.counter("steps_taken", model.steps_taken(), "count");
}

// The quick suite's ten steps each get three samples or 0.1 s: the family's share of the quick
// suite is a few seconds, and every record still has a median of at least three steps.
const gtb::RuleChange kQuickRule = gtb::RuleChange().min_samples(3).budget_seconds(0.1);

const char* kDoc =
    "one AdamW training step of a stack of pre-LN decoder blocks (LN, QKV projection, causal multi-head attention, "
    "output projection, residual, LN, 4x GELU MLP, residual) on batch x seq_len tokens, loss 0.5*mean((y-t)^2); "
    "metric tokens/s; variant: how attention is computed (materialised or fused)";

// quick: which variants the quick suite runs (materialised, fused); a workload in neither is full-only.
void both(const char* workload, const xf::Axes& axes, const char* extra, bool quick_materialised, bool quick_fused) {
  const xf::Axes cpu_axes = [&axes](gtb::Bench& b) -> gtb::Bench& {
    return axes(b)
        .rule(gtb::Suite::full, gtb::slow_step_full_rule())
        .rule(gtb::Suite::quick, kQuickRule)
        .ceiling("host_fma_fp32_tflops");
  };
  xf::add_both_attentions(workload, gtb::Backend::cpu, cpu_case, cpu_axes, std::string(kDoc) + extra,
                          quick_materialised, quick_fused);
}

// ---- the measured configurations: small, medium, the largest the quick budget holds (the quick
// suite's at 512 tokens per step, so that its set-up, the library choice and the float64 check,
// stays within its budget) ----
gtb::Bench& config_axes(gtb::Bench& b) {
  return b.zip({"layers", "d_model", "heads", "seq_len", "batch"},
               {{2, 128, 4, 128, 4}, {2, 256, 4, 256, 4}, {2, 384, 6, 256, 4}},
               {{2, 128, 4, 128, 4}, {2, 256, 4, 128, 4}, {2, 320, 5, 128, 4}})
      .option("precision", std::vector<std::string>{"fp32", "bf16"});
}

// ---- sequence length at a fixed 4096 tokens per step (the quick suite: 512, the tokens of its
// smallest configuration, whose projection and MLP shapes it shares); a memory cap makes
// materialised attention run out where the fused one still fits ----
gtb::Bench& seq_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .axis("d_model", std::vector<std::int64_t>{256}, {128})
      .axis("heads", std::vector<std::int64_t>{4})
      .zip({"seq_len", "batch"}, {{64, 64}, {128, 32}, {256, 16}, {512, 8}, {1024, 4}, {2048, 2}, {4096, 1}},
           {{128, 4}, {512, 1}})
      .option("precision", std::vector<std::string>{"fp32"})
      .option("memory_cap_mb", std::vector<std::int64_t>{512}, {512});
}

// ---- batch, width and heads ----
gtb::Bench& batch_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .axis("d_model", std::vector<std::int64_t>{256})
      .axis("heads", std::vector<std::int64_t>{4})
      .axis("seq_len", std::vector<std::int64_t>{128})
      .axis("batch", std::vector<std::int64_t>{1, 2, 4, 8, 16, 32})
      .option("precision", std::vector<std::string>{"fp32", "bf16"});
}
gtb::Bench& width_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .zip({"d_model", "heads"}, {{64, 2}, {128, 4}, {256, 4}, {512, 8}, {1024, 16}})
      .axis("seq_len", std::vector<std::int64_t>{128})
      .axis("batch", std::vector<std::int64_t>{4})
      .option("precision", std::vector<std::string>{"fp32"});
}
gtb::Bench& heads_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .axis("d_model", std::vector<std::int64_t>{256})
      .axis("heads", std::vector<std::int64_t>{1, 2, 4, 8, 16})
      .axis("seq_len", std::vector<std::int64_t>{256})
      .axis("batch", std::vector<std::int64_t>{4})
      .option("precision", std::vector<std::string>{"fp32"});
}

const bool kRegistered = [] {
  both("configs", config_axes, "", false, true);
  both("seq_sweep", seq_axes, "; memory_cap_mb (10^6 bytes) caps the model's own allocations: over it the record "
                              "is out of memory, the data point where materialised attention stops fitting", true, true);
  both("batch_sweep", batch_axes, "", false, false);
  both("width_sweep", width_axes, "", false, false);
  both("heads_sweep", heads_axes, "", false, false);
  return true;
}();

// Its kernels use OpenBLAS: its core type is selected before any case.
const bool kOpenblasCore = gtb::install_openblas_core_selection();

}  // namespace
