// The parts of a step PyTorch runs (eager, compiled or replayed as a CUDA graph): its dispatch
// overhead per operator, its own kernels (GEMMs, elementwise passes, optimizer) and its loader,
// priced from the terms the PyTorch measurements publish (term::kPytorch*). docs/advise.md.
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

// A table term published for the software `runs` (its where.<kFrameworkKey>: a Framework's name, or
// kPytorchLibrary), and `also`'s selectors where the term has them: its value at `at`, or at its
// smallest measured point of `smallest_of` when that is set.
Estimate runs_table(const std::vector<Term>& terms, const std::string& name, const std::string& runs, Backend b,
                    const json& at, const json& also, const std::string& smallest_of) {
  std::string reason;
  const auto runs_by = [&](const Term& t) {
    if (json_read::string_at(t.where, {kFrameworkKey}) != runs) return false;
    for (const auto& [k, v] : also.items())
      if (t.where.contains(k) && t.where.at(k) != v) return false;
    return true;
  };
  for (const Term* tp : find_terms(terms, name, b, runs_by, reason)) {
    const Term& t = *tp;
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

namespace {

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

}  // namespace

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

}  // namespace gtb::cost
