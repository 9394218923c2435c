// Pitfalls family: code-level causes of slow training, each a controlled A/B on the CPU and the GPU:
// a loss read every step, debug and unoptimised builds, fast-math, and redundant copies.
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/pitfalls/findings.h"
#include "gtb/blas_core.h"
#include "gtb/gtb.h"
#include "kernels/common/verify.h"
#include "kernels/pitfalls/cpu/flag_kernels.h"
#include "kernels/pitfalls/cpu/step_loop.h"
#include "kernels/pitfalls/pitfalls.h"
#include "kernels/pitfalls/reference.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/pitfalls/cuda/flag_kernels.h"
#include "kernels/pitfalls/cuda/flag_run.h"
#include "kernels/pitfalls/cuda/step_loop.h"
#endif

namespace {

namespace pf = gtb::pitfalls;
using gtb::Backend;
using gtb::State;

// The train family's model: input = width, depth 4, 16 classes, ReLU, SGD with momentum.
gtb::mlp::Config config_of(State& st) { return gtb::mlp::bench_config(st.get_int("width", 1)); }

// ---------------------------------------------------------------------------------------------
// The step loop with a habit (loss reads, copies)

void step_counters(State& st, const gtb::mlp::Config& c, int batch, std::int64_t steps_per_rep) {
  const gtb::mlp::Layout lay(c);
  st.info("steps_per_rep", steps_per_rep);
  st.counter("parameters", double(lay.parameters()), "count");
  st.counter("step_gflop", gtb::mlp::step_flops(lay, batch) / 1e9, "GFLOP");
}

// The loop's first step checked against float64 (outside the timed region), then the step's
// counters; false when the check failed (the record is invalid and nothing is timed).
template <class Loop>
bool first_step_checked(State& st, Loop& loop, const gtb::mlp::Config& cfg, int batch, std::int64_t steps_per_rep) {
  const gtb::mlp::VerifyResult v = loop.verify_first_step();
  st.check(v.ok, v.detail);
  if (!v.ok) return false;
  step_counters(st, cfg, batch, steps_per_rep);
  return true;
}

// The FP32 GEMM library of the CPU step at one width and batch: the fastest of the available ones
// on the clean loop (no habit), as the train family chooses its step's library, so that both sides
// of every habit's A/B run the fastest library this machine offers, and the same one. The first
// record at a width and batch chooses (outside any timed region, on a loop of its own); the others
// reuse the choice. Each record still checks its own first step on the chosen library.
struct LibraryChoice {
  gtb::cpu::GemmLib lib = gtb::cpu::GemmLib::openblas;
  gtb::json candidates = gtb::json::object();
};
const LibraryChoice& step_library(State& st, const gtb::mlp::Config& cfg, int batch) {
  static std::map<std::pair<int, int>, LibraryChoice> chosen;
  const auto key = std::make_pair(cfg.width, batch);
  if (const auto it = chosen.find(key); it != chosen.end()) return it->second;
  LibraryChoice c;
  const std::vector<gtb::cpu::LibraryTiming> timed = gtb::cpu::time_libraries([&](gtb::cpu::GemmLib lib) {
    pf::CpuStepLoop clean(cfg, batch, pf::Copy::none, 0);
    clean.set_gemm_lib(lib);
    // Three samples of >= 5 ms after an untimed step (a library's first call carries its set-up).
    return st.probe([&] { clean.run(1); }, gtb::ProbeRule{3, 5e-3, 0});
  });
  for (const auto& t : timed)
    c.candidates[gtb::cpu::to_string(t.lib)] =
        t.available ? gtb::json{{"step_ms", t.seconds * 1e3}} : gtb::json{{"available", false}};
  c.lib = gtb::cpu::fastest_library(timed);
  return chosen.emplace(key, std::move(c)).first->second;
}

void cpu_step_case(State& st, pf::Copy copy, int every) {
  const gtb::mlp::Config cfg = config_of(st);
  const int batch = st.get_int("batch", 1);
  const LibraryChoice& library = step_library(st, cfg, batch);
  pf::CpuStepLoop loop(cfg, batch, copy, every);
  loop.set_gemm_lib(library.lib);
  if (!first_step_checked(st, loop, cfg, batch, 1)) return;
  st.info("threads", gtb::mlp::CpuMlp::threads());
  st.info("gemm_library", gtb::cpu::to_string(library.lib));
  st.info("gemm_candidates", library.candidates);
  // The loop runs its own steps (a loss read every `every` of them): one call times the batch.
  st.exec_batch_self_timed(gtb::Clock::host_wall,
                           [&](std::int64_t reps) { return gtb::batch_seconds(1, [&] { loop.run(reps); }); });
  st.counter("loss_reads", double(loop.loss_reads()), "count");
}

#if GTB_HAVE_CUDA
void gpu_step_case(State& st, pf::Copy copy, int every) {
  const gtb::mlp::Config cfg = config_of(st);
  const int batch = st.get_int("batch", 1);
  pf::GpuStepLoop loop(cfg, batch, copy, every);
  if (!first_step_checked(st, loop, cfg, batch, pf::kGpuStepsPerRep)) return;
  // Host wall clock from a drained queue to a drained queue: a loss read stalls the host, which
  // events between two points on the stream would not see.
  st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t reps) {
    return gtb::batch_seconds(1, [&] { loop.run(reps * pf::kGpuStepsPerRep); }, [&] { loop.sync(); });
  });
  st.counter("loss_reads", double(loop.loss_reads()), "count");
}
#else
void gpu_step_case(State&, pf::Copy, int) { throw gtb::Skip("built without CUDA"); }
#endif

// ---------------------------------------------------------------------------------------------
// Build flags: the same loops compiled with different flags, checked, then timed

const pf::FlagData& flag_data(pf::FlagWork w, std::size_t n) {
  static std::map<std::pair<int, std::size_t>, std::unique_ptr<pf::FlagData>> cache;
  // Records of one workload run together: drop the others' data (GPU sizes reach GBs of references).
  for (auto it = cache.begin(); it != cache.end();) it = it->first.first != static_cast<int>(w) ? cache.erase(it) : std::next(it);
  auto& slot = cache[{static_cast<int>(w), n}];
  if (!slot) slot = std::make_unique<pf::FlagData>(pf::make_flag_data(w, n));
  return *slot;
}

std::size_t elements(State& st) {
  const std::int64_t n = st.get_int("n");
  if (n <= 0) throw std::invalid_argument("pitfalls: n must be > 0, got " + std::to_string(n));
  return static_cast<std::size_t>(n);
}

void error_counters(State& st, const pf::FlagCheck& c) {
  st.counter("max_abs_err", c.max_abs_err, "1");
  st.counter("rel_norm_err", c.rel_norm_err, "1");
}

void cpu_flags_case(State& st, pf::FlagWork w, const std::string& variant) {
  const pf::HostKernels* k = pf::find_host_variant(variant);
  if (!k) throw gtb::Skip(pf::host_isa_unavailable());
  const std::size_t n = elements(st);
  const pf::FlagData& d = flag_data(w, n);
  std::vector<float> out(d.out_size()), out2(d.out2_size());
  auto run = [&] { pf::run_host_variant(*k, d, out.data(), out2.data()); };
  gtb::poison(out.data(), out.size());
  gtb::poison(out2.data(), out2.size());
  run();
  const pf::FlagCheck c = pf::check_flag_output(d, out.data(), out2.data());
  st.check(c.ok, c.detail);
  if (!c.ok) return;
  st.info("flags", k->flags);
  st.info("isa", k->isa);
  error_counters(st, c);
  st.exec(run);
}

#if GTB_HAVE_CUDA
void gpu_flags_case(State& st, pf::FlagWork w, const std::string& variant) {
  const pf::DeviceKernels* k = pf::find_device_variant(variant.c_str());
  if (!k) throw std::logic_error("no device variant " + variant);
  const pf::FlagData& d = flag_data(w, elements(st));
  pf::DeviceFlagRun run(d);
  gtb::cuda::Stream stream;
  run.enqueue(*k, stream.get());
  const pf::FlagCheck c = run.check();
  st.check(c.ok, c.detail);
  if (!c.ok) return;
  st.info("flags", k->flags);
  error_counters(st, c);
  gtb::cuda::exec(st, stream.get(), [&](cudaStream_t s) { run.enqueue(*k, s); });
}
#else
void gpu_flags_case(State&, pf::FlagWork, const std::string&) { throw gtb::Skip("built without CUDA"); }
#endif

// ---------------------------------------------------------------------------------------------
// Registration

// GPU models from launch-bound to compute-bound; the CPU stays at sizes whose steps take ms.
const std::vector<std::int64_t> kGpuWidthFull = {128, 512, 2048, 4096}, kGpuWidthQuick = {128, 1024};
const std::vector<std::int64_t> kGpuBatchFull = {64, 1024}, kGpuBatchQuick = {256};
const std::vector<std::int64_t> kCpuWidthFull = {64, 256, 1024}, kCpuWidthQuick = {64};
const std::vector<std::int64_t> kCpuBatchFull = {32, 256}, kCpuBatchQuick = {64};
// Copies at a small and a large model.
const std::vector<std::int64_t> kGpuCopyWidthFull = {128, 1024, 4096}, kGpuCopyWidthQuick = {128, 2048};
const std::vector<std::int64_t> kCpuCopyWidthFull = {64, 512}, kCpuCopyWidthQuick = {64, 256};
// Elements of the build-flag workloads (multiples of 1024): cache-resident to DRAM-sized.
const std::vector<std::int64_t> kCpuNFull = {1 << 16, 1 << 20, 1 << 23}, kCpuNQuick = {1 << 20};
const std::vector<std::int64_t> kGpuNFull = {1 << 16, 1 << 20, 1 << 24, 1 << 26}, kGpuNQuick = {1 << 20, 1 << 24};

// A short quick rule: the family must add only seconds to the quick suite on a 2-core machine.
const gtb::RuleChange kQuickRule = gtb::RuleChange().budget_seconds(0.12).min_samples(5);

const char* kStepTime = "step_time = median wall time per training step (us)";

void register_steps() {
  const int gpu_every[] = {1, 10, 100, 0};
  for (int e : gpu_every)
    gtb::add("pitfalls", "loss_read", pf::sync_variant(e), Backend::cuda,
             [e](State& st) { gpu_step_case(st, pf::Copy::none, e); })
        .axis("width", kGpuWidthFull, kGpuWidthQuick)
        .axis("batch", kGpuBatchFull, kGpuBatchQuick)
        .time("step_time", "us", double(pf::kGpuStepsPerRep) * 1e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("the train family's FP32 step (depth 4), the mean loss read back to the host " +
                  (e ? "every " + std::to_string(e) + " steps (loss.item())" : std::string("never (clean loop)")) +
                  "; 100 steps per repetition; " + kStepTime);
  for (int e : {1, 0})
    gtb::add("pitfalls", "loss_read", pf::sync_variant(e), Backend::cpu,
             [e](State& st) { cpu_step_case(st, pf::Copy::none, e); })
        .axis("width", kCpuWidthFull, kCpuWidthQuick)
        .axis("batch", kCpuBatchFull, kCpuBatchQuick)
        .time("step_time", "us", 1e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe(std::string("the train family's CPU step (depth 4), the loss read ") + (e ? "every step" : "never") +
                  " (the CPU step is synchronous: the reference); " + kStepTime);
  for (pf::Copy c : pf::kCopies) {
    const std::string what = c == pf::Copy::none          ? "no extra copy (clean loop)"
                             : c == pf::Copy::batch        ? "the same batch copied from pageable host memory every step"
                             : c == pf::Copy::batch_pinned ? "the same batch copied from pinned host memory every step"
                             : c == pf::Copy::activation   ? "the first hidden activation copied to the host every step"
                                                           : "the weights copied from a host copy every step";
    gtb::add("pitfalls", "copies", pf::to_string(c), Backend::cuda, [c](State& st) { gpu_step_case(st, c, 0); })
        .axis("width", kGpuCopyWidthFull, kGpuCopyWidthQuick)
        .axis("batch", kGpuBatchFull, kGpuBatchQuick)
        .time("step_time", "us", double(pf::kGpuStepsPerRep) * 1e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("the train family's FP32 step (depth 4), " + what + "; 100 steps per repetition; " + kStepTime);
    if (c == pf::Copy::batch_pinned) continue;  // no pinned memory on the CPU
    gtb::add("pitfalls", "copies", pf::to_string(c), Backend::cpu, [c](State& st) { cpu_step_case(st, c, 0); })
        .axis("width", kCpuCopyWidthFull, kCpuCopyWidthQuick)
        .axis("batch", kCpuBatchFull, kCpuBatchQuick)
        .time("step_time", "us", 1e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("the train family's CPU step (depth 4), " + what + " (a host memory copy); " + kStepTime);
  }
}

std::string flag_what(pf::FlagWork w) {
  switch (w) {
    case pf::FlagWork::chain: return "y = gelu_tanh(1.5x + 0.25) (the vectorize chain)";
    case pf::FlagWork::act: return "the MLP's bias + GELU forward and backward (a, dz), rows of 256";
    case pf::FlagWork::xent: return "softmax cross-entropy per row of 16 logits (loss, gradient)";
    case pf::FlagWork::reduce: return "sums of x*x over blocks of 1024 elements, float accumulation";
  }
  return "?";
}

void register_flags() {
  for (pf::FlagWork w : pf::kFlagWorks) {
    const std::string workload = std::string("build_") + pf::to_string(w);
    const bool quick_cpu = w == pf::FlagWork::chain || w == pf::FlagWork::act;
    for (const char* v : {"O0", "O2", "O3", "O3_isa"}) {
      const std::string variant = v;
      auto& b = gtb::add("pitfalls", workload, variant, Backend::cpu, [w, variant](State& st) { cpu_flags_case(st, w, variant); })
                    .axis("n", kCpuNFull, kCpuNQuick)
                    .time("time", "us", 1e-6)
                    .rule(gtb::Suite::quick, kQuickRule)
                    .describe(flag_what(w) + ", all cores, compiled with " +
                              (variant == "O3_isa" ? std::string("-O3 -march=<the widest x86-64 level this CPU runs>")
                                                   : "-" + variant) +
                              "; checked against float64 first; time per call");
      if (!quick_cpu) b.only(gtb::Suite::full);
    }
    for (const char* v : {"default", "lineinfo", "G", "fast_math"}) {
      const std::string variant = v;
      gtb::add("pitfalls", workload, variant, Backend::cuda, [w, variant](State& st) { gpu_flags_case(st, w, variant); })
          .axis("n", kGpuNFull, kGpuNQuick)
          .time("time", "us", 1e-6)
          .rule(gtb::Suite::quick, kQuickRule)
          .describe(flag_what(w) + ", nvcc " +
                    (variant == "default" ? std::string("defaults") : variant == "G" ? "-G" : variant == "lineinfo" ? "-lineinfo" : "--use_fast_math") +
                    "; checked against float64 first; CUDA events, time per launch");
    }
  }
}

bool register_all() {
  register_steps();
  register_flags();
  return true;
}
// Its kernels use OpenBLAS: its core type is selected before any case.
const bool kOpenblasCore = gtb::install_openblas_core_selection();
const bool kRegistered = register_all();

}  // namespace
