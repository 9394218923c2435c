// Train findings: crossover batch, the model size below which the GPU loses, graph and precision gains.
#include "bench/train/findings.h"

#include <algorithm>
#include <map>

#include "gtb/findings.h"

namespace gtb::mlp {

namespace {
std::vector<RatePoint> usable_sorted(std::vector<RatePoint> p) {
  p.erase(std::remove_if(p.begin(), p.end(), [](const RatePoint& q) { return !(q.cpu > 0) || !(q.gpu > 0); }),
          p.end());
  std::sort(p.begin(), p.end(), [](const RatePoint& a, const RatePoint& b) { return a.x < b.x; });
  return p;
}


double counter_or(const Record& r, const std::string& name, double dflt) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? dflt : it->second.value;
}

// Best CPU value of a workload at exactly these params.
double best_cpu(const std::vector<Record>& recs, const std::string& workload, const json& params) {
  double best = 0;
  for (const auto& r : recs)
    if (usable(r) && r.backend == Backend::cpu && r.workload == workload && r.params == params)
      best = std::max(best, *r.value);
  return best;
}

json points_json(const std::vector<RatePoint>& pts, const char* xname) {
  json a = json::array();
  for (const auto& p : pts) a.push_back({{xname, p.x}, {"cpu", p.cpu}, {"gpu", p.gpu}, {"gpu_over_cpu", p.gpu / p.cpu}});
  return a;
}

std::int64_t param_int(const json& params, const char* k) {
  return params.contains(k) && params[k].is_number() ? params[k].get<std::int64_t>() : -1;
}
}  // namespace

std::optional<double> crossover(std::vector<RatePoint> points) {
  const auto p = usable_sorted(std::move(points));
  if (p.empty() || !(p.back().gpu > p.back().cpu)) return std::nullopt;
  std::size_t i = p.size() - 1;
  while (i > 0 && p[i - 1].gpu > p[i - 1].cpu) --i;
  return p[i].x;
}

std::optional<double> last_gpu_loss(std::vector<RatePoint> points) {
  const auto p = usable_sorted(std::move(points));
  for (std::size_t i = p.size(); i-- > 0;)
    if (!(p[i].gpu > p[i].cpu)) return p[i].x;
  return std::nullopt;
}

namespace {
// The usable CUDA records of a sweep, grouped by their options and the two params held fixed (`a`,
// `b`; -1 when absent), in the order of their keys: each group's points (the swept param `x`, the
// best CPU rate at the same params, the GPU rate) and the records they came from, in record order.
struct SweepGroup {
  json options;
  int a = -1, b = -1;
  std::vector<RatePoint> points;
  std::vector<const Record*> records;
};
std::vector<SweepGroup> sweep_groups(const std::vector<Record>& recs, const std::string& workload, const char* a,
                                     const char* b, const char* x) {
  std::map<std::string, SweepGroup> groups;
  for (const auto& r : recs) {
    if (!usable(r) || r.backend != Backend::cuda || r.workload != workload) continue;
    const int va = r.params.value(a, -1), vb = r.params.value(b, -1);
    const json key = {{"options", r.options}, {a, va}, {b, vb}};
    auto& g = groups[key.dump()];
    g.options = r.options, g.a = va, g.b = vb;
    g.points.push_back({double(param_int(r.params, x)), best_cpu(recs, r.workload, r.params), *r.value});
    g.records.push_back(&r);
  }
  std::vector<SweepGroup> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

// Crossover batch per GPU configuration of the batch sweep.
void crossover_batches(const std::vector<Record>& recs, Findings& f) {
  for (auto& s : sweep_groups(recs, "batch_sweep", "width", "depth", "batch")) {
    CrossoverBatch g;
    g.options = std::move(s.options), g.width = s.a, g.depth = s.b;
    g.crossover_batch = crossover(s.points);
    g.points = usable_sorted(s.points);
    f.crossover_batch.push_back(std::move(g));
  }
}

// Model size below which the GPU is slower, per depth/batch/options of the model sweep.
void gpu_slower_below(const std::vector<Record>& recs, Findings& f) {
  for (auto& s : sweep_groups(recs, "model_sweep", "batch", "depth", "width")) {
    GpuSlowerBelow g;
    g.options = std::move(s.options), g.batch = s.a, g.depth = s.b;
    std::map<double, double> params_of;  // width -> parameter count (the group's last record of a width)
    for (std::size_t i = 0; i < s.points.size(); ++i)
      params_of[s.points[i].x] = counter_or(*s.records[i], "parameters", 0);
    g.up_to_width = last_gpu_loss(s.points);
    if (g.up_to_width) g.up_to_parameters = params_of[*g.up_to_width];
    g.crossover_width = crossover(s.points);
    g.points = usable_sorted(s.points);
    f.gpu_slower_below.push_back(std::move(g));
  }
}

// Mixed precision against FP32 at the same shape and options, on either backend: speedup and
// device memory saved.
void mixed_precision(const std::vector<Record>& recs, Findings& f) {
  for (const auto& lo : recs) {
    if (!usable(lo) || lo.workload != "precision") continue;
    const std::string p = lo.options.value("precision", "");
    if (p == "fp32" || p.empty()) continue;
    json base_opts = lo.options;
    base_opts["precision"] = "fp32";
    for (const auto& fp : recs) {
      if (!usable(fp) || fp.backend != lo.backend || fp.workload != lo.workload || fp.params != lo.params ||
          fp.options != base_opts)
        continue;
      MixedPrecision e;
      e.backend = lo.backend, e.params = lo.params, e.options = lo.options, e.precision = p;
      const auto v = value_ratio(lo, fp);  // paired where measured as a pair
      if (!v) continue;
      e.speedup_over_fp32 = v->ratio;
      e.paired_rounds = v->rounds;
      const double m32 = counter_or(fp, "peak_device_bytes", 0), mlo = counter_or(lo, "peak_device_bytes", 0);
      if (m32 > 0 && mlo > 0) {
        e.peak_device_bytes_fp32 = m32;
        e.peak_device_bytes = mlo;
        e.memory_saved_fraction = 1.0 - mlo / m32;
      }
      if (lo.counters.count("skipped_steps")) e.skipped_steps = counter_or(lo, "skipped_steps", 0);
      f.mixed_precision.push_back(std::move(e));
    }
  }
}

// Every usable record as the cost model's step: its configuration in the model's keys and its seconds.
void measured_steps(const std::vector<Record>& recs, Findings& f) {
  for (const auto& r : recs) {
    if (!usable(r) || !r.stats) continue;
    const auto batch = param_int(r.params, "batch");
    if (batch <= 0 || param_int(r.params, "width") <= 0) continue;
    const double step_ms = counter_or(r, "step_ms", 0);
    const double seconds = step_ms > 0 ? step_ms * 1e-3 : double(batch) / *r.value;
    json config = {{"model", "mlp"},
                   {"width", param_int(r.params, "width")},
                   {"depth", param_int(r.params, "depth")},
                   {"batch", batch},
                   {"precision", r.options.value("precision", r.params.value("precision", "fp32"))},
                   {"optimizer", r.options.value("optimizer", r.params.value("optimizer", "sgd"))},
                   {"activation", r.options.value("activation", r.params.value("activation", "relu"))},
                   {"input_bytes_per_sample", 0}};
    const auto micro = r.options.contains("micro_batches") ? r.options.value("micro_batches", 1)
                                                           : r.params.value("micro_batches", 1);
    if (micro > 1) config["micro_batches"] = micro;
    if (r.options.value("mode", "") == "graph") config["cuda_graph"] = true;
    // A batch copied from host memory every step: its inputs (width floats) and its label.
    const std::string data = r.options.value("data", "");
    if (data == "pinned" || data == "pageable") {
      config["input_bytes_per_sample"] = 4 * param_int(r.params, "width") + 4;
      config["host_memory"] = data;
    }
    f.measured_steps.push_back({"", r.id, r.backend, seconds, config});
  }
}
}  // namespace

Findings compute_findings(const std::vector<Record>& recs) {
  Findings f;
  crossover_batches(recs, f);
  gpu_slower_below(recs, f);
  // CUDA Graph speedup: graph over eager at the same shape and other options.
  for (const auto& g : recs) {
    if (!usable(g) || g.backend != Backend::cuda || g.workload != "model_sweep" || g.options.value("mode", "") != "graph")
      continue;
    json eager_opts = g.options;
    eager_opts["mode"] = "eager";
    for (const auto& e : recs)
      if (usable(e) && e.backend == Backend::cuda && e.workload == g.workload && e.params == g.params &&
          e.options == eager_opts)
        if (const auto v = value_ratio(g, e))  // paired where measured as a pair
          f.graph_speedup.push_back({g.params, *g.value, *e.value, v->ratio, v->rounds});
  }
  mixed_precision(recs, f);
  // Achieved TFLOP/s at the largest width measured on the GPU.
  std::int64_t widest = -1;
  for (const auto& r : recs)
    if (usable(r) && r.backend == Backend::cuda && r.counters.count("tflops"))
      widest = std::max(widest, param_int(r.params, "width"));
  for (const auto& r : recs)
    if (usable(r) && r.backend == Backend::cuda && r.counters.count("tflops") && param_int(r.params, "width") == widest)
      f.largest_width_tflops.push_back({r.workload, r.params, r.options, counter_or(r, "tflops", 0)});
  measured_steps(recs, f);
  for (const char* low : {"bf16", "fp16", "tf32"})
    f.add_pairs(cost::pairs_differing_in(f.measured_steps, "precision", {json("fp32")}, json(low), low));
  f.add_pairs(cost::pairs_differing_in(f.measured_steps, "micro_batches", {2, 4, 8, 16, 32, 64}, nullptr, "larger_batch", "1"));
  f.add_pairs(cost::pairs_differing_in(f.measured_steps, "cuda_graph", {nullptr}, true, "cuda_graphs", "false"));
  f.add_pairs(cost::pairs_differing_in(f.measured_steps, "host_memory", {json("pageable")}, json("pinned"), "pinned_memory"));
  return f;
}

void to_json(const Findings& found, json& f) {
  cost::write_evidence(f, found);
  using gtb::findings::or_null;
  json arr = json::array();
  for (const auto& g : found.crossover_batch)
    arr.push_back({{"options", g.options},
                   {"width", g.width},
                   {"depth", g.depth},
                   {"crossover_batch", or_null(g.crossover_batch)},
                   {"meaning", g.crossover_batch ? "GPU samples/s above the CPU's from this batch size up"
                                                 : "GPU not above the CPU at the largest batch measured"},
                   {"points", points_json(g.points, "batch")}});
  if (!arr.empty()) f["crossover_batch"] = arr;
  arr = json::array();
  for (const auto& g : found.gpu_slower_below) {
    json e = {{"options", g.options}, {"batch", g.batch}, {"depth", g.depth}};
    e["gpu_slower_up_to_width"] = or_null(g.up_to_width);
    if (g.up_to_width) e["gpu_slower_up_to_parameters"] = g.up_to_parameters;
    e["crossover_width"] = or_null(g.crossover_width);
    e["points"] = points_json(g.points, "width");
    arr.push_back(e);
  }
  if (!arr.empty()) f["gpu_slower_below"] = arr;
  arr = json::array();
  for (const auto& g : found.graph_speedup) {
    arr.push_back({{"params", g.params},
                   {"graph_samples_per_s", g.graph_samples_per_s},
                   {"eager_samples_per_s", g.eager_samples_per_s},
                   {"speedup", g.speedup}});
    if (g.paired_rounds > 0) arr.back()["paired_rounds"] = g.paired_rounds;  // measured as a pair
  }
  if (!arr.empty()) f["graph_speedup"] = arr;
  arr = json::array();
  for (const auto& m : found.mixed_precision) {
    json e = {{"backend", to_string(m.backend)},
              {"params", m.params},
              {"options", m.options},
              {"precision", m.precision},
              {"speedup_over_fp32", m.speedup_over_fp32}};
    if (m.paired_rounds > 0) e["paired_rounds"] = m.paired_rounds;  // measured as a pair
    if (m.memory_saved_fraction) {
      e["peak_device_bytes_fp32"] = m.peak_device_bytes_fp32;
      e["peak_device_bytes"] = m.peak_device_bytes;
      e["memory_saved_fraction"] = *m.memory_saved_fraction;
    }
    if (m.skipped_steps) e["skipped_steps"] = *m.skipped_steps;
    arr.push_back(e);
  }
  if (!arr.empty()) f["mixed_precision"] = arr;
  arr = json::array();
  for (const auto& w : found.largest_width_tflops)
    arr.push_back({{"workload", w.workload}, {"params", w.params}, {"options", w.options}, {"tflops", w.tflops}});
  if (!arr.empty()) f["largest_width_tflops"] = arr;
}

}  // namespace gtb::mlp
