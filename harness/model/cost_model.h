// The cost model: a training step composed from measured cost terms (input, compute, overhead,
// habits, gradient all-reduce) on the CPU and the GPU, the fixes ranked by predicted saving, the CPU vs
// GPU crossover batch, and the validation against the steps gtb measured whole.
//
// It knows terms, never who measured them: a term's publisher is data, used only to leave a step's
// own publisher out of its validation. docs/advise.md states every formula.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/model/cost_terms.h"
#include "kernels/common/native_step.h"

namespace gtb::cost {

// A configuration key that is missing, of the wrong type or out of range.
struct ConfigError : std::runtime_error {
  ConfigError(const std::string& key_, const std::string& what)
      : std::runtime_error(key_ + ": " + what), key(key_) {}
  std::string key;
};

// The software that runs a step (configuration key and advise option kFrameworkKey; a PyTorch term's
// `where` names it): gtb's own kernels, or PyTorch eager, compiled (torch.compile), or replayed as a
// CUDA graph, whose host cost per operator is then part of the step (docs/advise.md).
enum class Framework { native, pytorch_eager, pytorch_compiled, pytorch_graph };
inline constexpr const char* kFrameworkKey = "framework";
inline constexpr Framework kFrameworks[] = {Framework::native, Framework::pytorch_eager, Framework::pytorch_compiled,
                                            Framework::pytorch_graph};
// "native", "pytorch-eager", "pytorch-compiled", "pytorch-graph": the spelling of the option and the JSON.
const char* to_string(Framework f);
std::optional<Framework> framework_from_string(const std::string& s);
inline bool is_pytorch(Framework f) { return f != Framework::native; }

// The step a user asks about. Defaults are the plain case: no input copy, no loader, no reads.
struct StepConfig {
  std::string model = "mlp";  // mlp | transformer | generic
  // mlp: `depth` linear layers input -> width -> ... -> classes (input defaults to width)
  int width = 0, depth = 0, input = 0, classes = 16;
  // transformer: a stack of `layers` blocks (attention + 4x MLP)
  int layers = 0, d_model = 0, heads = 0, seq_len = 0;
  // materialised | fused: the fused backward computes the scores Q K^T and their exp again (one more
  // product per head and one more exp pass)
  std::string attention = "materialised";
  // generic: parameters and training FLOPs per sample (forward + backward), kernels per step
  double params = 0, flops_per_sample = 0, kernels_per_step = 0;
  int batch = 0;  // samples per step per GPU (or rank)
  std::string precision = "fp32";  // fp32 | tf32 | bf16 | fp16
  std::string optimizer = "sgd";   // sgd | adam | adamw (adamw moves the bytes adam does)
  std::string activation = "relu";
  double input_bytes_per_sample = 0;
  std::string host_memory = "pageable";  // pageable | pinned
  int workers = 0;                       // loader workers; 0: the training loop loads itself
  double sample_us = 0;                  // preprocessing per sample, microseconds
  int loss_read_every = 0;               // read the loss back every N steps; 0: never
  int gpus = 1;                          // ranks sharing the step (one GPU each)
  double bucket_bytes = 25.0 * 1048576;  // gradient bucket
  bool overlap = false;                  // reductions overlapped with the backward pass
  int micro_batches = 1;                 // gradient accumulation: batch split into this many
  bool cuda_graph = false;
  // CPU: the share of the machine's cores the step gets (a rank that has 1 of 2 cores: 0.5). Ranks on
  // one CPU (gpus > 1 on the CPU backend) divide it further among themselves.
  double core_share = 1.0;
  std::string redundant_copy;  // a copy habit in the loop: batch | activation | weights ("" none)
  Framework framework = Framework::native;  // what runs the step
};

// The software a file's terms measured, as its per-operator term (term::kPytorchOp) names it in its
// `where`; "native" where it has none usable.
std::string measured_framework(const std::vector<Term>& terms);

// Throws ConfigError naming the key. Unknown keys are refused too (a typo must not pass silently).
StepConfig config_from_json(const json& j);
json to_json(const StepConfig& c);
// Derived sizes the model uses.
double parameter_count(const StepConfig& c);
double flops_per_step(const StepConfig& c);

// gtb's native CPU step chooses its threading by the figures of kernels/common/native_step.h (a
// step under native::kSerialStepFlops on one thread, rows mode from native::kRowsPerThread rows per
// thread, a pass under native::kMinParallelWork on one thread): the model prices it by the same.
// Whether a step's update reads data its threads' products wrote on other cores (gtb's native CPU
// step on all cores, not a one-thread MLP step): priced at the hand-off streaming rate.
bool update_reads_other_cores(const StepConfig& c, Backend be);
// Whether gtb's native CPU step runs on one thread (an MLP step under native::kSerialStepFlops): its
// plain passes and SGD update priced at one thread's streaming rate (stream_bandwidth, op=one_thread).
bool runs_on_one_thread(const StepConfig& c, Backend be);

// One part of a predicted step.
struct Part {
  std::string group;  // input | compute | overhead | habits | data_parallel
  std::string name;   // loader, batch_gather, h2d_copy, matmul, elementwise, optimizer, launch, ...
  std::string what;   // one line for a reader: "4 GEMMs forward, 7 backward"
  Estimate estimate;
};

struct Prediction {
  Backend backend = Backend::cpu;
  std::vector<Part> parts;
  Estimate total;         // the step: parts summed as docs/advise.md says (hidden parts excluded)
  std::string dominant;   // the part with the most seconds (empty when the total cannot be said)
};
Prediction predict(const std::vector<Term>& terms, const StepConfig& c, Backend backend);

// A known fix, with its predicted effect on this step.
struct Fix {
  std::string id;     // pinned_memory, more_workers, larger_batch, bf16, cuda_graphs, fewer_syncs, bucket_size, overlap, drop_copy
  std::string title;  // "Pinned host memory for the input batch"
  std::string change; // what changes in the configuration: "host_memory pageable -> pinned"
  Backend backend = Backend::cpu;
  std::optional<double> saving_s;  // per step of the same samples; empty: cannot say
  double saving_fraction = 0;      // of the predicted step
  std::vector<std::string> records;
  std::string cannot_say;
  // Set when a part the fix changes is priced outside the measured range (e.g. BF16 GEMMs at shapes
  // only the FP32 records cover): the saving is then rough, and says so wherever it is shown.
  std::string caveat;
};
// The fixes that apply to this configuration on this backend, largest predicted saving first; those
// the model cannot price come last with the reason.
std::vector<Fix> rank_fixes(const std::vector<Term>& terms, const StepConfig& c, Backend backend, const Prediction& base);

// The smallest batch (a power of two up to 65536) from which the GPU's predicted time per sample is
// below the CPU's at every larger batch tried.
struct Crossover {
  std::optional<int> batch;
  std::string cannot_say;
  std::vector<std::string> records;
  std::string note;
};
Crossover crossover_batch(const std::vector<Term>& terms, StepConfig c);

// Validation: each measured step predicted from the terms of every other publisher. A step whose
// measured median is not a steady figure (Step::not_scored) keeps its row and error but is left out
// of the median, the worst and `predicted`.
struct ValidationRow {
  Step step;
  Estimate predicted;
  std::optional<double> error;  // (predicted - measured) / measured
  bool scored() const { return error.has_value() && step.not_scored.empty(); }
};
struct Validation {
  std::vector<ValidationRow> rows;
  std::optional<double> median_abs_error, worst_abs_error;
  int predicted = 0;  // the scored steps
};
Validation validate(const std::vector<Term>& terms, const std::vector<Step>& steps);

json to_json(const Estimate& e);
json to_json(const Prediction& p);
json to_json(const Fix& f);
json to_json(const Validation& v);

}  // namespace gtb::cost
