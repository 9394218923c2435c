// The train family's findings for the report and plots: the GPU/CPU crossover batch, the model
// size below which the GPU loses, the CUDA Graph gain and mixed precision.
#include <algorithm>
#include <cmath>
#include <map>

#include "bench/train/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;

namespace mlp = gtb::mlp;

using fx::or_null;

// "width 512, depth 4, data=device": a model and its options.
std::string model(const char* a, int av, const char* b, int bv, const json& options) {
  std::string s = std::string(a) + " " + fx::format(av, Hint::number, "") + ", " + b + " " + fx::format(bv, Hint::number, "");
  if (options.is_object() && !options.empty()) s += ", " + fx::params_text(options);
  return s;
}

// The title promises only what the figure holds: a GPU line and a crossover mark when they exist.
std::string sweep_title(const std::string& what, bool gpu, const std::vector<double>& crossings) {
  if (!gpu) return what + ", CPU only (no GPU record: no GPU line, no crossover)";
  if (crossings.empty()) return what + ", CPU and GPU (no crossover in the measured range)";
  return what + ", CPU and GPU (dotted: where the GPU overtakes the CPU)";
}

void sweep_figure(fx::Section& s, const char* id, const std::string& title, const char* workload, const char* x,
                  std::vector<std::string> series, const std::vector<double>& crossings) {
  auto& g = s.figure(id, title);
  g.where = {{"workload", workload}};
  g.x = {std::string("params.") + x};
  g.series = std::move(series);
  g.logx = 2;
  g.logy = true;
  g.xlabel = x;
  g.ylabel = "training samples/s";
  for (double c : crossings) g.vlines.push_back({c, "GPU ahead from " + fx::format(c, Hint::number, "")});
}

void sections(const std::vector<gtb::Record>& recs, const mlp::Findings& found, fx::Family& f) {
  const std::string no_gpu = fx::none_note(recs, gtb::Backend::cuda, "no GPU record: ");
  auto& c = f.section("crossover_batch", "GPU/CPU crossover batch");
  auto& ct = c.table("crossover_batch", {{"model"}, {"GPU ahead from batch", "", Hint::count}, {"GPU/CPU at the smallest batch", "", Hint::ratio},
                                         {"smallest batch", "", Hint::count}, {"GPU/CPU at the largest batch", "", Hint::ratio},
                                         {"largest batch", "", Hint::count}});
  std::vector<double> batches;
  for (const auto& e : found.crossover_batch) {
    const auto& pts = e.points;
    const bool has_pts = !pts.empty();
    if (e.crossover_batch) batches.push_back(*e.crossover_batch);
    ct.rows.push_back({model("width", e.width, "depth", e.depth, e.options),
                       e.crossover_batch ? json(*e.crossover_batch) : json("GPU never ahead"),
                       has_pts ? json(pts.front().gpu / pts.front().cpu) : json(nullptr), has_pts ? json(pts.front().x) : json(nullptr),
                       has_pts ? json(pts.back().gpu / pts.back().cpu) : json(nullptr), has_pts ? json(pts.back().x) : json(nullptr)});
  }
  if (ct.rows.empty()) c.not_measured = no_gpu.empty() ? "no CPU and GPU batch sweep of the same model" : no_gpu;
  sweep_figure(c, "train_throughput_batch", sweep_title("Training throughput vs batch size", no_gpu.empty(), batches), "batch_sweep",
               "batch", {"backend", "variant", "options.data", "params.width", "params.depth"}, batches);

  auto& m = f.section("gpu_slower_below", "Model size below which the GPU loses");
  auto& mt = m.table("gpu_slower_below", {{"model family"}, {"GPU slower up to width", "", Hint::count},
                                          {"parameters at that width", "", Hint::count}, {"GPU ahead from width", "", Hint::count}});
  std::vector<double> widths;
  for (const auto& e : found.gpu_slower_below) {
    if (e.crossover_width) widths.push_back(*e.crossover_width);
    mt.rows.push_back({model("batch", e.batch, "depth", e.depth, e.options),
                       e.up_to_width ? json(*e.up_to_width) : json("GPU never slower"),
                       e.up_to_width && e.up_to_parameters > 0 ? json(e.up_to_parameters) : json(nullptr),
                       or_null(e.crossover_width)});
  }
  if (mt.rows.empty()) m.not_measured = no_gpu.empty() ? "no CPU and GPU model sweep of the same batch" : no_gpu;
  sweep_figure(m, "train_throughput_model", sweep_title("Training throughput vs model width", no_gpu.empty(), widths), "model_sweep",
               "width", {"backend", "variant", "options.mode", "params.batch", "params.depth"}, widths);

  auto& g = f.section("graph_precision", "CUDA Graph gain and mixed precision");
  double lo = INFINITY, hi = 0;
  std::string at_hi;
  for (const auto& e : found.graph_speedup) {
    const double sp = e.speedup;
    lo = std::min(lo, sp);
    if (sp > hi) hi = sp, at_hi = fx::params_text(e.params);
  }
  if (hi > 0) {
    g.line("graph_speedup_low", "CUDA Graph over eager launches, lowest", lo, "", Hint::ratio);
    g.line("graph_speedup_high", "CUDA Graph over eager launches, highest", hi, "", Hint::ratio, "at " + at_hi);
  } else {
    g.line("graph_speedup_high", "CUDA Graph over eager launches", nullptr, "", Hint::ratio, "not measured");
  }
  // Per backend and precision: the best speedup over FP32 (with where), and the most device memory
  // saved. A low precision step slower than FP32 shows as a ratio under 1, never as "not measured".
  struct Best {
    double speedup = 0, memory_saved = -1;
    std::string at;
  };
  std::map<std::pair<std::string, std::string>, Best> by;  // (backend, precision)
  for (const auto& e : found.mixed_precision) {
    Best& v = by[{gtb::to_string(e.backend), e.precision}];
    if (e.speedup_over_fp32 > v.speedup)
      v.speedup = e.speedup_over_fp32, v.at = fx::params_text(e.params) +
                                             (e.options.contains("optimizer") ? ", " + e.options.value("optimizer", "") : "");
    v.memory_saved = std::max(v.memory_saved, e.memory_saved_fraction.value_or(-1.0));
  }
  for (const auto& [key, v] : by) {
    const auto& [backend, p] = key;
    // The GPU lines keep their ids; the CPU's are named for their backend.
    const std::string id = "mixed_" + p + (backend == "cuda" ? "" : "_" + backend);
    const std::string who = backend == "cuda" ? "GPU" : "CPU";
    g.line(id + "_speedup", p + " training step over FP32 (" + who + "), best", v.speedup, "", Hint::ratio,
           "at " + v.at + (v.speedup < 1 ? "; slower than FP32 at every shape measured" : ""));
    if (v.memory_saved >= 0)
      g.line(id + "_memory_saved", p + " device memory saved, most", v.memory_saved, "", Hint::fraction);
  }
  if (by.empty()) g.line("mixed_precision", "Mixed precision", nullptr, "", Hint::ratio, "not measured");
}

const bool kFindings = gtb::add_family_findings<mlp::Findings>("train", "Training steps", 50, mlp::compute_findings,
                                                               mlp::to_json, sections);

}  // namespace
