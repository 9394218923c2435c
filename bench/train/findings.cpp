// Train findings: crossover batch, the model size below which the GPU loses, graph and precision gains.
#include "bench/train/findings.h"

#include <algorithm>
#include <map>

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

json findings_from_records(const std::vector<Record>& recs) {
  json f = json::object();
  // Crossover batch per GPU configuration of the batch sweep.
  {
    std::map<std::string, std::pair<json, std::vector<RatePoint>>> groups;
    for (const auto& r : recs) {
      if (!usable(r) || r.backend != Backend::cuda || r.workload != "batch_sweep") continue;
      json key = {{"options", r.options}, {"width", r.params.value("width", -1)}, {"depth", r.params.value("depth", -1)}};
      auto& g = groups[key.dump()];
      g.first = key;
      g.second.push_back({double(param_int(r.params, "batch")), best_cpu(recs, r.workload, r.params), *r.value});
    }
    json arr = json::array();
    for (auto& [k, g] : groups) {
      json e = g.first;
      const auto x = crossover(g.second);
      e["crossover_batch"] = x ? json(*x) : json(nullptr);
      e["meaning"] = x ? "GPU samples/s above the CPU's from this batch size up"
                       : "GPU not above the CPU at the largest batch measured";
      e["points"] = points_json(usable_sorted(g.second), "batch");
      arr.push_back(e);
    }
    if (!arr.empty()) f["crossover_batch"] = arr;
  }
  // Model size below which the GPU is slower, per depth/batch/options of the model sweep.
  {
    std::map<std::string, std::pair<json, std::vector<RatePoint>>> groups;
    std::map<std::string, std::map<double, double>> params_of;  // width -> parameter count
    for (const auto& r : recs) {
      if (!usable(r) || r.backend != Backend::cuda || r.workload != "model_sweep") continue;
      json key = {{"options", r.options}, {"batch", r.params.value("batch", -1)}, {"depth", r.params.value("depth", -1)}};
      auto& g = groups[key.dump()];
      g.first = key;
      const double w = double(param_int(r.params, "width"));
      g.second.push_back({w, best_cpu(recs, r.workload, r.params), *r.value});
      params_of[key.dump()][w] = counter_or(r, "parameters", 0);
    }
    json arr = json::array();
    for (auto& [k, g] : groups) {
      json e = g.first;
      const auto loss = last_gpu_loss(g.second);
      const auto x = crossover(g.second);
      e["gpu_slower_up_to_width"] = loss ? json(*loss) : json(nullptr);
      if (loss) e["gpu_slower_up_to_parameters"] = params_of[k][*loss];
      e["crossover_width"] = x ? json(*x) : json(nullptr);
      e["points"] = points_json(usable_sorted(g.second), "width");
      arr.push_back(e);
    }
    if (!arr.empty()) f["gpu_slower_below"] = arr;
  }
  // CUDA Graph speedup: graph over eager at the same shape and other options.
  {
    json arr = json::array();
    for (const auto& g : recs) {
      if (!usable(g) || g.backend != Backend::cuda || g.workload != "model_sweep" ||
          g.options.value("mode", "") != "graph")
        continue;
      json eager_opts = g.options;
      eager_opts["mode"] = "eager";
      for (const auto& e : recs)
        if (usable(e) && e.backend == Backend::cuda && e.workload == g.workload && e.params == g.params &&
            e.options == eager_opts)
          arr.push_back({{"params", g.params},
                         {"graph_samples_per_s", *g.value},
                         {"eager_samples_per_s", *e.value},
                         {"speedup", *g.value / *e.value}});
    }
    if (!arr.empty()) f["graph_speedup"] = arr;
  }
  // Mixed precision against FP32 at the same shape: speedup and device memory saved.
  {
    json arr = json::array();
    for (const auto& lo : recs) {
      if (!usable(lo) || lo.backend != Backend::cuda || lo.workload != "precision") continue;
      const std::string p = lo.options.value("precision", "");
      if (p == "fp32" || p.empty()) continue;
      json base_opts = lo.options;
      base_opts["precision"] = "fp32";
      for (const auto& fp : recs) {
        if (!usable(fp) || fp.backend != Backend::cuda || fp.workload != lo.workload || fp.params != lo.params ||
            fp.options != base_opts)
          continue;
        json e = {{"params", lo.params}, {"precision", p}, {"speedup_over_fp32", *lo.value / *fp.value}};
        const double m32 = counter_or(fp, "peak_device_bytes", 0), mlo = counter_or(lo, "peak_device_bytes", 0);
        if (m32 > 0 && mlo > 0) {
          e["peak_device_bytes_fp32"] = m32;
          e["peak_device_bytes"] = mlo;
          e["memory_saved_fraction"] = 1.0 - mlo / m32;
        }
        if (lo.counters.count("skipped_steps")) e["skipped_steps"] = counter_or(lo, "skipped_steps", 0);
        arr.push_back(e);
      }
    }
    if (!arr.empty()) f["mixed_precision"] = arr;
  }
  // Achieved TFLOP/s at the largest width measured on the GPU.
  {
    std::int64_t widest = -1;
    for (const auto& r : recs)
      if (usable(r) && r.backend == Backend::cuda && r.counters.count("tflops"))
        widest = std::max(widest, param_int(r.params, "width"));
    json arr = json::array();
    for (const auto& r : recs)
      if (usable(r) && r.backend == Backend::cuda && r.counters.count("tflops") && param_int(r.params, "width") == widest)
        arr.push_back({{"workload", r.workload}, {"params", r.params}, {"options", r.options},
                       {"tflops", counter_or(r, "tflops", 0)}});
    if (!arr.empty()) f["largest_width_tflops"] = arr;
  }
  return f;
}

}  // namespace gtb::mlp
