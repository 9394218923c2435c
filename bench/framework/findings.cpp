// The framework family's findings, computed from its records (and the counters the merge added from
// the records of the same work), and its cost terms.
#include "bench/framework/findings.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "gtb/gtb.h"

namespace gtb::framework {

namespace {

bool measured(const Record& r) { return r.status == Status::ok && r.stats && r.stats->median > 0; }
std::int64_t pint(const Record& r, const char* k) { return r.params.value(k, std::int64_t(0)); }
std::string opt(const Record& r, const char* k, const std::string& def = "") {
  const auto it = r.options.find(k);
  if (it == r.options.end()) return def;
  return it->is_string() ? it->get<std::string>() : it->dump();
}
std::optional<double> counter(const Record& r, const char* k) {
  const auto it = r.counters.find(k);
  if (it == r.counters.end()) return std::nullopt;
  return it->second.value;
}
std::string info_string(const Record& r, const char* k) {
  const auto it = r.info.find(k);
  return it != r.info.end() && it->is_string() ? it->get<std::string>() : "";
}

void ops(const std::vector<Record>& recs, Findings& f) {
  for (const Record& r : recs) {
    if (r.workload != "op_chain" || !measured(r)) continue;
    Op o;
    o.backend = to_string(r.backend);
    o.n = pint(r, "n");
    o.per_op_us = r.stats->median / 3.0 * 1e6;
    o.record = r.id;
    if (auto ratio = counter(r, "time_vs_same_work"); ratio && *ratio > 0) {
      o.gtb_chain_us = r.stats->median / *ratio * 1e6;
      o.gtb_per_op_us = *o.gtb_chain_us / 3.0;
      o.tax_per_op_us = o.per_op_us - *o.gtb_per_op_us;
      o.gtb_record = info_string(r, "same_work_record");
    }
    f.ops.push_back(o);
  }
}

void loops(const std::vector<Record>& recs, Findings& f) {
  std::map<std::pair<std::string, std::int64_t>, std::pair<const Record*, const Record*>> by;
  for (const Record& r : recs)
    if (r.workload == "loop_vs_vector" && measured(r)) {
      auto& slot = by[{to_string(r.backend), pint(r, "n")}];
      (r.variant == "python_loop" ? slot.first : slot.second) = &r;
    }
  for (const auto& [k, v] : by)
    if (v.first && v.second)
      f.loops.push_back({k.first, k.second, v.first->stats->median * 1e6, v.second->stats->median * 1e6,
                         v.first->stats->median / v.second->stats->median});
}

// PyTorch's step time and, where the merge paired it with gtb's record of the same work, gtb's and
// their ratio.
template <class S>
void beside_gtb(const Record& r, S& s) {
  s.pytorch_ms = r.stats->median * 1e3;
  s.record = r.id;
  if (auto ratio = counter(r, "time_vs_same_work"); ratio && *ratio > 0) {
    s.ratio = *ratio;
    s.gtb_ms = s.pytorch_ms / *ratio;
    s.gtb_record = info_string(r, "same_work_record");
  }
}

void steps(const std::vector<Record>& recs, Findings& f) {
  for (const Record& r : recs) {
    if (r.workload != "mlp_step" || !measured(r)) continue;
    Step s;
    s.backend = to_string(r.backend);
    s.workload = r.workload;
    s.mode = opt(r, "mode", "eager");
    s.width = pint(r, "width");
    s.depth = pint(r, "depth");
    s.batch = pint(r, "batch");
    beside_gtb(r, s);
    f.steps.push_back(s);
  }
  // The crossover: per mode and model, the smallest batch from which the GPU's step is faster at
  // every larger batch measured on both.
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::map<std::int64_t, std::pair<double, double>>> by;
  for (const Step& s : f.steps) {
    auto& slot = by[{s.mode, s.width, s.depth}][s.batch];
    (s.backend == "cpu" ? slot.first : slot.second) = s.pytorch_ms;
  }
  for (const auto& [k, batches] : by) {
    Crossover c;
    std::tie(c.mode, c.width, c.depth) = k;
    for (const auto& [b, t] : batches) {
      if (t.first <= 0 || t.second <= 0) continue;
      c.batches.push_back(b);
      if (t.second < t.first) {
        if (!c.gpu_faster_from_batch) c.gpu_faster_from_batch = b;
      } else {
        c.gpu_faster_from_batch.reset();
      }
    }
    if (c.batches.size() >= 2) f.crossovers.push_back(c);
  }
}

void transformer_ratios(const std::vector<Record>& recs, Findings& f) {
  for (const Record& r : recs) {
    if (r.workload != "transformer_step" || !measured(r)) continue;
    TransformerStep s;
    s.backend = to_string(r.backend);
    s.attention = opt(r, "attention", "materialised");
    s.precision = opt(r, "precision", "fp32");
    s.layers = pint(r, "layers"), s.d_model = pint(r, "d_model"), s.heads = pint(r, "heads");
    s.seq_len = pint(r, "seq_len"), s.batch = pint(r, "batch");
    beside_gtb(r, s);
    f.transformer_steps.push_back(s);
  }
}

void loaders(const std::vector<Record>& recs, Findings& f) {
  for (const Record& r : recs) {
    if (r.workload != "dataloader" || !measured(r) || !r.value) continue;
    Loader l;
    l.sample_us = pint(r, "sample_us");
    l.num_workers = pint(r, "num_workers");
    l.batch = pint(r, "batch");
    l.step_ms = pint(r, "step_ms");
    l.pin_memory = opt(r, "pin_memory");
    l.persistent_workers = opt(r, "persistent_workers");
    l.samples_per_s = *r.value;
    l.idle_fraction = counter(r, "idle_fraction");
    f.loaders.push_back(l);
  }
  // Per preprocessing cost and pin_memory: workers 0 runs without persistence (it has no workers to
  // keep), so the persistent rows and workers 0 form one sweep.
  std::map<std::tuple<std::int64_t, std::int64_t, std::string, std::string>, std::map<std::int64_t, std::optional<double>>> by;
  for (const Loader& l : f.loaders) {
    if (l.num_workers == 0) {
      for (const char* p : {"off", "on"}) by[{l.sample_us, l.step_ms, l.pin_memory, p}][0] = l.idle_fraction;
    } else {
      by[{l.sample_us, l.step_ms, l.pin_memory, l.persistent_workers}][l.num_workers] = l.idle_fraction;
    }
  }
  for (const auto& [k, sweep] : by) {
    if (sweep.size() < 2 || !sweep.count(0)) continue;
    Fed d;
    std::tie(d.sample_us, d.step_ms, d.pin_memory, d.persistent_workers) = k;
    d.most_workers = sweep.rbegin()->first;
    d.idle_at_zero = sweep.at(0);
    for (const auto& [w, idle] : sweep)
      if (idle && *idle <= kFedIdle) {
        d.smallest_fed_workers = w;
        d.idle_at_smallest = idle;
        break;
      }
    f.fed.push_back(d);
  }
}

void precisions(const std::vector<Record>& recs, Findings& f) {
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, const Record*> fp32;
  for (const Record& r : recs)
    if (r.workload == "mixed_precision" && measured(r) && opt(r, "precision") == "fp32")
      fp32[{to_string(r.backend), pint(r, "width"), pint(r, "batch")}] = &r;
  for (const Record& r : recs) {
    if (r.workload != "mixed_precision" || !measured(r)) continue;
    Precision p;
    p.backend = to_string(r.backend);
    p.precision = opt(r, "precision");
    p.width = pint(r, "width");
    p.batch = pint(r, "batch");
    p.step_ms = r.stats->median * 1e3;
    p.loss_after_k = counter(r, "loss_after_k");
    p.k_steps = std::int64_t(counter(r, "k_steps").value_or(0));
    p.peak_memory_bytes = counter(r, "peak_memory_bytes");
    p.step_memory_bytes = counter(r, "step_memory_bytes");
    if (auto it = fp32.find({p.backend, p.width, p.batch}); it != fp32.end()) {
      p.speedup_vs_fp32 = it->second->stats->median / r.stats->median;
      p.fp32_loss_after_k = counter(*it->second, "loss_after_k");
      const auto fp32_bytes = counter(*it->second, "step_memory_bytes");
      if (p.step_memory_bytes && fp32_bytes && *fp32_bytes > 0) p.memory_vs_fp32 = *p.step_memory_bytes / *fp32_bytes;
    }
    f.precisions.push_back(p);
  }
}

void loss_reads(const std::vector<Record>& recs, Findings& f) {
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::pair<const Record*, const Record*>> by;
  for (const Record& r : recs)
    if (r.workload == "loss_read" && measured(r)) {
      auto& slot = by[{to_string(r.backend), pint(r, "width"), pint(r, "batch")}];
      (opt(r, "loss_read_every") == "1" ? slot.first : slot.second) = &r;
    }
  for (const auto& [k, v] : by) {
    if (!v.first || !v.second) continue;
    LossRead l;
    std::tie(l.backend, l.width, l.batch) = k;
    l.every_step_us = v.first->stats->median * 1e6;
    l.every_100_us = v.second->stats->median * 1e6;
    // 0.99 reads per step more in the every-step loop.
    l.extra_us_per_read = (l.every_step_us - l.every_100_us) / 0.99;
    f.loss_reads.push_back(l);
  }
}

// The step time a mode keeps of eager's (compiled or graph over eager, the same configuration and
// backend): a table by width, depth and batch; without both records, the mode records' reason.
void mode_terms(const std::vector<Record>& recs, Backend be, Findings& f) {
  for (const std::string mode : {"compiled", "graph"}) {
    const json where = {{"framework", "pytorch-" + mode}};
    auto pick = [mode](const Record& r) { return r.workload == "mlp_step" && opt(r, "mode") == mode; };
    cost::Term t;
    t.name = cost::term::kPytorchModeTime, t.backend = be, t.where = where, t.form = "table", t.y = "fraction";
    t.axes = {"width", "depth", "batch"};
    for (const Record& m : recs) {
      if (m.backend != be || !pick(m) || !measured(m)) continue;
      for (const Record& e : recs)
        if (e.backend == be && e.workload == "mlp_step" && opt(e, "mode") == "eager" && measured(e) && e.params == m.params) {
          t.points.push_back({json{{"width", pint(m, "width")}, {"depth", pint(m, "depth")}, {"batch", pint(m, "batch")}},
                              m.stats->median / e.stats->median, m.id});
          t.records.push_back(m.id), t.records.push_back(e.id);
        }
    }
    f.terms.push_back(t.points.empty() ? cost::cannot_say_term(t.name, be, where, "table",
                                                               cost::reason_none(recs, be, pick, "PyTorch " + mode + " step"))
                                       : t);
  }
}

// The DataLoader's period per sample (the step's seconds / (1 - the consumer's idle fraction) / the
// batch: how fast batches came while a step of known length consumed them), by preprocessing cost,
// one table per num_workers; pin_memory off, the better of persistent workers or not.
void loader_terms(const std::vector<Record>& recs, Findings& f) {
  std::set<std::int64_t> workers;
  auto usable = [](const Record& r) {
    return r.workload == "dataloader" && opt(r, "pin_memory", "off") == "off" && pint(r, "sample_us") > 0 &&
           r.counters.count("idle_fraction") && r.counters.at("idle_fraction").value < 1.0;
  };
  for (const Record& r : recs)
    if (r.workload == "dataloader") workers.insert(pint(r, "num_workers"));
  for (const std::int64_t w : workers)
    f.terms.push_back(cost::table_term(
        cost::term::kPytorchLoader, Backend::cpu, json{{"framework", "pytorch"}, {"num_workers", w}}, {"sample_us"}, "seconds", recs,
        [&](const Record& r) { return usable(r) && pint(r, "num_workers") == w; },
        [](const Record& r) { return json{{"sample_us", r.params.at("sample_us")}}; },
        [](const Record& r) {
          return double(pint(r, "step_ms")) * 1e-3 / (1.0 - r.counters.at("idle_fraction").value) / double(pint(r, "batch"));
        },
        "DataLoader", true));
}

// The transformer step in eager PyTorch: its operator count (per record, by layers) and the steps
// measured whole, for the validation.
void transformer_steps(const std::vector<Record>& recs, Findings& f) {
  for (Backend be : {Backend::cpu, Backend::cuda})
    for (const char* attention : {"materialised", "fused"})
      f.terms.push_back(cost::table_term(
          cost::term::kPytorchOps, be,
          json{{"framework", "pytorch-eager"}, {"model", "transformer"}, {"optimizer", "adamw"}, {"attention", attention}},
          {"layers"}, "count", recs,
          [attention](const Record& r) {
            return r.workload == "transformer_step" && opt(r, "attention") == attention && opt(r, "precision", "fp32") == "fp32" &&
                   r.counters.count("operators_per_step");
          },
          [](const Record& r) { return json{{"layers", r.params.at("layers")}, {"d_model", r.params.at("d_model")}, {"batch", r.params.at("batch")}}; },
          [](const Record& r) { return r.counters.at("operators_per_step").value; }, "operator count of an eager transformer step", true));
  for (const Record& r : recs) {
    if (r.workload != "transformer_step" || !measured(r)) continue;
    const json config = {{"model", "transformer"}, {"layers", pint(r, "layers")}, {"d_model", pint(r, "d_model")},
                         {"heads", pint(r, "heads")}, {"seq_len", pint(r, "seq_len")}, {"batch", pint(r, "batch")},
                         {"optimizer", "adamw"}, {"activation", "gelu"}, {"attention", opt(r, "attention", "materialised")},
                         {"precision", opt(r, "precision", "fp32")}, {"framework", "pytorch-eager"}};
    cost::Step s{"", r.id, r.backend, r.stats->median, config};
    s.leave_out = "record";
    f.measured_steps.push_back(s);
  }
}

// PyTorch's own kernels as cost terms (docs/framework.md): the host seconds of an operator as a
// training step runs it, torch.mm's rate by GEMM shape and
// orientation, the optimizer step's seconds and operators by size and tensor count, the DataLoader's
// period per sample by workers and preprocessing cost, and the step time a mode keeps of eager's.
void kernel_terms(const std::vector<Record>& recs, Findings& f) {
  auto gemm_at = [](const Record& r) {
    const auto g = step_gemm(opt(r, "orientation"), pint(r, "rows"), pint(r, "in"), pint(r, "out"));
    return json{{"m", g[0]}, {"n", g[1]}, {"k", g[2]}};
  };
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    // Host seconds per operator as a training step runs them (autograd recording, the backward pass).
    f.terms.push_back(cost::table_term(
        cost::term::kPytorchStepOp, be, json{{"framework", "pytorch-eager"}}, {"n"}, "seconds", recs,
        [](const Record& r) { return r.workload == "autograd_chain" && r.counters.count("operators_per_rep"); },
        [](const Record& r) { return json{{"n", r.params.at("n")}}; },
        [](const Record& r) { return r.stats->median / r.counters.at("operators_per_rep").value; },
        "autograd-recorded PyTorch operator", true));
    for (const char* o : {"nn", "tn", "nt"})
      f.terms.push_back(cost::table_term(
          cost::term::kPytorchMatmul, be, json{{"framework", "pytorch"}, {"precision", "fp32"}, {"orientation", o}}, {"m", "n", "k"},
          "flop_per_s", recs, [o](const Record& r) { return r.workload == "matmul" && opt(r, "orientation") == o; }, gemm_at,
          [&](const Record& r) {
            const json a = gemm_at(r);
            return 2.0 * a["m"].get<double>() * a["n"].get<double>() * a["k"].get<double>() / r.stats->median;
          },
          "PyTorch matmul"));
    // torch.bmm at attention's per-head shapes: the rate of the whole batch of products, as gtb's own
    // matmul_batched term has it, which it stands in for in a PyTorch step.
    for (const char* o : {"nn", "tn", "nt"})
      f.terms.push_back(cost::table_term(
          cost::term::kPytorchMatmulBatched, be, json{{"framework", "pytorch"}, {"precision", "fp32"}, {"orientation", o}},
          {"m", "n", "k"}, "flop_per_s", recs, [o](const Record& r) { return r.workload == "bmm" && opt(r, "orientation") == o; },
          [](const Record& r) { return json{{"m", r.params.at("m")}, {"n", r.params.at("n")}, {"k", r.params.at("k")}}; },
          [](const Record& r) {
            return 2.0 * r.params.at("count").get<double>() * r.params.at("m").get<double>() *
                   r.params.at("n").get<double>() * r.params.at("k").get<double>() / r.stats->median;
          },
          "PyTorch batched matmul"));
    for (const char* kind : {"sgd", "adamw"}) {
      auto pick = [kind](const Record& r) { return r.workload == "optimizer" && opt(r, "optimizer") == kind; };
      auto at = [](const Record& r) { return json{{"params", r.params.at("params")}, {"tensors", r.params.at("tensors")}}; };
      const json where = {{"framework", "pytorch"}, {"optimizer", kind}};
      f.terms.push_back(cost::table_term(cost::term::kPytorchOptimizer, be, where, {"params", "tensors"}, "seconds", recs, pick, at,
                                         [](const Record& r) { return r.stats->median; }, "PyTorch optimizer step", true));
      // Its operators depend on the tensors, not their size.
      f.terms.push_back(cost::table_term(
          cost::term::kPytorchOptimizerOps, be, where, {"tensors"}, "count", recs,
          [pick](const Record& r) { return pick(r) && r.counters.count("operators_per_rep"); }, at,
          [](const Record& r) { return r.counters.at("operators_per_rep").value; }, "PyTorch optimizer step", true));
    }
    mode_terms(recs, be, f);
  }
  loader_terms(recs, f);
}

void terms(const std::vector<Record>& recs, Findings& f) {
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    // Host seconds per eager operator by tensor size: the framework's tax on each operator a step runs.
    f.terms.push_back(cost::table_term(
        cost::term::kPytorchOp, be, json{{"framework", "pytorch-eager"}}, {"n"}, "seconds", recs,
        [](const Record& r) { return r.workload == "op_chain"; }, [](const Record& r) { return json{{"n", r.params.at("n")}}; },
        [](const Record& r) { return r.stats->median / 3.0; }, "eager PyTorch operator", true));
    // The operators the train family's step dispatches in eager PyTorch (SGD), by depth.
    f.terms.push_back(cost::table_term(
        cost::term::kPytorchOps, be, json{{"framework", "pytorch-eager"}, {"model", "mlp"}, {"optimizer", "sgd"}}, {"depth"}, "count",
        recs,
        [](const Record& r) { return r.workload == "mlp_step" && opt(r, "mode") == "eager" && r.counters.count("operators_per_step"); },
        [](const Record& r) { return json{{"depth", r.params.at("depth")}, {"width", r.params.at("width")}, {"batch", r.params.at("batch")}}; },
        [](const Record& r) { return r.counters.at("operators_per_step").value; }, "operator count of an eager step", true));
  }
  transformer_steps(recs, f);
  for (const Record& r : recs) {
    const std::string mode = opt(r, "mode");
    if (r.workload != "mlp_step" || !measured(r) || (mode != "eager" && mode != "graph")) continue;
    const json config = {{"model", "mlp"}, {"width", pint(r, "width")}, {"depth", pint(r, "depth")}, {"batch", pint(r, "batch")},
                         {"optimizer", "sgd"}, {"activation", "relu"}, {"framework", "pytorch-" + mode}};
    cost::Step s{"", r.id, r.backend, r.stats->median, config};
    s.leave_out = "record";
    f.measured_steps.push_back(s);
  }
}

}  // namespace

std::array<std::int64_t, 3> step_gemm(const std::string& orientation, std::int64_t rows, std::int64_t in, std::int64_t out) {
  if (orientation == "nn") return {rows, out, in};
  if (orientation == "tn") return {in, out, rows};
  if (orientation == "nt") return {rows, in, out};
  throw std::invalid_argument("framework: orientation must be nn, tn or nt, got " + orientation);
}

std::vector<std::string> same_work_ids(const std::string& workload, Backend backend, const json& params, const json& options) {
  std::vector<std::string> out;
  const bool cpu = backend == Backend::cpu;
  if (workload == "op_chain") {
    const json p = {{"n", params.at("n")}};
    out.push_back(make_record_id("vectorize", "chain", cpu ? "openmp" : "unfused", backend, p, json::object()));
  } else if (workload == "transformer_step") {
    // The transformer family's step of the same configuration (its configs workload).
    const json p = {{"layers", params.at("layers")}, {"d_model", params.at("d_model")}, {"heads", params.at("heads")},
                    {"seq_len", params.at("seq_len")}, {"batch", params.at("batch")}};
    json o = {{"precision", options.value("precision", std::string("fp32"))}};
    if (!cpu) o["mode"] = "eager";
    const std::string attention = options.value("attention", std::string("materialised"));
    out.push_back(make_record_id("transformer", "configs", attention, backend, p, o));
    // Its sequence sweep holds the same configuration in both attentions (the configs workload only
    // the fused one on the CPU), under its memory cap option (512 MB in every suite).
    if (cpu) out.push_back(make_record_id("transformer", "seq_sweep", attention, backend, p, {{"precision", o["precision"]}, {"memory_cap_mb", 512}}));
  } else if (workload == "mlp_step") {
    const json p = {{"batch", params.at("batch")}, {"width", params.at("width")}, {"depth", params.at("depth")}};
    const std::string mode = options.value("mode", std::string("eager"));
    const std::string variant = cpu ? "fastest_blas" : "cublas";
    if (cpu) {
      out.push_back(make_record_id("train", "batch_sweep", variant, backend, p, json::object()));
      out.push_back(make_record_id("train", "model_sweep", variant, backend, p, json::object()));
    } else {
      const std::string gtb_mode = mode == "graph" ? "graph" : "eager";
      out.push_back(make_record_id("train", "model_sweep", variant, backend, p, {{"mode", gtb_mode}}));
      if (gtb_mode == "eager") out.push_back(make_record_id("train", "batch_sweep", variant, backend, p, {{"data", "device"}}));
    }
  }
  return out;
}

Findings compute_findings(const std::vector<Record>& records) {
  return findings::by_passes<Findings>(
      records, {ops, loops, steps, transformer_ratios, loaders, precisions, loss_reads, terms, kernel_terms});
}

GTB_JSON_WRITE(Op, backend, n, per_op_us, gtb_chain_us, gtb_per_op_us, tax_per_op_us, record, gtb_record)
GTB_JSON_WRITE(Loop, backend, n, loop_us, vectorized_us, speedup)
GTB_JSON_WRITE(Step, backend, mode, width, depth, batch, pytorch_ms, gtb_ms, ratio, record, gtb_record)
GTB_JSON_WRITE(TransformerStep, backend, attention, precision, layers, d_model, heads, seq_len, batch, pytorch_ms,
               gtb_ms, ratio, record, gtb_record)
GTB_JSON_WRITE(Crossover, mode, width, depth, batches, gpu_faster_from_batch)
GTB_JSON_WRITE(Loader, sample_us, num_workers, batch, step_ms, pin_memory, persistent_workers, samples_per_s,
               idle_fraction)
GTB_JSON_WRITE(Fed, sample_us, step_ms, pin_memory, persistent_workers, smallest_fed_workers, most_workers,
               idle_at_zero, idle_at_smallest)
GTB_JSON_WRITE(Precision, backend, precision, width, batch, step_ms, speedup_vs_fp32, loss_after_k, fp32_loss_after_k,
               k_steps, peak_memory_bytes, step_memory_bytes, memory_vs_fp32)
GTB_JSON_WRITE(LossRead, backend, width, batch, every_step_us, every_100_us, extra_us_per_read)

void to_json(const Findings& found, json& data) {
  write_nonempty(data, "transformer_steps", found.transformer_steps);
  write_nonempty(data, "ops", found.ops);
  write_nonempty(data, "loops", found.loops);
  write_nonempty(data, "steps", found.steps);
  write_nonempty(data, "crossovers", found.crossovers);
  write_nonempty(data, "loaders", found.loaders);
  json fed = json::array();
  for (const Fed& d : found.fed) {
    fed.push_back(d);
    fed.back()["fed_idle_at_most"] = kFedIdle;
  }
  if (!fed.empty()) data["fed"] = fed;
  write_nonempty(data, "precisions", found.precisions);
  write_nonempty(data, "loss_reads", found.loss_reads);
  cost::write_evidence(data, found);
}

}  // namespace gtb::framework
