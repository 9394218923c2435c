// Transformer findings: configurations, attention share, materialised vs fused memory, crossover, graph, steps.
#include "bench/transformer/findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "gtb/findings.h"

namespace gtb::xfmr {

namespace {
const char* kFamily = "transformer";

std::optional<double> counter(const Record& r, const std::string& name) {
  auto it = r.counters.find(name);
  if (it == r.counters.end() || !std::isfinite(it->second.value)) return std::nullopt;
  return it->second.value;
}
int param_int(const json& p, const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<int>() : -1; }
double param_num(const json& p, const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<double>() : 0.0; }
bool ours(const Record& r) { return r.family == kFamily; }
bool out_of_memory(const Record& r) {
  return r.status == Status::skipped && r.status_detail.rfind("out of memory", 0) == 0;
}
using gtb::findings::or_null;
// The step's memory: the host arrays on the CPU, the allocator's high-water mark on a GPU.
std::optional<double> step_bytes(const Record& r) {
  return r.backend == Backend::cpu ? counter(r, "host_bytes") : counter(r, "peak_device_bytes");
}
json without(json o, const char* key) {
  if (o.is_object()) o.erase(key);
  return o;
}

// Attention share against seq_len, per backend, variant and model.
void attention_shares(const std::vector<Record>& recs, Findings& f) {
  std::map<std::string, AttentionShare> groups;
  for (const Record& r : recs) {
    if (!ours(r) || !usable(r) || r.workload != "seq_sweep") continue;
    const auto share = counter(r, "share_attention");
    if (!share) continue;
    AttentionShare key;
    key.backend = r.backend, key.variant = r.variant, key.options = r.options;
    key.layers = param_int(r.params, "layers"), key.d_model = param_int(r.params, "d_model");
    key.heads = param_int(r.params, "heads");
    const std::string k = json{to_string(key.backend), key.variant, key.options, key.layers, key.d_model, key.heads}.dump();
    auto& g = groups.insert({k, key}).first->second;
    g.points.push_back({param_num(r.params, "seq_len"), param_num(r.params, "batch"), *share, *r.value, r.id});
  }
  for (auto& [k, g] : groups) {
    std::sort(g.points.begin(), g.points.end(), [](const SharePoint& a, const SharePoint& b) { return a.seq_len < b.seq_len; });
    f.attention_share.push_back(std::move(g));
  }
}

// Materialised vs fused at the same backend, params and options (every workload that ran both).
void memory_pairs(const std::vector<Record>& recs, Findings& f) {
  std::map<std::string, MemoryPair> pairs;
  std::map<std::string, std::pair<const Record*, const Record*>> sides;  // usable (materialised, fused)
  for (const Record& r : recs) {
    if (!ours(r)) continue;
    const bool mat = r.variant == "materialised";
    if (!mat && r.variant != "fused") continue;
    const std::string k = json{to_string(r.backend), r.workload, r.params, r.options}.dump();
    MemoryPair& p = pairs[k];
    p.backend = r.backend, p.params = r.params, p.options = r.options;
    if (usable(r)) {
      (mat ? p.materialised_bytes : p.fused_bytes) = step_bytes(r);
      (mat ? p.materialised_tokens_per_s : p.fused_tokens_per_s) = *r.value;
      (mat ? sides[k].first : sides[k].second) = &r;
    } else if (out_of_memory(r)) {
      (mat ? p.materialised_oom : p.fused_oom) = r.status_detail;
    }
  }
  for (auto& [k, p] : pairs) {
    const bool mat_side = p.materialised_bytes || !p.materialised_oom.empty();
    const bool fused_side = p.fused_bytes || !p.fused_oom.empty();
    if (!mat_side || !fused_side) continue;
    if (p.materialised_bytes && p.fused_bytes && *p.materialised_bytes > 0)
      p.memory_saved_fraction = 1.0 - *p.fused_bytes / *p.materialised_bytes;
    // The speed-up from the pair's rounds where the two were measured as a pair (value_ratio).
    if (const auto [m, fu] = sides[k]; m && fu && *p.materialised_tokens_per_s > 0)
      if (const auto v = value_ratio(*fu, *m)) p.fused_speedup = v->ratio, p.paired_rounds = v->rounds;
    f.memory.push_back(p);
  }
  std::sort(f.memory.begin(), f.memory.end(), [](const MemoryPair& a, const MemoryPair& b) {
    return json{to_string(a.backend), a.options, param_num(a.params, "d_model"), param_num(a.params, "seq_len"),
                param_num(a.params, "batch")} <
           json{to_string(b.backend), b.options, param_num(b.params, "d_model"), param_num(b.params, "seq_len"),
                param_num(b.params, "batch")};
  });
  // Per backend, the smallest seq_len of each configuration where materialised ran out and fused ran.
  std::map<std::string, OomPoint> oom;
  for (const MemoryPair& p : f.memory) {
    if (p.materialised_oom.empty() || !p.fused_bytes) continue;
    const std::string k =
        json{to_string(p.backend), p.options, param_int(p.params, "d_model"), param_int(p.params, "layers")}.dump();
    const double s = param_num(p.params, "seq_len");
    auto it = oom.find(k);
    if (it != oom.end() && it->second.seq_len <= s) continue;
    oom[k] = OomPoint{p.backend, p.options, param_int(p.params, "d_model"), param_int(p.params, "layers"), s,
                      param_num(p.params, "batch"), p.materialised_oom};
  }
  for (auto& [k, o] : oom) f.materialised_oom.push_back(o);
}

// The crossover: problems both backends ran, each side at its fastest record (a GPU problem runs
// eager and as a graph; the memory cap does not change a step that fits).
void crossover_points(const std::vector<Record>& recs, Findings& f) {
  std::map<std::string, CrossoverPoint> both;
  std::map<std::string, bool> has_cpu, has_gpu;
  for (const Record& r : recs) {
    if (!ours(r) || !usable(r) || (r.backend != Backend::cpu && r.backend != Backend::cuda)) continue;
    const std::string precision = r.options.value("precision", "fp32");
    const std::string k = json{r.workload, r.variant, precision, r.params}.dump();
    CrossoverPoint& p = both[k];
    p.workload = r.workload, p.variant = r.variant, p.precision = precision, p.params = r.params;
    p.tokens_per_step = param_num(r.params, "batch") * param_num(r.params, "seq_len");
    const bool cpu = r.backend == Backend::cpu;
    double& best = cpu ? p.cpu_tokens_per_s : p.gpu_tokens_per_s;
    if (*r.value > best) best = *r.value, (cpu ? p.cpu_record : p.gpu_record) = r.id;
    (cpu ? has_cpu : has_gpu)[k] = true;
  }
  for (auto& [k, p] : both)
    if (has_cpu[k] && has_gpu[k]) f.crossover.points.push_back(p);
  std::sort(f.crossover.points.begin(), f.crossover.points.end(), [](const CrossoverPoint& a, const CrossoverPoint& b) {
    return std::tie(a.precision, a.variant, a.tokens_per_step, a.workload) <
           std::tie(b.precision, b.variant, b.tokens_per_step, b.workload);
  });
  // Per precision and attention: the smallest tokens per step from which the GPU is ahead at every
  // larger paired point; the crossover is the smallest of those over the groups.
  std::map<std::string, std::vector<const CrossoverPoint*>> groups;
  for (const auto& p : f.crossover.points) groups[p.precision + " " + p.variant].push_back(&p);
  bool gpu_ahead_somewhere = false;
  for (const auto& [g, pts] : groups) {
    std::optional<double> from;
    for (auto it = pts.rbegin(); it != pts.rend(); ++it) {
      if ((*it)->gpu_tokens_per_s <= (*it)->cpu_tokens_per_s) break;
      from = (*it)->tokens_per_step;
    }
    gpu_ahead_somewhere = gpu_ahead_somewhere || from;
    if (from && (!f.crossover.tokens_per_step || *from < *f.crossover.tokens_per_step)) f.crossover.tokens_per_step = from;
  }
  bool gpu = false;
  for (const Record& r : recs) gpu = gpu || (ours(r) && usable(r) && r.backend == Backend::cuda);
  if (!gpu) {
    std::string why = "no GPU record of this family";
    for (const Record& r : recs)
      if (ours(r) && r.backend == Backend::cuda && !r.status_detail.empty()) {
        why += " (" + r.status_detail + ")";
        break;
      }
    f.crossover.cannot_say = why + ": the crossover in tokens per step needs CPU and GPU steps of the same problems";
  } else if (f.crossover.points.empty()) {
    f.crossover.cannot_say = "no problem ran on both the CPU and the GPU (same workload, attention, params and precision)";
  } else if (!gpu_ahead_somewhere) {
    f.crossover.cannot_say = "the CPU is ahead at every problem both backends ran (up to " +
                             std::to_string(std::llround(f.crossover.points.back().tokens_per_step)) + " tokens per step)";
  }
}

// What a CUDA Graph replay saves against the eager step of the same problem.
void graph_savings(const std::vector<Record>& recs, Findings& f) {
  std::map<std::string, const Record*> eager, graph;
  for (const Record& r : recs) {
    if (!ours(r) || !usable(r) || !r.options.contains("mode")) continue;
    const std::string mode = r.options.value("mode", "");
    const std::string k = json{to_string(r.backend), r.workload, r.variant, r.params, without(r.options, "mode")}.dump();
    if (mode == "eager") eager[k] = &r;
    else if (mode == "graph") graph[k] = &r;
  }
  for (const auto& [k, g] : graph) {
    auto e = eager.find(k);
    if (e == eager.end() || !(*e->second->value > 0) || !(*g->value > 0)) continue;
    GraphSaving s;
    s.workload = g->workload, s.variant = g->variant, s.params = g->params, s.options = without(g->options, "mode");
    s.eager_tokens_per_s = *e->second->value, s.graph_tokens_per_s = *g->value;
    // 1 - t_graph / t_eager, from the pair's rounds where the two were measured as a pair.
    const auto v = value_ratio(*e->second, *g);
    if (!v) continue;
    s.saved_fraction = 1.0 - v->ratio;
    s.paired_rounds = v->rounds;
    s.launches_per_step = counter(*e->second, "launches_per_step");
    f.graph.push_back(std::move(s));
  }
  std::sort(f.graph.begin(), f.graph.end(), [](const GraphSaving& a, const GraphSaving& b) {
    return json{a.workload, a.options, param_num(a.params, "d_model"), a.variant} <
           json{b.workload, b.options, param_num(b.params, "d_model"), b.variant};
  });
}
}  // namespace

Findings compute_findings(const std::vector<Record>& recs) {
  Findings f;
  for (const Record& r : recs) {
    if (!ours(r) || !usable(r) || !r.stats) continue;
    MeasuredStep s;
    s.record = r.id;
    s.backend = r.backend;
    s.seconds = r.stats->median;
    s.config = {{"model", "transformer"}, {"layers", param_int(r.params, "layers")},
                {"d_model", param_int(r.params, "d_model")}, {"heads", param_int(r.params, "heads")},
                {"seq_len", param_int(r.params, "seq_len")}, {"batch", param_int(r.params, "batch")},
                {"precision", r.options.value("precision", "fp32")}, {"attention", r.variant},
                {"optimizer", "adamw"}};
    // In the cost model's keys (a "mode" key would make the step unreadable to it).
    if (r.options.value("mode", "") == "graph") s.config["cuda_graph"] = true;
    f.steps.push_back(std::move(s));
    if (r.workload == "configs") {
      ConfigRow c;
      c.backend = r.backend;
      c.record = r.id, c.variant = r.variant, c.params = r.params, c.options = r.options;
      c.tokens_per_s = *r.value;
      c.samples_per_s = counter(r, "samples_per_s").value_or(0);
      c.tflops = counter(r, "tflops").value_or(0);
      c.bytes = step_bytes(r).value_or(0);
      c.pct_of_gemm_peak = counter(r, "pct_of_gemm_peak");
      c.tflops_gemm = counter(r, "tflops_gemm");
      c.tflops_attention = counter(r, "tflops_attention");
      c.share_attention = counter(r, "share_attention");
      c.share_elementwise = counter(r, "share_elementwise");
      c.share_optimizer = counter(r, "share_optimizer");
      f.configs.push_back(std::move(c));
    }
  }
  attention_shares(recs, f);
  memory_pairs(recs, f);
  crossover_points(recs, f);
  graph_savings(recs, f);
  // The A/B pairs, through the cost model's step form of each measured step.
  std::vector<cost::Step> as_steps;
  for (const auto& st : f.steps) as_steps.push_back({"", st.record, st.backend, st.seconds, st.config});
  auto add = [&f](std::vector<cost::Pair> more) { f.pairs.insert(f.pairs.end(), more.begin(), more.end()); };
  add(cost::pairs_differing_in(as_steps, "precision", {json("fp32")}, json("bf16"), "bf16"));
  add(cost::pairs_differing_in(as_steps, "attention", {json("materialised")}, json("fused"), "fused_attention"));
  add(cost::pairs_differing_in(as_steps, "cuda_graph", {nullptr}, true, "cuda_graphs", "false"));
  return f;
}

void to_json(const Findings& found, json& data) {
  json configs = json::array();
  for (const auto& c : found.configs)
    configs.push_back({{"record", c.record}, {"backend", to_string(c.backend)}, {"variant", c.variant}, {"params", c.params}, {"options", c.options},
                       {"tokens_per_s", c.tokens_per_s}, {"samples_per_s", c.samples_per_s}, {"tflops", c.tflops},
                       {"bytes", c.bytes}, {"pct_of_gemm_peak", or_null(c.pct_of_gemm_peak)},
                       {"tflops_gemm", or_null(c.tflops_gemm)}, {"tflops_attention", or_null(c.tflops_attention)},
                       {"share_attention", or_null(c.share_attention)}, {"share_elementwise", or_null(c.share_elementwise)},
                       {"share_optimizer", or_null(c.share_optimizer)}});
  if (!configs.empty()) data["configs"] = configs;
  json shares = json::array();
  for (const auto& g : found.attention_share) {
    json pts = json::array();
    for (const auto& p : g.points)
      pts.push_back({{"seq_len", p.seq_len}, {"batch", p.batch}, {"share_attention", p.share_attention},
                     {"tokens_per_s", p.tokens_per_s}, {"record", p.record}});
    shares.push_back({{"backend", to_string(g.backend)}, {"variant", g.variant}, {"options", g.options}, {"layers", g.layers}, {"d_model", g.d_model},
                      {"heads", g.heads}, {"points", pts}});
  }
  if (!shares.empty()) data["attention_share"] = shares;
  json mem = json::array();
  for (const auto& p : found.memory)
    mem.push_back({{"backend", to_string(p.backend)}, {"params", p.params}, {"options", p.options}, {"materialised_bytes", or_null(p.materialised_bytes)},
                   {"fused_bytes", or_null(p.fused_bytes)}, {"materialised_tokens_per_s", or_null(p.materialised_tokens_per_s)},
                   {"fused_tokens_per_s", or_null(p.fused_tokens_per_s)},
                   {"materialised_oom", p.materialised_oom.empty() ? json(nullptr) : json(p.materialised_oom)},
                   {"fused_oom", p.fused_oom.empty() ? json(nullptr) : json(p.fused_oom)},
                   {"memory_saved_fraction", or_null(p.memory_saved_fraction)}, {"fused_speedup", or_null(p.fused_speedup)}});
  for (std::size_t i = 0; i < found.memory.size(); ++i)
    if (found.memory[i].paired_rounds > 0) mem[i]["paired_rounds"] = found.memory[i].paired_rounds;  // measured as a pair
  if (!mem.empty()) data["memory"] = mem;
  json oom = json::array();
  for (const auto& o : found.materialised_oom)
    oom.push_back({{"backend", to_string(o.backend)}, {"options", o.options}, {"d_model", o.d_model}, {"layers", o.layers}, {"seq_len", o.seq_len},
                   {"batch", o.batch}, {"detail", o.detail}});
  if (!oom.empty()) data["materialised_oom"] = oom;
  json cross = json::array();
  for (const auto& p : found.crossover.points)
    cross.push_back({{"workload", p.workload}, {"variant", p.variant}, {"precision", p.precision}, {"params", p.params},
                     {"tokens_per_step", p.tokens_per_step}, {"cpu_tokens_per_s", p.cpu_tokens_per_s},
                     {"gpu_tokens_per_s", p.gpu_tokens_per_s}, {"cpu_record", p.cpu_record},
                     {"gpu_record", p.gpu_record}});
  data["crossover"] = {{"tokens_per_step", or_null(found.crossover.tokens_per_step)},
                       {"cannot_say", found.crossover.cannot_say}, {"points", cross}};
  json graph = json::array();
  for (const auto& g : found.graph) {
    graph.push_back({{"workload", g.workload}, {"variant", g.variant}, {"params", g.params}, {"options", g.options},
                     {"eager_tokens_per_s", g.eager_tokens_per_s}, {"graph_tokens_per_s", g.graph_tokens_per_s},
                     {"saved_fraction", g.saved_fraction}, {"launches_per_step", or_null(g.launches_per_step)}});
    if (g.paired_rounds > 0) graph.back()["paired_rounds"] = g.paired_rounds;  // measured as a pair
  }
  if (!graph.empty()) data["graph"] = graph;
  json steps = json::array();
  for (const auto& s : found.steps)
    steps.push_back({{"record", s.record}, {"backend", to_string(s.backend)}, {"seconds", s.seconds}, {"config", s.config}});
  if (!steps.empty()) data["cost_steps"] = steps;
  cost::write_pairs(data, found.pairs);
}

std::string fused_gpu_attention_note(const std::vector<Record>& recs) {
  if (std::none_of(recs.begin(), recs.end(),
                   [](const Record& r) { return ours(r) && r.backend == Backend::cuda && r.variant == "fused"; }))
    return "";
  return "gtb's fused GPU attention (kernels/transformer/cuda/attention_*.cu) is scalar FP32 arithmetic on the CUDA "
         "cores, without tensor cores, in every precision: its figures show what fusing saves in memory and "
         "launches, not what a state-of-the-art fused attention reaches (ci/gpu-check.sh's gtb vs PyTorch table "
         "puts PyTorch's scaled_dot_product_attention beside it).";
}

}  // namespace gtb::xfmr
