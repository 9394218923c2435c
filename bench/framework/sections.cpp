// The framework family's findings for the report and plots: PyTorch's tax per operator, its step
// against gtb's, its CPU/GPU crossover, the DataLoader workers that feed a step, mixed precision.
#include "bench/framework/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fw = gtb::framework;

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// "GPU: <why there is no GPU record>", or "" when the GPU measured something: a clause the
// not-measured lines add, without a full stop of its own (the report ends the sentence).
std::string gpu_clause(const std::vector<gtb::Record>& recs) {
  if (gtb::findings::any_number(recs, gtb::Backend::cuda)) return "";
  std::string why = gtb::findings::why_none(recs, gtb::Backend::cuda);
  while (!why.empty() && (why.back() == '.' || why.back() == ' ')) why.pop_back();
  return "; GPU records: " + why;
}

void op_section(const fw::Findings& found, const std::string& gpu, gtb::findings::Family& f) {
  auto& ops = f.section("ops", "PyTorch's cost per eager operator beside gtb's same work");
  ops.say("The vectorize family's chain y = gelu_tanh(1.5 x + 0.25) as three eager operators; gtb's figure is the same "
          "chain in its own kernel (vectorize: OpenMP on the CPU, three launches on the GPU), a third of it per "
          "operator. The tax per operator is PyTorch's time per operator less gtb's.");
  auto& ot = ops.table("ops", {{"backend"}, {"n", "", Hint::count}, {"measured"}, {"per operator", "us", Hint::duration},
                               {"PyTorch's tax per operator", "us", Hint::duration}});
  bool gtb_any = false;
  for (const auto& o : found.ops) {
    ot.rows.push_back({o.backend, o.n, "PyTorch eager", o.per_op_us, or_null(o.tax_per_op_us)});
    if (o.gtb_per_op_us) ot.rows.push_back({o.backend, o.n, "gtb's kernel", *o.gtb_per_op_us, nullptr});
    gtb_any = gtb_any || o.gtb_per_op_us.has_value();
  }
  if (ot.rows.empty()) ops.not_measured = "no op_chain record ran" + gpu;
  else if (!gtb_any)
    ops.say("gtb's own time comes from the vectorize family's chain records of the same n in the same results file: "
            "this file has none (run the framework family with the vectorize family).");
  auto& og = ops.figure("framework_op_cost", "Time per elementwise operator: eager PyTorch and gtb's own kernel");
  og.source = "ops";
  og.x = {"n"};
  og.y = "per operator";
  og.series = {"backend", "measured"};
  og.logx = 2;
  og.logy = true;
  og.xlabel = "elements per tensor";
  og.ylabel = "us per operator";
}

void loader_section(const fw::Findings& found, gtb::findings::Family& f) {
  auto& dl = f.section("dataloader", "DataLoader workers that keep a step fed");
  char fed_text[200];
  std::snprintf(fed_text, sizeof fed_text,
                "Each sample costs a known CPU time to preprocess; a step of fixed length consumes the batches. The "
                "step is fed when it waits for batches at most %.0f%% of the time.",
                100 * fw::kFedIdle);
  dl.say(fed_text);
  dl.say("The figure draws pin_memory off (PyTorch's default) with the workers kept between epochs "
         "(persistent_workers on); the second table holds every setting measured.");
  auto& ft = dl.table("fed", {{"preprocessing per sample", "us", Hint::duration}, {"step", "ms", Hint::duration},
                              {"pin_memory"}, {"persistent_workers"}, {"smallest feeding num_workers", "", Hint::count},
                              {"idle at 0 workers", "", Hint::fraction}, {"idle at that num_workers", "", Hint::fraction}});
  for (const auto& d : found.fed)
    ft.rows.push_back({d.sample_us, d.step_ms, d.pin_memory, d.persistent_workers,
                       d.smallest_fed_workers ? json(*d.smallest_fed_workers)
                                              : json("none up to " + std::to_string(d.most_workers)),
                       or_null(d.idle_at_zero), or_null(d.idle_at_smallest)});
  auto& lt = dl.table("loaders", {{"preprocessing per sample", "us", Hint::duration}, {"num_workers", "", Hint::count},
                                  {"pin_memory"}, {"persistent_workers"}, {"delivered", "samples/s", Hint::rate},
                                  {"consumer idle", "", Hint::fraction}});
  for (const auto& l : found.loaders)
    lt.rows.push_back({l.sample_us, l.num_workers, l.pin_memory, l.persistent_workers, l.samples_per_s, or_null(l.idle_fraction)});
  if (lt.rows.empty()) dl.not_measured = "no DataLoader record ran";
  // One setting in the figure, the others in the table: pin_memory off (PyTorch's default), the
  // workers kept between epochs (num_workers 0 has none to keep).
  auto& dg = dl.figure("framework_loader_idle", "Step idle by num_workers (pin_memory off, persistent_workers on)");
  dg.source = "loaders";
  dg.where = json::array({{{"num_workers", 0}, {"pin_memory", "off"}}, {{"persistent_workers", "on"}, {"pin_memory", "off"}}});
  dg.x = {"num_workers"};
  dg.y = "consumer idle";
  dg.series = {"preprocessing per sample"};
  dg.xlabel = "num_workers (0: the training process loads the batches itself)";
  dg.ylabel = "fraction of the time the step waits for a batch";
  dg.hlines = {{fw::kFedIdle, "fed"}};
}

void precision_section(const fw::Findings& found, gtb::findings::Family& f) {
  auto& mp = f.section("precision", "Mixed precision against FP32");
  mp.say("The same step from the same start in each precision: its time, its loss after k steps beside FP32's, and the "
         "bytes of the tensors one step holds (counted: parameters, optimizer state, batch, gradients and what autograd "
         "saves for the backward pass; docs/framework.md). GPU peak: torch.cuda.max_memory_allocated over the timed "
         "steps.");
  auto& mt = mp.table("precisions", {{"backend"}, {"precision"}, {"width", "", Hint::count}, {"batch", "", Hint::count},
                                     {"step", "ms", Hint::duration}, {"speed-up over fp32", "", Hint::ratio},
                                     {"loss after k steps", "", Hint::number}, {"fp32's", "", Hint::number},
                                     {"k", "", Hint::count}, {"step's tensors", "", Hint::bytes},
                                     {"over fp32's", "", Hint::ratio}, {"GPU peak", "", Hint::bytes}});
  for (const auto& p : found.precisions)
    mt.rows.push_back({p.backend, p.precision, p.width, p.batch, p.step_ms, or_null(p.speedup_vs_fp32), or_null(p.loss_after_k),
                       or_null(p.fp32_loss_after_k), p.k_steps, or_null(p.step_memory_bytes), or_null(p.memory_vs_fp32),
                       or_null(p.peak_memory_bytes)});
  if (mt.rows.empty()) mp.not_measured = "no mixed-precision record ran";
}

void sections(const std::vector<gtb::Record>& recs, const fw::Findings& found, gtb::findings::Family& f) {
  const std::string gpu_note = gpu_clause(recs);
  op_section(found, gpu_note, f);

  auto& lp = f.section("loops", "A Python loop over a tensor against one operator");
  lp.say("The articles' loop, result.append(a[i] * b[i]) for each of n elements of two tensors, against the same "
         "product as one operator, a * b.");
  auto& lt = lp.table("loops", {{"backend"}, {"n", "", Hint::count}, {"Python loop", "us", Hint::duration},
                                {"a * b", "us", Hint::duration}, {"loop / vectorized", "", Hint::ratio}});
  for (const auto& l : found.loops) lt.rows.push_back({l.backend, l.n, l.loop_us, l.vectorized_us, l.speedup});
  if (lt.rows.empty()) lp.not_measured = "no loop and vectorized pair ran";

  auto& st = f.section("steps", "PyTorch's training step against gtb's (same model, data and optimizer)");
  st.say("PyTorch / gtb: PyTorch's step time over gtb's step of the same configuration on the same backend (the train "
         "family's record); above 1, PyTorch is slower. gtb's column is empty where the file holds no train record of "
         "that configuration.");
  auto& t = st.table("steps", {{"backend"}, {"mode"}, {"width", "", Hint::count}, {"depth", "", Hint::count},
                               {"batch", "", Hint::count}, {"PyTorch step", "ms", Hint::duration},
                               {"gtb step", "ms", Hint::duration}, {"PyTorch / gtb", "", Hint::ratio}});
  for (const auto& s : found.steps)
    t.rows.push_back({s.backend, s.mode, s.width, s.depth, s.batch, s.pytorch_ms, or_null(s.gtb_ms), or_null(s.ratio)});
  if (t.rows.empty()) st.not_measured = "no PyTorch step ran" + gpu_note;
  auto& sg = st.figure("framework_step_ratio", "PyTorch's step time over gtb's, by batch");
  sg.source = "steps";
  sg.where = {{"width", 256}};
  sg.x = {"batch"};
  sg.y = "PyTorch / gtb";
  sg.series = {"backend", "mode"};
  sg.logx = 2;
  sg.logy = true;  // from a few times slower to hundreds at batch 1
  sg.xlabel = "batch (width 256, depth 4)";
  sg.ylabel = "PyTorch step / gtb step";
  sg.hlines = {{1, "as fast as gtb"}};

  auto& tt = st.table("transformer_steps", {{"backend"}, {"attention"}, {"precision"}, {"layers", "", Hint::count},
                                              {"d_model", "", Hint::count}, {"seq_len", "", Hint::count},
                                              {"batch", "", Hint::count}, {"PyTorch step", "ms", Hint::duration},
                                              {"gtb step", "ms", Hint::duration}, {"PyTorch / gtb", "", Hint::ratio}});
  for (const auto& s : found.transformer_steps)
    tt.rows.push_back({s.backend, s.attention, s.precision, s.layers, s.d_model, s.seq_len, s.batch, s.pytorch_ms,
                       or_null(s.gtb_ms), or_null(s.ratio)});

  auto& cx = f.section("crossover", "PyTorch's CPU/GPU crossover batch");
  cx.say("The smallest batch from which PyTorch's GPU step is faster than its CPU step at every larger batch measured "
         "on both.");
  auto& ct = cx.table("crossovers", {{"mode"}, {"width", "", Hint::count}, {"depth", "", Hint::count},
                                      {"GPU faster from batch", "", Hint::count}});
  for (const auto& c : found.crossovers)
    ct.rows.push_back({c.mode, c.width, c.depth, c.gpu_faster_from_batch ? json(*c.gpu_faster_from_batch) : json("at no batch measured")});
  if (ct.rows.empty()) cx.not_measured = "no batch ran on both the CPU and the GPU" + gpu_note;

  loader_section(found, f);
  precision_section(found, f);

  auto& hb = f.section("habits", "loss.item() every step against every 100 steps");
  hb.say("The same step with loss.item() every step and every 100 steps; per read: the time one read adds (on the GPU "
         "it waits for the step to finish).");
  auto& ht = hb.table("loss_reads", {{"backend"}, {"width", "", Hint::count}, {"batch", "", Hint::count},
                                     {"every step", "us", Hint::duration}, {"every 100", "us", Hint::duration},
                                     {"per read", "us", Hint::duration}});
  // A read cannot make a step faster: a negative cost is run-to-run noise, and says so.
  for (const auto& l : found.loss_reads)
    ht.rows.push_back({l.backend, l.width, l.batch, l.every_step_us, l.every_100_us,
                       l.extra_us_per_read < 0 ? json("within noise") : json(l.extra_us_per_read)});
  if (ht.rows.empty()) hb.not_measured = "no loss_read pair ran";
}

const bool kFindings = gtb::add_family_findings<fw::Findings>("framework", "PyTorch, the framework users train with", 80,
                                                              fw::compute_findings, fw::to_json, sections);

}  // namespace
