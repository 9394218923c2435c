// The cost model's answers (harness/model/model.h) as text, Markdown and JSON (gtb advise) and the
// report's verdict: presentation only, every number and choice comes from the model.
#include "harness/driver/common/render_verdict.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/plausibility.h"
#include "harness/document/stats.h"
#include "harness/driver/common/render_savings.h"
#include "harness/driver/common/speed.h"

namespace gtb::verdict {

std::string seconds_text(double s) {
  char buf[64];
  const double a = std::fabs(s);
  if (a == 0) return "0";
  if (a < 1e-3) std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  else if (a < 1) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}
std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
  return buf;
}
std::string pct1(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

namespace {

std::string backend_title(Backend b) { return b == Backend::cpu ? "CPU" : "GPU"; }

std::string records_text(const std::vector<std::string>& r, std::size_t show = 2) {
  if (r.empty()) return "-";
  std::string s;
  for (std::size_t i = 0; i < r.size() && i < show; ++i) s += (i ? ", " : "") + r[i];
  if (r.size() > show) s += " (+" + std::to_string(r.size() - show) + " more)";
  return s;
}

std::string describe(const cost::StepConfig& c) {
  std::ostringstream os;
  if (c.model == "mlp") os << "MLP of width " << c.width << " and depth " << c.depth;
  else if (c.model == "transformer")
    os << c.layers << " transformer blocks (d_model " << c.d_model << ", " << c.heads << " heads, sequence " << c.seq_len << ")";
  else os << "a model of " << c.params << " parameters and " << c.flops_per_sample << " FLOP per sample";
  os << ", batch " << c.batch << ", " << c.precision << ", " << c.optimizer;
  if (c.micro_batches > 1) os << " in " << c.micro_batches << " micro-batches";
  if (c.input_bytes_per_sample > 0) os << ", " << c.input_bytes_per_sample << " input bytes per sample from " << c.host_memory << " memory";
  if (c.sample_us > 0)
    os << ", " << c.sample_us << " us preprocessing per sample on " << c.workers << " loader worker" << (c.workers == 1 ? "" : "s");
  if (c.loss_read_every == 1) os << ", the loss read every step";
  else if (c.loss_read_every > 0) os << ", the loss read every " << c.loss_read_every << " steps";
  if (c.gpus > 1) os << ", " << c.gpus << " GPUs (buckets of " << c.bucket_bytes / 1048576 << " MiB" << (c.overlap ? ", overlapped" : "") << ")";
  if (c.cuda_graph) os << ", in a CUDA Graph";
  return os.str();
}


// The anchor GitHub gives the report's heading "## <title> (<family>)".
std::string anchor(const json& doc, const std::string& family) {
  const std::string title = json_read::string_at(doc, {"findings", family.c_str(), "title"}, family);
  std::string h = title + " (" + family + ")", a;
  for (char ch : h) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') a += char(std::tolower(ch));
    else if (ch == ' ') a += '-';
  }
  return "[" + title + "](#" + a + ")";
}

const cost::Fix* find_fix(const std::vector<cost::Fix>& fixes, const std::string& id) {
  for (const auto& f : fixes)
    if (f.id == id) return &f;
  return nullptr;
}

// The parts that cost something, largest first.
std::vector<const cost::Part*> ranked_parts(const cost::Prediction& p) {
  std::vector<const cost::Part*> v;
  for (const auto& part : p.parts) v.push_back(&part);
  std::stable_sort(v.begin(), v.end(), [](const cost::Part* a, const cost::Part* b) {
    return a->estimate.seconds.value_or(-1) > b->estimate.seconds.value_or(-1);
  });
  return v;
}

// A part's reason beside the step's: said once. "no usable X record on cuda (skipped: <driver
// error>)" under a step that cannot say for the same skip shortens to its first half.
std::string reason_beside(const std::string& part, const std::string& total) {
  if (part == total) return " (as above)";
  const auto a = part.find(" ("), b = total.find(" (");
  if (a != std::string::npos && b != std::string::npos && part.substr(a) == total.substr(b))
    return ": " + part.substr(0, a) + " (same reason)";
  return ": " + part;
}

std::string part_flags(const cost::Estimate& e) {
  std::string s;
  if (e.outside_measured) s += " (outside the measured range: " + e.note + ")";
  else if (!e.note.empty()) s += " (" + e.note + ")";
  return s;
}

// What the answer says of one part of a prediction, in every format: its time ("cannot say" without
// one), its share of the step ("" when either time is unknown), and what it is with its flags or,
// without a time, why.
struct PartCells {
  std::string seconds, share, what;
};
PartCells part_cells(const cost::Part& part, const cost::Prediction& p) {
  const auto& e = part.estimate;
  return {e.seconds ? seconds_text(*e.seconds) : "cannot say",
          e.seconds && p.total.seconds && *p.total.seconds > 0 ? pct(*e.seconds / *p.total.seconds) : "",
          part.what + (e.seconds ? part_flags(e) : reason_beside(e.cannot_say, p.total.cannot_say))};
}

// Where the answer's terms come from: the file, the machine and the commit (12 digits; "?" when
// unknown), names quoted with `quote`, without a full stop.
std::string measured_in(const Advice& a, const std::string& quote) {
  return "Predicted from the cost terms measured in " + quote + a.source + quote + " (" +
         a.machine.value("cpu", std::string("?")) + ", commit " + quote +
         a.machine.value("commit", std::string("?")).substr(0, 12) + quote + "). A prediction, not a measurement";
}

// A fix's predicted saving in a sentence (after the fix's name; the caller ends the line).
std::string fix_saving(const cost::Fix& f) {
  if (!f.saving_s) return "cannot say (" + f.cannot_say + ")";
  if (*f.saving_s <= 0) return "no saving predicted";
  return "saves " + seconds_text(*f.saving_s) + " per step (" + pct(f.saving_fraction) + ")" +
         (f.caveat.empty() ? "" : " (" + f.caveat + ")");
}

// The crossover batch in a sentence without its full stop.
std::string crossover_text(const cost::Crossover& x) {
  if (x.batch) return "the GPU is faster per sample from batch " + std::to_string(*x.batch);
  if (!x.cannot_say.empty()) return "cannot say (" + x.cannot_say + ")";
  return x.note;
}

}  // namespace

std::string render_text(const Advice& a) {
  std::ostringstream o;
  o << "gtb advise: " << describe(a.config) << "\n";
  o << measured_in(a, "") << "; --format json lists every record behind each number.\n";
  for (std::size_t i = 0; i < a.predictions.size(); ++i) {
    const auto& p = a.predictions[i];
    o << "\n" << backend_title(p.backend) << ": ";
    if (!p.total.seconds) {
      o << "cannot say (" << p.total.cannot_say << ")\n";
    } else {
      // Three significant digits below 100, so a step slower than a second per sample is not "0".
      char rate[64];
      const double r = *p.total.seconds > 0 ? a.config.batch / *p.total.seconds : 0.0;
      std::snprintf(rate, sizeof rate, r >= 100 ? "%.0f" : "%.3g", r);
      o << seconds_text(*p.total.seconds) << " per step (" << rate << " samples/s); the largest part: " << p.dominant
        << "\n";
    }
    for (const auto* part : ranked_parts(p)) {
      char line[512];
      const PartCells c = part_cells(*part, p);
      std::snprintf(line, sizeof line, "  %-14s %-14s %10s %5s  ", part->group.c_str(), part->name.c_str(),
                    c.seconds.c_str(), c.share.c_str());
      o << line << c.what << "\n";
      const auto& records = part->estimate.records;
      if (!records.empty()) o << "  " << std::string(46, ' ') << "records: " << records_text(records) << "\n";
    }
    const auto& fixes = a.fixes[i];
    if (!p.total.seconds && !fixes.empty()) {
      o << "  Fixes: cannot say (as above)\n";
    } else if (!fixes.empty()) {
      o << "  Fixes by predicted saving:\n";
      int n = 0;
      for (const auto& f : fixes) o << "    " << ++n << ". " << f.title << " [" << f.change << "]: " << fix_saving(f) << "\n";
    }
  }
  o << "\nCPU vs GPU crossover batch (predicted): ";
  o << crossover_text(a.crossover) << "\n";
  return o.str();
}

std::string render_markdown(const Advice& a) {
  std::ostringstream o;
  o << "## gtb advise: " << describe(a.config) << "\n\n";
  o << measured_in(a, "`") << ".\n";
  for (std::size_t i = 0; i < a.predictions.size(); ++i) {
    const auto& p = a.predictions[i];
    o << "\n### " << backend_title(p.backend) << ": ";
    if (!p.total.seconds) o << "cannot say\n\n" << p.total.cannot_say << "\n\n";
    else o << seconds_text(*p.total.seconds) << " per step (largest part: " << p.dominant << ")\n\n";
    o << "| part | predicted | share | what | records |\n| --- | ---: | ---: | --- | --- |\n";
    for (const auto* part : ranked_parts(p)) {
      const PartCells c = part_cells(*part, p);
      o << "| " << part->group << " / " << part->name << " | " << c.seconds << " | " << (c.share.empty() ? "-" : c.share)
        << " | " << c.what << " | " << records_text(part->estimate.records) << " |\n";
    }
    if (!p.total.seconds && !a.fixes[i].empty()) {
      o << "\nFixes: cannot say (as above).\n";
    } else if (!a.fixes[i].empty()) {
      o << "\nFixes by predicted saving:\n\n";
      int n = 0;
      for (const auto& f : a.fixes[i]) o << ++n << ". **" << f.title << "** (`" << f.change << "`): " << fix_saving(f) << "\n";
    }
  }
  o << "\n**CPU vs GPU crossover batch (predicted):** ";
  o << crossover_text(a.crossover) << ".\n";
  return o.str();
}

json to_json(const Advice& a) {
  json preds = json::array();
  for (std::size_t i = 0; i < a.predictions.size(); ++i) {
    json p = cost::to_json(a.predictions[i]);
    json fx = json::array();
    for (const auto& f : a.fixes[i]) {
      json jf = cost::to_json(f);
      // The fix measured as an A/B on this machine (its own step, the nearest to this one): measured
      // saving beside the predicted one.
      if (const cost::SavingRow* ab = cost::measured_ab(a.savings, a.steps, f, a.config)) {
        jf["measured_ab"] = {{"a", ab->pair.a}, {"b", ab->pair.b}, {"status", ab->status},
                             {"measured_saving_s", ab->measured->seconds}, {"step_s", ab->measured->step_s}};
        jf["measured_ab"]["measured_noise_s"] =
            std::isfinite(ab->measured->noise_s) ? json(ab->measured->noise_s) : json(nullptr);
      }
      fx.push_back(jf);
    }
    p["fixes"] = fx;
    preds.push_back(p);
  }
  json x = {{"batch", a.crossover.batch ? json(*a.crossover.batch) : json(nullptr)}};
  if (!a.crossover.cannot_say.empty()) x["cannot_say"] = a.crossover.cannot_say;
  if (!a.crossover.note.empty()) x["note"] = a.crossover.note;
  x["records"] = a.crossover.records;
  return {{"schema", "gtb-advice"},
          {"prediction", "from measured cost terms; not a measurement"},
          {"source", a.source},
          {"machine", a.machine},
          {"config", cost::to_json(a.config)},
          {"predictions", preds},
          {"crossover_batch", x},
          {"savings_validation", cost::to_json(a.savings)}};
}

namespace {
// The links to the family sections that hold the evidence of these records.
std::string evidence_links(const json& doc, const std::map<std::string, std::string>& family_of,
                           const std::vector<std::string>& records) {
  std::vector<std::string> fams;
  for (const auto& r : records) {
    const auto it = family_of.find(r);
    if (it != family_of.end() && std::find(fams.begin(), fams.end(), it->second) == fams.end())
      fams.push_back(it->second);
  }
  std::string evidence;
  for (const auto& fam : fams) evidence += (evidence.empty() ? "" : ", ") + anchor(doc, fam);
  return evidence;
}

// One backend's causes: their shares, their fixes with the predicted (and any measured) saving.
void causes_table(blocks::Builder& md, const json& doc, const Advice& a, std::size_t i,
                  const std::map<std::string, std::string>& family_of) {
  const auto& p = a.predictions[i];
  if (!p.total.seconds) {
    md.p("**" + backend_title(p.backend) + ": cannot say** (" + p.total.cannot_say + ").");
    return;
  }
  md.p("**" + backend_title(p.backend) + ": " + seconds_text(*p.total.seconds) +
       " per reference step**; the causes by their predicted cost (the order), each fix's predicted saving and, "
       "where the fix was measured as an A/B on this machine, its measured saving beside (at the A/B's own step, "
       "the nearest measured to this one):");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> shown;
  for (const auto* part : ranked_parts(p)) {
    const auto& e = part->estimate;
    if (!e.seconds || *e.seconds <= 0) continue;
    const cost::Fix* f = find_fix(a.fixes[i], cost::fix_for_part(part->name));
    const std::string evidence = evidence_links(doc, family_of, e.records);
    std::string fix = "-", saving = "-";
    if (f && std::find(shown.begin(), shown.end(), f->id) != shown.end()) {
      fix = "(" + f->title + ", above)";
    } else if (f) {
      shown.push_back(f->id);
      fix = f->title + " (`" + f->change + "`)";
      // A step bound by its loader keeps its time when a fix shrinks the work the loader hides.
      const cost::Part* loader = nullptr;
      for (const auto& q : p.parts)
        if (q.name == "loader" && q.estimate.seconds && *q.estimate.seconds > 0) loader = &q;
      const std::string none = loader && part->name != "loader"
                                   ? "none predicted: the loader bounds the step (the rest of it hides behind the loader's "
                                     "batch), and this fix leaves the loader as it is"
                                   : "none predicted";
      saving = !f->saving_s ? "cannot say: " + f->cannot_say
               : *f->saving_s > 0 ? seconds_text(*f->saving_s) + " (" + pct(f->saving_fraction) + ")" +
                                        (f->caveat.empty() ? "" : " (" + f->caveat + ")")
                                  : none;
      if (const cost::SavingRow* ab = cost::measured_ab(a.savings, a.steps, *f, a.config))
        saving += "; " + measured_ab_text(*ab);
    }
    rows.push_back({part->name + ": " + part->what, pct(*e.seconds / *p.total.seconds), seconds_text(*e.seconds), fix,
                    saving, evidence.empty() ? "-" : evidence});
  }
  md.table({"cause", "share of the step", "predicted", "fix", "predicted saving", "evidence"}, rows, "lrrlrl");
}

// The same reference step run by the software the file measured (PyTorch eager), beside gtb's own.
void other_stack_line(blocks::Builder& md, const std::vector<cost::Term>& terms, const cost::StepConfig& ref) {
  std::string stack;
  const std::vector<cost::Prediction> under = cost::reference_under_measured(terms, ref, stack);
  if (under.empty()) return;
  std::ostringstream o;
  o << "**The same reference step under " << stack << " (predicted, its host time per operator added):** ";
  for (const cost::Prediction& p : under) {
    o << (p.backend == Backend::cpu ? "" : "; ") << backend_title(p.backend) << " ";
    if (!p.total.seconds) {
      o << "cannot say (" << p.total.cannot_say << ")";
      continue;
    }
    o << seconds_text(*p.total.seconds);
    for (const auto& part : p.parts)
      if (part.name == "dispatch" && part.estimate.seconds) o << ", of which dispatch " << seconds_text(*part.estimate.seconds);
  }
  o << ". Ask with `gtb advise RESULTS.json --" << cost::kFrameworkKey << " native|" << stack << " ...`.";
  md.p(o.str());
}

const char* against_target(double median, double worst) {
  const bool median_ok = median <= cost::kMedianErrorTarget, worst_ok = worst <= cost::kWorstErrorTarget;
  return median_ok && worst_ok ? "both within the target."
         : median_ok           ? "the worst is over its target."
         : worst_ok            ? "the median is over its target."
                               : "both are over the target.";
}

// The model's errors over the whole file and, for a file of several runs, within each run (the
// machine's speed may drift between runs; within one run the terms and the steps share its state).
// Written after `o` (the paragraph that introduces them); the errors within each run, where the file
// has several, are a paragraph of their own.
void validation_errors(std::ostringstream& o, blocks::Builder& md, const json& doc, const cost::Validation& v) {
  if (v.median_abs_error)
    o << "Over " << v.predicted << " scored steps the median error is **" << pct1(*v.median_abs_error)
      << "** and the worst **" << pct1(*v.worst_abs_error) << "** (target: median at most 15%, worst at most 35%): "
      << against_target(*v.median_abs_error, *v.worst_abs_error);
  const cost::ErrorSides e = cost::error_sides(v);
  if (e.predicted > 0)
    o << " Of the " << e.predicted << " steps " << e.over << " are predicted above the measurement and " << e.under
      << " below (target: no more than two thirds on one side): " << (e.one_sided() ? "over it." : "within the target.");
  if (e.noise_known > 0)
    o << " Counted only where the error is beyond the ~95% noise of the step's own median (its samples, and the "
         "medians of the repetitions and runs they came in): "
      << e.over_noise << " above and " << e.under_noise << " below"
      << (e.noise_known < e.predicted ? " (of the " + std::to_string(e.noise_known) + " whose records can say)"
                                      : std::string())
      << "; the other " << e.noise_known - e.over_noise - e.under_noise << " are inside it.";
  md.p(o.str());
  const auto per = cost::per_run_validation(doc);
  if (per.empty()) return;
  o.str("");
  std::vector<double> medians, worsts;
  o << "Within each run (that run's terms against its own steps):";
  for (const auto& [run, rv] : per) {
    o << " run " << run << ", " << rv.predicted << " scored steps: median **" << pct1(*rv.median_abs_error) << "**, worst **"
      << pct1(*rv.worst_abs_error) << "**;";
    medians.push_back(*rv.median_abs_error);
    worsts.push_back(*rv.worst_abs_error);
  }
  const double mm = median(medians), mw = median(worsts);
  o << " over the runs, the median of their medians is **" << pct1(mm) << "** and of their worsts **" << pct1(mw)
    << "**: " << against_target(mm, mw);
  md.p(o.str());
}

// How far to trust the model: each step measured whole against its prediction.
void validation_section(blocks::Builder& md, const json& doc, const std::vector<cost::Term>& terms, const Advice& a) {
  const auto v = cost::validate(terms, cost::steps_from_document(doc));
  md.h3("How far to trust it: the model against the steps gtb measured");
  md.blocks.back().close = true;
  if (v.rows.empty()) {
    md.p("No whole step was measured in this file, so the model is not validated here.");
    return;
  }
  std::ostringstream o;
  o << "Each step measured whole is predicted from the cost terms of the *other* families (never from its own "
       "records) and set beside the measurement. ";
  validation_errors(o, md, doc, v);
  // The machine's own drift bounds what any model can match: said where it is over the limit.
  if (const auto sp = health::speed_spread(doc); sp && sp->low_over_high() < 1.0 - health::kSpeedSpreadLimit)
    md.p("The machine's speed changed during this run: at its slowest, a fixed loop run on all cores before "
         "and after each family ran at " +
         format::printf_number("%.0f", 100 * sp->low_over_high()) + "% of its fastest (Measurement health)" +
         (sp->cache_shared > 0 ? ", and in " + std::to_string(sp->cache_shared) + " of " +
                                     std::to_string(sp->cache_readings) + " readings its CPUs shared one core's cache"
                               : std::string()) +
         ". A step and the records it is predicted from, measured minutes "
         "apart, can differ by as much with no change in the work: the errors above include it.");
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, int> cannot;
  int unscored = 0;
  for (const auto& r : v.rows) {
    if (!r.predicted.seconds) {
      cannot[r.predicted.cannot_say]++;
      continue;
    }
    char err[32];
    std::snprintf(err, sizeof err, "%+.0f%%", 100 * r.error.value_or(0));
    const bool scored = r.scored();
    unscored += !scored && r.error;
    rows.push_back({r.step.record, to_string(r.step.backend), seconds_text(r.step.seconds),
                    seconds_text(*r.predicted.seconds) + (r.predicted.outside_measured ? " (outside measured shapes)" : ""),
                    err + std::string(scored || !r.error ? "" : " (not scored)")});
  }
  md.table({"measured step", "backend", "measured", "predicted", "error"}, rows, "llrrr");
  if (unscored > 0)
    md.li(std::to_string(unscored) + " measured step" + (unscored > 1 ? "s are" : " is") +
          " shown but not scored: the step's own samples are not a steady figure (its record is flagged in "
          "Measurement health), so its median says more about the moment it was measured than about the step");
  for (const auto& [why, n] : cannot)
    md.li(std::to_string(n) + " measured step" + (n > 1 ? "s" : "") + ": cannot say (" + why + ")");
  if (!cannot.empty() || unscored > 0) md.end_list();
  md.append(savings_blocks(doc, a.savings));
}

// The verdict's blocks; `data` gets the model's answer for the reference step (gtb-advice).
void verdict_body(blocks::Builder& md, const json& doc, json& data) {
  md.h2("Verdict: where a training step's time goes on this machine");
  if (!cost::has_terms(doc)) {
    md.p("This results file has no cost terms (it was written by an older gtb): rerun `gtb run` with this version "
         "for the verdict and `gtb advise`.");
    return;
  }
  const auto terms = cost::terms_from_document(doc);
  const cost::StepConfig ref = cost::verdict_step(terms);
  const Advice a = cost::advise(doc, "this file", ref);
  data = to_json(a);
  // Which family's section holds a record's evidence: the publisher of the term it came from.
  const std::map<std::string, std::string> family_of = cost::publisher_of_records(terms);
  md.p("The reference step: " + describe(ref) +
       ". Its time is **predicted** from this file's measured cost terms (docs/advise.md); each cause links to the "
       "section with its evidence. Ask about your own step with `gtb advise RESULTS.json --model mlp --width W "
       "--depth D --batch B ...`.");
  for (std::size_t i = 0; i < a.predictions.size(); ++i) causes_table(md, doc, a, i, family_of);
  other_stack_line(md, terms, ref);
  md.p("**CPU vs GPU crossover batch (predicted):** " + crossover_text(a.crossover) + ".");
  validation_section(md, doc, terms, a);
}

// The fix of one backend with the largest saving as a share of its step (measured where an A/B
// measured it beyond its noise, predicted otherwise), in one line; "" when the backend has no fix.
std::string largest_saving_line(const Advice& a, std::size_t i) {
  if (a.fixes[i].empty()) return "";
  const auto [best, best_ab] = cost::largest_saving(a, i);
  if (!best) return "largest saving: none predicted or measured";
  // The fix and what it saves first, its change last: a line cut to the screen keeps the numbers.
  std::string s = "largest saving: " + best->title + ": ";
  if (!best->saving_s) s += "cannot say what it saves here";
  else if (*best->saving_s > 0) s += seconds_text(*best->saving_s) + " (" + pct(best->saving_fraction) + ") predicted";
  else s += "none predicted";
  if (!best->caveat.empty()) s += ", " + best->caveat.substr(0, best->caveat.find(':'));
  if (best_ab) {
    const auto& m = *best_ab->measured;
    if (best_ab->status == "in_noise" || !(std::fabs(m.seconds) > m.noise_s))
      s += "; measured here: inside its noise";
    else
      s += "; measured here: " + std::string(m.seconds < 0 ? "-" : "") + seconds_text(std::fabs(m.seconds)) + " (" +
           pct(m.step_s > 0 ? m.seconds / m.step_s : 0) + " of its A/B's step)";
  }
  s += " (" + best->change + ")";
  return s;
}

std::vector<std::string> headline_lines(const json& doc) {
  if (!cost::has_terms(doc))
    return {"Verdict: none (no family of this file published cost terms; docs/advise.md says which do)"};
  const auto terms = cost::terms_from_document(doc);
  const cost::StepConfig ref = cost::verdict_step(terms);
  const Advice a = cost::advise(doc, "this file", ref);
  std::vector<std::string> out;
  out.push_back("Verdict for the reference step (predicted): " + describe(ref));
  for (std::size_t i = 0; i < a.predictions.size(); ++i) {
    const auto& p = a.predictions[i];
    const std::string who = "  " + backend_title(p.backend);
    if (!p.total.seconds) {
      out.push_back(who + ": cannot say (" + p.total.cannot_say + ")");
      continue;
    }
    out.push_back(who + ": " + seconds_text(*p.total.seconds) + " per step; its largest causes:");
    int n = 0;
    for (const auto* part : ranked_parts(p)) {
      const auto& e = part->estimate;
      if (!e.seconds || *e.seconds <= 0 || n == 3) continue;
      out.push_back("    " + std::to_string(++n) + ". " + part->name + " " + seconds_text(*e.seconds) + " (" +
                    pct(*e.seconds / *p.total.seconds) + "): " + part->what);
    }
    if (const std::string fix = largest_saving_line(a, i); !fix.empty()) out.push_back("    " + fix);
  }
  return out;
}

}  // namespace

std::vector<std::string> render_headline(const json& doc) {
  // As the report's verdict: a shape of the terms this version cannot read costs a line, never the run.
  try {
    return headline_lines(doc);
  } catch (const std::exception& e) {
    return {std::string("Verdict: could not be composed from this file's cost terms (") + e.what() + ")"};
  }
}

std::vector<blocks::Block> report_verdict_blocks(const json& doc) {
  // Terms come from families that evolve on their own: a shape this version cannot read costs the
  // verdict a sentence, never the report.
  blocks::Builder md;
  json data;
  try {
    verdict_body(md, doc, data);
  } catch (const std::exception& e) {
    md.blocks.clear();
    md.h2("Verdict");
    md.p(std::string("*Could not compose the verdict from this file's cost terms: ") + e.what() + "*");
    data = {{"error", e.what()}};
  }
  // The answer belongs to the verdict's own section (its heading first), not to a subsection.
  if (!data.is_null()) {
    blocks::Builder facts;
    facts.data(std::move(data));
    md.blocks.insert(md.blocks.begin() + 1, std::move(facts.blocks.front()));
  }
  return std::move(md.blocks);
}

std::string render_report_verdict(const json& doc) { return blocks::to_markdown(report_verdict_blocks(doc)); }

}  // namespace gtb::verdict
