// Inside the model room (not for the commands: they use model.h): the work a step does before any
// price (step.cpp), and the parts of a step priced from the cost terms (price.cpp,
// price_pytorch.cpp), as predict() composes them (predict.cpp). Read in that order, one prediction
// runs top to bottom: the step's work, each part priced in one place, the parts added up.
#pragma once

#include <string>
#include <vector>

#include "harness/model/cost_model.h"

namespace gtb::cost {

// ---- The step's work (step.cpp) ----

// Activations stay FP32 at every precision (gtb's CPU and GPU steps keep them so; BF16 and FP16 are
// the GEMMs' operands, cast from FP32 before each product: operand_casts).
constexpr double kActivationBytes = 4.0;
bool reduced_operands(const std::string& precision);

// Fused attention runs kFusedBlockRows query rows at a time and computes only the key blocks on and
// below the diagonal (causal): of the S x S scores, (S + B) / 2S with B = min(kFusedBlockRows, S). The
// materialised step computes every score (and masks the upper triangle).
constexpr double kFusedBlockRows = 64;
double causal_share(const StepConfig& c);

// One GEMM site of a step: C[m x n] = op(A) op(B) over k, `count` products of it (attention's heads
// run one per sample and head, `batched`), in the orientation the step calls it.
struct Shape {
  double m, n, k;
  std::string orientation = "nn";
  double count = 1;
  bool batched = false;
};
void fused_attention_shapes(std::vector<Shape>& s, double S, double dh, double tasks);
// The GEMMs of one micro-batch of `rows` samples, forward and backward.
std::vector<Shape> matmul_shapes(const StepConfig& c, double rows);

// Elementwise passes of one micro-batch: bytes moved by each (read + written), and whether it
// computes a transcendental per element (a GELU, softmax's exp: priced at the measured rate of a pass
// that computes a GELU) or is a plain pass.
struct Pass {
  double bytes;
  bool gelu;
  double rate_at = 0;  // the size whose streaming rate applies (0: bytes): a pass run block by block in cache
  bool loss = false;   // the MLP's softmax cross-entropy: priced from its own record where one was measured
};
std::vector<Pass> elementwise_bytes(const StepConfig& c, double rows);

// How a step at a reduced precision rounds its GEMMs' FP32 operands. in_gemm: gtb's native MLP on
// the CPU, each product rounding its operands as they enter it (the per-shape plan), priced from the
// points measured so (matmul_autocast, the rounding in the time) where there are some. in_passes: gtb's
// native stack of attention blocks on the CPU, whose passes write rounded activations and whose
// optimizer writes a rounded copy of the weights; its GEMMs take rounded operands.
// casts: PyTorch's autocast (an operator per operand cast) and the GPU steps, a cast per operand.
enum class Rounding { in_gemm, in_passes, casts };
Rounding rounding_of(const StepConfig& c, Backend be);

// The bytes a step's GEMMs range over (weights, their gradients, the activations the step keeps).
double working_set_bytes(const StepConfig& c, double rows);
double kernels_per_step(const StepConfig& c);
// The native MLP step's FLOPs as its serial rule counts them; whether gtb's own step runs on the CPU.
double native_mlp_flops(const StepConfig& c);
bool native_cpu(const StepConfig& c, Backend be);

// ---- Pricing helpers (price.cpp) ----

inline Estimate known(double seconds, const std::string& note = "") {
  Estimate e;
  e.seconds = seconds;
  e.note = note;
  return e;
}
// A GEMM of the step at its precision (`rounding_included`: its measured rate includes the rounding
// of its operands; `rate_precision`, where given: the precision whose measured rate priced it).
Estimate gemm_seconds(const std::vector<Term>& terms, Backend be, const StepConfig& c, const Shape& s,
                      bool& rounding_included, std::string* rate_precision = nullptr);
// BF16 / FP16 operands cast from FP32 before each product, as passes.
std::vector<Pass> operand_casts(const std::vector<Term>& terms, Backend be, const StepConfig& c, double rows);
// A table term's value at `at` (the interpolated y, no unit conversion).
Estimate table_y(const std::vector<Term>& terms, const std::string& name, Backend b, const json& at);
std::string fmt_bytes(double b);
// The seconds of the parts so far (those that cannot be said count zero).
double seconds_of(const std::vector<Part>& parts);

// ---- The parts, in the order predict() adds them (price.cpp) ----

Part matmul_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rows, double params);
Part elementwise_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rows);
Part optimizer_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double params);
void scale_to_core_share(std::vector<Part>& parts, const StepConfig& c, Backend be);
Part launch_part(const std::vector<Term>& terms, const StepConfig& c, double device_work);
Part host_sync_part(const std::vector<Term>& terms, const StepConfig& c, Backend be);
Part redundant_copy_part(const std::vector<Term>& terms, const StepConfig& c, Backend be);
Part allreduce_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double params);
Part batch_gather_part(const std::vector<Term>& terms, const StepConfig& c, Backend be);
Part h2d_copy_part(const std::vector<Term>& terms, const StepConfig& c, Backend be);
Part loader_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rest);

// ---- A step PyTorch runs (price_pytorch.cpp) ----

// A table term published for the software `runs` (its where.<kFrameworkKey>: a Framework's name, or
// "pytorch" for the library whatever the mode), and `also`'s selectors where the term has them: its
// value at `at`, or at its smallest measured point of `smallest_of` when that is set.
Estimate runs_table(const std::vector<Term>& terms, const std::string& name, const std::string& runs, Backend b,
                    const json& at, const json& also = json::object(), const std::string& smallest_of = "");
// PyTorch's own GEMMs, elementwise passes and optimizer in place of gtb's in `parts`; returns the
// operators priced whole there, and `gemm_calls` the GEMMs among them.
double pytorch_compute(std::vector<Part>& parts, const std::vector<Term>& terms, const StepConfig& c, Backend be,
                       double rows, double params, double& gemm_calls);
// The host time PyTorch dispatches its operators in (beyond the kernels' `device_work` on the GPU).
Part dispatch_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double device_work, double priced_whole,
                   double recorded_whole);
Part pytorch_loader_part(const std::vector<Term>& terms, const StepConfig& c, Backend be, double rest);
// The DataLoader worker counts measured (the more_workers fix tries them).
std::vector<double> pytorch_worker_counts(const std::vector<Term>& terms);

}  // namespace gtb::cost
