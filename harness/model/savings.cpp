// The savings validation: predicted saving (other families' terms) beside the measured A minus B.
#include "harness/model/savings.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "harness/document/findings.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"

namespace gtb::cost {

namespace {
using json_read::bad;
std::string text_at(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string()) bad(where + "." + key, "a string is required");
  return j.at(key).get<std::string>();
}
}  // namespace

json to_json(const Pair& p) { return {{"fix", p.fix}, {"change", p.change}, {"a", p.a}, {"b", p.b}}; }

Pair pair_from_json(const json& j, const std::string& family) {
  const std::string where = "findings." + family + ".pairs[]";
  if (!j.is_object()) bad(where, "not an object");
  Pair p;
  p.family = family;
  p.fix = text_at(j, "fix", where);
  p.a = text_at(j, "a", where);
  p.b = text_at(j, "b", where);
  if (j.contains("change") && j.at("change").is_string()) p.change = j.at("change").get<std::string>();
  if (p.fix.empty() || p.a.empty() || p.b.empty()) bad(where, "fix, a and b must not be empty");
  if (p.a == p.b) bad(where, "a and b are the same record (" + p.a + ")");
  return p;
}

std::vector<Pair> pairs_from_document(const json& doc) {
  std::vector<Pair> out;
  for (const auto& [family, entry] : json_read::object_at(doc, {"findings"}).items()) {
    if (!entry.is_object() || !entry.contains("pairs")) continue;
    if (!entry.at("pairs").is_array()) bad("findings." + family + ".pairs", "not a list");
    for (const auto& jp : entry.at("pairs")) out.push_back(pair_from_json(jp, family));
  }
  return out;
}

void write_pairs(json& data, const std::vector<Pair>& pairs) {
  if (pairs.empty()) return;
  json a = json::array();
  for (const auto& p : pairs) a.push_back(to_json(p));
  data["cost_pairs"] = std::move(a);
}

std::vector<Pair> pairs_differing_in(const std::vector<Step>& steps, const std::string& key,
                                     const std::vector<json>& from, const json& to, const std::string& fix,
                                     const std::string& to_shown) {
  auto workload = [](const std::string& id) {
    const auto first = id.find('/');
    return first == std::string::npos ? id : id.substr(0, id.find('/', first + 1));
  };
  auto value = [&](const Step& s) { return s.config.contains(key) ? s.config.at(key) : json(nullptr); };
  auto without = [&](const Step& s) {
    json c = s.config;
    c.erase(key);
    return c;
  };
  auto shown = [&](const json& v) {
    if (v.is_null()) return to_shown;
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number() && v.get<double>() == std::floor(v.get<double>())) return std::to_string(v.get<long long>());
    return v.dump();
  };
  std::vector<Pair> out;
  for (const Step& a : steps) {
    const json va = value(a);
    if (std::find(from.begin(), from.end(), va) == from.end()) continue;
    for (const Step& b : steps)
      if (&a != &b && b.backend == a.backend && workload(b.record) == workload(a.record) && value(b) == to &&
          without(b) == without(a))
        out.push_back({"", fix, key + " " + shown(va) + " -> " + shown(to), a.record, b.record});
  }
  return out;
}

namespace {
// Whether a record of several runs kept more groups of samples than runs: each run's repetitions.
bool repeated_within_runs(const Record& r) { return !r.runs.empty() && r.sample_groups.size() > r.runs.size(); }
// A step's seconds per second of its record: the step's seconds are the median of the runs' own (each
// at the record's run median times the family's fixed unit), so the unit is their ratio.
double step_per_record_second(const Step& s, const Record& r) {
  std::vector<double> medians;
  for (const RunStat& x : r.runs)
    if (x.status == Status::ok && x.stats && x.stats->median > 0) medians.push_back(x.stats->median);
  const double per = medians.size() >= 2 ? median(medians) : r.stats->median;
  return per > 0 ? s.seconds / per : 0.0;
}
}  // namespace

MeasuredSaving measured_saving(const Step& a, const Record& ra, const Step& b, const Record& rb) {
  MeasuredSaving m;
  m.step_s = a.seconds;
  m.seconds = a.seconds - b.seconds;
  // Each median's noise over its samples' groups (repetitions, runs): samples of one moment agree with
  // each other more than with the next moment's, which the spread of the groups' medians shows.
  const double ha = median_noise(ra) * a.seconds, hb = median_noise(rb) * b.seconds;
  m.noise_s = std::isfinite(ha) && std::isfinite(hb) ? std::sqrt(ha * ha + hb * hb)
                                                     : std::numeric_limits<double>::infinity();
  // A file of several runs: the saving each run measured (its own two medians, at the steps' scale)
  // also spreads with the machine's state from run to run, which no record's samples show. The
  // measured saving is then the median of those (A and B paired by run): a machine that changed speed
  // between runs, slowing A in one run and B in another, does not read as a saving.
  //
  // Where each run measured its records in several repetitions (sample_groups finer than the runs), A and
  // B of one run met the machine at moments as far apart as A and B of two runs: pairing by run then
  // only adds the noise of each run's few repetitions. The saving is then the difference of the two
  // records' medians over all their samples (every run weighing the same, as their stats do), at the
  // steps' scale; the runs' spread still bounds its noise from below.
  // Measured as a pair: the per-round differences, whatever runs and repetitions the rounds came in
  // (every round met one moment of the machine on both sides).
  if (ra.stats && rb.stats && ra.stats->median > 0 && rb.stats->median > 0)
    if (const auto e = paired_estimate(ra, step_per_record_second(a, ra), rb, step_per_record_second(b, rb))) {
      m.paired_rounds = e->rounds;
      m.seconds = e->difference;
      m.noise_s = e->interval ? std::max(e->difference - e->interval->low, e->interval->high - e->difference)
                              : std::numeric_limits<double>::infinity();
      if (!(m.noise_s > 0)) m.noise_s = std::numeric_limits<double>::infinity();
      return m;
    }
  if (std::isfinite(m.noise_s) && ra.stats && rb.stats && ra.stats->median > 0 && rb.stats->median > 0) {
    const std::vector<double> d = paired_run_differences(ra, step_per_record_second(a, ra), rb, step_per_record_second(b, rb));
    if (d.size() >= 2) {
      const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
      m.run_spread_s = (*hi - *lo) / 2;
      m.noise_s = std::max(m.noise_s, m.run_spread_s);
      if (repeated_within_runs(ra) && repeated_within_runs(rb)) {
        // Both medians, and their noise with them, at the scale of the medians over all samples.
        const double pa = ra.stats->median * step_per_record_second(a, ra), pb = rb.stats->median * step_per_record_second(b, rb);
        m.seconds = pa - pb;
        const double na = median_noise(ra) * pa, nb = median_noise(rb) * pb;
        m.noise_s = std::max(std::sqrt(na * na + nb * nb), m.run_spread_s);
      } else {
        m.seconds = median(d);
        m.paired_runs = int(d.size());
      }
    }
  }
  if (!(m.noise_s > 0)) m.noise_s = std::numeric_limits<double>::infinity();  // no spread seen: cannot say
  return m;
}

SavingsValidation validate_savings(const std::vector<Term>& terms, const std::vector<Step>& steps,
                                   const std::vector<Pair>& pairs, const std::vector<Record>& records) {
  SavingsValidation v;
  auto step_of = [&](const std::string& id) -> const Step* {
    const auto it = std::find_if(steps.begin(), steps.end(), [&](const Step& s) { return s.record == id; });
    return it == steps.end() ? nullptr : &*it;
  };
  auto record_of = [&](const std::string& id) -> const Record* {
    const auto it = std::find_if(records.begin(), records.end(), [&](const Record& r) { return r.id == id; });
    return it == records.end() ? nullptr : &*it;
  };
  for (const Pair& p : pairs) {
    SavingRow row;
    row.pair = p;
    const Step *sa = step_of(p.a), *sb = step_of(p.b);
    const Record *ra = record_of(p.a), *rb = record_of(p.b);
    if (!sa || !sb || !ra || !rb) {
      row.status = "cannot_say";
      row.why = "no measured step " + (!sa || !ra ? p.a : p.b) + " in this file";
      v.rows.push_back(std::move(row));
      continue;
    }
    row.backend = sa->backend;
    row.measured = measured_saving(*sa, *ra, *sb, *rb);
    // Never the pair's own family: its records are the two steps themselves.
    std::vector<Term> others;
    for (const auto& t : terms)
      if (t.family != p.family) others.push_back(t);
    try {
      row.predicted_a = predict(others, config_from_json(sa->config), sa->backend).total;
      row.predicted_b = predict(others, config_from_json(sb->config), sb->backend).total;
    } catch (const ConfigError& e) {
      row.predicted_a.cannot_say = std::string("the step's configuration: ") + e.what();
    }
    const MeasuredSaving& m = *row.measured;
    if (row.predicted_a.seconds && row.predicted_b.seconds && *row.predicted_a.seconds > 0) {
      row.predicted_share = (*row.predicted_a.seconds - *row.predicted_b.seconds) / *row.predicted_a.seconds;
      row.predicted_s = *row.predicted_share * m.step_s;
    }
    row.allowed_s = std::max(kSavingRelTolerance * std::fabs(m.seconds), kSavingStepTolerance * m.step_s);
    if (!row.predicted_s) {
      row.status = "cannot_say";
      row.why = !row.predicted_a.seconds   ? row.predicted_a.cannot_say
                : !row.predicted_b.seconds ? row.predicted_b.cannot_say
                                           : "the model predicts no time for the step without the fix";
    } else if (!std::isfinite(m.noise_s)) {
      // Not estimable is not "inside the noise": the saving's interval is unknown, and it is not scored.
      row.status = "cannot_say";
      row.why = m.paired_rounds > 0 ? "the saving's interval cannot be estimated from " +
                                          std::to_string(m.paired_rounds) + " paired rounds (" +
                                          std::to_string(kMinPairedRoundsForInterval) + " needed)"
                                    : "the saving's interval cannot be estimated: a record has too few samples";
    } else if (!(std::fabs(m.seconds) > m.noise_s)) {
      row.status = "in_noise";
      row.why = "the measured saving is inside its own noise";
    } else {
      row.status = "scored";
      row.sign_ok = (*row.predicted_s > 0) == (m.seconds > 0);
      row.within = row.sign_ok && std::fabs(*row.predicted_s - m.seconds) <= row.allowed_s;
      row.error = (*row.predicted_s - m.seconds) / std::fabs(m.seconds);
      ++v.scored;
      if (row.within) ++v.passed;
    }
    v.rows.push_back(std::move(row));
  }
  // Ranking: the scored fixes by their saving as a fraction of their own step (fixes of different
  // steps compare that way), predicted against measured.
  std::vector<std::pair<double, double>> ranked;  // (predicted, measured) fractions
  for (const auto& r : v.rows)
    if (r.status == "scored" && r.measured->step_s > 0)
      ranked.push_back({*r.predicted_s / r.measured->step_s, r.measured->seconds / r.measured->step_s});
  int concordant = 0;
  for (std::size_t i = 0; i < ranked.size(); ++i)
    for (std::size_t j = i + 1; j < ranked.size(); ++j) {
      const double dp = ranked[i].first - ranked[j].first, dm = ranked[i].second - ranked[j].second;
      if (dp == 0 || dm == 0) continue;  // a tie orders nothing
      ++v.ranked_pairs;
      if ((dp > 0) == (dm > 0)) ++concordant;
      else ++v.discordant;
    }
  if (v.ranked_pairs > 0) v.kendall_tau = double(concordant - v.discordant) / double(v.ranked_pairs);
  return v;
}

json to_json(const SavingsValidation& v) {
  json rows = json::array();
  for (const auto& r : v.rows) {
    json j = {{"fix", r.pair.fix},   {"family", r.pair.family},     {"change", r.pair.change}, {"a", r.pair.a},
              {"b", r.pair.b},       {"backend", to_string(r.backend)}, {"status", r.status}};
    if (!r.why.empty()) j["why"] = r.why;
    if (r.measured) {
      j["measured_saving_s"] = r.measured->seconds;
      j["measured_noise_s"] = std::isfinite(r.measured->noise_s) ? json(r.measured->noise_s) : json(nullptr);
      j["measured_run_spread_s"] = r.measured->run_spread_s;
      j["measured_paired_runs"] = r.measured->paired_runs;
      j["measured_paired_rounds"] = r.measured->paired_rounds;
      j["step_s"] = r.measured->step_s;
    }
    j["predicted_share"] = findings::or_null(r.predicted_share);
    j["predicted_saving_s"] = findings::or_null(r.predicted_s);
    j["predicted_a"] = to_json(r.predicted_a);
    j["predicted_b"] = to_json(r.predicted_b);
    if (r.status == "scored") {
      j["sign_ok"] = r.sign_ok;
      j["within_target"] = r.within;
      j["allowed_s"] = r.allowed_s;
      j["error"] = *r.error;
    }
    rows.push_back(std::move(j));
  }
  json j = {{"rows", rows},
            {"scored", v.scored},
            {"within_target", v.passed},
            {"ranked_pairs", v.ranked_pairs},
            {"discordant_pairs", v.discordant},
            {"target", {{"relative", kSavingRelTolerance}, {"of_step", kSavingStepTolerance}}}};
  j["kendall_tau"] = findings::or_null(v.kendall_tau);
  if (!v.cannot_read.empty()) j["cannot_read"] = v.cannot_read;
  return j;
}

}  // namespace gtb::cost
