// The pitfalls family's findings from its records (see findings.h for the shape).
#include "bench/pitfalls/findings.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "gtb/findings.h"
#include "gtb/stats.h"

namespace gtb::pitfalls {

namespace {

// Usable, with a positive median time: the findings divide by it.
bool timed(const Record& r) { return usable(r) && r.stats && r.stats->median > 0; }

const Record* match(const std::vector<Record>& recs, const Record& like, const std::string& variant) {
  for (const auto& r : recs)
    if (timed(r) && r.family == like.family && r.workload == like.workload && r.backend == like.backend &&
        r.variant == variant && r.params == like.params)
      return &r;
  return nullptr;
}

double counter_or(const Record& r, const char* name, double dflt) {
  const auto it = r.counters.find(name);
  return it == r.counters.end() ? dflt : it->second.value;
}

std::int64_t int_param(const Record& r, const char* k) {
  return r.params.contains(k) && r.params.at(k).is_number_integer() ? r.params.at(k).get<std::int64_t>() : 0;
}

constexpr double kDominatesPct = 100.0;  // the habit costs the clean step again
constexpr double kMattersPct = 10.0;     // below this share a habit stops mattering

// The largest width whose cost is at least `pct` percent of the clean step (empty: none).
std::optional<std::int64_t> last_width_at_or_above(const std::map<std::int64_t, double>& by_width, double pct) {
  std::optional<std::int64_t> last;
  for (const auto& [w, p] : by_width)
    if (p >= pct) last = w;
  return last;
}
// The smallest width above every width costing at least `pct` percent (empty: the largest width
// measured still costs that much). With no such width at all, the smallest width measured.
std::optional<std::int64_t> first_width_after(const std::map<std::int64_t, double>& by_width, double pct) {
  const auto last = last_width_at_or_above(by_width, pct);
  for (const auto& [w, p] : by_width)
    if (!last || w > *last) return w;
  return std::nullopt;
}

using gtb::findings::or_null;

void step_findings(const std::vector<Record>& recs, std::vector<Step>& steps, std::vector<Dominance>& dominance) {
  // (backend, pitfall, variant, batch) -> width -> percent of the clean step
  std::map<std::tuple<std::string, std::string, std::string, std::int64_t>, std::map<std::int64_t, double>> dom;
  for (const auto& r : recs) {
    if (!timed(r) || r.family != "pitfalls") continue;
    const bool loss = r.workload == "loss_read", copies = r.workload == "copies";
    if (!loss && !copies) continue;
    const std::string clean_variant = loss ? "never" : "none";
    if (r.variant == clean_variant) continue;
    const Record* c = match(recs, r, clean_variant);
    if (!c) continue;
    // In a file of several runs, the habit's cost is the median of the costs each run measured (the
    // habit's step and the clean one paired by run): a machine whose speed changed between runs does
    // not read as a cost.
    const double clean = *c->value, step = *r.value;
    // Measured as a pair (the habit's step and the clean one in alternating rounds): the median of the
    // rounds' own costs, which holds whatever the machine did between rounds and runs.
    const auto rounds = paired_estimate(r, step / r.stats->median, *c, clean / c->stats->median);
    const std::vector<double> per_run =
        rounds ? std::vector<double>{} : paired_run_differences(r, step / r.stats->median, *c, clean / c->stats->median);
    const double extra = rounds ? rounds->difference : per_run.size() >= 2 ? median(per_run) : step - clean;
    Step row{to_string(r.backend), r.workload, r.variant, int_param(r, "width"), int_param(r, "batch"), clean,
             step, extra, 100.0 * extra / clean, extra >= clean, std::nullopt, std::nullopt,
             per_run.size() >= 2 ? int(per_run.size()) : 0, rounds ? rounds->rounds : 0};
    if (loss && r.variant.rfind("every_", 0) == 0) {
      const double every = std::stod(r.variant.substr(6));
      row.loss_reads_per_step = 1.0 / every;
      row.us_per_read = extra * every;
    }
    steps.push_back(std::move(row));
    dom[{to_string(r.backend), r.workload, r.variant, int_param(r, "batch")}][int_param(r, "width")] = 100.0 * extra / clean;
  }
  for (const auto& [key, by_width] : dom) {
    Dominance d{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), {}, {}, {}, {}};
    for (const auto& [w, pct] : by_width) d.widths.push_back(w);
    d.dominates_up_to_width = last_width_at_or_above(by_width, kDominatesPct);
    // A habit that never dominated has no width where it stops (empty, not the smallest width).
    if (d.dominates_up_to_width) d.stops_dominating_at_width = first_width_after(by_width, kDominatesPct);
    d.under_10pct_from_width = first_width_after(by_width, kMattersPct);
    dominance.push_back(std::move(d));
  }
}

void build_findings(const std::vector<Record>& recs, std::vector<Build>& builds) {
  for (const auto& r : recs) {
    if (!timed(r) || r.family != "pitfalls" || r.workload.rfind("build_", 0) != 0) continue;
    const std::string base = r.backend == Backend::cpu ? "O3" : "default";
    const Record* b = match(recs, r, base);
    if (!b) continue;
    const Stats& s = *r.stats;
    const Stats& t = *b->stats;
    Build row;
    row.backend = to_string(r.backend), row.workload = r.workload, row.n = int_param(r, "n");
    row.variant = r.variant, row.baseline = base, row.time_us = *r.value, row.baseline_us = *b->value;
    row.slowdown = s.median / t.median;
    // A conservative spread: this build's quartiles over the baseline's opposite quartiles.
    if (t.q3 > 0 && t.q1 > 0) {
      row.slowdown_q1 = s.q1 / t.q3;
      row.slowdown_q3 = s.q3 / t.q1;
    }
    row.samples = r.samples.size();
    row.rel_norm_err = counter_or(r, "rel_norm_err", -1.0);
    row.baseline_rel_norm_err = counter_or(*b, "rel_norm_err", -1.0);
    if (r.info.contains("flags")) row.flags = r.info.at("flags");
    if (r.info.contains("isa")) row.isa = r.info.at("isa");
    builds.push_back(std::move(row));
  }
}

// Reads per step of a loss_read variant: every_<k> reads 1/k, never none.
double reads_every(const std::string& variant) {
  if (variant.rfind("every_", 0) == 0) return std::stod(variant.substr(6));
  return 0;
}

void cost_terms(const std::vector<Record>& recs, Findings& f) {
  for (const Backend be : {Backend::cpu, Backend::cuda}) {
    // host_sync: the habit's extra time per read at the most frequent reading measured.
    const Step* best = nullptr;
    for (const auto& s : f.steps)
      if (s.backend == to_string(be) && s.pitfall == "loss_read" && s.us_per_read &&
          (!best || *s.loss_reads_per_step > *best->loss_reads_per_step))
        best = &s;
    if (best) {
      cost::Term t;
      t.name = cost::term::kHostSync;
      t.backend = be;
      t.form = "constant";
      t.unit = "s";
      t.value = std::max(0.0, *best->us_per_read) * 1e-6;
      for (const auto& r : recs)
        if (timed(r) && r.workload == "loss_read" && r.backend == be && r.params.value("width", -1) == best->width &&
            r.params.value("batch", -1) == best->batch && (r.variant == best->variant || r.variant == "never"))
          t.records.push_back(r.id);
      if (*best->us_per_read < 0)
        t.note = "the step with a read every step was not slower than the clean one: no measurable cost";
      f.terms.push_back(std::move(t));
    } else {
      f.terms.push_back(cost::cannot_say_term(
          cost::term::kHostSync, be, json::object(), "constant",
          cost::reason_none(recs, be, [](const Record& r) { return r.workload == "loss_read"; }, "loss read-back")));
    }
    // redundant_copy: the extra seconds per step of each copy habit, at the shape it was measured.
    bool any = false;
    for (const auto& s : f.steps) {
      if (s.backend != to_string(be) || s.pitfall != "copies") continue;
      any = true;
      cost::Term t;
      t.name = cost::term::kRedundantCopy;
      t.backend = be;
      t.where = {{"kind", s.variant}, {"width", s.width}, {"batch", s.batch}};
      t.form = "constant";
      t.unit = "s";
      t.value = std::max(0.0, s.extra_us) * 1e-6;
      for (const auto& r : recs)
        if (timed(r) && r.workload == "copies" && r.backend == be && r.params.value("width", -1) == s.width &&
            r.params.value("batch", -1) == s.batch && (r.variant == s.variant || r.variant == "none"))
          t.records.push_back(r.id);
      f.terms.push_back(std::move(t));
    }
    if (!any)
      f.terms.push_back(cost::cannot_say_term(
          cost::term::kRedundantCopy, be, json::object(), "constant",
          cost::reason_none(recs, be, [](const Record& r) { return r.workload == "copies"; }, "redundant copy")));
  }
  // Whole steps: the train family's MLP step (depth 4, FP32, SGD, ReLU) with a habit or without.
  for (const auto& r : recs) {
    if (!timed(r) || (r.workload != "loss_read" && r.workload != "copies")) continue;
    const auto width = int_param(r, "width"), batch = int_param(r, "batch");
    if (width <= 0 || batch <= 0) continue;
    // step_time is microseconds per step (the metric); the statistics are per repetition.
    const double seconds = *r.value * 1e-6;
    json config = {{"model", "mlp"}, {"width", width}, {"depth", 4}, {"batch", batch}, {"precision", "fp32"},
                   {"optimizer", "sgd"}, {"activation", "relu"}, {"input_bytes_per_sample", 0}};
    if (r.workload == "loss_read") config["loss_read_every"] = reads_every(r.variant);
    if (r.workload == "copies" && r.variant != "none") config["redundant_copy"] = r.variant;
    f.measured_steps.push_back({"", r.id, r.backend, seconds, config});
  }
}

}  // namespace

Findings compute_findings(const std::vector<Record>& records) {
  Findings f;
  step_findings(records, f.steps, f.dominance);
  build_findings(records, f.builds);
  cost_terms(records, f);
  f.add_pairs(cost::pairs_differing_in(f.measured_steps, "loss_read_every", {1, 10, 100}, 0, "fewer_syncs"));
  f.add_pairs(cost::pairs_differing_in(f.measured_steps, "redundant_copy",
                                       {json("batch"), json("activation"), json("weights")}, nullptr, "drop_copy"));
  return f;
}

void to_json(const Findings& found, json& findings) {
  json steps = json::array(), dominance = json::array(), builds = json::array();
  for (const auto& s : found.steps) {
    json row = {{"backend", s.backend}, {"pitfall", s.pitfall}, {"variant", s.variant}, {"width", s.width},
                {"batch", s.batch}, {"clean_us", s.clean_us}, {"step_us", s.step_us}, {"extra_us", s.extra_us},
                {"pct_of_clean", s.pct_of_clean}, {"dominates", s.dominates}};
    if (s.paired_runs) row["paired_runs"] = s.paired_runs;
    if (s.paired_rounds) row["paired_rounds"] = s.paired_rounds;  // measured as a pair
    if (s.loss_reads_per_step) row["loss_reads_per_step"] = *s.loss_reads_per_step;
    if (s.us_per_read) row["us_per_read"] = *s.us_per_read;
    steps.push_back(std::move(row));
  }
  for (const auto& d : found.dominance) {
    json row = {{"backend", d.backend}, {"pitfall", d.pitfall}, {"variant", d.variant}, {"batch", d.batch},
                {"widths", json::array()}};
    for (const auto w : d.widths) row["widths"].push_back(w);
    row["dominates_up_to_width"] = or_null(d.dominates_up_to_width);
    row["stops_dominating_at_width"] = or_null(d.stops_dominating_at_width);
    row["under_10pct_from_width"] = or_null(d.under_10pct_from_width);
    dominance.push_back(std::move(row));
  }
  for (const auto& b : found.builds) {
    json row = {{"backend", b.backend}, {"workload", b.workload}, {"n", b.n}, {"variant", b.variant},
                {"baseline", b.baseline}, {"time_us", b.time_us}, {"baseline_us", b.baseline_us},
                {"slowdown", b.slowdown}};
    if (b.slowdown_q1) row["slowdown_q1"] = *b.slowdown_q1;
    if (b.slowdown_q3) row["slowdown_q3"] = *b.slowdown_q3;
    row["samples"] = b.samples;
    row["rel_norm_err"] = b.rel_norm_err;
    row["baseline_rel_norm_err"] = b.baseline_rel_norm_err;
    if (b.flags) row["flags"] = *b.flags;
    if (b.isa) row["isa"] = *b.isa;
    builds.push_back(std::move(row));
  }
  if (!steps.empty()) findings["steps"] = std::move(steps);
  if (!dominance.empty()) findings["dominance"] = std::move(dominance);
  if (!builds.empty()) findings["builds"] = std::move(builds);
  cost::write_evidence(findings, found);
}

}  // namespace gtb::pitfalls
