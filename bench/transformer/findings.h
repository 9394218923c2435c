// The transformer family's derived results from its records, CPU and GPU alike: the measured
// configurations, the attention share against sequence length, materialised vs fused attention
// (memory, time, where materialised runs out of memory) per backend, the CPU/GPU crossover in tokens
// per step, what a CUDA Graph replay saves, and the measured steps the cost model validates against.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::xfmr {

// One measured step (ok records), in the shape the cost model reads (findings.<family>.steps).
struct MeasuredStep {
  std::string record;
  Backend backend = Backend::cpu;
  double seconds = 0;  // median seconds per step
  json config;         // {"model": "transformer", "layers", "d_model", "heads", "seq_len", "batch", "precision", ...}
};

// The share of the step spent in attention, per configuration, against seq_len.
struct SharePoint {
  double seq_len = 0, batch = 0, share_attention = 0, tokens_per_s = 0;
  std::string record;
};
struct AttentionShare {
  Backend backend = Backend::cpu;
  std::string variant;
  json options;
  int layers = 0, d_model = 0, heads = 0;
  std::vector<SharePoint> points;  // sorted by seq_len
};

// Materialised vs fused at one problem on one backend: the bytes (host: the model's arrays; device:
// the allocator's high-water mark), tokens/s, and a side that ran out of memory.
struct MemoryPair {
  Backend backend = Backend::cpu;
  json params, options;
  std::optional<double> materialised_bytes, fused_bytes, materialised_tokens_per_s, fused_tokens_per_s;
  std::string materialised_oom, fused_oom;  // the out-of-memory detail where that side ran out
  std::optional<double> memory_saved_fraction;  // 1 - fused / materialised bytes
  std::optional<double> fused_speedup;          // fused / materialised tokens/s (paired where measured as a pair)
  int paired_rounds = 0;                         // > 0: fused_speedup from this many paired rounds
};

// Per seq_sweep configuration: the smallest seq_len at which materialised attention ran out of
// memory (under the record's memory cap) while the fused one ran.
struct OomPoint {
  Backend backend = Backend::cpu;
  json options;
  int d_model = 0, layers = 0;
  double seq_len = 0, batch = 0;
  std::string detail;
};

// One problem both backends ran (same workload, attention, params and precision; each side its
// fastest record, e.g. the better of eager and graph).
struct CrossoverPoint {
  std::string workload, variant, precision;
  json params;
  double tokens_per_step = 0, cpu_tokens_per_s = 0, gpu_tokens_per_s = 0;
  std::string cpu_record, gpu_record;
};
// The CPU/GPU crossover in tokens per step: the smallest paired tokens per step from which the GPU
// is ahead at every larger paired point of the same precision and attention.
struct Crossover {
  std::optional<double> tokens_per_step;
  std::string cannot_say;  // why not, when there is no number
  std::vector<CrossoverPoint> points;  // sorted by precision, attention, tokens per step
};

// A CUDA Graph replay against the eager step of the same problem (option mode graph / eager).
struct GraphSaving {
  std::string workload, variant;
  json params, options;  // options without mode
  double eager_tokens_per_s = 0, graph_tokens_per_s = 0;
  double saved_fraction = 0;  // 1 - graph step time / eager step time
  int paired_rounds = 0;      // > 0: from the two records' paired rounds (measured as a pair)
  std::optional<double> launches_per_step;
};

struct ConfigRow {
  Backend backend = Backend::cpu;
  std::string record, variant;
  json params, options;
  double tokens_per_s = 0, samples_per_s = 0, tflops = 0;
  double bytes = 0;  // host: the model's arrays; device: the allocator's high-water mark
  std::optional<double> pct_of_gemm_peak, tflops_gemm, tflops_attention, share_attention, share_elementwise,
      share_optimizer;
};

struct Findings {
  std::vector<ConfigRow> configs;
  std::vector<AttentionShare> attention_share;
  std::vector<MemoryPair> memory;
  std::vector<OomPoint> materialised_oom;
  Crossover crossover;
  std::vector<GraphSaving> graph;
  std::vector<MeasuredStep> steps;
  // The A/B pairs among them: fp32 -> bf16, materialised -> fused attention, eager -> graph.
  std::vector<cost::Pair> pairs;
};
Findings compute_findings(const std::vector<Record>& records);
// data: configs, attention_share, memory, materialised_oom, crossover, graph, and cost_steps (published
// beside the sections as `steps`).
void to_json(const Findings& found, json& data);
// What gtb's fused GPU attention is (scalar FP32, no tensor cores), said where a fused GPU record
// exists so that no reader takes its speed for the state of the art; empty otherwise.
std::string fused_gpu_attention_note(const std::vector<Record>& records);

}  // namespace gtb::xfmr
