// The parts of a step, each priced in one place from the cost terms (the lookups of cost_terms.h),
// in the order predict() adds them: compute (GEMMs, elementwise passes, the optimizer), the share of
// the machine, overhead (launches), habits (host syncs, redundant copies), data_parallel
// (all-reduce), input (batch gathering, the host-to-device copy, the loader). PyTorch's own parts are
// in price_pytorch.cpp; predict.cpp composes them. docs/advise.md states every formula.
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

// A GEMM of the step at its precision: a layer GEMM that rounds its own operands from the
// matmul_autocast points where measured (`rounding_included`). A layer GEMM of a step that rounds in
// its passes takes FP32-stored rounded operands: a native BF16 library converts them to BF16 words in
// the call, as the autocast points time it, an FP32 library runs them at the FP32 rate; the faster of
// the two where both were measured (the matmul tables' BF16 points, operands converted outside the
// time, would overstate it). Elsewhere from the matmul tables.
Estimate gemm_seconds(const std::vector<Term>& terms, Backend be, const StepConfig& c, const Shape& s,
                      bool& rounding_included, std::string* rate_precision) {
  rounding_included = false;
  if (rate_precision) *rate_precision = c.precision;
  if (s.batched) return matmul_batched_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation, s.count);
  const Rounding r = rounding_of(c, be);
  if (reduced_operands(c.precision) && r != Rounding::casts) {
    const Estimate e = matmul_autocast_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation);
    if (e.seconds && r == Rounding::in_gemm) return rounding_included = true, e;
    const Estimate fp = matmul_seconds(terms, be, "fp32", s.m, s.n, s.k, s.orientation);
    if (e.seconds && fp.seconds) {
      if (*fp.seconds >= *e.seconds) return e;
      if (rate_precision) *rate_precision = "fp32";
      return fp;
    }
  }
  return matmul_seconds(terms, be, c.precision, s.m, s.n, s.k, s.orientation, rate_precision);
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

// A table term's value at `at` (the interpolated y, no unit conversion).
Estimate table_y(const std::vector<Term>& terms, const std::string& name, Backend b, const json& at) {
  std::string reason;
  for (const Term* tp : find_terms(terms, name, b, [](const Term&) { return true; }, reason)) {
    const Term& t = *tp;
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


// The seconds of the parts so far (those that cannot be said count zero): what a part hidden behind
// them (the launches, the loader) is measured against.
double seconds_of(const std::vector<Part>& parts) {
  double s = 0;
  for (const auto& part : parts) s += part.estimate.seconds.value_or(0);
  return s;
}

namespace {
// Seconds to move `moved` bytes at the streaming rate (`op`) measured at `at` bytes: work that runs at
// the rate of the data around it in the step (what the caches hold then), not at its own size.
Estimate moved_at_rate_of(const std::vector<Term>& terms, Backend be, double moved, double at, const std::string& op) {
  Estimate e = stream_seconds(terms, be, at, op);
  if (e.seconds && moved != at) e.seconds = *e.seconds * moved / at;
  return e;
}

// The threads of gtb's native FP32 MLP step in rows mode (each thread its rows of the micro-batch
// through every layer, its products one single-threaded call each; cpu_threads >= 2 and at least
// native::kRowsPerThread rows per thread), 0 for any other step.
int rows_mode_threads(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  if (!update_reads_other_cores(c, be) || c.model != "mlp" || c.precision != "fp32") return 0;
  const Estimate threads = constant_value(terms, term::kCpuThreads, be);
  const double rows = double(c.batch) / c.micro_batches;
  if (!threads.seconds || *threads.seconds < 2 || rows < native::kRowsPerThread * *threads.seconds) return 0;
  return int(*threads.seconds);
}
}  // namespace

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
    std::size_t from_memory = 0, one_thread = 0;
    // Rows mode: each thread runs its share of every product alone, with no fork and join per
    // product: a GEMM costs its slice (1 / threads of its FLOPs) at the one-thread in-step rate
    // (matmul_one_thread), where measured.
    const int row_threads = rows_mode_threads(terms, c, be);
    for (const auto& s : matmul_shapes(c, rows)) {
      if (row_threads > 0 && !s.batched) {
        const Estimate slice =
            matmul_one_thread_seconds(terms, be, c.precision, 2.0 * s.m * s.n * s.k / row_threads);
        if (slice.seconds) {
          mm = mm + scaled(slice, s.count);
          outside += slice.outside_measured;
          ++one_thread;
          ++n;
          continue;
        }
      }
      bool included = false;
      std::string rate_precision;
      Estimate one = gemm_seconds(terms, be, c, s, included, &rate_precision);
      rounded += included;
      // The share of the back-to-back rate kept inside a step is that of the GEMMs whose rate priced
      // this one: a reduced-precision GEMM run as FP32 on rounded operands keeps FP32's share.
      Estimate keep;
      if (!s.batched) {
        const double flop = 2.0 * s.m * s.n * s.k;
        keep = matmul_from_memory_fraction(terms, be, rate_precision, ws, flop);
        if (keep.seconds) ++from_memory;
        else keep = matmul_in_step_fraction(terms, be, rate_precision, ws, flop);
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
    if (one_thread)
      mm.note += (mm.note.empty() ? "" : "; ") + std::to_string(one_thread) +
                 " GEMMs in rows mode: each thread's slice at the one-thread rate inside a step (matmul_one_thread)";
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

namespace {

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

}  // namespace

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
    Estimate one = moved_at_rate_of(terms, be, pass.bytes, pass.rate_at > 0 ? pass.rate_at : pass.bytes,
                                    pass.gelu ? "gelu" : one_thread ? "one_thread" : "");
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
  if (const int threads = rows_mode_threads(terms, c, be); opt.seconds && threads > 0)
    sum_bytes = params * 4.0 * (threads - 1 + 2);
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

namespace {

// A CPU step's redundant copy where no copy of its kind was measured: a copy in host memory, as a
// training loop's host copy runs (a memcpy, std::copy or assignment: one thread), at the measured
// streaming rate of one thread where measured, else of all cores. What it copies: the batch (inputs
// and labels), the first layer's activations, or the weights.
// - Where its bytes are: between two copies the rest of the step runs through the caches, so the
//   copy finds its source and destination where the step's working set lives. The rate is read at
//   the step's working set plus the copy's own two buffers, not at the copy's size (a copy of 64 KiB
//   amid a step of 2 MiB runs at the rate of 2 MiB).
// - What it moves: three times its bytes. It reads the source, and each line of the destination is
//   read before it is written (write-allocate stores): STREAM counts its copy as two, the memory
//   moves three.
Estimate copy_as_stream(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  double bytes = 0;
  if (c.redundant_copy == "batch") bytes = double(c.batch) * (4.0 * (c.input > 0 ? c.input : c.width) + 4.0);
  else if (c.redundant_copy == "activation") bytes = double(c.batch) * c.width * 4.0;
  else if (c.redundant_copy == "weights") bytes = 4.0 * parameter_count(c);
  if (bytes <= 0) return Estimate{};
  const double at = working_set_bytes(c, double(c.batch) / std::max(1, c.micro_batches)) + 2.0 * bytes;
  const double moved = 3.0 * bytes;
  Estimate e = moved_at_rate_of(terms, be, moved, at, "one_thread");
  const bool one = e.seconds.has_value();
  if (!one) e = moved_at_rate_of(terms, be, moved, at, "");
  if (e.seconds) {
    e.note = (e.note.empty() ? "" : e.note + "; ") + std::string("no copy of this kind measured: a copy of ") +
             fmt_bytes(bytes) + (one ? " on one thread" : " (all cores: no one-thread rate measured)") +
             ", three times its bytes moved (the destination's lines read before they are written), at the "
             "streaming rate measured at the step's working set and the copy's buffers (" + fmt_bytes(at) + ")";
  }
  return e;
}

}  // namespace

// Habits: a redundant copy every step, at the measured copy of its kind nearest in width and batch.
Part redundant_copy_part(const std::vector<Term>& terms, const StepConfig& c, Backend be) {
  Estimate e;
  const Term* best = nullptr;
  double dist = std::numeric_limits<double>::infinity();
  std::string reason;
  for (const Term* tp : find_terms(terms, term::kRedundantCopy, be, [](const Term&) { return true; }, reason)) {
    const Term& t = *tp;
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

}  // namespace gtb::cost
