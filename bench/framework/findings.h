// The framework family's findings: PyTorch's cost per eager operator beside gtb's same work, the
// Python loop against the vectorized product, PyTorch's step against gtb's, its CPU/GPU crossover,
// the DataLoader workers that keep a step fed, mixed precision and the loss-read habit.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::framework {

// findings.framework = {"ops": [...], "loops": [...], "steps": [...], "crossovers": [...],
//   "loaders": [...], "fed": [...], "precisions": [...], "loss_reads": [...], "transformer_steps": [...]}
//   (each list when non-empty).
// Only ok records take part. gtb's figures come from the records the merge paired with each
// framework record (counter time_vs_same_work, info.same_work_record): a file without those
// families has none.
struct Op {
  std::string backend;
  std::int64_t n = 0;
  double per_op_us = 0;
  std::optional<double> gtb_chain_us, gtb_per_op_us, tax_per_op_us;  // with the vectorize records
  std::string record, gtb_record;
};
struct Loop {
  std::string backend;
  std::int64_t n = 0;
  double loop_us = 0, vectorized_us = 0, speedup = 0;
};
struct Step {
  std::string backend, workload, mode;
  std::int64_t width = 0, depth = 0, batch = 0;
  double pytorch_ms = 0;
  std::optional<double> gtb_ms, ratio;  // ratio = PyTorch's step time / gtb's
  std::string record, gtb_record;
};
// The transformer family's block stack in PyTorch, beside gtb's step of the same configuration.
struct TransformerStep {
  std::string backend, attention, precision;
  std::int64_t layers = 0, d_model = 0, heads = 0, seq_len = 0, batch = 0;
  double pytorch_ms = 0;
  std::optional<double> gtb_ms, ratio;  // ratio = PyTorch's step time / gtb's
  std::string record, gtb_record;
};
struct Crossover {
  std::string mode;
  std::int64_t width = 0, depth = 0;
  std::optional<std::int64_t> gpu_faster_from_batch;
  std::vector<std::int64_t> batches;
};
struct Loader {
  std::int64_t sample_us = 0, num_workers = 0, batch = 0, step_ms = 0;
  std::string pin_memory, persistent_workers;
  double samples_per_s = 0;
  std::optional<double> idle_fraction;
};
struct Fed {
  std::int64_t sample_us = 0, step_ms = 0;
  std::string pin_memory, persistent_workers;
  std::optional<std::int64_t> smallest_fed_workers;  // idle fraction at most kFedIdle
  std::int64_t most_workers = 0;
  std::optional<double> idle_at_zero, idle_at_smallest;
};
inline constexpr double kFedIdle = 0.05;
struct Precision {
  std::string backend, precision;
  std::int64_t width = 0, batch = 0;
  double step_ms = 0;
  std::optional<double> speedup_vs_fp32, loss_after_k, fp32_loss_after_k, peak_memory_bytes;
  // The tensors one step holds, counted by the worker (every backend), and over fp32's.
  std::optional<double> step_memory_bytes, memory_vs_fp32;
  std::int64_t k_steps = 0;
};
struct LossRead {
  std::string backend;
  std::int64_t width = 0, batch = 0;
  double every_step_us = 0, every_100_us = 0, extra_us_per_read = 0;
};
// The cost model's evidence: framework_op (host seconds per eager operator by n) and framework_ops
// (operators an MLP step dispatches, by depth) terms per backend, and the PyTorch steps measured
// whole, for the validation (which leaves out only each step's own record); no pairs.
struct Findings : cost::Evidence {
  std::vector<Op> ops;
  std::vector<Loop> loops;
  std::vector<Step> steps;
  std::vector<TransformerStep> transformer_steps;
  std::vector<Crossover> crossovers;
  std::vector<Loader> loaders;
  std::vector<Fed> fed;
  std::vector<Precision> precisions;
  std::vector<LossRead> loss_reads;
};
Findings compute_findings(const std::vector<Record>& records);
void to_json(const Findings& found, json& data);

// The GEMM {m, n, k} of a layer in -> out over `rows` samples in the orientation a step calls it: nn
// the forward (rows x out over in), tn the weight gradient (in x out over rows), nt the input
// gradient (rows x in over out). Throws std::invalid_argument on another orientation.
std::array<std::int64_t, 3> step_gemm(const std::string& orientation, std::int64_t rows, std::int64_t in, std::int64_t out);

// The ids of gtb's records of the same work as a framework record (best first), for info.same_work_as.
std::vector<std::string> same_work_ids(const std::string& workload, Backend backend, const json& params, const json& options);

}  // namespace gtb::framework
