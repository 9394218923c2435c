// The transformer family's findings for the report and plots: the measured configurations, the
// attention share against sequence length, materialised vs fused attention, the crossover, the graph.
#include <algorithm>
#include <string>

#include "bench/transformer/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;
namespace xf = gtb::xfmr;

using gtb::findings::or_null;

// "2 layers, d_model 256, 4 heads, seq_len 256, batch 4"
std::string model(const json& p) {
  auto n = [&](const char* k) { return p.contains(k) ? p[k].dump() : std::string("?"); };
  return n("layers") + " layers, d_model " + n("d_model") + ", " + n("heads") + " heads, seq_len " + n("seq_len") +
         ", batch " + n("batch");
}

// The measured configurations: tokens/s, TFLOP/s, the step's shares and memory.
void configs_section(const std::vector<gtb::Record>& recs, const xf::Findings& found, fx::Family& f) {
  auto& c = f.section("configs", "The step at the measured configurations");
  c.say("One AdamW step of pre-LN decoder blocks (causal attention, 4x GELU MLP); loss 0.5 * mean (y - target)^2. "
        "TFLOP/s counts GEMM and causal attention FLOPs (docs/transformer.md); the shares are timed pieces of the step.");
  auto& ct = c.table("configs", {{"backend"}, {"model"}, {"precision"}, {"attention"}, {"mode"},
                                 {"tokens/s", "tokens/s", Hint::rate}, {"samples/s", "samples/s", Hint::rate},
                                 {"TFLOP/s", "TFLOP/s", Hint::rate}, {"GEMM TFLOP/s", "TFLOP/s", Hint::rate},
                                 {"% of GEMM peak", "", Hint::percent}, {"attention share", "", Hint::fraction},
                                 {"elementwise share", "", Hint::fraction}, {"optimizer share", "", Hint::fraction},
                                 {"memory", "", Hint::bytes}});
  for (const auto& r : found.configs)
    ct.rows.push_back({gtb::to_string(r.backend), model(r.params), r.options.value("precision", "fp32"), r.variant,
                       r.options.value("mode", "-"), r.tokens_per_s, r.samples_per_s, r.tflops, or_null(r.tflops_gemm),
                       or_null(r.pct_of_gemm_peak), or_null(r.share_attention), or_null(r.share_elementwise),
                       or_null(r.share_optimizer), r.bytes});
  if (ct.rows.empty()) c.not_measured = "no configs record ran: " + fx::why_none(recs, gtb::Backend::cpu);
  c.say("Memory: the model's host arrays on the CPU, the allocator's high-water mark on a GPU. % of GEMM peak: "
        "TFLOP/s over the best matrix-multiply rate the gemm records measured at the same backend and precision.");
  auto& cf = c.figure("transformer_configs", "Training step tokens/s at the measured configurations");
  cf.where = {{"workload", "configs"}};
  cf.x = {"params.d_model"};
  cf.series = {"backend", "variant", "options.precision", "options.mode"};
  cf.logx = 2;
  cf.xlabel = "d_model (2 layers; the quick suite's CPU steps at 512 tokens)";
  cf.ylabel = "tokens/s";
}

// Attention's share of the step against sequence length.
void attention_share_section(const std::vector<gtb::Record>& recs, const xf::Findings& found, fx::Family& f) {
  auto& a = f.section("attention_share", "Attention's share of the step against sequence length");
  auto& at = a.table("attention_share", {{"backend"}, {"attention"}, {"model"}, {"seq_len", "", Hint::count}, {"batch", "", Hint::count},
                                         {"attention share", "", Hint::fraction}, {"tokens/s", "tokens/s", Hint::rate}});
  for (const auto& g : found.attention_share)
    for (const auto& p : g.points)
      at.rows.push_back({gtb::to_string(g.backend), g.variant, std::to_string(g.layers) + " layers, d_model " + std::to_string(g.d_model) + ", " +
                                        std::to_string(g.heads) + " heads",
                         p.seq_len, p.batch, p.share_attention, p.tokens_per_s});
  if (at.rows.empty()) a.not_measured = "no sequence-length sweep record ran: " + fx::why_none(recs, gtb::Backend::cpu);
  auto& af = a.figure("transformer_attention_share", "Share of the step in attention vs seq_len (tokens per step fixed)");
  af.where = {{"workload", "seq_sweep"}};
  af.x = {"params.seq_len"};
  af.y = "counters.share_attention";
  af.series = {"backend", "variant", "params.d_model"};
  af.logx = 2;
  af.xlabel = "seq_len";
  af.ylabel = "share of the step in attention";
}

// Materialised against fused attention: memory, time, where materialised ran out of memory.
void memory_section(const std::vector<gtb::Record>& recs, const xf::Findings& found, fx::Family& f) {
  auto& m = f.section("memory", "Materialised vs fused attention: memory, time, out of memory");
  auto& mt = m.table("memory", {{"backend"}, {"problem"}, {"options"}, {"materialised memory", "", Hint::bytes},
                                {"fused memory", "", Hint::bytes}, {"memory saved", "", Hint::fraction},
                                {"fused / materialised tokens/s", "", Hint::ratio}, {"materialised"}});
  for (const auto& p : found.memory)
    mt.rows.push_back({gtb::to_string(p.backend), model(p.params), fx::params_text(p.options), or_null(p.materialised_bytes), or_null(p.fused_bytes),
                       or_null(p.memory_saved_fraction), or_null(p.fused_speedup),
                       p.materialised_oom.empty() ? json("ran") : json("out of memory")});
  if (mt.rows.empty()) m.not_measured = "no problem ran with both attention variants";
  m.say("Memory: the model's host arrays on the CPU, the allocator's high-water mark on a GPU.");
  if (const std::string note = xf::fused_gpu_attention_note(recs); !note.empty()) m.say(note);
  for (const auto& o : found.materialised_oom) {
    const std::string be = gtb::to_string(o.backend);
    m.line(std::string(o.backend == gtb::Backend::cpu ? "" : be + "_") + "materialised_oom_d" + std::to_string(o.d_model),
           "Materialised attention out of memory (" + be + ") from seq_len", o.seq_len, "", Hint::count,
           "d_model " + std::to_string(o.d_model) + ", batch " + fx::format(o.batch, Hint::count, "") + ", " +
               fx::params_text(o.options) + "; fused ran there");
  }
  auto& mf = m.figure("transformer_memory", "Host memory of the step vs seq_len, materialised and fused attention");
  mf.where = {{"workload", "seq_sweep"}};
  mf.x = {"params.seq_len"};
  mf.y = "counters.host_bytes";
  mf.where = {{"workload", "seq_sweep"}, {"backend", "cpu"}};
  mf.series = {"variant", "params.d_model"};
  mf.logx = 2;
  mf.logy = true;
  mf.xlabel = "seq_len";
  mf.ylabel = "host bytes of the model";
}

// The batch, width and heads sweeps.
void sweeps_section(const std::vector<gtb::Record>& recs, fx::Family& f) {
  // A sweep's figure is declared only where its records are: the report names every declared figure,
  // and the plots draw none without points.
  auto& s = f.section("sweeps", "Batch, width and heads");
  std::vector<std::string> unmeasured;
  for (const auto& [id, workload, x, title] :
       {std::tuple{"transformer_batch", "batch_sweep", "batch", "Training tokens/s vs batch"},
        std::tuple{"transformer_width", "width_sweep", "d_model", "Training tokens/s vs d_model"},
        std::tuple{"transformer_heads", "heads_sweep", "heads", "Training tokens/s vs heads"}}) {
    const bool measured = std::any_of(recs.begin(), recs.end(), [&, w = std::string(workload)](const gtb::Record& r) {
      return r.family == "transformer" && gtb::usable(r) && r.workload == w;
    });
    if (!measured) {
      unmeasured.push_back(workload);
      continue;
    }
    auto& g = s.figure(id, title);
    g.where = {{"workload", workload}};
    g.x = {std::string("params.") + x};
    g.series = {"variant", "options.precision"};
    g.logx = 2;
    g.xlabel = x;
    g.ylabel = "tokens/s";
  }
  if (unmeasured.size() == 3) s.not_measured = "the batch, width and heads sweeps run in the full suite only";
  else if (!unmeasured.empty()) {
    std::string names;
    for (const auto& w : unmeasured) names += (names.empty() ? "" : ", ") + w;
    s.say("Not measured in this run: " + names + ".");
  }
}

// The CPU/GPU crossover in tokens per step.
void crossover_section(const xf::Findings& found, fx::Family& f) {
  auto& x = f.section("crossover", "CPU/GPU crossover in tokens per step");
  auto& xt = x.table("crossover", {{"precision"}, {"attention"}, {"problem"}, {"tokens per step", "", Hint::count},
                                   {"CPU tokens/s", "tokens/s", Hint::rate}, {"GPU tokens/s", "tokens/s", Hint::rate},
                                   {"GPU / CPU", "", Hint::ratio}});
  for (const auto& p : found.crossover.points)
    xt.rows.push_back({p.precision, p.variant, model(p.params), p.tokens_per_step, p.cpu_tokens_per_s,
                       p.gpu_tokens_per_s,
                       p.cpu_tokens_per_s > 0 ? json(p.gpu_tokens_per_s / p.cpu_tokens_per_s) : json(nullptr)});
  if (found.crossover.tokens_per_step)
    x.line("crossover_tokens", "GPU ahead from tokens per step", *found.crossover.tokens_per_step, "", Hint::count,
           "the smallest paired problem from which the GPU is ahead at every larger one of its precision and attention");
  else if (xt.rows.empty())
    x.not_measured = found.crossover.cannot_say;
  else
    x.say(found.crossover.cannot_say);
}

// What a CUDA Graph replay saves against eager launches.
void graph_section(const std::vector<gtb::Record>& recs, const xf::Findings& found, fx::Family& f) {
  auto& g = f.section("graph", "What a CUDA Graph replay saves against eager launches");
  auto& gt = g.table("graph", {{"workload"}, {"problem"}, {"attention"}, {"options"},
                               {"eager tokens/s", "tokens/s", Hint::rate}, {"graph tokens/s", "tokens/s", Hint::rate},
                               {"step time saved", "", Hint::fraction}, {"launches per step", "", Hint::count}});
  for (const auto& s2 : found.graph)
    gt.rows.push_back({s2.workload, model(s2.params), s2.variant, fx::params_text(s2.options), s2.eager_tokens_per_s,
                       s2.graph_tokens_per_s, s2.saved_fraction, or_null(s2.launches_per_step)});
  if (gt.rows.empty())
    g.not_measured = "no GPU problem ran both eager and as a graph: " + fx::why_none(recs, gtb::Backend::cuda);
}

void sections(const std::vector<gtb::Record>& recs, const xf::Findings& found, fx::Family& f) {
  configs_section(recs, found, f);
  attention_share_section(recs, found, f);
  memory_section(recs, found, f);
  sweeps_section(recs, f);
  crossover_section(found, f);
  graph_section(recs, found, f);
}

const bool kFindings = gtb::add_family_findings<xf::Findings>("transformer", "Transformer training step", 55,
                                                              xf::compute_findings, xf::to_json, sections);

}  // namespace
