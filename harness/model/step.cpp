// The step a user asks about, before any price: its configuration (read, written, checked), the
// software that runs it, and the work it does (its GEMM shapes, elementwise passes, working set,
// kernels) as step_work.h declares. docs/advise.md states every formula.
#include "harness/model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "harness/document/json_read.h"
#include "harness/document/stats.h"
#include "harness/model/step_work.h"

namespace gtb::cost {

const char* to_string(Framework f) {
  switch (f) {
    case Framework::native: return "native";
    case Framework::pytorch_eager: return "pytorch-eager";
    case Framework::pytorch_compiled: return "pytorch-compiled";
    case Framework::pytorch_graph: return "pytorch-graph";
  }
  return "native";
}

std::optional<Framework> framework_from_string(const std::string& s) {
  for (const Framework f : kFrameworks)
    if (s == to_string(f)) return f;
  return std::nullopt;
}

std::string measured_framework(const std::vector<Term>& terms) {
  for (const auto& t : terms)
    if (t.name == term::kPytorchOp && t.usable() && !t.points.empty())
      if (const std::string s = json_read::string_at(t.where, {kFrameworkKey}); !s.empty()) return s;
  return "native";
}

namespace {

const char* const kKeys[] = {kFrameworkKey,     "model",         "width",          "depth",          "input",
                             "classes",       "layers",         "d_model",        "heads",
                             "seq_len",       "params",         "flops_per_sample", "kernels_per_step",
                             "batch",         "precision",      "optimizer",      "activation",
                             "input_bytes_per_sample", "host_memory", "workers",   "sample_us",
                             "loss_read_every", "gpus",         "ranks",          "bucket_bytes",
                             "overlap",       "micro_batches",  "cuda_graph",     "redundant_copy",
                             "attention",     "core_share"};

double number(const json& j, const char* key, double otherwise, double min, bool integer = false) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return otherwise;
  if (!it->is_number()) throw ConfigError(key, "must be a number, got " + it->dump());
  const double v = it->get<double>();
  if (!std::isfinite(v)) throw ConfigError(key, "must be finite");
  if (integer && v != std::floor(v)) throw ConfigError(key, "must be a whole number, got " + it->dump());
  if (v < min) {
    std::ostringstream os;
    os << "must be at least " << min << ", got " << it->dump();
    throw ConfigError(key, os.str());
  }
  return v;
}
int integer(const json& j, const char* key, int otherwise, int min) {
  const double v = number(j, key, otherwise, min, true);
  if (v > 1e9) throw ConfigError(key, "is too large");
  return int(v);
}
std::string text(const json& j, const char* key, const std::string& otherwise, std::vector<std::string> allowed) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return otherwise;
  if (!it->is_string()) throw ConfigError(key, "must be a string, got " + it->dump());
  const std::string v = it->get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + (a.empty() ? "\"\"" : a);
    throw ConfigError(key, "must be one of " + list + ", got \"" + v + "\"");
  }
  return v;
}
bool boolean(const json& j, const char* key, bool otherwise) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return otherwise;
  if (!it->is_boolean()) throw ConfigError(key, "must be true or false, got " + it->dump());
  return it->get<bool>();
}
void require(bool ok, const char* key, const std::string& model) {
  if (!ok) throw ConfigError(key, "is required for model " + model);
}

}  // namespace

bool reduced_operands(const std::string& precision) { return precision == "bf16" || precision == "fp16"; }


double causal_share(const StepConfig& c) {
  if (c.attention != "fused" || c.seq_len <= 0) return 1.0;
  const double S = c.seq_len, B = std::min(kFusedBlockRows, S);
  return (S + B) / (2 * S);
}


// Fused attention's products per sample and head (`tasks` of each at once), as the CPU kernel runs
// them: kFusedBlockRows query rows at a time, block i (rows b, keys n = its last row + 1, causal)
// computing scores Q K^T, dP = dO V^T and, in the backward (no probabilities kept), Q K^T again
// (b x n x dh, nt); P V and dQ = dS K (b x dh x n, nn); dV += P^T dO and dK += dS^T Q (n x dh x b, tn).
// Each block's products are priced at the block's own shape.
void fused_attention_shapes(std::vector<Shape>& s, double S, double dh, double tasks) {
  const double B = std::min(kFusedBlockRows, S);
  for (double i0 = 0; i0 < S; i0 += B) {
    const double b = std::min(B, S - i0), n = i0 + b;
    for (int i = 0; i < 3; ++i) s.push_back({b, n, dh, "nt", tasks, true});
    for (int i = 0; i < 2; ++i) s.push_back({b, dh, n, "nn", tasks, true});
    for (int i = 0; i < 2; ++i) s.push_back({n, dh, b, "tn", tasks, true});
  }
}

// The GEMMs of one micro-batch of `rows` samples, forward and backward. A layer in -> out: the
// forward Z = A W (nn: rows x out x in), the weight gradient dW = A^T dZ (tn: in x out x rows) and
// the input gradient dA = dZ W^T (nt: rows x in x out).
std::vector<Shape> matmul_shapes(const StepConfig& c, double rows) {
  std::vector<Shape> s;
  auto layer = [&](double r, double in, double out, bool input_grad) {
    s.push_back({r, out, in, "nn"});
    s.push_back({in, out, r, "tn"});
    if (input_grad) s.push_back({r, in, out, "nt"});
  };
  if (c.model == "mlp") {
    const int L = c.depth;
    for (int l = 1; l <= L; ++l) layer(rows, l == 1 ? c.input : c.width, l == L ? c.classes : c.width, l > 1);
  } else if (c.model == "transformer") {
    const double T = rows * c.seq_len, d = c.d_model, h = c.heads, dh = d / h, S = c.seq_len;
    for (int l = 0; l < c.layers; ++l) {
      layer(T, d, 3 * d, true);  // QKV
      layer(T, d, d, true);      // output projection
      layer(T, d, 4 * d, true);  // MLP up
      layer(T, 4 * d, d, true);  // MLP down
      // Attention, per sample and head: scores Q K^T and dP = dO V^T (S x S x dh, nt), context P V
      // and dQ = dS K (S x dh x S, nn), dV = P^T dO and dK = dS^T Q (S x dh x S, tn).
      if (c.attention == "fused") {
        fused_attention_shapes(s, S, dh, rows * h);
        continue;
      }
      for (const char* o : {"nt", "nt"}) s.push_back({S, S, dh, o, rows * h, true});
      for (const char* o : {"nn", "nn", "tn", "tn"}) s.push_back({S, dh, S, o, rows * h, true});
    }
  }
  return s;
}

std::vector<Pass> elementwise_bytes(const StepConfig& c, double rows) {
  std::vector<Pass> ops;
  const double e = kActivationBytes;
  const bool gelu = c.activation == "gelu";
  if (c.model == "mlp") {
    for (int l = 1; l < c.depth; ++l) {
      ops.push_back({2 * e * rows * c.width, gelu});  // bias + activation forward: read Z, write A
      ops.push_back({3 * e * rows * c.width, gelu});  // activation backward: read dA and Z, write dZ
    }
    ops.push_back({3 * 4.0 * rows * c.classes, false, 0, true});  // loss: logits in, gradient out, labels
  } else if (c.model == "transformer") {
    const double T = rows * c.seq_len, d = c.d_model;
    for (int l = 0; l < c.layers; ++l) {
      for (int i = 0; i < 2; ++i) ops.push_back({2 * e * T * d, false}), ops.push_back({3 * e * T * d, false});  // norms
      ops.push_back({2 * e * T * 4 * d, true}), ops.push_back({3 * e * T * 4 * d, true});                        // GELU
      for (int i = 0; i < 2; ++i) ops.push_back({3 * e * T * d, false}), ops.push_back({2 * e * T * d, false});  // residuals
      const double scores = rows * c.heads * double(c.seq_len) * c.seq_len * causal_share(c);
      // Softmax: forward (an exp per score), backward (plain); fused attention's backward recomputes
      // the probabilities from the scores (an exp per score again). Fused attention's passes run on
      // one block of scores at a time (B rows x S), in cache: at the rate of a pass of that size.
      // Materialised attention's forward runs in place on one head's S x S scores right after the
      // product that wrote them: at the rate of a pass of that size. Its backward reads the
      // probabilities kept since the forward: at the rate of the whole layer's scores.
      const double S2 = double(c.seq_len) * c.seq_len;
      if (c.attention == "fused") {
        const double block = std::min(kFusedBlockRows, double(c.seq_len)) * c.seq_len;
        ops.push_back({2 * e * scores, true, 2 * e * block}), ops.push_back({3 * e * scores, false, 3 * e * block});
        ops.push_back({2 * e * scores, true, 2 * e * block});
      } else {
        ops.push_back({2 * e * scores, true, 2 * e * S2}), ops.push_back({3 * e * scores, false});
      }
    }
  }
  return ops;
}

Rounding rounding_of(const StepConfig& c, Backend be) {
  if (be != Backend::cpu || c.framework != Framework::native) return Rounding::casts;
  return c.model == "transformer" ? Rounding::in_passes : Rounding::in_gemm;
}

// The bytes a step's GEMMs range over: weights and their gradients, and the activations the step
// keeps (MLP: Z, A and dZ of each layer and the input; a stack of attention blocks: each block's
// sixteen d-wide activations per token (its 4d-wide ones counted four times), the materialised
// scores, and the backward's eleven shared d-wide buffers).
double working_set_bytes(const StepConfig& c, double rows) {
  const double weights = 8.0 * parameter_count(c);
  if (c.model == "mlp") {
    double act = rows * (c.input > 0 ? c.input : c.width);
    for (int l = 1; l <= c.depth; ++l) act += 3.0 * rows * (l == c.depth ? c.classes : c.width);
    return weights + kActivationBytes * act;
  }
  if (c.model == "transformer") {
    const double T = rows * c.seq_len, d = c.d_model;
    const double scores = rows * c.heads * double(c.seq_len) * (c.attention == "fused" ? 1.0 : c.seq_len);
    return weights + kActivationBytes * (c.layers * (16.0 * T * d + scores) + 11.0 * T * d);
  }
  return weights;
}

double kernels_per_step(const StepConfig& c) {
  if (c.model == "mlp") return c.micro_batches * (6.0 * c.depth + 2) + 1;
  if (c.model == "transformer") return c.micro_batches * (36.0 * c.layers + 4) + 1;
  return c.kernels_per_step;
}
StepConfig config_from_json(const json& j) {
  if (!j.is_object()) throw ConfigError("config", "must be a JSON object");
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* a) { return k == a; }))
      throw ConfigError(k, "is not a configuration key (see docs/advise.md)");
  }
  StepConfig c;
  c.model = text(j, "model", "", {"mlp", "transformer", "generic"});
  if (c.model.empty()) throw ConfigError("model", "is required (mlp, transformer or generic)");
  c.width = integer(j, "width", 0, 1);
  c.depth = integer(j, "depth", 0, 1);
  c.input = integer(j, "input", c.width, 1);
  c.classes = integer(j, "classes", 16, 2);
  c.layers = integer(j, "layers", 0, 1);
  c.d_model = integer(j, "d_model", 0, 1);
  c.heads = integer(j, "heads", 0, 1);
  c.seq_len = integer(j, "seq_len", 0, 1);
  c.params = number(j, "params", 0, 1);
  c.flops_per_sample = number(j, "flops_per_sample", 0, 1);
  c.kernels_per_step = number(j, "kernels_per_step", 0, 0);
  if (c.model == "mlp") {
    require(c.width > 0, "width", c.model);
    require(c.depth > 0, "depth", c.model);
  } else if (c.model == "transformer") {
    require(c.layers > 0, "layers", c.model);
    require(c.d_model > 0, "d_model", c.model);
    require(c.heads > 0, "heads", c.model);
    require(c.seq_len > 0, "seq_len", c.model);
    if (c.d_model % c.heads) throw ConfigError("heads", "must divide d_model");
  } else {
    require(c.params > 0, "params", c.model);
    require(c.flops_per_sample > 0, "flops_per_sample", c.model);
  }
  if (!j.contains("batch")) throw ConfigError("batch", "is required");
  c.batch = integer(j, "batch", 0, 1);
  c.precision = text(j, "precision", "fp32", {"fp32", "tf32", "bf16", "fp16"});
  c.optimizer = text(j, "optimizer", "sgd", {"sgd", "adam", "adamw"});
  c.attention = text(j, "attention", "materialised", {"materialised", "fused"});
  c.activation = text(j, "activation", "relu", {"relu", "gelu"});
  c.input_bytes_per_sample = number(j, "input_bytes_per_sample", 0, 0);
  c.host_memory = text(j, "host_memory", "pageable", {"pageable", "pinned"});
  c.workers = integer(j, "workers", 0, 0);
  c.sample_us = number(j, "sample_us", 0, 0);
  c.loss_read_every = integer(j, "loss_read_every", 0, 0);
  if (j.contains("gpus") && j.contains("ranks")) throw ConfigError("ranks", "give gpus or ranks, not both");
  c.gpus = integer(j, j.contains("ranks") ? "ranks" : "gpus", 1, 1);
  c.bucket_bytes = number(j, "bucket_bytes", c.bucket_bytes, 1);
  c.overlap = boolean(j, "overlap", false);
  c.micro_batches = integer(j, "micro_batches", 1, 1);
  if (c.batch % c.micro_batches) throw ConfigError("micro_batches", "must divide batch");
  c.cuda_graph = boolean(j, "cuda_graph", false);
  c.core_share = number(j, "core_share", 1.0, 0.0);
  if (!(c.core_share > 0) || c.core_share > 1) throw ConfigError("core_share", "must be above 0 and at most 1");
  c.redundant_copy = text(j, "redundant_copy", "", {"", "batch", "batch_pinned", "activation", "weights"});
  std::vector<std::string> frameworks;
  for (const Framework f : kFrameworks) frameworks.push_back(to_string(f));
  c.framework = *framework_from_string(text(j, kFrameworkKey, "native", frameworks));
  return c;
}

json to_json(const StepConfig& c) {
  json j = {{"model", c.model}};
  if (c.model == "mlp") j["width"] = c.width, j["depth"] = c.depth, j["input"] = c.input, j["classes"] = c.classes;
  if (c.model == "transformer")
    j["layers"] = c.layers, j["d_model"] = c.d_model, j["heads"] = c.heads, j["seq_len"] = c.seq_len,
    j["attention"] = c.attention;
  if (c.model == "generic")
    j["params"] = c.params, j["flops_per_sample"] = c.flops_per_sample, j["kernels_per_step"] = c.kernels_per_step;
  j["batch"] = c.batch;
  j["precision"] = c.precision;
  j["optimizer"] = c.optimizer;
  j["activation"] = c.activation;
  j["input_bytes_per_sample"] = c.input_bytes_per_sample;
  j["host_memory"] = c.host_memory;
  j["workers"] = c.workers;
  j["sample_us"] = c.sample_us;
  j["loss_read_every"] = c.loss_read_every;
  j["gpus"] = c.gpus;
  j["bucket_bytes"] = c.bucket_bytes;
  j["overlap"] = c.overlap;
  j["micro_batches"] = c.micro_batches;
  j["cuda_graph"] = c.cuda_graph;
  if (c.core_share != 1.0) j["core_share"] = c.core_share;
  if (!c.redundant_copy.empty()) j["redundant_copy"] = c.redundant_copy;
  if (c.framework != Framework::native) j[kFrameworkKey] = to_string(c.framework);
  return j;
}

double parameter_count(const StepConfig& c) {
  if (c.model == "mlp") {
    double p = 0;
    for (int l = 1; l <= c.depth; ++l) {
      const double in = l == 1 ? c.input : c.width, out = l == c.depth ? c.classes : c.width;
      p += in * out + out;
    }
    return p;
  }
  if (c.model == "transformer") return double(c.layers) * (12.0 * c.d_model * c.d_model + 13.0 * c.d_model);
  return c.params;
}

// The native MLP step's FLOPs as its serial rule counts them: 6 x batch x the layers' in x out.
double native_mlp_flops(const StepConfig& c) {
  double macs = 0;
  for (int l = 1; l <= c.depth; ++l) macs += double(l == 1 ? c.input : c.width) * (l == c.depth ? c.classes : c.width);
  return 6.0 * double(c.batch) * macs;
}
bool native_cpu(const StepConfig& c, Backend be) { return be == Backend::cpu && c.framework == Framework::native; }

bool runs_on_one_thread(const StepConfig& c, Backend be) {
  return native_cpu(c, be) && c.model == "mlp" && native_mlp_flops(c) < native::kSerialStepFlops;
}

bool update_reads_other_cores(const StepConfig& c, Backend be) {
  if (!native_cpu(c, be) || c.core_share < 1.0 || c.gpus > 1) return false;
  if (c.model == "mlp") return !runs_on_one_thread(c, be);
  return c.model == "transformer";
}

double flops_per_step(const StepConfig& c) {
  if (c.model == "generic") return c.flops_per_sample * c.batch;
  double f = 0;
  for (const auto& s : matmul_shapes(c, double(c.batch) / c.micro_batches)) f += 2 * s.m * s.n * s.k * s.count;
  return f * c.micro_batches;
}

}  // namespace gtb::cost
