// Transformer findings: configurations, attention share, materialised vs fused memory, crossover, steps.
#include "bench/transformer/findings.h"

#include <algorithm>
#include <map>

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
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
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
    f.steps.push_back(std::move(s));
    if (r.workload == "configs") {
      ConfigRow c;
      c.record = r.id, c.variant = r.variant, c.params = r.params, c.options = r.options;
      c.tokens_per_s = *r.value;
      c.samples_per_s = counter(r, "samples_per_s").value_or(0);
      c.tflops = counter(r, "tflops").value_or(0);
      c.host_bytes = counter(r, "host_bytes").value_or(0);
      c.pct_of_gemm_peak = counter(r, "pct_of_gemm_peak");
      c.tflops_gemm = counter(r, "tflops_gemm");
      c.tflops_attention = counter(r, "tflops_attention");
      c.share_attention = counter(r, "share_attention");
      c.share_elementwise = counter(r, "share_elementwise");
      c.share_optimizer = counter(r, "share_optimizer");
      f.configs.push_back(std::move(c));
    }
  }
  // Attention share against seq_len, per variant and model.
  {
    std::map<std::string, AttentionShare> groups;
    for (const Record& r : recs) {
      if (!ours(r) || !usable(r) || r.workload != "seq_sweep") continue;
      const auto share = counter(r, "share_attention");
      if (!share) continue;
      AttentionShare key;
      key.variant = r.variant, key.options = r.options;
      key.layers = param_int(r.params, "layers"), key.d_model = param_int(r.params, "d_model");
      key.heads = param_int(r.params, "heads");
      const std::string k = json{key.variant, key.options, key.layers, key.d_model, key.heads}.dump();
      auto& g = groups.insert({k, key}).first->second;
      g.points.push_back({param_num(r.params, "seq_len"), param_num(r.params, "batch"), *share, *r.value, r.id});
    }
    for (auto& [k, g] : groups) {
      std::sort(g.points.begin(), g.points.end(), [](const SharePoint& a, const SharePoint& b) { return a.seq_len < b.seq_len; });
      f.attention_share.push_back(std::move(g));
    }
  }
  // Materialised vs fused at the same params and options (every workload that ran both).
  {
    std::map<std::string, MemoryPair> pairs;
    std::map<std::string, std::string> workload_of;
    for (const Record& r : recs) {
      if (!ours(r) || r.backend != Backend::cpu) continue;
      const bool mat = r.variant == "materialised";
      if (!mat && r.variant != "fused") continue;
      const std::string k = json{r.workload, r.params, r.options}.dump();
      MemoryPair& p = pairs[k];
      p.params = r.params, p.options = r.options;
      workload_of[k] = r.workload;
      if (usable(r)) {
        (mat ? p.materialised_bytes : p.fused_bytes) = counter(r, "host_bytes");
        (mat ? p.materialised_tokens_per_s : p.fused_tokens_per_s) = *r.value;
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
      if (p.materialised_tokens_per_s && p.fused_tokens_per_s && *p.materialised_tokens_per_s > 0)
        p.fused_speedup = *p.fused_tokens_per_s / *p.materialised_tokens_per_s;
      f.memory.push_back(p);
    }
    std::sort(f.memory.begin(), f.memory.end(), [](const MemoryPair& a, const MemoryPair& b) {
      return json{a.options, param_num(a.params, "d_model"), param_num(a.params, "seq_len"), param_num(a.params, "batch")} <
             json{b.options, param_num(b.params, "d_model"), param_num(b.params, "seq_len"), param_num(b.params, "batch")};
    });
    // The smallest seq_len of each seq_sweep configuration where materialised ran out and fused ran.
    std::map<std::string, OomPoint> oom;
    for (const MemoryPair& p : f.memory) {
      if (p.materialised_oom.empty() || !p.fused_bytes) continue;
      const std::string k = json{p.options, param_int(p.params, "d_model"), param_int(p.params, "layers")}.dump();
      const double s = param_num(p.params, "seq_len");
      auto it = oom.find(k);
      if (it != oom.end() && it->second.seq_len <= s) continue;
      oom[k] = OomPoint{p.options, param_int(p.params, "d_model"), param_int(p.params, "layers"), s,
                        param_num(p.params, "batch"), p.materialised_oom};
    }
    for (auto& [k, o] : oom) f.materialised_oom.push_back(o);
  }
  // The crossover needs a GPU step of the same problem.
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
  } else {
    f.crossover.cannot_say = "the GPU side of this family records no step yet that pairs with a CPU step";
  }
  return f;
}

void to_json(const Findings& found, json& data) {
  json configs = json::array();
  for (const auto& c : found.configs)
    configs.push_back({{"record", c.record}, {"variant", c.variant}, {"params", c.params}, {"options", c.options},
                       {"tokens_per_s", c.tokens_per_s}, {"samples_per_s", c.samples_per_s}, {"tflops", c.tflops},
                       {"host_bytes", c.host_bytes}, {"pct_of_gemm_peak", opt(c.pct_of_gemm_peak)},
                       {"tflops_gemm", opt(c.tflops_gemm)}, {"tflops_attention", opt(c.tflops_attention)},
                       {"share_attention", opt(c.share_attention)}, {"share_elementwise", opt(c.share_elementwise)},
                       {"share_optimizer", opt(c.share_optimizer)}});
  if (!configs.empty()) data["configs"] = configs;
  json shares = json::array();
  for (const auto& g : found.attention_share) {
    json pts = json::array();
    for (const auto& p : g.points)
      pts.push_back({{"seq_len", p.seq_len}, {"batch", p.batch}, {"share_attention", p.share_attention},
                     {"tokens_per_s", p.tokens_per_s}, {"record", p.record}});
    shares.push_back({{"variant", g.variant}, {"options", g.options}, {"layers", g.layers}, {"d_model", g.d_model},
                      {"heads", g.heads}, {"points", pts}});
  }
  if (!shares.empty()) data["attention_share"] = shares;
  json mem = json::array();
  for (const auto& p : found.memory)
    mem.push_back({{"params", p.params}, {"options", p.options}, {"materialised_bytes", opt(p.materialised_bytes)},
                   {"fused_bytes", opt(p.fused_bytes)}, {"materialised_tokens_per_s", opt(p.materialised_tokens_per_s)},
                   {"fused_tokens_per_s", opt(p.fused_tokens_per_s)},
                   {"materialised_oom", p.materialised_oom.empty() ? json(nullptr) : json(p.materialised_oom)},
                   {"fused_oom", p.fused_oom.empty() ? json(nullptr) : json(p.fused_oom)},
                   {"memory_saved_fraction", opt(p.memory_saved_fraction)}, {"fused_speedup", opt(p.fused_speedup)}});
  if (!mem.empty()) data["memory"] = mem;
  json oom = json::array();
  for (const auto& o : found.materialised_oom)
    oom.push_back({{"options", o.options}, {"d_model", o.d_model}, {"layers", o.layers}, {"seq_len", o.seq_len},
                   {"batch", o.batch}, {"detail", o.detail}});
  if (!oom.empty()) data["materialised_oom"] = oom;
  data["crossover"] = {{"tokens_per_step", opt(found.crossover.tokens_per_step)},
                       {"cannot_say", found.crossover.cannot_say}};
  json steps = json::array();
  for (const auto& s : found.steps)
    steps.push_back({{"record", s.record}, {"backend", to_string(s.backend)}, {"seconds", s.seconds}, {"config", s.config}});
  if (!steps.empty()) data["cost_steps"] = steps;
}

}  // namespace gtb::xfmr
