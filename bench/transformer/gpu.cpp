// The transformer family's GPU records: the block stack's training step on the device (materialised
// or fused attention; fp32, tf32 or bf16 mixed; eager or a CUDA Graph replay), checked against the
// float64 reference, swept over sequence length, batch, width and heads.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/transformer/variants.h"
#include "gtb/gtb.h"
#include "kernels/common/errors.h"
#include "kernels/common/precision.h"
#include "kernels/transformer/block.h"
#include "kernels/transformer/cuda/step_plan.h"
#include "kernels/transformer/reference.h"
#include "kernels/train/step_check.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/transformer/cuda/step.h"
#endif

namespace {

namespace xf = gtb::xfmr;
namespace xg = gtb::xfmr::gpu;

#if GTB_HAVE_CUDA
namespace gx = gtb::cuda::xfmr;
constexpr std::uint64_t kDataSeed = 4242;  // the CPU records' data: the same problems

using xf::config_of;

struct Checked {
  gtb::step::Result result;
  double worst_grad_rel = 0, loss_rel = 0;
};

// One step of `m` from its initial state through the shared float64 check protocol.
Checked check(gx::GpuBlocks& m, const xf::Config& c, gtb::Precision prec, const xf::Data& data) {
  Checked out;
  gtb::step::Probe p;
  p.params_before = [&m] { return m.params(); };
  p.opt_before = [&m] {
    std::vector<float> o = m.adam_m(), v = m.adam_v();
    o.insert(o.end(), v.begin(), v.end());
    return o;
  };
  p.counters = [&m] { return gtb::step::Counters{1.0, m.steps_taken(), 0}; };
  p.poison = [&m] { m.poison(); };
  p.step = [&m] {
    m.step();
    return m.loss();
  };
  p.grads = gtb::step::downloaded([&m] { return m.grads(); });
  p.params_after = gtb::step::downloaded([&m] { return m.params(); });
  gtb::step::Workload w;
  w.verify = [&](const gtb::step::Taken& t) {
    const std::size_t n = m.layout().total;
    if (t.opt_before.size() != 2 * n) return gtb::step::Verdict{false, "the optimizer state has the wrong size"};
    const std::vector<float> m0(t.opt_before.begin(), t.opt_before.begin() + std::ptrdiff_t(n)),
        v0(t.opt_before.begin() + std::ptrdiff_t(n), t.opt_before.end());
    const xf::RefStep ref = xf::reference_step(c, std::vector<double>(t.params_before.begin(), t.params_before.end()),
                                               std::vector<double>(m0.begin(), m0.end()),
                                               std::vector<double>(v0.begin(), v0.end()), t.before.step,
                                               data.x.data(), data.target.data());
    const std::vector<float> ma = m.adam_m(), va = m.adam_v();
    const xf::StepOutputs got{t.loss, t.grads, t.params_after, ma.data(), va.data()};
    const xf::CheckResult r = xf::check_step(c, ref, t.params_before, m0, v0, t.before.step, got, xg::tolerance(c, prec));
    out.worst_grad_rel = r.worst_grad_rel, out.loss_rel = r.loss_rel;
    return gtb::step::Verdict{r.ok, r.detail};
  };
  out.result = gtb::step::check_f64(p, w);
  return out;
}

const char* kFlopRule =
    "tflops: (GEMM + attention FLOPs) / step time; GEMM FLOPs 6 * tokens * 12 * d_model^2 per layer (QKV, output "
    "projection, MLP up and down; forward 2*T*in*out, backward twice that); attention FLOPs counted causally, "
    "6 * batch * seq_len^2 * d_model per layer (half of a full seq_len x seq_len, which the materialised GEMMs "
    "compute); tflops_gemm and tflops_attention: each count over the device time of its own timed pieces";

void gpu_case(gtb::State& st, xf::Attention attn) {
  const xf::Config cfg = config_of(st);
  const gtb::Precision prec =
      st.has("precision") ? gtb::precision_from_string(st.get_string("precision")) : gtb::Precision::fp32;
  if (prec != gtb::Precision::fp32 && prec != gtb::Precision::tf32 && prec != gtb::Precision::bf16)
    throw gtb::Skip(std::string("the GPU step runs in fp32, tf32 or bf16, not ") + gtb::to_string(prec));
  const bool graph = st.has("mode") && st.get_string("mode") == "graph";
  if (st.has("mode") && !graph && st.get_string("mode") != "eager")
    throw std::invalid_argument("transformer: mode is eager or graph, not " + st.get_string("mode"));
  const std::size_t cap = st.has("memory_cap_mb") ? std::size_t(st.get_int("memory_cap_mb", 0)) * 1000000u : 0u;
  // Over the cap or the device: gtb::OutOfMemory, recorded as the data point.
  gx::GpuBlocks model(cfg, attn, prec, cap);
  const xf::Data data = xf::make_data(cfg, kDataSeed);
  model.load_data(data.x.data(), data.target.data());
  const xg::CheckedConfig cc = xg::checked_config(cfg);
  Checked chk;
  if (!cc.reduced) {
    chk = check(model, cfg, prec, data);
  } else {  // the same code path on the reduced problem, in a model of its own
    gx::GpuBlocks small(cc.config, attn, prec);
    const xf::Data sd = xf::make_data(cc.config, kDataSeed);
    small.load_data(sd.x.data(), sd.target.data());
    chk = check(small, cc.config, prec, sd);
  }
  const std::vector<float>& p0 = chk.result.taken.params_before;
  bool ok = chk.result.ok;
  std::string detail = chk.result.detail + " (checked: " + cc.note + ")";
  if (ok) {
    // The timed steps start from the initial state; a graph must do what the eager step does.
    model.set_params(cc.reduced ? xf::init_params(cfg, model.layout()) : p0);
    model.reset_optimizer();
    const std::vector<float> start = model.params();
    model.step();
    const std::vector<float> g1 = model.grads(), p1 = model.params();
    model.set_params(start);
    model.reset_optimizer();
    if (graph) {
      ok = gtb::step::replay_matches(model, g1, p1, prec == gtb::Precision::fp32, detail);
      model.set_params(start);
      model.reset_optimizer();
    }
  }
  st.check(ok, detail, {{"worst_gradient_rel_error", chk.worst_grad_rel}, {"loss_rel_error", chk.loss_rel}});
  if (!ok) return;
  st.set_work(double(cfg.tokens()));
  st.info("checked_configuration", cc.note);
  st.info("gemm_path", std::string("cuBLASLt for the projections and the MLP; ") +
                           (attn == xf::Attention::materialised ? "cublasGemmStridedBatchedEx for attention; " : "") +
                           (prec == gtb::Precision::bf16  ? "BF16 operands (weight copies, activations cast as read), FP32 accumulation"
                            : prec == gtb::Precision::tf32 ? "FP32 operands, TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32)"
                                                           : "FP32 (CUBLAS_COMPUTE_32F)"));
  const auto& ab = model.batching();
  st.info("attention", attn == xf::Attention::materialised
                           ? "materialised: every head's seq_len x seq_len probabilities stored for the backward; " +
                                 std::to_string(ab.calls) + " strided-batched calls of " + std::to_string(ab.count) +
                                 (ab.over_heads ? " heads" : " sequences") + " per GEMM"
                           : std::string("fused: gtb's own kernels (attention.h), only the row log-sum-exp stored"));
  st.info("mode", graph ? "graph: the step captured once as a CUDA Graph and replayed" : "eager: every launch from the host");
  st.info("flop_rule", kFlopRule);
  // The gemm family's best cuda rate at this precision: gtb run adds pct_of_gemm_peak from it.
  st.info("gemm_precision", gtb::to_string(gtb::gemm_precision(prec)));
  st.info("loss", "0.5 * mean over tokens and channels of (output - target)^2, targets N(0, 1)");
  const gtb::cuda::EventTiming how{gtb::Blocking::allowed, graph ? 1 : std::max(1, model.launches_per_step())};
  const auto& s = gtb::cuda::exec(
      st, model.stream(), [&](cudaStream_t) { graph ? model.replay() : model.step(); }, how);
  const double med = s.stats.median;
  st.counter("step_ms", med * 1e3, "ms");
  st.counter("samples_per_s", cfg.batch / med, "samples/s");
  st.counter("tflops", xf::step_flops(cfg) / med / 1e12, "TFLOP/s");
  st.counter("gemm_gflop_per_step", xf::gemm_flops(cfg) / 1e9, "GFLOP");
  st.counter("attention_gflop_per_step", xf::attention_flops(cfg) / 1e9, "GFLOP");
  st.counter("peak_device_bytes", double(model.device_bytes()), "bytes");
  st.counter("parameters", double(model.layout().parameters()), "count");
  st.counter("launches_per_step", model.launches_per_step(), "count");
  if (graph) st.counter("graph_nodes", double(model.graph_nodes()), "count");
  // Outside the timed samples: events around every operation of a few eager steps.
  const gx::PieceTimes pc = model.pieces(3);
  const double total = pc.total();
  if (pc.steps > 0 && total > 0) {
    const double per = 1.0 / pc.steps;
    const double gemm = pc[gx::Piece::projections] + pc[gx::Piece::mlp];
    if (gemm > 0) st.counter("tflops_gemm", xf::gemm_flops(cfg) / (gemm * per) / 1e12, "TFLOP/s");
    if (pc[gx::Piece::attention] > 0)
      st.counter("tflops_attention", xf::attention_flops(cfg) / (pc[gx::Piece::attention] * per) / 1e12, "TFLOP/s");
    st.counter("share_attention", pc[gx::Piece::attention] / total, "fraction");
    st.counter("share_projections", pc[gx::Piece::projections] / total, "fraction");
    st.counter("share_mlp", pc[gx::Piece::mlp] / total, "fraction");
    st.counter("share_elementwise", pc[gx::Piece::elementwise] / total, "fraction");
    st.counter("share_optimizer", pc[gx::Piece::optimizer] / total, "fraction");
    st.counter("pieces_ms_per_step", total * per * 1e3, "ms");
  }
  st.counter("steps_taken", model.steps_taken(), "count");
}
#else
void gpu_case(gtb::State&, xf::Attention) { throw gtb::Skip("built without CUDA"); }
#endif

const char* kDoc =
    "one AdamW training step of a stack of pre-LN decoder blocks on the GPU (LN, QKV projection, causal multi-head "
    "attention, output projection, residual, LN, 4x GELU MLP, residual) on batch x seq_len tokens, loss "
    "0.5*mean((y-t)^2); metric tokens/s; variant: how attention is computed (materialised: strided-batched GEMMs "
    "and a softmax kernel; fused: gtb's own kernels); precision fp32, tf32 or bf16 mixed; mode eager or graph (the "
    "step captured once as a CUDA Graph and replayed)";

// quick_*: whether the quick suite runs that variant (with the axes' quick lists).
void both(const char* workload, const xf::Axes& axes, const char* extra, bool quick_materialised, bool quick_fused) {
  xf::add_both_attentions(workload, gtb::Backend::cuda, gpu_case, axes, std::string(kDoc) + extra, quick_materialised,
                          quick_fused);
}

std::vector<std::vector<std::int64_t>> with(std::int64_t layers, std::int64_t d, std::int64_t heads,
                                            const std::vector<xg::Row>& seq_batch) {
  std::vector<std::vector<std::int64_t>> r;
  for (const auto& sb : seq_batch) r.push_back({layers, d, heads, sb[0], sb[1]});
  return r;
}

// The CPU records' three configurations (so the two backends pair), then two the CPU cannot reach;
// the quick suite's one is the CPU quick suite's medium configuration.
gtb::Bench& config_axes(gtb::Bench& b) {
  return b.zip({"layers", "d_model", "heads", "seq_len", "batch"},
               {{2, 128, 4, 128, 4}, {2, 256, 4, 256, 4}, {2, 384, 6, 256, 4}, {2, 1024, 16, 1024, 8},
                {2, 4096, 32, 2048, 2}},
               {{2, 256, 4, 128, 4}})
      .option("precision", std::vector<std::string>{"fp32", "tf32", "bf16"}, {"fp32", "bf16"})
      .option("mode", std::vector<std::string>{"eager", "graph"});
}
// Sequence length 128..8192 at 16384 tokens per step; a 16 GB cap (10^9 bytes) emulates a smaller
// device, where materialised attention runs out and the fused one still fits.
gtb::Bench& seq_axes(gtb::Bench& b) {
  return b.zip({"layers", "d_model", "heads", "seq_len", "batch"}, with(2, 1024, 16, xg::seq_rows(16384)),
               with(2, 256, 4, {{128, 8}, {2048, 1}}))
      .option("precision", std::vector<std::string>{"fp32", "bf16"}, {"fp32"})
      .option("memory_cap_mb", std::vector<std::int64_t>{0, 16000}, {0});
}
// The CPU's batch sweep (same params and precisions: its records pair with these, the crossover in
// tokens per step), continued to batches the CPU does not run.
gtb::Bench& batch_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .axis("d_model", std::vector<std::int64_t>{256})
      .axis("heads", std::vector<std::int64_t>{4})
      .axis("seq_len", std::vector<std::int64_t>{128})
      .axis("batch", std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256})
      .option("precision", std::vector<std::string>{"fp32", "bf16"});
}
// Width 256..4096: the launch-bound regime at small widths, and what the graph saves there.
gtb::Bench& width_axes(gtb::Bench& b) {
  std::vector<std::vector<std::int64_t>> rows;
  for (const auto& r : xg::width_rows()) rows.push_back({2, r[0], r[1], 1024, 8});
  return b.zip({"layers", "d_model", "heads", "seq_len", "batch"}, rows)
      .option("precision", std::vector<std::string>{"fp32", "bf16"})
      .option("mode", std::vector<std::string>{"eager", "graph"});
}
gtb::Bench& heads_axes(gtb::Bench& b) {
  return b.axis("layers", std::vector<std::int64_t>{2})
      .axis("d_model", std::vector<std::int64_t>{1024})
      .axis("heads", std::vector<std::int64_t>{4, 8, 16, 32})
      .axis("seq_len", std::vector<std::int64_t>{1024})
      .axis("batch", std::vector<std::int64_t>{8})
      .option("precision", std::vector<std::string>{"fp32", "bf16"});
}

const bool kRegistered = [] {
  both("configs", config_axes, "", true, true);
  both("seq_sweep", seq_axes,
       "; memory_cap_mb (10^6 bytes, 0 = none) caps the model's own device allocations: over it, or over the "
       "device, the record is out of memory, the data point where materialised attention stops fitting",
       true, true);
  both("batch_sweep", batch_axes, "", false, false);
  both("width_sweep", width_axes, "", false, false);
  both("heads_sweep", heads_axes, "", false, false);
  return true;
}();

}  // namespace
