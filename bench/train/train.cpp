// Train family: an MLP training step on the CPU and the GPU, swept over batch size, model size,
// CUDA Graphs vs eager, precision and gradient accumulation; the crossover where the GPU wins.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/train/findings.h"
#include "gtb/stats.h"
#include "gtb/blas_core.h"
#include "gtb/gemm_plan_info.h"
#include "gtb/gpu.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/mkl.h"
#include "kernels/common/precision.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/mlp.h"
#include "kernels/train/step_check.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/train/cuda/mlp.h"
#endif

namespace {

namespace mlp = gtb::mlp;

constexpr int kClasses = mlp::kBenchClasses;
constexpr std::uint64_t kDataSeed = 8086;

// The model of a case: params width/depth (input = width, 16 classes), options optimizer/activation.
mlp::Config config_of(gtb::State& st) {
  return mlp::bench_config(st.get_int("width", 1), st.get_int("depth", 1),
                           st.has("activation") ? mlp::act_from_string(st.get_string("activation")) : mlp::Act::relu,
                           st.has("optimizer") ? mlp::optim_from_string(st.get_string("optimizer")) : mlp::Optim::sgd);
}
int micro_batches_of(gtb::State& st) { return st.has("micro_batches") ? st.get_int("micro_batches", 1) : 1; }
std::size_t cap_of(gtb::State& st) {
  return st.has("memory_cap_mb") ? std::size_t(st.get_int("memory_cap_mb", 0)) * 1000000u : 0u;
}

const mlp::Dataset& dataset(int rows, int input) {
  static mlp::Dataset d;
  if (d.rows != rows || d.input != input) {
    d = mlp::Dataset{};
    try {
      d = mlp::make_clusters(rows, input, kClasses, kDataSeed);
    } catch (const std::bad_alloc&) {
      throw gtb::OutOfMemory("host dataset of " + std::to_string(double(rows) * input * 4) + " bytes");
    }
  }
  return d;
}

const char* kFlopRule =
    "tflops: GEMM FLOPs executed, 6 * batch * sum(in*out) over layers less the first layer's input gradient "
    "(2 * batch * in*out of layer 0, never computed); tflops_6n_rule: the customary 6 * batch * sum(in*out)";

void common_counters(gtb::State& st, const mlp::Layout& lay, int batch, double median_s) {
  st.counter("step_ms", median_s * 1e3, "ms");
  // TFLOP/s of the work executed (what a percent of a peak divides); the customary 6N count, which
  // includes the first layer's input gradient that is never computed, is the second figure.
  st.counter("tflops", mlp::executed_step_flops(lay, batch) / median_s / 1e12, "TFLOP/s");
  st.counter("tflops_6n_rule", mlp::step_flops(lay, batch) / median_s / 1e12, "TFLOP/s");
  st.info("flop_rule", kFlopRule);
  st.counter("parameters", double(lay.parameters()), "count");
  // The GEMM family's best rate at the matching precision is this step's compute ceiling: the
  // results assembly turns it into pct_of_gemm_peak when both families ran.
  const gtb::Precision p =
      st.options().contains("precision") ? gtb::precision_from_string(st.get_string("precision")) : gtb::Precision::fp32;
  st.info("gemm_precision", gtb::to_string(gtb::gemm_precision(p)));
}

// The tolerance of the CPU step's float64 check (docs/train.md derives it): FP32 GEMMs, or BF16
// operands (unit roundoff 2^-8 on each of the two factors of a product) with FP32 accumulation.
double cpu_tolerance(gtb::Precision p) { return p == gtb::Precision::bf16 ? 1e-2 : 1e-4; }

std::string gemm_path(gtb::cpu::GemmLib lib) {
  switch (lib) {
    case gtb::cpu::GemmLib::openblas:
      // OpenBLAS runs the core type this process verified and chose (a family binary whose OpenBLAS
      // fell back to generic kernels re-executes itself with the matching one).
      return "OpenBLAS cblas_sgemm, core " + gtb::cpu::blas_corename() + " (chosen by: " + gtb::openblas_core_source() +
             ")";
    case gtb::cpu::GemmLib::onednn: return "oneDNN dnnl_sgemm " + gtb::cpu::dnnl_version();
    case gtb::cpu::GemmLib::mkl: return "oneMKL cblas_sgemm, " + gtb::cpu::mkl::version();
  }
  return "";
}

constexpr double kDropAfterOneStep = 1.25;  // written out in gemm_candidates' "timing" too

// A way to run the step's GEMMs. FP32: a library for every GEMM (OpenBLAS, the reference choice,
// first). BF16: the shared per-shape plan (kernels/common/cpu/gemm_plan.h) chooses each site's
// GEMM; its candidates differ by threading: rows mode (each thread's rows through the whole step,
// products on one thread: oneDNN's BF16 matmul is not offered there) and split (one parallel
// region per product, which the native BF16 matmul may take whole).
struct Candidate {
  std::string name;
  std::function<void()> use;
  std::string why_not;  // "" when it can run
};

std::vector<Candidate> cpu_candidates(mlp::CpuMlp& model, gtb::Precision prec, int rows) {
  std::vector<Candidate> cands;
  if (prec == gtb::Precision::fp32) {
    for (gtb::cpu::GemmLib lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn, gtb::cpu::GemmLib::mkl})
      cands.push_back({gtb::cpu::to_string(lib),
                       [&model, lib] {
                         model.set_precision(gtb::Precision::fp32);
                         model.set_gemm_lib(lib);
                       },
                       gtb::cpu::gemm_lib_available(lib)
                           ? ""
                           : (lib == gtb::cpu::GemmLib::mkl ? gtb::cpu::mkl::unavailable_reason() : "not built in")});
    return cands;
  }
  auto plan_in = [&model, rows](mlp::CpuMlp::Threading t) {
    return [&model, rows, t] {
      model.set_threading(t);
      model.set_precision(gtb::Precision::bf16);
      model.plan_gemms(rows);  // verified and timed per site here, outside the step's timing
    };
  };
  if (model.rows_mode(rows)) cands.push_back({"plan_rows", plan_in(mlp::CpuMlp::Threading::rows), ""});
  cands.push_back({"plan_split", plan_in(mlp::CpuMlp::Threading::split), ""});
  return cands;
}

// Each candidate's step timed from the initial parameters (`reset` restores them) by the harness's
// probe (the full suite: median of 3 samples of >= 20 ms), its timing written into `candidates`:
// the candidates that can run with their seconds (index into cands, seconds). The quick suite times
// a step of 5 ms or more twice (the faster counts: the first may carry the library's warm-up) and a
// shorter one in three samples of 5 ms: the choice was most of its set-up.
std::vector<std::pair<std::size_t, double>> time_candidates(gtb::State& st, const std::vector<Candidate>& cands,
                                                            const std::function<void()>& reset,
                                                            const std::function<void()>& one_step,
                                                            gtb::json& candidates) {
  const bool quick = st.suite() == gtb::Suite::quick;
  auto timed = [&] {
    if (!quick) return st.probe(one_step);
    const double once = st.probe(one_step, gtb::ProbeRule{1, 1e-6, 1});
    if (once >= 5e-3) return std::min(once, st.probe(one_step, gtb::ProbeRule{1, 1e-6, 1}));
    return st.probe(one_step, gtb::ProbeRule{3, 5e-3, 0});
  };
  std::vector<std::pair<std::size_t, double>> timed_cands;
  double fastest = 0;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    gtb::json& c = candidates[cands[i].name];
    if (!cands[i].why_not.empty()) {
      c["available"] = false;
      c["detail"] = cands[i].why_not;
      continue;
    }
    cands[i].use();
    reset();
    if (fastest > 0) {
      // A challenger whose single step is far slower than the best's cannot win by 5 %: its
      // full timing would only cost the suite time. A second step decides (the first carries the
      // library's warm-up, oneDNN's JIT say).
      double once = st.probe(one_step, gtb::ProbeRule{1, 1e-6, 1});
      if (once > kDropAfterOneStep * fastest) once = std::min(once, st.probe(one_step, gtb::ProbeRule{1, 1e-6, 1}));
      if (once > kDropAfterOneStep * fastest) {
        c["step_ms"] = once * 1e3;
        c["timing"] = "one step (the faster of two): over 1.25 x the best's median, not timed further";
        continue;
      }
    }
    const double t = timed();
    c["step_ms"] = t * 1e3;
    timed_cands.push_back({i, t});
    if (fastest == 0 || t < fastest) fastest = t;
  }
  return timed_cands;
}

// The candidate the record runs: the timed ones checked in order of speed (`verified_step` runs the
// step from the initial parameters against float64), the fastest by the 5 % rule first; one whose
// step fails is never chosen, the next fastest being checked instead. A check costs about a step in
// float64, so checking only what could be chosen keeps the set-up short. The record's check is its
// chosen candidate's (or the fastest's failure when none passes).
struct Chosen {
  std::size_t best = 0;
  mlp::VerifyResult res{false, "no GEMM library ran the step", 0};
  float loss0 = 0;
  bool found = false;
};

Chosen check_fastest(const std::vector<Candidate>& cands, const std::vector<std::pair<std::size_t, double>>& timed_cands,
                     const std::function<mlp::VerifyResult(float&)>& verified_step,
                     const std::function<std::string()>& gemm_path_of, bool mark_untried, gtb::json& candidates) {
  Chosen ch;
  ch.best = timed_cands.empty() ? 0 : timed_cands.front().first;
  std::vector<bool> tried(timed_cands.size(), false);
  for (std::size_t n = 0; n < timed_cands.size() && !ch.found; ++n) {
    std::size_t pick = timed_cands.size();
    for (std::size_t i = 0; i < timed_cands.size(); ++i)
      if (!tried[i] && (pick == timed_cands.size() || gtb::cpu::clearly_faster(timed_cands[i].second, timed_cands[pick].second)))
        pick = i;
    tried[pick] = true;
    const std::size_t ci = timed_cands[pick].first;
    cands[ci].use();
    float loss = 0;
    const mlp::VerifyResult r = verified_step(loss);
    gtb::json& c = candidates[cands[ci].name];
    c["verified"] = r.ok;
    if (gemm_path_of) c["gemm_path"] = gemm_path_of();
    if (!r.ok) {
      c["detail"] = r.detail;
      if (n == 0) ch.res = r, ch.loss0 = loss, ch.best = ci;  // the record's failure when none passes
      continue;
    }
    ch.best = ci, ch.res = r, ch.loss0 = loss, ch.found = true;
  }
  for (std::size_t i = 0; i < timed_cands.size(); ++i)
    if (!tried[i] && mark_untried)
      candidates[cands[timed_cands[i].first].name]["verified"] = "not checked: slower than the chosen library";
  return ch;
}

// The chosen GEMM path of a checked CPU step, and the candidates' timings and checks.
void cpu_gemm_info(gtb::State& st, const mlp::CpuMlp& model, gtb::Precision prec, int rows, const std::string& name,
                   const gtb::json& candidates) {
  st.info("threads", mlp::CpuMlp::threads());
  st.info("blas", gtb::cpu::blas_config());
  if (prec == gtb::Precision::bf16) {
    st.info("gemm_library", name);
    st.info("gemm_path", "BF16 operands (rounded to nearest even as they enter each GEMM), FP32 accumulation, "
                         "per site (" + std::string(model.rows_mode(rows) ? "rows" : "split") +
                         " mode): " + model.gemm_plan().summary());
    st.info("gemm_plan", gtb::gemm_plan_json(model.gemm_plan()));
  } else {
    st.info("gemm_library", gtb::cpu::to_string(model.gemm_lib()));
    st.info("gemm_path", gemm_path(model.gemm_lib()));
  }
  st.info("gemm_candidates", candidates);
}

// Where the timed steps went (thread 0's clock): the GEMM calls, the update, the rest (passes, the
// loss, parallel regions' starts and barriers). A cost model's parts can be set beside them.
void cpu_pieces(gtb::State& st, const mlp::CpuMlp& model) {
  const mlp::CpuMlp::Pieces& pc = model.pieces();
  if (pc.steps > 0 && pc.total > 0) {
    st.counter("share_gemm", pc.gemm / pc.total, "fraction");
    st.counter("share_optimizer", pc.optimizer / pc.total, "fraction");
    st.counter("share_other", std::max(0.0, pc.total - pc.gemm - pc.optimizer) / pc.total, "fraction");
    st.counter("pieces_us_per_step", pc.total / double(pc.steps) * 1e6, "us");
  }
  st.counter("model_host_bytes", double(model.bytes()), "bytes");
}

void cpu_case(gtb::State& st) {
  const mlp::Config cfg = config_of(st);
  const int batch = st.get_int("batch", 1), micro = micro_batches_of(st);
  if (batch % micro) throw std::invalid_argument("train: batch must be a multiple of micro_batches");
  const gtb::Precision prec =
      st.has("precision") ? gtb::precision_from_string(st.get_string("precision")) : gtb::Precision::fp32;
  if (prec != gtb::Precision::fp32 && prec != gtb::Precision::bf16)
    throw gtb::Skip(std::string("the CPU step runs fp32 or bf16 (") + gtb::to_string(prec) +
                    " is a GPU compute mode or precision)");
  mlp::CpuMlp model(cfg, batch / micro, cap_of(st));
  const mlp::Dataset& data = dataset(batch, cfg.input);
  const int rows = batch / micro;
  if (prec == gtb::Precision::bf16) model.set_precision(prec);
  const std::vector<float> init(model.params(), model.params() + model.layout().total);
  auto reset = [&] {
    model.set_params(init);
    model.reset_optimizer();
  };
  // One step from the initial parameters, checked in float64 (layer-local checks).
  mlp::StepCase checked = mlp::step_case(cfg, data, batch, micro, cpu_tolerance(prec));
  auto verified_step = [&](float& loss) {
    reset();
    const mlp::StepCheck c = mlp::check_step_f64(
        mlp::step_probe(model, [&] { return double(model.step(data.x.data(), data.y.data(), batch, micro)); }, rows),
        checked);
    loss = float(c.loss);
    return mlp::VerifyResult{c.ok, c.detail, 0};
  };
  std::vector<Candidate> cands = cpu_candidates(model, prec, rows);
  // The fastest verified candidate for this precision, model and batch (time_candidates,
  // check_fastest). The choice depends on the GEMM shapes and precision only (the optimizer and the
  // activation do not touch the GEMMs): a later record of the same shapes reuses it and checks only
  // its candidate.
  const std::string shapes_key = std::string(gtb::to_string(prec)) + " " + std::to_string(cfg.input) + " " +
                                 std::to_string(cfg.width) + " " + std::to_string(cfg.depth) + " " +
                                 std::to_string(rows) + " " + std::to_string(micro);
  static std::map<std::string, std::pair<std::string, gtb::json>> chosen_before;
  const auto before = chosen_before.find(shapes_key);
  const bool fresh = before == chosen_before.end();
  if (!fresh)
    cands.erase(std::remove_if(cands.begin(), cands.end(),
                               [&](const Candidate& c) { return c.name != before->second.first; }),
                cands.end());
  gtb::json candidates = gtb::json::object();
  if (!fresh) {  // its candidates' timings are the earlier record's
    candidates = before->second.second;
    candidates["chosen_in"] = "an earlier record of the same GEMM shapes and precision";
  }
  auto one_step = [&] { model.step(data.x.data(), data.y.data(), batch, micro); };
  std::vector<std::pair<std::size_t, double>> timed_cands;  // index into cands, seconds
  if (fresh)
    timed_cands = time_candidates(st, cands, reset, one_step, candidates);
  else
    for (std::size_t i = 0; i < cands.size(); ++i) timed_cands.push_back({i, 1.0});
  if (cands.empty()) throw std::logic_error("train: no GEMM candidate for " + shapes_key);
  std::function<std::string()> plan_summary;
  if (prec == gtb::Precision::bf16) plan_summary = [&model] { return model.gemm_plan().summary(); };
  const Chosen ch = check_fastest(cands, timed_cands, verified_step, plan_summary, fresh, candidates);
  if (ch.found && fresh) chosen_before[shapes_key] = {cands[ch.best].name, candidates};
  cands[ch.best].use();
  st.check(ch.res.ok, ch.res.detail, {{"loss_first_step", ch.loss0}, {"tolerance", cpu_tolerance(prec)}});
  if (!ch.res.ok) return;
  st.set_work(batch);
  cpu_gemm_info(st, model, prec, rows, cands[ch.best].name, candidates);
  float last = ch.loss0;
  model.reset_pieces();
  const auto& s = st.exec([&] { last = model.step(data.x.data(), data.y.data(), batch, micro); });
  common_counters(st, model.layout(), batch, s.stats.median);
  cpu_pieces(st, model);
  st.counter("loss_first", ch.loss0, "nats");
  st.counter("loss_last", last, "nats");
  st.counter("steps_taken", model.steps_taken(), "count");
}

#if GTB_HAVE_CUDA
namespace gm = gtb::cuda::mlp;

double tolerance(gm::Precision p) {
  switch (p) {
    case gm::Precision::fp32: return 1e-4;
    case gm::Precision::tf32: return gtb::tf32_gemm_tolerance();  // truncated operands (precision.h)
    case gm::Precision::fp16: return 1e-2;
    case gm::Precision::bf16: return 3e-2;
    default: throw std::invalid_argument(std::string("train: ") + gtb::to_string(p) + " is not a training precision");
  }
  return 1e-2;
}

void gpu_case(gtb::State& st) {
  const mlp::Config cfg = config_of(st);
  const int batch = st.get_int("batch", 1), micro = micro_batches_of(st);
  const gm::Precision prec = st.has("precision") ? gm::precision_from_string(st.get_string("precision")) : gm::Precision::fp32;
  const gm::DataSource src = st.has("data") ? gm::data_source_from_string(st.get_string("data")) : gm::DataSource::device;
  const bool graph = st.has("mode") && st.get_string("mode") == "graph";
  if (st.has("mode") && !graph && st.get_string("mode") != "eager") throw std::invalid_argument("train: mode is eager or graph");
  const mlp::Dataset& data = dataset(batch, cfg.input);
  const std::size_t free0 = gtb::gpu::memory_info().first;
  gm::GpuMlp model(cfg, batch, micro, prec, cap_of(st));
  model.load_data(data.x.data(), data.y.data(), src);
  // Verify one eager step in float64 (layer-local checks on the backend's own tensors). With FP16
  // the first steps may overflow at the initial loss scale and be skipped; the first step that is
  // applied is the one checked.
  mlp::StepCase checked = mlp::step_case(cfg, data, batch, micro, tolerance(prec));
  checked.max_attempts = 40;
  const mlp::StepCheck chk = mlp::check_step_f64(gm::step_probe(model), checked);
  const std::vector<float>& p0 = chk.params_before;
  const std::vector<float>& o0 = chk.opt_before;
  const mlp::ScaleState s0 = chk.scale_before;
  const double loss0 = chk.loss;
  const std::vector<float> g1 = model.grads(), p1 = model.params();
  bool ok = chk.ok;
  std::string detail = chk.detail;
  if (ok && graph) {
    // The captured step must do what the eager step did: replay it from the same state.
    model.set_params(p0);
    model.set_opt_state(o0);
    model.set_scale_state(s0);
    ok = gtb::step::replay_matches(model, g1, p1, prec == gm::Precision::fp32, detail);
  }
  st.check(ok, detail, {{"loss_first_step", loss0}});
  if (!ok) return;
  const std::size_t free1 = gtb::gpu::memory_info().first;
  st.set_work(batch);
  // Host wall clock from a drained queue to a drained queue.
  const auto& s = st.exec([&] { graph ? model.replay() : model.step(); }, [&] { model.sync(); });
  common_counters(st, model.layout(), batch, s.stats.median);
  st.counter("loss_first", loss0, "nats");
  st.counter("loss_last", model.loss(), "nats");
  st.counter("peak_device_bytes", double(model.device_bytes()), "bytes");
  if (free0 >= free1) st.counter("device_mem_delta_bytes", double(free0 - free1), "bytes");
  const mlp::ScaleState sf = model.scale_state();
  st.counter("steps_taken", sf.step, "count");
  if (gm::is_mixed(prec)) {
    st.counter("skipped_steps", sf.skipped, "count");
    st.counter("loss_scale", sf.scale, "x");
  }
  // Outside the timed samples: launches, host enqueue cost, GPU busy fraction, occupancy.
  if (!graph) {
    model.sync();
    const double enqueue = st.probe([&] { model.step(); }, gtb::ProbeRule{1, 0.02, 5});  // 5 steps queued, no sync
    model.sync();
    st.counter("launches_per_step", model.launches_per_step(), "count");
    st.counter("host_enqueue_us_per_step", enqueue * 1e6, "us");
    st.counter("host_enqueue_us_per_launch", enqueue * 1e6 / std::max(1, model.launches_per_step()), "us");
    st.counter("gpu_busy_fraction", model.busy_fraction(3), "fraction");
  }
  if (src != gm::DataSource::pageable) {
    if (!model.has_graph()) model.capture_graph();
    st.counter("graph_nodes", double(model.graph_nodes()), "count");
  }
  gtb::json kernels = gtb::json::array();
  for (const auto& k : model.kernel_info())
    kernels.push_back({{"name", k.name}, {"block", k.block}, {"grid", k.grid}, {"blocks_per_sm", k.blocks_per_sm},
                       {"occupancy", k.occupancy}, {"waves", k.waves}});
  st.info("custom_kernels", kernels);
}
#else
void gpu_case(gtb::State&) { throw gtb::Skip("built without CUDA"); }
#endif

std::vector<std::int64_t> pow2(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

// The quick suite's CPU step: five samples or 0.15 s per record, so the family's share of the quick suite stays
// a few seconds on two cores.
const gtb::RuleChange kQuickRule = gtb::RuleChange().min_samples(5).budget_seconds(0.15);

const char* kStepDoc =
    "one SGD-momentum training step of an MLP (input = width, 16 classes, ReLU): GEMM+bias+act forward, "
    "softmax cross-entropy, weight/input-gradient GEMMs, activation backward, optimizer; metric samples/s; "
    "TFLOP/s counts the GEMM FLOPs executed (6*batch*sum(in*out) less the first layer's input gradient)";

// Each workload's problem axes are declared once and given to both backends: the comparison
// records pair CPU and GPU records by these params, so they must never drift apart.
gtb::Bench& step_bench(const char* workload, gtb::Backend be, const std::function<gtb::Bench&(gtb::Bench&)>& axes) {
  const bool cpu = be == gtb::Backend::cpu;
  gtb::Bench& b = gtb::add("train", workload, cpu ? "fastest_blas" : "cublas", be, cpu ? cpu_case : gpu_case);
  axes(b).rate("throughput", "samples/s", 1.0).rule(gtb::Suite::full, gtb::slow_step_full_rule());
  if (cpu) b.rule(gtb::Suite::quick, kQuickRule);
  if (cpu) b.ceiling("host_fma_fp32_tflops");  // its TFLOP/s counter as a percent of the FMA ceiling
  return b;
}

// ---- batch sweep ----
gtb::Bench& batch_axes(gtb::Bench& b) {
  return b.axis("batch", pow2(1, 8192), {1, 32, 512, 4096})
      .axis("width", std::vector<std::int64_t>{256, 1024}, {256})
      .axis("depth", std::vector<std::int64_t>{4});
}
auto& b_cpu = step_bench("batch_sweep", gtb::Backend::cpu, batch_axes).describe(kStepDoc);
auto& b_gpu = step_bench("batch_sweep", gtb::Backend::cuda, batch_axes)
                  .option("data", std::vector<std::string>{"device", "pinned", "pageable"})
                  .describe(std::string(kStepDoc) + "; data: batch resident on the device, or copied every step "
                                                    "from pinned or pageable host memory");

// ---- model-size sweep (eager vs CUDA Graph on the GPU) ----
gtb::Bench& model_axes(gtb::Bench& b) {
  return b.axis("batch", std::vector<std::int64_t>{256})
      .axis("width", pow2(32, 8192), {64, 1024})
      .axis("depth", std::vector<std::int64_t>{2, 4, 8}, {4});
}
auto& m_cpu = step_bench("model_sweep", gtb::Backend::cpu, model_axes).describe(kStepDoc);
auto& m_gpu = step_bench("model_sweep", gtb::Backend::cuda, model_axes)
                  .option("mode", std::vector<std::string>{"eager", "graph"})
                  .describe(std::string(kStepDoc) + "; mode graph: the step captured once as a CUDA Graph and replayed");

// ---- precision (GELU; SGD and Adam) ----
gtb::Bench& precision_axes(gtb::Bench& b) {
  return b.axis("batch", std::vector<std::int64_t>{1024}, {512})
      .axis("width", std::vector<std::int64_t>{1024, 4096, 8192}, {512})
      .axis("depth", std::vector<std::int64_t>{4});
}
auto& p_cpu = step_bench("precision", gtb::Backend::cpu, precision_axes)
                  .option("precision", std::vector<std::string>{"fp32", "bf16"})
                  .option("optimizer", std::vector<std::string>{"sgd", "adam"})
                  .option("activation", std::vector<std::string>{"gelu"})
                  .describe("the training step (GELU) on the CPU, SGD-momentum or Adam: fp32, or bf16 autocast (GEMM "
                            "operands rounded to BF16, FP32 accumulation, master weights and elementwise passes)")
                  // The quick suite's CPU BF16 step: with Adam only (the optimizer does not touch the
                  // GEMMs, which are all BF16 changes), to keep the quick suite short.
                  .filter([](const gtb::json&, const gtb::json& o, gtb::Suite suite) {
                    return suite != gtb::Suite::quick || o.at("precision") != "bf16" || o.at("optimizer") == "adam";
                  });
auto& p_gpu = step_bench("precision", gtb::Backend::cuda, precision_axes)
                  .option("precision", gtb::names_of(gtb::kPrecisionNames, gtb::kTrainPrecisions))
                  .option("optimizer", std::vector<std::string>{"sgd", "adam"})
                  .option("activation", std::vector<std::string>{"gelu"})
                  .describe("the training step (GELU): fp32, tf32 GEMMs, or fp16/bf16 activations and GEMMs with FP32 "
                            "master weights and dynamic loss scaling (skipped steps counted)");

// ---- gradient accumulation under a memory cap ----
const char* kAccumDoc =
    "the step over `batch` samples as micro_batches accumulated micro-batches; memory_cap_mb (10^6 bytes, 0 = none) "
    "caps the model's own allocations (emulating a smaller device): a batch over it is skipped as out of memory";
gtb::Bench& accum_axes(gtb::Bench& b) {
  return b.axis("batch", std::vector<std::int64_t>{16384, 65536}, {2048})
      .axis("width", std::vector<std::int64_t>{512}, {256})
      .axis("depth", std::vector<std::int64_t>{4})
      .option("micro_batches", std::vector<std::int64_t>{1, 4, 16}, {1, 4})
      .option("memory_cap_mb", std::vector<std::int64_t>{512}, {0});
}
auto& g_cpu = step_bench("grad_accum", gtb::Backend::cpu, accum_axes).describe(kAccumDoc);
auto& g_gpu = step_bench("grad_accum", gtb::Backend::cuda, accum_axes).describe(kAccumDoc);

// Its kernels use OpenBLAS: its core type is selected before any case.
const bool kOpenblasCore = gtb::install_openblas_core_selection();

}  // namespace
