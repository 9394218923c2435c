// The cost model: composing a step from cost terms, ranking the fixes, the crossover batch and the
// validation (see cost_model.h; docs/advise.md states every formula).
#include "harness/model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "harness/document/json_read.h"
#include "harness/document/stats.h"

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

// Activations stay FP32 at every precision (gtb's CPU and GPU steps keep them so; BF16 and FP16 are
// the GEMMs' operands, cast from FP32 before each product: operand_casts).
constexpr double kActivationBytes = 4.0;
bool reduced_operands(const std::string& precision) { return precision == "bf16" || precision == "fp16"; }

// Fused attention runs kFusedBlockRows query rows at a time and computes only the key blocks on and
// below the diagonal (causal): of the S x S scores, (S + B) / 2S with B = min(kFusedBlockRows, S). The
// materialised step computes every score (and masks the upper triangle).
constexpr double kFusedBlockRows = 64;
double causal_share(const StepConfig& c) {
  if (c.attention != "fused" || c.seq_len <= 0) return 1.0;
  const double S = c.seq_len, B = std::min(kFusedBlockRows, S);
  return (S + B) / (2 * S);
}

// One GEMM site of a step: C[m x n] = op(A) op(B) over k, `count` products of it (attention's heads
// run one per sample and head, `batched`), in the orientation the step calls it.
struct Shape {
  double m, n, k;
  std::string orientation = "nn";
  double count = 1;
  bool batched = false;
};

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

// Elementwise passes of one micro-batch: bytes moved by each (read + written), and whether it
// computes a transcendental per element (a GELU, softmax's exp: priced at the measured rate of a pass
// that computes a GELU) or is a plain pass.
struct Pass {
  double bytes;
  bool gelu;
  double rate_at = 0;  // the size whose streaming rate applies (0: bytes): a pass run block by block in cache
  bool loss = false;   // the MLP's softmax cross-entropy: priced from its own record where one was measured
};
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
      const double block = c.attention == "fused" ? std::min(kFusedBlockRows, double(c.seq_len)) * c.seq_len : 0;
      ops.push_back({2 * e * scores, true, 2 * e * block}), ops.push_back({3 * e * scores, false, 3 * e * block});
      if (c.attention == "fused") ops.push_back({2 * e * scores, true, 2 * e * block});
    }
  }
  return ops;
}

// How a step at a reduced precision rounds its GEMMs' FP32 operands. in_gemm: gtb's native MLP on
// the CPU, each product rounding its operands as they enter it (the per-shape plan), priced from the
// points measured so (matmul_autocast, the rounding in the time) where there are some. in_passes: gtb's
// native stack of attention blocks on the CPU, whose passes write rounded activations and whose
// optimizer writes a rounded copy of the weights; its GEMMs take rounded operands.
// casts: PyTorch's autocast (an operator per operand cast) and the GPU steps, a cast per operand.
enum class Rounding { in_gemm, in_passes, casts };
Rounding rounding_of(const StepConfig& c, Backend be) {
  if (be != Backend::cpu || c.framework != Framework::native) return Rounding::casts;
  return c.model == "transformer" ? Rounding::in_passes : Rounding::in_gemm;
}

// A GEMM of the step at its precision: a layer GEMM that rounds its own operands from the
// matmul_autocast points where measured (`rounding_included`). A layer GEMM of a step that rounds in
// its passes takes FP32-stored rounded operands: a native BF16 library converts them to BF16 words in
// the call, as the autocast points time it, an FP32 library runs them at the FP32 rate; the faster of
// the two where both were measured (the matmul tables' BF16 points, operands converted outside the
// time, would overstate it). Elsewhere from the matmul tables.
Estimate gemm_seconds(const std::vector<Term>& terms, Backend be, const StepConfig& c, const Shape& s,
                      bool& rounding_included) {
  rounding_included = false;
  if (s.batched) return matmul_batched_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation, s.count);
  const Rounding r = rounding_of(c, be);
  if (reduced_operands(c.precision) && r != Rounding::casts) {
    const Estimate e = matmul_autocast_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation);
    if (e.seconds && r == Rounding::in_gemm) return rounding_included = true, e;
    const Estimate fp = matmul_seconds(terms, be, "fp32", s.m, s.n, s.k, s.orientation);
    if (e.seconds && fp.seconds) return *fp.seconds < *e.seconds ? fp : e;
  }
  return matmul_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation);
}

// BF16 / FP16 operands: each GEMM's two operands cast from FP32 before the product (read 4 bytes,
// write 2 per element), as autocast does; none at fp32 and tf32, none for a GEMM whose measured rate
// includes its operands' rounding, and for a step that rounds in its passes only the weights' rounded
// copy once per step (read 4 bytes, write 4 per parameter: one pass).
std::vector<Pass> operand_casts(const std::vector<Term>& terms, Backend be, const StepConfig& c, double rows) {
  std::vector<Pass> ops;
  if (!reduced_operands(c.precision)) return ops;
  if (rounding_of(c, be) == Rounding::in_passes) return {{8.0 * parameter_count(c) / c.micro_batches, false}};
  for (const auto& s : matmul_shapes(c, rows)) {
    bool included = false;
    if (!s.batched) gemm_seconds(terms, be, c, s, included);
    if (!included) ops.push_back({6.0 * (s.m * s.k + s.k * s.n) * s.count, false});
  }
  return ops;
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

Estimate known(double seconds, const std::string& note = "") {
  Estimate e;
  e.seconds = seconds;
  e.note = note;
  return e;
}

// A table term's value at `at` (the interpolated y, no unit conversion).
Estimate table_y(const std::vector<Term>& terms, const std::string& name, Backend b, const json& at) {
  std::string reason;
  for (const auto& t : terms) {
    if (t.name != name || t.backend != b) continue;
    if (!t.usable()) {
      if (reason.empty()) reason = t.cannot_say;
      continue;
    }
    if (t.form != "table") continue;
    const auto ip = interpolate(t, at);
    if (!ip) continue;
    Estimate e;
    e.seconds = ip->y;
    e.records = ip->records;
    e.outside_measured = ip->outside_measured;
    if (e.outside_measured) e.note = name + " outside the measured range: the nearest measured value is used";
    return e;
  }
  Estimate e;
  e.cannot_say = reason.empty() ? "no measured " + name + " term on " + to_string(b) : reason;
  return e;
}

std::string fmt_bytes(double b) {
  std::ostringstream os;
  os.precision(3);
  if (b >= 1073741824.0) os << b / 1073741824.0 << " GiB";
  else if (b >= 1048576.0) os << b / 1048576.0 << " MiB";
  else if (b >= 1024.0) os << b / 1024.0 << " KiB";
  else os << b << " B";
  return os.str();
}

}  // namespace

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

namespace {
// The native MLP step's FLOPs as its serial rule counts them: 6 x batch x the layers' in x out.
double native_mlp_flops(const StepConfig& c) {
  double macs = 0;
  for (int l = 1; l <= c.depth; ++l) macs += double(l == 1 ? c.input : c.width) * (l == c.depth ? c.classes : c.width);
  return 6.0 * double(c.batch) * macs;
}
bool native_cpu(const StepConfig& c, Backend be) { return be == Backend::cpu && c.framework == Framework::native; }
}  // namespace

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

namespace {

// The seconds of the parts so far (those that cannot be said count zero): what a part hidden behind
// them (the launches, the loader) is measured against.
double seconds_of(const std::vector<Part>& parts) {
  double s = 0;
  for (const auto& part : parts) s += part.estimate.seconds.value_or(0);
  return s;
}

// Compute, the GEMMs at their shapes; the generic model's FLOPs at the rate of one GEMM of its size.
Part matmul_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rows, double params) {
  Estimate mm = known(0);
  std::size_t n = 0;
  if (c.model == "generic") {
    const double side = std::sqrt(params);
    const Estimate rate = matmul_seconds(terms, be, c.precision, rows, side, side);
    if (rate.seconds) {
      // Seconds of c.flops_per_sample x rows at the rate of a (rows x sqrt(P) x sqrt(P)) GEMM.
      const double flop_one = 2 * rows * side * side;
      mm = scaled(rate, c.flops_per_sample * rows / flop_one);
      mm.note = "generic model: its FLOPs at the measured rate of a " + std::to_string(int(rows)) + " x " +
                std::to_string(int(side)) + " x " + std::to_string(int(side)) + " GEMM" +
                (rate.note.empty() ? "" : "; " + rate.note);
    } else {
      mm = rate;
    }
    n = 1;
  } else {
    std::size_t outside = 0, stand_in = 0, rounded = 0;
    // A step's GEMMs read what its passes wrote (in the backward pass, rows other threads wrote): the
    // share of the back-to-back rate a GEMM of its size keeps there (matmul_in_step), where measured;
    // the per-head products are measured as a batch over the threads already.
    // A step whose working set is above the last-level cache reads its GEMMs' operands from memory:
    // the share measured with every cache emptied before each call (matmul_from_memory) instead.
    const double ws = working_set_bytes(c, rows);
    double kept_lo = 0, kept_hi = 0;
    std::size_t from_memory = 0;
    for (const auto& s : matmul_shapes(c, rows)) {
      bool included = false;
      Estimate one = gemm_seconds(terms, be, c, s, included);
      rounded += included;
      Estimate keep;
      if (!s.batched) {
        const double flop = 2.0 * s.m * s.n * s.k;
        keep = matmul_from_memory_fraction(terms, be, c.precision, ws, flop);
        if (keep.seconds) ++from_memory;
        else keep = matmul_in_step_fraction(terms, be, c.precision, ws, flop);
      }
      if (keep.seconds && one.seconds) {
        one.seconds = *one.seconds / *keep.seconds;
        one.records.insert(one.records.end(), keep.records.begin(), keep.records.end());
        kept_lo = kept_lo > 0 ? std::min(kept_lo, *keep.seconds) : *keep.seconds;
        kept_hi = std::max(kept_hi, *keep.seconds);
      }
      outside += one.outside_measured;
      stand_in += one.note.find("priced at the A B rate") != std::string::npos ||
                  one.note.find("priced alone") != std::string::npos;
      one.note.clear();
      mm = mm + one;
      ++n;
    }
    mm = scaled(mm, c.micro_batches);
    if (outside)
      mm.note = std::to_string(outside) + " of " + std::to_string(n) +
                " GEMM shapes lie outside the measured shapes: the nearest measured rates are used";
    if (stand_in)
      mm.note += (mm.note.empty() ? "" : "; ") + std::to_string(stand_in) +
                 " transposed or per-head GEMMs priced at the plain A B rate (none of theirs measured)";
    if (rounded)
      mm.note += (mm.note.empty() ? "" : "; ") + std::to_string(rounded) + " " + c.precision +
                 " GEMMs at the rates measured with the rounding of their FP32 operands (matmul_autocast): no "
                 "separate casts for them";
    else if (rounding_of(c, be) == Rounding::in_passes && reduced_operands(c.precision))
      mm.note += (mm.note.empty() ? "" : "; ") + c.precision +
                 " layer GEMMs on operands the step's passes rounded: the faster of the matmul_autocast rate "
                 "(conversion in the call) and fp32's where both were measured; no casts";
    else if (reduced_operands(c.precision))
      mm.note += (mm.note.empty() ? "" : "; ") + c.precision + " GEMMs at the rates of operands already in " +
                 c.precision + ": their casts are priced apart";
    if (kept_hi > 0) {
      std::ostringstream k;
      k.precision(3);
      k << "the layers' GEMMs at ";
      if (kept_lo < kept_hi) k << kept_lo << " to ";
      k << kept_hi << " of their back-to-back rate ("
        << (from_memory ? "matmul_from_memory: operands from memory, the working set above the last-level cache"
                        : "matmul_in_step")
        << ", by each GEMM's size; a step's working set of " << fmt_bytes(ws) << ")";
      mm.note += (mm.note.empty() ? "" : "; ") + k.str();
    }
  }
  std::ostringstream os;
  os.precision(3);
  if (c.model == "generic") os << "the model's FLOPs as GEMMs, " << c.precision;
  else os << n << " GEMMs per micro-batch (forward and backward), " << c.precision;
  if (c.micro_batches > 1) os << ", " << c.micro_batches << " micro-batches";
  return {"compute", "matmul", os.str(), mm};
}

// The share of their back-to-back rate a native CPU step's passes or update keep inside it
// (passes_in_step, update_in_step at `bytes`), measured on a step run as this one runs: on all cores
// (its products' slices on every core), or on one thread (a native MLP step under the serial FLOPs);
// none for a step on a share of the cores or one of several ranks.
Estimate in_step_share(const std::vector<Term>& terms, const StepConfig& c, Backend be, const std::string& name,
                       double bytes) {
  // The rows its GEMMs run over per micro-batch (a model of blocks over sequences: its tokens).
  const double rows = double(c.batch) * (c.model == "transformer" ? std::max(1, c.seq_len) : 1) / std::max(1, c.micro_batches);
  if (runs_on_one_thread(c, be)) return pass_in_step_fraction(terms, be, name, c.precision, "one", bytes, rows);
  if (update_reads_other_cores(c, be)) return pass_in_step_fraction(terms, be, name, c.precision, "all", bytes, rows);
  return Estimate{};
}

// The native CPU MLP step's loss (softmax cross-entropy: two exponentials per logit, far more than
// its bytes at a streaming rate) at the measured seconds of the step's own loss code (softmax_xent),
// on the threads the step runs it on: one where its work (rows x classes x 8, the step's count) is
// under native::kMinParallelWork or the whole step runs on one thread; all in rows mode (each thread its
// rows) and above that work.
// None where no such record was measured (the loss then priced as a plain pass).
Estimate native_loss_seconds(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rows,
                             std::string& threads) {
  if (!native_cpu(c, be) || c.model != "mlp") return Estimate{};
  const double logits = rows * c.classes;
  const Estimate cores = constant_value(terms, term::kCpuThreads, be);
  const bool rows_mode = c.precision == "fp32" && cores.seconds && *cores.seconds >= 2 &&
                         rows >= native::kRowsPerThread * *cores.seconds;
  threads = !runs_on_one_thread(c, be) && (rows_mode || logits * 8.0 > native::kMinParallelWork) ? "all" : "one";
  Estimate e = softmax_xent_seconds(terms, be, threads, logits);
  return e.seconds ? e : Estimate{};
}

// Compute, the elementwise passes and the operand casts at the measured streaming bandwidth of
// their size.
Part elementwise_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rows) {
  Estimate ew = known(0);
  std::vector<Pass> ops = elementwise_bytes(c, rows);
  std::string loss_threads;
  const Estimate loss = native_loss_seconds(terms, c, be, rows, loss_threads);
  if (loss.seconds)
    ops.erase(std::remove_if(ops.begin(), ops.end(), [](const Pass& p) { return p.loss; }), ops.end());
  const std::vector<Pass> casts = operand_casts(terms, be, c, rows);
  ops.insert(ops.end(), casts.begin(), casts.end());
  std::size_t outside = 0;
  // A step run on one thread streams its plain passes at one thread's rate, where measured.
  const bool one_thread = runs_on_one_thread(c, be) &&
                          stream_seconds(terms, be, 1.0, "one_thread").seconds.has_value();
  for (const Pass& pass : ops) {
    Estimate one = stream_seconds(terms, be, pass.rate_at > 0 ? pass.rate_at : pass.bytes,
                                     pass.gelu ? "gelu" : one_thread ? "one_thread" : "");
    if (pass.rate_at > 0 && one.seconds) one.seconds = *one.seconds * pass.bytes / pass.rate_at;
    outside += one.outside_measured;
    one.note.clear();
    ew = ew + one;
  }
  if (outside)
    ew.note = std::to_string(outside) + " of " + std::to_string(ops.size()) +
              " passes lie outside the measured sizes: the nearest measured rates are used";
  // Inside gtb's native CPU step the passes read what a product or another pass wrote just before
  // (often on the other core): the share of their back-to-back rate a step's passes keep
  // (passes_in_step, at the bytes this micro-batch's passes move), where measured.
  double pass_bytes = 0;
  for (const Pass& pass : ops) pass_bytes += pass.bytes;
  const Estimate keep = ew.seconds ? in_step_share(terms, c, be, term::kPassesInStep, pass_bytes) : Estimate{};
  if (keep.seconds) {
    ew.seconds = *ew.seconds / *keep.seconds;
    ew.records.insert(ew.records.end(), keep.records.begin(), keep.records.end());
  }
  if (loss.seconds) {
    const std::string note = ew.note;
    ew = ew + loss;
    ew.note = note;
    if (loss.outside_measured) ew.note = (note.empty() ? "" : note + "; ") + std::string("the loss outside the measured sizes");
  }
  ew = scaled(ew, c.micro_batches);
  if (c.model == "generic") ew = known(0, "generic model: elementwise work not modelled (in its FLOPs)");
  std::ostringstream os;
  os.precision(3);
  os << ops.size() - casts.size() << " elementwise passes per micro-batch";
  if (rounding_of(c, be) == Rounding::in_passes && !casts.empty())
    os << " and the weights' copy rounded to " << c.precision << " (the passes write rounded activations)";
  else if (!casts.empty())
    os << " and " << casts.size() << " casts of GEMM operands to " << c.precision;
  if (rounding_of(c, be) == Rounding::in_gemm && reduced_operands(c.precision) &&
      casts.size() < matmul_shapes(c, rows).size())
    os << " (the other GEMMs' rounding is in their measured rates)";
  os << ", at the measured streaming bandwidth" << (one_thread ? " of one thread (the step runs on one thread)" : "");
  if (keep.seconds && c.model != "generic")
    os << ", at " << *keep.seconds << " of it inside a step (passes_in_step, " << fmt_bytes(pass_bytes)
       << " moved per micro-batch)";
  if (loss.seconds)
    os << "; the loss (softmax cross-entropy over " << static_cast<long long>(rows * c.classes)
       << " logits) at its measured seconds on "
       << (loss_threads == "all" ? "all cores" : "one thread") << " (softmax_xent): " << *loss.seconds * 1e6 << " us";
  return {"compute", "elementwise", os.str(), ew};
}

// Compute, the optimizer: Adam at the measured rate of an Adam update (its square root and division
// per parameter), SGD with momentum at the measured rate of the step's own SGD update (sgd,
// sgd_one_thread), where measured; either elsewhere at the streaming rate.
// A step whose update reads what its products' slices wrote on other cores (update_reads_other_cores)
// takes at least the seconds of a pass over data other threads wrote last (stream_bandwidth,
// op=handoff), where measured: within the caches its lines come from another core's cache.
Part optimizer_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double params) {
  const double opt_bytes = params * 4.0 * (c.optimizer == "sgd" ? 5.0 : 7.0);
  Estimate opt = stream_seconds(terms, be, opt_bytes);
  if (c.optimizer != "sgd") {
    const Estimate adam = stream_seconds(terms, be, opt_bytes, "adam");
    if (adam.seconds) opt = adam;
    else if (opt.seconds) opt.note = (opt.note.empty() ? "" : opt.note + "; ") + std::string("no measured Adam update: at the streaming rate");
  }
  // SGD with momentum at the measured rate of the CPU step's own update code (its three reads and two
  // writes per parameter stream at their own rate, not a plain pass's), on the threads the step runs
  // it on, where measured; a plain pass's rate otherwise.
  const bool one_thread = c.optimizer == "sgd" && runs_on_one_thread(c, be);
  Estimate own = c.optimizer == "sgd" && be == Backend::cpu
                     ? stream_seconds(terms, be, opt_bytes, one_thread ? "sgd_one_thread" : "sgd")
                     : Estimate{};
  if (own.seconds) {
    own.note = (own.note.empty() ? "" : own.note + "; ") + std::string("at the measured rate of the step's own update") +
               (one_thread ? " on one thread (native MLP step under the serial FLOPs)" : "");
    opt = own;
  } else if (one_thread) {
    Estimate one = stream_seconds(terms, be, opt_bytes, "one_thread");
    if (one.seconds) {
      one.note = (one.note.empty() ? "" : one.note + "; ") +
                 std::string("the step runs on one thread (native MLP step under the serial FLOPs): one thread's rate");
      opt = one;
    }
  }
  // Inside gtb's native CPU step the update reads the gradients the products' slices wrote (on every
  // core) and the weights they read: the share of its back-to-back rate an update keeps there
  // (update_in_step, at the bytes an SGD update of these parameters moves), where measured; the
  // hand-off rate otherwise.
  const Estimate keep = opt.seconds ? in_step_share(terms, c, be, term::kUpdateInStep, params * 20.0) : Estimate{};
  if (keep.seconds) {
    opt.seconds = *opt.seconds / *keep.seconds;
    opt.records.insert(opt.records.end(), keep.records.begin(), keep.records.end());
    std::ostringstream k;
    k.precision(3);
    k << "at " << *keep.seconds << " of its back-to-back rate inside a step (update_in_step)";
    opt.note = (opt.note.empty() ? "" : opt.note + "; ") + k.str();
  } else if (opt.seconds && update_reads_other_cores(c, be)) {
    Estimate handoff = stream_seconds(terms, be, opt_bytes, "handoff");
    if (handoff.seconds && *handoff.seconds > *opt.seconds) {
      handoff.note = (handoff.note.empty() ? "" : handoff.note + "; ") +
                     std::string("at the rate of a pass over data other threads wrote (the gradients the products' "
                                 "slices wrote), slower here than the update's own rate");
      opt = handoff;
    }
  }
  // Rows mode (gtb's native FP32 MLP step, `threads` >= 2 from cpu_threads, at least
  // native::kRowsPerThread rows per thread): the update first sums the other threads' gradient copies,
  // (threads - 1) x params x 4 bytes read and the gradients read and written once, over data the
  // other threads wrote: at the hand-off rate.
  double sum_bytes = 0;
  if (opt.seconds && update_reads_other_cores(c, be) && c.model == "mlp" && c.precision == "fp32") {
    const Estimate threads = constant_value(terms, term::kCpuThreads, be);
    const double rows = double(c.batch) / c.micro_batches;
    if (threads.seconds && *threads.seconds >= 2 && rows >= native::kRowsPerThread * *threads.seconds)
      sum_bytes = params * 4.0 * (*threads.seconds - 1 + 2);
  }
  if (sum_bytes > 0) {
    const Estimate sum = stream_seconds(terms, be, sum_bytes, "handoff");
    if (sum.seconds) {
      opt.seconds = *opt.seconds + *sum.seconds;
      opt.records.insert(opt.records.end(), sum.records.begin(), sum.records.end());
      opt.note = (opt.note.empty() ? "" : opt.note + "; ") +
                 std::string("and, in rows mode, the sum of the threads' gradient copies at the hand-off rate");
    }
  }
  return {"compute", "optimizer",
          c.optimizer + " update of " + std::to_string(static_cast<long long>(params)) + " parameters (" +
              fmt_bytes(opt_bytes) + " moved)",
          opt};
}

// On the CPU the compute terms were measured on all cores. A step given a share of them (one of
// several ranks on this machine, each with its cores) is priced at the all-core seconds divided by
// that share: compute assumed to scale with cores, an approximation the part states.
void scale_to_core_share(std::vector<Part>& parts, const StepConfig& c, Backend be) {
  const double share = be == Backend::cpu ? c.core_share / std::max(1, c.gpus) : 1.0;
  if (share >= 1.0) return;
  std::ostringstream sh;
  sh.precision(3);
  sh << "on " << share << " of the cores (" << (c.gpus > 1 ? std::to_string(c.gpus) + " ranks on this CPU" : "core_share")
     << "): the all-core seconds / " << share << ", compute assumed to scale with cores";
  for (auto& part : parts) {
    if (part.group != "compute" || !part.estimate.seconds) continue;
    part.estimate = scaled(part.estimate, 1.0 / share);
    part.estimate.note = (part.estimate.note.empty() ? "" : part.estimate.note + "; ") + sh.str();
  }
}

// Overhead: kernels per step x the measured launch cost, the part not hidden behind the kernels'
// own `device_work` seconds.
Part launch_part(const std::vector<Term>& terms, const StepConfig& c, double device_work) {
  const double kernels = kernels_per_step(c);
  if (c.model == "generic" && kernels <= 0) {
    Estimate e;
    e.cannot_say = "kernels_per_step not given for the generic model";
    return {"overhead", "launch", "kernel launches", e};
  }
  Estimate e = scaled(launch_seconds(terms, c.cuda_graph ? "graph" : "eager"), kernels);
  std::ostringstream os;
  os.precision(3);
  os << kernels << " kernels " << (c.cuda_graph ? "in a CUDA Graph" : "launched eagerly");
  if (e.seconds) {
    const double total = *e.seconds;
    e.seconds = std::max(0.0, total - device_work);
    os << ": " << total * 1e6 << " us of launches, the part beyond the kernels' own time";
  }
  return {"overhead", "launch", os.str(), e};
}

// Habits: the loss read back every loss_read_every steps.
// A CPU step without a measured read computes its loss in host memory: reading it waits for no device.
Part host_sync_part(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  Estimate sync = host_sync_seconds(terms, be);
  if (!sync.seconds && be == Backend::cpu)
    sync = known(0, "no loss read measured on the CPU: the loss is in host memory, reading it waits for no device");
  return {"habits", "host_sync",
          c.loss_read_every == 1 ? std::string("the loss read back every step")
                                 : "the loss read back every " + std::to_string(c.loss_read_every) + " steps",
          scaled(sync, 1.0 / c.loss_read_every)};
}

// A CPU step's redundant copy where no copy of its kind was measured: a copy in host memory, read and
// written once, as a training loop's host copy runs (a memcpy, std::copy or assignment: one thread),
// at the measured streaming rate of one thread at its size where measured, else of all cores. What
// it copies: the batch (inputs and labels), the first layer's activations, or the weights.
Estimate copy_as_stream(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  double bytes = 0;
  if (c.redundant_copy == "batch") bytes = double(c.batch) * (4.0 * (c.input > 0 ? c.input : c.width) + 4.0);
  else if (c.redundant_copy == "activation") bytes = double(c.batch) * c.width * 4.0;
  else if (c.redundant_copy == "weights") bytes = 4.0 * parameter_count(c);
  if (bytes <= 0) return Estimate{};
  Estimate e = stream_seconds(terms, be, 2.0 * bytes, "one_thread");
  const bool one = e.seconds.has_value();
  if (!one) e = stream_seconds(terms, be, 2.0 * bytes);
  if (e.seconds)
    e.note = (e.note.empty() ? "" : e.note + "; ") + std::string("no copy of this kind measured: a copy of ") +
             fmt_bytes(bytes) + (one ? " on one thread at the measured streaming rate of one thread"
                                     : " at the measured streaming rate (all cores: no one-thread rate measured)");
  return e;
}

// Habits: a redundant copy every step, at the measured copy of its kind nearest in width and batch.
Part redundant_copy_part(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  Estimate e;
  const Term* best = nullptr;
  double dist = std::numeric_limits<double>::infinity();
  std::string reason;
  for (const auto& t : terms) {
    if (t.name != term::kRedundantCopy || t.backend != be) continue;
    if (!t.usable()) {
      if (reason.empty()) reason = t.cannot_say;
      continue;
    }
    if (t.where.value("kind", "") != c.redundant_copy) continue;
    const double w = t.where.value("width", 1.0), b = t.where.value("batch", 1.0);
    const double d = std::fabs(std::log(w / std::max(1, c.width))) + std::fabs(std::log(b / c.batch));
    if (d < dist) dist = d, best = &t;
  }
  if (best) {
    e = known(best->value);
    e.records = best->records;
    if (dist > 1e-9) {
      e.outside_measured = true;
      e.note = "measured at width " + best->where.value("width", json()).dump() + ", batch " +
               best->where.value("batch", json()).dump();
    }
  } else if (be == Backend::cpu && c.model == "mlp") {
    e = copy_as_stream(terms, c, be);
    if (!e.seconds) e.cannot_say = reason.empty() ? "no measured redundant_copy of kind " + c.redundant_copy : reason;
  } else {
    e.cannot_say = reason.empty() ? "no measured redundant_copy of kind " + c.redundant_copy : reason;
  }
  return {"habits", "redundant_copy", "a redundant " + c.redundant_copy + " copy every step", e};
}

// Several ranks: the gradient in buckets over the measured all-reduce, the overlapped share hidden.
Part allreduce_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double params) {
  const double grad = params * 4.0;
  const double full = std::floor(grad / c.bucket_bytes), rest = grad - full * c.bucket_bytes;
  Estimate comm = known(0);
  if (full > 0) comm = comm + scaled(allreduce_seconds(terms, be, c.gpus, c.bucket_bytes), full);
  if (rest > 0) comm = comm + allreduce_seconds(terms, be, c.gpus, rest);
  std::ostringstream os;
  os.precision(3);
  os << fmt_bytes(grad) << " of gradients in " << (full + (rest > 0)) << " buckets of " << fmt_bytes(c.bucket_bytes)
     << " over " << c.gpus << " ranks";
  if (c.overlap) {
    const Estimate hidden = overlap_fraction(terms, be);
    if (hidden.seconds && comm.seconds) {
      comm = comm + known(0);
      comm.records.insert(comm.records.end(), hidden.records.begin(), hidden.records.end());
      *comm.seconds *= 1.0 - std::clamp(*hidden.seconds, 0.0, 1.0);
      os << ", " << int(std::round(100 * *hidden.seconds)) << "% hidden by overlap";
    } else if (!hidden.seconds) {
      comm.seconds.reset();
      comm.cannot_say = "overlap: " + hidden.cannot_say;
    }
  }
  return {"data_parallel", "allreduce", os.str(), comm};
}

// Input: gathering the batch.
Part batch_gather_part(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  Estimate g = table_y(terms, term::kBatchGather, be, json{{"sample_bytes", c.input_bytes_per_sample}});
  g = scaled(g, c.batch);
  return {"input", "batch_gather",
          "gathering " + std::to_string(c.batch) + " samples of " + fmt_bytes(c.input_bytes_per_sample) +
              " into one batch",
          g};
}

// Input: copying the batch to the device.
Part h2d_copy_part(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  return {"input", "h2d_copy",
          fmt_bytes(c.input_bytes_per_sample * c.batch) + " host to device from " + c.host_memory + " memory",
          copy_seconds(terms, term::kH2dCopy, be, c.host_memory, c.input_bytes_per_sample * c.batch)};
}

// Input: the loader, hidden behind the step's other `rest` seconds when its workers keep up.
Part loader_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rest) {
  if (c.workers == 0)
    return {"input", "loader", "the training loop preprocesses " + std::to_string(c.batch) + " samples itself",
            known(c.batch * c.sample_us * 1e-6, "batch x sample_us, no worker to hide it")};
  Estimate e = loader_seconds(terms, be, c.workers, c.sample_us, c.batch);
  std::ostringstream os;
  os.precision(3);
  os << c.workers << " loader worker" << (c.workers == 1 ? "" : "s") << " at " << c.sample_us << " us per sample";
  if (e.seconds) {
    const double need = *e.seconds;
    e.seconds = std::max(0.0, need - rest);
    os << ": " << need * 1e3 << " ms per batch, the part the step does not hide";
  }
  return {"input", "loader", os.str(), e};
}

// A table term published for the software `runs` (its where.<kFrameworkKey>: a Framework's name, or
// kPytorchLibrary), and `also`'s selectors where the term has them: its value at `at`, or at its
// smallest measured point of `smallest_of` when that is set.
Estimate runs_table(const std::vector<Term>& terms, const std::string& name, const std::string& runs, Backend b,
                    const json& at, const json& also = json::object(), const std::string& smallest_of = "") {
  std::string reason;
  for (const auto& t : terms) {
    if (t.name != name || t.backend != b || json_read::string_at(t.where, {kFrameworkKey}) != runs) continue;
    bool same = true;
    for (const auto& [k, v] : also.items()) same = same && (!t.where.contains(k) || t.where.at(k) == v);
    if (!same) continue;
    if (!t.usable()) {
      if (reason.empty()) reason = t.cannot_say;
      continue;
    }
    if (t.form != "table" || t.points.empty()) continue;
    if (!smallest_of.empty()) {
      const Point* low = nullptr;
      for (const auto& pt : t.points)
        if (pt.at.contains(smallest_of) && (!low || pt.at.at(smallest_of).get<double>() < low->at.at(smallest_of).get<double>()))
          low = &pt;
      if (!low) continue;
      Estimate e = known(low->y);
      e.records = {low->record};
      return e;
    }
    const auto ip = interpolate(t, at);
    if (!ip) continue;
    Estimate e = known(ip->y);
    e.records = ip->records;
    e.outside_measured = ip->outside_measured;
    if (e.outside_measured) e.note = name + " outside the measured range: the nearest measured value is used";
    return e;
  }
  Estimate e;
  e.cannot_say = reason.empty() ? "no measured " + name + " term for " + runs + " on " + to_string(b) : reason;
  return e;
}

// Overhead of a step PyTorch runs eagerly (or compiled): the operators it dispatches per step
// (counted for this model) x its host seconds per operator (the op cost at its smallest tensor,
// where the work is negligible). On the GPU the part beyond the kernels' own `device_work` seconds
// counts (the host runs ahead of the device), and it replaces gtb's launch cost.
Part dispatch_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double device_work, double priced_whole,
                   double recorded_whole) {
  Estimate ops;
  if (c.model == "mlp") {
    ops = runs_table(terms, term::kPytorchOps, to_string(c.framework), be, {{"depth", c.depth}}, {{"model", c.model}, {"optimizer", c.optimizer}});
  } else if (c.model == "transformer") {
    ops = runs_table(terms, term::kPytorchOps, to_string(c.framework), be, {{"layers", c.layers}},
                      {{"model", c.model}, {"optimizer", c.optimizer}, {"attention", c.attention}});
  } else {
    ops.cannot_say = "no operator count of a " + c.model + " step under " + to_string(c.framework);
  }
  // The operator as a training step runs it (recorded by autograd, run backward) where measured.
  Estimate per = runs_table(terms, term::kPytorchStepOp, to_string(c.framework), be, json::object(), json::object(), "n");
  if (!per.seconds) {
    per = runs_table(terms, term::kPytorchOp, to_string(c.framework), be, json::object(), json::object(), "n");
    if (per.seconds) per.note = "no autograd-recorded operator measured: a plain operator's host time";
  }
  // Operators whose own measured seconds (dispatch included) price them elsewhere count once.
  const double count = ops.seconds ? std::max(0.0, *ops.seconds * c.micro_batches - priced_whole) : 0.0;
  Estimate e = ops.seconds ? scaled(per, count) : ops;
  if (!ops.seconds) e.records = ops.records;
  else e.records.insert(e.records.end(), ops.records.begin(), ops.records.end());
  // The GEMMs are priced whole at torch.mm's seconds, a plain call's; in a training step autograd
  // records each (and runs its backward ones): each pays the host time an autograd-recorded operator
  // takes beyond a plain one (framework_step_op less framework_op, both at their smallest size),
  // where both were measured.
  double autograd_extra = 0;
  if (recorded_whole > 0 && e.seconds && c.framework == Framework::pytorch_eager) {
    const Estimate plain = runs_table(terms, term::kPytorchOp, to_string(c.framework), be, json::object(), json::object(), "n");
    const Estimate recorded = runs_table(terms, term::kPytorchStepOp, to_string(c.framework), be, json::object(), json::object(), "n");
    if (plain.seconds && recorded.seconds && *recorded.seconds > *plain.seconds) {
      autograd_extra = *recorded.seconds - *plain.seconds;
      e.seconds = *e.seconds + recorded_whole * autograd_extra;
      for (const Estimate* x : {&plain, &recorded}) e.records.insert(e.records.end(), x->records.begin(), x->records.end());
    }
  }
  std::ostringstream os;
  os.precision(3);
  os << to_string(c.framework) << ": ";
  if (ops.seconds && per.seconds) {
    os << count << " operators x " << *per.seconds * 1e6 << " us of host time each";
    if (priced_whole > 0) os << " (of " << *ops.seconds * c.micro_batches << ": " << priced_whole << " priced whole in their parts)";
    if (autograd_extra > 0)
      os << "; and " << recorded_whole << " GEMMs x " << autograd_extra * 1e6
         << " us of autograd's host time beyond a plain call (priced whole at torch.mm's, a plain call's)";
    if (be == Backend::cuda) {
      const double total = *e.seconds;
      e.seconds = std::max(0.0, total - device_work);
      os << ", the part beyond the kernels' own time";
    }
  } else {
    os << "host time per operator";
  }
  return {"overhead", "dispatch", os.str(), e};
}

// ---- PyTorch's own kernels (a step run by PyTorch, eager, compiled or as a graph; docs/advise.md) ----
// Its kernels are published for the library (where.<kFrameworkKey> "pytorch"), whatever mode runs them.
const char* const kPytorchLibrary = "pytorch";

Estimate pytorch_library_table(const std::vector<Term>& terms, const std::string& name, Backend b, const json& at,
                               const json& also) {
  return runs_table(terms, name, kPytorchLibrary, b, at, also);
}

// The parameter tensors of the step (weights and biases; a block of attention and MLP: two norms, four
// Linear layers, each with a bias: 12).
double parameter_tensors(const StepConfig& c) {
  if (c.model == "mlp") return 2.0 * c.depth;
  if (c.model == "transformer") return 12.0 * c.layers;
  return 0;
}

Part* find_part(std::vector<Part>& parts, const std::string& name) {
  for (auto& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

void add_note(Part& p, const std::string& note) { p.estimate.note += (p.estimate.note.empty() ? "" : "; ") + note; }

// The GEMMs at torch.mm's measured rates: the native FP32 matmul tables of `be` replaced by PyTorch's
// (framework_matmul); returns the GEMM calls so priced (each call's seconds include its dispatch).
double pytorch_matmul(std::vector<Part>& parts, const std::vector<Term>& terms, const StepConfig& c, Backend be,
                        double rows, double params) {
  std::vector<Term> view;
  bool any = false, any_batched = false;
  for (const auto& t : terms) {
    const bool library = t.backend == be && json_read::string_at(t.where, {kFrameworkKey}) == kPytorchLibrary;
    const bool own = library && t.name == term::kPytorchMatmul, own_batched = library && t.name == term::kPytorchMatmulBatched;
    if ((own || own_batched) && t.usable() && !t.points.empty()) {
      Term u = t;
      u.name = own ? term::kMatmul : term::kMatmulBatched;
      view.push_back(std::move(u));
      (own ? any : any_batched) = true;
    } else if (!own && !own_batched) {
      view.push_back(t);
    }
  }
  Part& mm = *find_part(parts, "matmul");
  if (!any || c.model == "generic") {
    add_note(mm, "no PyTorch matmul records on " + std::string(to_string(be)) + ": gtb's native GEMM rates");
    return 0;
  }
  // gtb's own FP32 GEMM tables give way to PyTorch's; so do the shares of the back-to-back rate
  // gtb's GEMMs keep inside a step and from memory (matmul_in_step, matmul_from_memory): they were
  // measured on gtb's library calls, and torch.mm's records are whole calls from Python (their
  // dispatch included), whose shares nothing measures.
  // Attention's per-head products likewise take torch.bmm's rates where they were measured
  // (framework_matmul_batched), gtb's own batched rates where not.
  view.erase(std::remove_if(view.begin(), view.end(),
                            [&](const Term& t) {
                              if (t.backend != be || t.where.contains(kFrameworkKey)) return false;
                              const bool fp32 = t.where.value("precision", "") == "fp32";
                              return t.name == term::kMatmulInStep || t.name == term::kMatmulFromMemory ||
                                     (t.name == term::kMatmul && fp32) || (any_batched && t.name == term::kMatmulBatched && fp32);
                            }),
             view.end());
  mm = matmul_part(view, c, be, rows, params);
  double calls = 0, batched = 0;
  for (const auto& sh : matmul_shapes(c, rows)) (sh.batched ? batched : calls) += 1;
  mm.what += any_batched && batched > 0 ? ", at torch.mm's and (attention's per-head products) torch.bmm's measured rates"
                                        : ", at torch.mm's measured rates";
  return calls * c.micro_batches;
}

// The passes PyTorch's written-out attention (materialised: scores, mask, softmax, context as
// operators, as gtb's PyTorch model and most hand-written blocks run it) dispatches beyond the
// passes of gtb's own step, per layer: over the scores, the scaling and the mask (masked_fill)
// forward and the same two on their gradient backward; over the activations, the heads of the fused
// QKV output made contiguous for the batched products (q, k, v) and the context merged back, forward,
// four such copies of the gradients backward, and the three heads' gradients joined into the QKV
// gradient (a cat of 3 x tokens x d_model).
std::vector<Pass> pytorch_attention_passes(const StepConfig& c, double rows) {
  std::vector<Pass> p;
  if (!(c.model == "transformer") || c.attention != "materialised") return p;
  const double e = kActivationBytes, T = rows * c.seq_len, d = c.d_model;
  const double scores = rows * c.heads * double(c.seq_len) * c.seq_len;
  for (int l = 0; l < c.layers; ++l) {
    for (int i = 0; i < 4; ++i) p.push_back({2 * e * scores, false});
    for (int i = 0; i < 8; ++i) p.push_back({2 * e * T * d, false});
    p.push_back({2 * e * 3 * T * d, false});
  }
  return p;
}

// Each elementwise pass at the measured seconds of an eager operator over as many bytes (framework_op
// at n = bytes / 8, a read and a write of FP32), less that operator's cost at its smallest measured
// size (its dispatch, which the dispatch part counts).
void pytorch_elementwise(std::vector<Part>& parts, const std::vector<Term>& terms, const StepConfig& c, Backend be,
                           double rows) {
  Part& ew = *find_part(parts, "elementwise");
  const Estimate floor = runs_table(terms, term::kPytorchOp, to_string(c.framework), be, json::object(), json::object(), "n");
  if (!floor.seconds || c.model == "generic") {
    add_note(ew, "no eager PyTorch operator cost by size on " + std::string(to_string(be)) + ": gtb's streaming rates");
    return;
  }
  std::vector<Pass> passes = elementwise_bytes(c, rows);
  const std::vector<Pass> casts = operand_casts(terms, be, c, rows), attention = pytorch_attention_passes(c, rows);
  passes.insert(passes.end(), casts.begin(), casts.end());
  passes.insert(passes.end(), attention.begin(), attention.end());
  Estimate sum = known(0);
  std::size_t outside = 0;
  for (const Pass& pass : passes) {
    Estimate one = runs_table(terms, term::kPytorchOp, to_string(c.framework), be, {{"n", std::max(1.0, pass.bytes / 8.0)}});
    if (!one.seconds) {
      sum = sum + one;
      continue;
    }
    outside += one.outside_measured;
    one.seconds = std::max(0.0, *one.seconds - *floor.seconds);
    one.note.clear();
    one.outside_measured = false;
    sum = sum + one;
  }
  sum = scaled(sum, c.micro_batches);
  sum.records.insert(sum.records.end(), floor.records.begin(), floor.records.end());
  if (outside) sum.note = std::to_string(outside) + " of " + std::to_string(passes.size()) +
                          " passes outside the measured sizes: the nearest measured size is used";
  ew.estimate = sum;
  ew.what = std::to_string(passes.size()) + " elementwise passes per micro-batch at the measured seconds of an eager "
            "PyTorch operator over as many bytes, less its dispatch";
  if (!attention.empty())
    ew.what += " (" + std::to_string(attention.size()) + " of them the written-out attention's: scores scaled and masked, "
               "heads split and merged)";
}

// The optimizer step at PyTorch's measured seconds for this many parameters and tensors; returns the
// operators it dispatches (priced in it).
double pytorch_optimizer(std::vector<Part>& parts, const std::vector<Term>& terms, const StepConfig& c, Backend be,
                           double params) {
  Part& opt = *find_part(parts, "optimizer");
  const json at = {{"params", params}, {"tensors", parameter_tensors(c)}};
  const json also = {{"optimizer", c.optimizer}};
  const Estimate step = pytorch_library_table(terms, term::kPytorchOptimizer, be, at, also);
  if (!step.seconds || c.model == "generic") {
    add_note(opt, "no PyTorch " + c.optimizer + " step record on " + std::string(to_string(be)) + ": gtb's rates");
    return 0;
  }
  opt.estimate = step;
  opt.what = "PyTorch's " + c.optimizer + " step over " + std::to_string(static_cast<long long>(params)) +
             " parameters in " + std::to_string(int(parameter_tensors(c))) + " tensors, as measured";
  const Estimate ops = pytorch_library_table(terms, term::kPytorchOptimizerOps, be, at, also);
  return ops.seconds.value_or(0);
}

// A PyTorch step's compute from PyTorch's own kernels where they were measured, gtb's native terms
// (with a note saying so) where not; returns the operators so priced whole (their dispatch included).
// Returns the operators priced whole in their parts; `gemm_calls` the GEMMs among them (torch.mm's).
double pytorch_compute(std::vector<Part>& parts, const std::vector<Term>& terms, const StepConfig& c, Backend be,
                         double rows, double params, double& gemm_calls) {
  gemm_calls = pytorch_matmul(parts, terms, c, be, rows, params);
  pytorch_elementwise(parts, terms, c, be, rows);
  return gemm_calls + pytorch_optimizer(parts, terms, c, be, params);
}

// Input under PyTorch: `workers` DataLoader workers at the measured period per sample for this
// preprocessing cost (framework_loader), the part the step's other `rest` seconds do not hide.
Part pytorch_loader_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rest) {
  Estimate e;
  for (const auto& t : terms) {
    if (t.name != term::kPytorchLoader || json_read::string_at(t.where, {kFrameworkKey}) != kPytorchLibrary || !t.usable())
      continue;
    if (json_read::number_at(t.where, {"num_workers"}) != c.workers) continue;
    if (const auto ip = interpolate(t, {{"sample_us", c.sample_us}})) {
      e = known(ip->y * c.batch);
      e.records = ip->records;
      e.outside_measured = ip->outside_measured;
      break;
    }
  }
  if (!e.seconds) {
    Part p = loader_part(terms, c, be, rest);
    add_note(p, "no PyTorch DataLoader record at num_workers " + std::to_string(c.workers) + ": gtb's loader term");
    return p;
  }
  std::ostringstream os;
  os.precision(3);
  const double need = *e.seconds;
  e.seconds = std::max(0.0, need - rest);
  os << c.workers << " DataLoader worker" << (c.workers == 1 ? "" : "s") << " at " << c.sample_us << " us per sample: "
     << need * 1e3 << " ms per batch as measured, the part the step does not hide";
  if (e.outside_measured) e.note = "sample_us outside the measured costs: the nearest measured cost is used";
  return {"input", "loader", os.str(), e};
}

// The worker counts PyTorch's DataLoader was measured at (empty: none).
std::vector<double> pytorch_worker_counts(const std::vector<Term>& terms) {
  std::vector<double> out;
  for (const auto& t : terms)
    if (t.name == term::kPytorchLoader && t.usable() && json_read::string_at(t.where, {kFrameworkKey}) == kPytorchLibrary)
      out.push_back(json_read::number_at(t.where, {"num_workers"}));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The total of the parts and the dominant one; a part that cannot be said leaves the total unsaid.
void add_up(Prediction& p) {
  p.total = known(0);
  double most = -1;
  for (const auto& part : p.parts) {
    if (!part.estimate.seconds && p.total.cannot_say.empty())
      p.total.cannot_say = part.name + ": " + part.estimate.cannot_say;
    p.total = p.total + part.estimate;
    if (part.estimate.seconds && *part.estimate.seconds > most) most = *part.estimate.seconds, p.dominant = part.name;
  }
  if (!p.total.seconds) p.dominant.clear();
  p.total.note.clear();
}

}  // namespace

Prediction predict(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  Prediction p;
  p.backend = be;
  const double rows = double(c.batch) / c.micro_batches;
  const double params = parameter_count(c);
  p.parts.push_back(matmul_part(terms, c, be, rows, params));
  p.parts.push_back(elementwise_part(terms, c, be, rows));
  p.parts.push_back(optimizer_part(terms, c, be, params));
  double gemm_calls = 0;
  const double priced_whole = is_pytorch(c.framework) ? pytorch_compute(p.parts, terms, c, be, rows, params, gemm_calls) : 0.0;
  scale_to_core_share(p.parts, c, be);
  if (c.framework == Framework::native) {
    if (be == Backend::cuda) p.parts.push_back(launch_part(terms, c, seconds_of(p.parts)));
  } else if (c.framework == Framework::pytorch_graph) {
    // A replayed graph bypasses the dispatcher: the launches of a graph remain.
    if (be == Backend::cuda) {
      StepConfig g = c;
      g.cuda_graph = true;
      p.parts.push_back(launch_part(terms, g, seconds_of(p.parts)));
    } else {
      Estimate e;
      e.cannot_say = "a CUDA graph is a GPU mode";
      p.parts.push_back({"overhead", "dispatch", "pytorch-graph on the CPU", e});
    }
  } else {
    p.parts.push_back(
        dispatch_part(terms, c, be, be == Backend::cuda ? seconds_of(p.parts) : 0.0, priced_whole, gemm_calls));
  }
  if (c.loss_read_every > 0) p.parts.push_back(host_sync_part(terms, c, be));
  if (!c.redundant_copy.empty()) p.parts.push_back(redundant_copy_part(terms, c, be));
  if (c.gpus > 1) p.parts.push_back(allreduce_part(terms, c, be, params));
  if (c.input_bytes_per_sample > 0) {
    p.parts.push_back(batch_gather_part(terms, c, be));
    if (be == Backend::cuda) p.parts.push_back(h2d_copy_part(terms, c, be));
  }
  if (c.sample_us > 0)
    p.parts.push_back(is_pytorch(c.framework) && c.workers > 0 ? pytorch_loader_part(terms, c, be, seconds_of(p.parts))
                                                         : loader_part(terms, c, be, seconds_of(p.parts)));
  add_up(p);
  return p;
}

namespace {
// A mode of PyTorch (compiled, a replayed CUDA graph) as a fix: the step time that mode kept of eager's,
// measured here on the same configuration (framework_mode_time, the nearest measured one), applied
// to the predicted step; never a guess where the mode was not measured.
Fix pytorch_mode_fix(const std::vector<Term>& terms, const StepConfig& c, Backend be, const Prediction& base,
                     const std::string& id, const std::string& title, Framework mode) {
  Fix f;
  f.id = id, f.title = title, f.backend = be;
  f.change = std::string(kFrameworkKey) + " " + to_string(c.framework) + " -> " + to_string(mode);
  Estimate kept;
  if (c.model == "mlp") {
    kept = runs_table(terms, term::kPytorchModeTime, to_string(mode), be, {{"width", c.width}, {"depth", c.depth}, {"batch", c.batch}});
  } else {
    kept.cannot_say = "measured for the MLP step only";
  }
  if (!kept.seconds) {
    f.cannot_say = "not measured here: " + kept.cannot_say;
  } else if (!base.total.seconds) {
    f.cannot_say = base.total.cannot_say;
  } else {
    f.saving_s = *base.total.seconds * (1.0 - *kept.seconds);
    f.saving_fraction = 1.0 - *kept.seconds;
    if (kept.outside_measured) f.caveat = "rough: measured at the nearest configuration, not this one";
  }
  f.records = kept.records;
  return f;
}
}  // namespace

std::vector<Fix> rank_fixes(const std::vector<Term>& terms, const StepConfig& c, Backend be, const Prediction& base) {
  std::vector<Fix> out;
  auto attempt = [&](const std::string& id, const std::string& title, const std::string& change, StepConfig after,
                     double per_same_samples = 1.0) {
    Fix f;
    f.id = id, f.title = title, f.change = change, f.backend = be;
    const Prediction p = predict(terms, after, be);
    if (!base.total.seconds) {
      f.cannot_say = base.total.cannot_say;
    } else if (!p.total.seconds) {
      f.cannot_say = p.total.cannot_say;
    } else {
      f.saving_s = *base.total.seconds - *p.total.seconds * per_same_samples;
      f.saving_fraction = *base.total.seconds > 0 ? *f.saving_s / *base.total.seconds : 0;
    }
    // A part the fix changes, priced outside the measured range, makes the saving rough.
    for (const auto& part : p.parts) {
      if (!part.estimate.seconds || !part.estimate.outside_measured) continue;
      const auto same = std::find_if(base.parts.begin(), base.parts.end(), [&](const Part& b) {
        return b.name == part.name && b.estimate.seconds && *b.estimate.seconds == *part.estimate.seconds;
      });
      if (same != base.parts.end()) continue;
      f.caveat += (f.caveat.empty() ? "rough: priced outside the measured range: the changed " : ", ") + part.name;
    }
    // The records behind a fix: what changed between the two predictions.
    f.records = p.total.records;
    for (const auto& r : base.total.records)
      if (std::find(f.records.begin(), f.records.end(), r) == f.records.end()) f.records.push_back(r);
    out.push_back(std::move(f));
  };
  auto best_of = [&](const std::string& id, const std::string& title, const std::string& key,
                     const std::vector<double>& values, const std::function<void(StepConfig&, double)>& set,
                     const std::function<std::string(double)>& show, double current) {
    std::optional<double> best_v;
    double best_t = std::numeric_limits<double>::infinity();
    for (const double v : values) {
      if (v == current) continue;
      StepConfig a = c;
      set(a, v);
      const Prediction p = predict(terms, a, be);
      if (p.total.seconds && *p.total.seconds < best_t) best_t = *p.total.seconds, best_v = v;
    }
    StepConfig a = c;
    if (best_v) set(a, *best_v);
    else if (!values.empty()) set(a, values.back());
    attempt(id, title, key + " " + show(current) + " -> " + show(best_v.value_or(values.back())), a);
  };
  if (be == Backend::cuda && c.input_bytes_per_sample > 0 && c.host_memory == "pageable") {
    StepConfig a = c;
    a.host_memory = "pinned";
    attempt("pinned_memory", "Pinned host memory for the input batch", "host_memory pageable -> pinned", a);
  }
  // More workers only: fewer is never the fix offered, even where the prediction ties.
  std::vector<double> more_workers;
  // Under PyTorch the worker counts its DataLoader was measured at, where it was.
  std::vector<double> counts = is_pytorch(c.framework) ? pytorch_worker_counts(terms) : std::vector<double>{};
  if (counts.empty()) counts = {1.0, 2.0, 4.0, 8.0, 16.0};
  for (const double w : counts)
    if (w > c.workers) more_workers.push_back(w);
  if (c.sample_us > 0 && !more_workers.empty())
    best_of("more_workers", "More loader workers", "workers", more_workers,
            [](StepConfig& s, double v) { s.workers = int(v); }, [](double v) { return std::to_string(int(v)); },
            c.workers);
  if (c.micro_batches > 1) {
    StepConfig a = c;
    a.micro_batches = 1;
    attempt("larger_batch", "The whole batch at once (no gradient accumulation), where memory allows",
            "micro_batches " + std::to_string(c.micro_batches) + " -> 1", a);
  } else {
    StepConfig a = c;
    a.batch = c.batch * 2;
    attempt("larger_batch", "Twice the batch per step (or accumulate gradients)",
            "batch " + std::to_string(c.batch) + " -> " + std::to_string(a.batch) + " (saving per " +
                std::to_string(c.batch) + " samples)",
            a, 0.5);
  }
  if (c.precision == "fp32" || c.precision == "tf32") {
    StepConfig a = c;
    a.precision = "bf16";
    attempt("bf16", "BF16 mixed precision", "precision " + c.precision + " -> bf16", a);
  }
  if (be == Backend::cuda && !c.cuda_graph && c.framework == Framework::native) {
    StepConfig a = c;
    a.cuda_graph = true;
    attempt("cuda_graphs", "Capture the step in a CUDA Graph", "cuda_graph false -> true", a);
  }
  if (c.framework == Framework::pytorch_eager) {
    out.push_back(pytorch_mode_fix(terms, c, be, base, "compile", "Compile the step (torch.compile)",
                                   Framework::pytorch_compiled));
    if (be == Backend::cuda)
      out.push_back(pytorch_mode_fix(terms, c, be, base, "capture_graph", "Capture the step in a CUDA graph (torch.cuda.graphs)",
                                     Framework::pytorch_graph));
  }
  if (c.loss_read_every > 0 && c.loss_read_every < 100) {
    StepConfig a = c;
    a.loss_read_every = 100;
    attempt("fewer_syncs", "Read the loss back less often", "loss_read_every " + std::to_string(c.loss_read_every) +
                                                               " -> 100", a);
  }
  if (!c.redundant_copy.empty()) {
    StepConfig a = c;
    a.redundant_copy.clear();
    attempt("drop_copy", "Drop the redundant copy", "redundant_copy " + c.redundant_copy + " -> none", a);
  }
  if (c.gpus > 1) {
    const double mib = 1048576;
    best_of("bucket_size", "Gradient bucket size", "bucket_bytes", {1 * mib, 5 * mib, 25 * mib, 100 * mib},
            [](StepConfig& s, double v) { s.bucket_bytes = v; }, [](double v) { return fmt_bytes(v); },
            c.bucket_bytes);
    if (!c.overlap) {
      StepConfig a = c;
      a.overlap = true;
      attempt("overlap", "Overlap the gradient all-reduce with the backward pass", "overlap false -> true", a);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Fix& a, const Fix& b) {
    if (a.saving_s.has_value() != b.saving_s.has_value()) return a.saving_s.has_value();
    return a.saving_s.value_or(0) > b.saving_s.value_or(0);
  });
  return out;
}

Crossover crossover_batch(const std::vector<Term>& terms, StepConfig c) {
  Crossover x;
  std::vector<std::pair<int, bool>> gpu_ahead;
  c.micro_batches = 1;
  for (int b = 1; b <= 65536; b *= 2) {
    c.batch = b;
    const Prediction cpu = predict(terms, c, Backend::cpu), gpu = predict(terms, c, Backend::cuda);
    if (!cpu.total.seconds || !gpu.total.seconds) {
      x.cannot_say = !gpu.total.seconds ? "GPU: " + gpu.total.cannot_say : "CPU: " + cpu.total.cannot_say;
      x.batch.reset();
      return x;
    }
    for (const auto* p : {&cpu, &gpu})
      for (const auto& r : p->total.records)
        if (std::find(x.records.begin(), x.records.end(), r) == x.records.end()) x.records.push_back(r);
    gpu_ahead.emplace_back(b, *gpu.total.seconds < *cpu.total.seconds);
  }
  for (std::size_t i = gpu_ahead.size(); i-- > 0;) {
    if (!gpu_ahead[i].second) break;
    x.batch = gpu_ahead[i].first;
  }
  if (!x.batch) x.note = "the GPU is not predicted faster at any batch up to 65536";
  return x;
}

Validation validate(const std::vector<Term>& terms, const std::vector<Step>& steps) {
  Validation v;
  std::vector<double> errs;
  for (const auto& s : steps) {
    ValidationRow row;
    row.step = s;
    std::vector<Term> others;
    for (const auto& t : terms) {
      if (s.leave_out == "family") {
        if (t.family != s.family) others.push_back(t);
        continue;
      }
      // Only what came from the step's own record is left out.
      Term u = t;
      u.points.erase(std::remove_if(u.points.begin(), u.points.end(), [&](const Point& pt) { return pt.record == s.record; }),
                     u.points.end());
      const bool own = std::find(u.records.begin(), u.records.end(), s.record) != u.records.end();
      u.records.erase(std::remove(u.records.begin(), u.records.end(), s.record), u.records.end());
      if (u.form == "table" ? !u.points.empty() || !u.usable() : !own) others.push_back(std::move(u));
    }
    try {
      const StepConfig c = config_from_json(s.config);
      row.predicted = predict(others, c, s.backend).total;
      if (!row.predicted.seconds && predict(terms, c, s.backend).total.seconds)
        row.predicted.cannot_say += s.leave_out == "family"
                                        ? " (measured only by the step's own family, which validation leaves out)"
                                        : " (measured only by the step's own record, which validation leaves out)";
    } catch (const ConfigError& e) {
      row.predicted.cannot_say = std::string("the step's configuration: ") + e.what();
    }
    if (row.predicted.seconds && s.seconds > 0) {
      row.error = (*row.predicted.seconds - s.seconds) / s.seconds;
      // A measured median that is not a steady figure is shown beside its prediction, not scored.
      if (s.not_scored.empty()) errs.push_back(std::fabs(*row.error));
    }
    v.rows.push_back(std::move(row));
  }
  v.predicted = int(errs.size());
  if (!errs.empty()) {
    v.median_abs_error = gtb::median(errs);
    v.worst_abs_error = *std::max_element(errs.begin(), errs.end());
  }
  return v;
}

json to_json(const Estimate& e) {
  json j = json::object();
  j["seconds"] = e.seconds ? json(*e.seconds) : json(nullptr);
  if (!e.cannot_say.empty()) j["cannot_say"] = e.cannot_say;
  if (e.outside_measured) j["outside_measured"] = true;
  if (!e.note.empty()) j["note"] = e.note;
  j["records"] = e.records;
  return j;
}

json to_json(const Prediction& p) {
  json parts = json::array();
  for (const auto& part : p.parts) {
    json j = {{"group", part.group}, {"name", part.name}, {"what", part.what}};
    j.update(to_json(part.estimate));
    parts.push_back(j);
  }
  return {{"backend", to_string(p.backend)}, {"total", to_json(p.total)}, {"dominant", p.dominant}, {"parts", parts}};
}

json to_json(const Fix& f) {
  json j = {{"id", f.id}, {"title", f.title}, {"change", f.change}, {"backend", to_string(f.backend)}};
  j["saving_s"] = f.saving_s ? json(*f.saving_s) : json(nullptr);
  if (f.saving_s) j["saving_fraction"] = f.saving_fraction;
  if (!f.cannot_say.empty()) j["cannot_say"] = f.cannot_say;
  if (!f.caveat.empty()) j["caveat"] = f.caveat;
  j["records"] = f.records;
  return j;
}

json to_json(const Validation& v) {
  json rows = json::array();
  for (const auto& r : v.rows) {
    json j = {{"record", r.step.record}, {"backend", to_string(r.step.backend)}, {"measured_s", r.step.seconds}};
    j["predicted"] = to_json(r.predicted);
    j["error"] = r.error ? json(*r.error) : json(nullptr);
    if (!r.step.not_scored.empty()) j["not_scored"] = r.step.not_scored;
    if (std::isfinite(r.step.noise)) j["measured_noise"] = r.step.noise;
    rows.push_back(j);
  }
  json j = {{"rows", rows}, {"predicted", v.predicted}};
  j["median_abs_error"] = v.median_abs_error ? json(*v.median_abs_error) : json(nullptr);
  j["worst_abs_error"] = v.worst_abs_error ? json(*v.worst_abs_error) : json(nullptr);
  return j;
}

}  // namespace gtb::cost
