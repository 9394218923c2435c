// The step predicted (its parts added up), the fixes ranked by predicted saving, the CPU vs GPU
// crossover batch and the validation against the steps gtb measured whole (cost_model.h;
// docs/advise.md states every formula).
#include "harness/model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "harness/document/findings.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"
#include "harness/model/step_work.h"

namespace gtb::cost {

namespace {
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

namespace {
// A fix priced: the step predicted with the configuration `after` against `base` (its saving per step
// of the same samples: `per_same_samples` of the changed step's time), rough where a part the fix
// changes is priced outside the measured range; its records what either prediction came from.
Fix priced_fix(const std::vector<Term>& terms, Backend be, const Prediction& base, const std::string& id,
               const std::string& title, const std::string& change, const StepConfig& after, double per_same_samples) {
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
  return f;
}
}  // namespace

std::vector<Fix> rank_fixes(const std::vector<Term>& terms, const StepConfig& c, Backend be, const Prediction& base) {
  std::vector<Fix> out;
  auto attempt = [&](const std::string& id, const std::string& title, const std::string& change, const StepConfig& after,
                     double per_same_samples = 1.0) {
    out.push_back(priced_fix(terms, be, base, id, title, change, after, per_same_samples));
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
  j["seconds"] = findings::or_null(e.seconds);
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
  j["saving_s"] = findings::or_null(f.saving_s);
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
    j["error"] = findings::or_null(r.error);
    if (!r.step.not_scored.empty()) j["not_scored"] = r.step.not_scored;
    if (std::isfinite(r.step.noise)) j["measured_noise"] = r.step.noise;
    rows.push_back(j);
  }
  json j = {{"rows", rows}, {"predicted", v.predicted}};
  j["median_abs_error"] = findings::or_null(v.median_abs_error);
  j["worst_abs_error"] = findings::or_null(v.worst_abs_error);
  return j;
}

}  // namespace gtb::cost
