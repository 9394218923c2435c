// The train family's findings for the report and plots: the GPU/CPU crossover batch, the model
// size below which the GPU loses, the CUDA Graph gain and mixed precision.
#include <algorithm>
#include <cmath>
#include <map>

#include "harness/runtime/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;

json get(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j.at(key) : json(nullptr); }
const json& list(const json& data, const char* key) {
  static const json empty = json::array();
  return data.contains(key) && data.at(key).is_array() ? data.at(key) : empty;
}

std::string model(const json& e, const char* a, const char* b) {
  std::string s = std::string(a) + " " + fx::format(get(e, a), Hint::number, "") + ", " + b + " " +
                  fx::format(get(e, b), Hint::number, "");
  const json o = get(e, "options");
  if (o.is_object() && !o.empty()) s += ", " + fx::params_text(o);
  return s;
}

void sweep_figure(fx::Section& s, const char* id, const char* title, const char* workload, const char* x,
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

const bool kSections = gtb::add_sections("train", "Training steps", 50,
                                         [](const std::vector<gtb::Record>& recs, const json& data, fx::Family& f) {
  const std::string no_gpu = fx::any_number(recs, gtb::Backend::cuda) ? "" : "no GPU record: " + fx::why_none(recs, gtb::Backend::cuda);
  auto& c = f.section("crossover_batch", "GPU/CPU crossover batch");
  auto& ct = c.table("crossover_batch", {{"model"}, {"GPU ahead from batch", "", Hint::count}, {"GPU/CPU at the smallest batch", "", Hint::ratio},
                                         {"smallest batch", "", Hint::count}, {"GPU/CPU at the largest batch", "", Hint::ratio},
                                         {"largest batch", "", Hint::count}});
  std::vector<double> batches;
  for (const auto& e : list(data, "crossover_batch")) {
    const json x = get(e, "crossover_batch"), pts = get(e, "points");
    const bool has_pts = pts.is_array() && !pts.empty();
    if (x.is_number()) batches.push_back(x.get<double>());
    ct.rows.push_back({model(e, "width", "depth"), x.is_number() ? x : json("GPU never ahead"),
                       has_pts ? get(pts.front(), "gpu_over_cpu") : json(nullptr), has_pts ? get(pts.front(), "batch") : json(nullptr),
                       has_pts ? get(pts.back(), "gpu_over_cpu") : json(nullptr), has_pts ? get(pts.back(), "batch") : json(nullptr)});
  }
  if (ct.rows.empty()) c.not_measured = no_gpu.empty() ? "no CPU and GPU batch sweep of the same model" : no_gpu;
  sweep_figure(c, "train_throughput_batch", "Training throughput vs batch size, CPU and GPU (dotted: crossover)", "batch_sweep",
               "batch", {"backend", "variant", "options.data", "params.width", "params.depth"}, batches);

  auto& m = f.section("gpu_slower_below", "Model size below which the GPU loses");
  auto& mt = m.table("gpu_slower_below", {{"model family"}, {"GPU slower up to width", "", Hint::count},
                                          {"parameters at that width", "", Hint::count}, {"GPU ahead from width", "", Hint::count}});
  std::vector<double> widths;
  for (const auto& e : list(data, "gpu_slower_below")) {
    const json w = get(e, "gpu_slower_up_to_width"), p = get(e, "gpu_slower_up_to_parameters"), x = get(e, "crossover_width");
    if (x.is_number()) widths.push_back(x.get<double>());
    mt.rows.push_back({model(e, "batch", "depth"), w.is_number() ? w : json("GPU never slower"),
                       p.is_number() && p.get<double>() > 0 ? p : json(nullptr), x});
  }
  if (mt.rows.empty()) m.not_measured = no_gpu.empty() ? "no CPU and GPU model sweep of the same batch" : no_gpu;
  sweep_figure(m, "train_throughput_model", "Training throughput vs model width, CPU and GPU (dotted: crossover)", "model_sweep",
               "width", {"backend", "variant", "options.mode", "params.batch", "params.depth"}, widths);

  auto& g = f.section("graph_precision", "CUDA Graph gain and mixed precision");
  double lo = INFINITY, hi = 0;
  std::string at_hi;
  for (const auto& e : list(data, "graph_speedup"))
    if (get(e, "speedup").is_number()) {
      const double sp = e.at("speedup").get<double>();
      lo = std::min(lo, sp);
      if (sp > hi) hi = sp, at_hi = fx::params_text(get(e, "params"));
    }
  if (hi > 0) {
    g.line("graph_speedup_low", "CUDA Graph over eager launches, lowest", lo, "", Hint::ratio);
    g.line("graph_speedup_high", "CUDA Graph over eager launches, highest", hi, "", Hint::ratio, "at " + at_hi);
  } else {
    g.line("graph_speedup_high", "CUDA Graph over eager launches", nullptr, "", Hint::ratio, "not measured");
  }
  std::map<std::string, std::pair<double, double>> by;  // precision -> (best speedup, memory saved)
  for (const auto& e : list(data, "mixed_precision")) {
    auto& v = by.insert({e.value("precision", ""), {0.0, -1.0}}).first->second;
    v.first = std::max(v.first, e.value("speedup_over_fp32", 0.0));
    v.second = std::max(v.second, e.value("memory_saved_fraction", -1.0));
  }
  for (const auto& [p, v] : by) {
    g.line("mixed_" + p + "_speedup", p + " training step over FP32, best", v.first, "", Hint::ratio);
    if (v.second >= 0) g.line("mixed_" + p + "_memory_saved", p + " device memory saved, most", v.second, "", Hint::fraction);
  }
  if (by.empty()) g.line("mixed_precision", "Mixed precision", nullptr, "", Hint::ratio, "not measured");
});

}  // namespace
