// The pitfalls family's findings from its records (see findings.h for the shape).
#include "bench/pitfalls/findings.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

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

// The largest width whose cost is at least `pct` percent of the clean step (null: none).
json last_width_at_or_above(const std::map<std::int64_t, double>& by_width, double pct) {
  json last = nullptr;
  for (const auto& [w, p] : by_width)
    if (p >= pct) last = w;
  return last;
}
// The smallest width above every width costing at least `pct` percent (null: the largest width
// measured still costs that much). With no such width at all, the smallest width measured.
json first_width_after(const std::map<std::int64_t, double>& by_width, double pct) {
  const json last = last_width_at_or_above(by_width, pct);
  for (const auto& [w, p] : by_width)
    if (last.is_null() || w > last.get<std::int64_t>()) return w;
  return nullptr;
}

void step_findings(const std::vector<Record>& recs, json& steps, json& dominance) {
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
    const double clean = *c->value, step = *r.value, extra = step - clean;
    json row = {{"backend", to_string(r.backend)}, {"pitfall", r.workload}, {"variant", r.variant},
                {"width", int_param(r, "width")}, {"batch", int_param(r, "batch")}, {"clean_us", clean},
                {"step_us", step}, {"extra_us", extra}, {"pct_of_clean", 100.0 * extra / clean},
                {"dominates", extra >= clean}};
    if (loss && r.variant.rfind("every_", 0) == 0) {
      const double every = std::stod(r.variant.substr(6));
      row["loss_reads_per_step"] = 1.0 / every;
      row["us_per_read"] = extra * every;
    }
    steps.push_back(std::move(row));
    dom[{to_string(r.backend), r.workload, r.variant, int_param(r, "batch")}][int_param(r, "width")] = 100.0 * extra / clean;
  }
  for (const auto& [key, by_width] : dom) {
    json d = {{"backend", std::get<0>(key)}, {"pitfall", std::get<1>(key)}, {"variant", std::get<2>(key)},
              {"batch", std::get<3>(key)}, {"widths", json::array()}};
    for (const auto& [w, pct] : by_width) d["widths"].push_back(w);
    d["dominates_up_to_width"] = last_width_at_or_above(by_width, kDominatesPct);
    d["stops_dominating_at_width"] = first_width_after(by_width, kDominatesPct);
    d["under_10pct_from_width"] = first_width_after(by_width, kMattersPct);
    dominance.push_back(std::move(d));
  }
}

void build_findings(const std::vector<Record>& recs, json& builds) {
  for (const auto& r : recs) {
    if (!timed(r) || r.family != "pitfalls" || r.workload.rfind("build_", 0) != 0) continue;
    const std::string base = r.backend == Backend::cpu ? "O3" : "default";
    const Record* b = match(recs, r, base);
    if (!b) continue;
    const Stats& s = *r.stats;
    const Stats& t = *b->stats;
    json row = {{"backend", to_string(r.backend)}, {"workload", r.workload}, {"n", int_param(r, "n")},
                {"variant", r.variant}, {"baseline", base}, {"time_us", *r.value}, {"baseline_us", *b->value},
                {"slowdown", s.median / t.median}};
    // A conservative spread: this build's quartiles over the baseline's opposite quartiles.
    if (t.q3 > 0 && t.q1 > 0) {
      row["slowdown_q1"] = s.q1 / t.q3;
      row["slowdown_q3"] = s.q3 / t.q1;
    }
    row["samples"] = r.samples.size();
    row["rel_norm_err"] = counter_or(r, "rel_norm_err", -1.0);
    row["baseline_rel_norm_err"] = counter_or(*b, "rel_norm_err", -1.0);
    if (r.info.contains("flags")) row["flags"] = r.info.at("flags");
    if (r.info.contains("isa")) row["isa"] = r.info.at("isa");
    builds.push_back(std::move(row));
  }
}

}  // namespace

void compute_findings(const std::vector<Record>& records, json& findings) {
  json steps = json::array(), dominance = json::array(), builds = json::array();
  step_findings(records, steps, dominance);
  build_findings(records, builds);
  if (!steps.empty()) findings["steps"] = std::move(steps);
  if (!dominance.empty()) findings["dominance"] = std::move(dominance);
  if (!builds.empty()) findings["builds"] = std::move(builds);
}

}  // namespace gtb::pitfalls
