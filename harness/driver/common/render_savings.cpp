// The savings validation in the report (blocks) and the measured A/B beside a verdict's fix.
#include "harness/driver/common/render_savings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "harness/document/format.h"
#include "harness/document/results.h"
#include "harness/driver/common/render_verdict.h"

namespace gtb::verdict {

namespace {
std::string signed_seconds(double s) { return (s < 0 ? "-" : "") + seconds_text(std::fabs(s)); }
std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
}  // namespace

std::vector<blocks::Block> savings_blocks(const json& doc, const cost::SavingsValidation& v) {
  blocks::Builder md;
  md.h3("What fixing it saved: predicted savings against the A/B steps gtb measured");
  md.blocks.back().close = true;
  if (!v.cannot_read.empty()) {
    md.p("The A/B pairs of this file could not be read (" + v.cannot_read + ").");
    return std::move(md.blocks);
  }
  if (v.rows.empty()) {
    std::set<std::string> with_steps;
    for (const auto& s : cost::steps_from_document(doc)) with_steps.insert(s.family);
    if (with_steps.empty()) {
      md.p("No fix was measured as an A/B pair of steps in this file.");
    } else {
      std::string t = "This file declares no A/B pairs (it was written before families published them). ";
      for (const auto& f : with_steps) t += "`gtb-" + f + " --gtb_findings_from=FILE` ";
      md.p(t + "derive" + (with_steps.size() == 1 ? "s" : "") + " them again with this version.");
    }
    return std::move(md.blocks);
  }
  md.p("Each fix a family measured as a pair of steps (A without the fix, B with it) is predicted from the "
       "cost terms of the *other* families (never the pair's own): the predicted saving is A minus B as the "
       "model has them, as a share of A as the model has it, at the measured A's time (the other families ran "
       "minutes apart, when the host's speed may have been another: that moves the model's seconds, not the "
       "share; the step validation checks the seconds), beside the measured saving (where A and B were measured as a pair, in alternating rounds: the "
       "median of the rounds' differences A minus B, ± its ~95% interval, marked *paired*; otherwise "
       "median A minus median B; in a file of several runs that each "
       "measured a record once, the median of the savings the runs measured one by one, A and B paired by run; ± the ~95% noise of the two "
       "medians, each from its samples or, where they came in repetitions or runs measured apart, from the "
       "spread of those groups' own medians if that is wider; or half the range of the savings the runs measured one by one where that is "
       "larger). A saving inside its own noise, or whose interval cannot be estimated, is not scored. Target: the predicted saving "
       "has the measured sign and is within 25% of it or within 3% of the step, whichever is larger; and the "
       "fixes ranked by predicted saving (as a share of their step) in the order of the measured ones.");
  int in_noise = 0, cannot = 0;
  for (const auto& r : v.rows) {
    in_noise += r.status == "in_noise";
    cannot += r.status == "cannot_say";
  }
  std::ostringstream o;
  o << format::count_of(v.rows.size(), "pair") << ": **" << v.scored << " scored, " << v.passed << " within the target**; " << in_noise
    << " inside their noise; " << cannot << " cannot say.";
  if (v.ranked_pairs > 0)
    o << " Ranking: of " << format::count_of(std::size_t(v.ranked_pairs), "pair") << " of scored fixes, **"
      << v.discordant << "** " << (v.discordant == 1 ? "is" : "are") << " in the other order by measured saving "
      << "(Kendall's tau " << fixed2(*v.kendall_tau) << ").";
  else if (v.scored == 1)
    o << " Ranking: one scored fix, nothing to order.";
  md.p(o.str());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : v.rows) {
    std::vector<std::string> row = {r.pair.fix, r.pair.change, "`" + r.pair.a + "`"};
    if (r.measured) {
      const auto& m = *r.measured;
      row.push_back(seconds_text(m.step_s));
      row.push_back(signed_seconds(m.seconds) + " (" + (m.step_s > 0 ? pct1(m.seconds / m.step_s) : "-") + ")" +
                    (std::isfinite(m.noise_s) ? " ± " + seconds_text(m.noise_s) : std::string(" ± ? (no interval)")) +
                    (m.paired_rounds > 0 ? ", *paired*, " + std::to_string(m.paired_rounds) + " rounds" : std::string()));
    } else {
      row.push_back("-");
      row.push_back("-");
    }
    row.push_back(r.predicted_s ? signed_seconds(*r.predicted_s) +
                                      (r.measured && r.measured->step_s > 0 ? " (" + pct1(*r.predicted_s / r.measured->step_s) + ")"
                                                                            : std::string())
                                : std::string("-"));
    if (r.status == "scored") {
      char err[48];
      std::snprintf(err, sizeof err, "%+.0f%%", 100 * *r.error);
      row.push_back(std::string(r.within ? "within the target" : !r.sign_ok ? "**wrong sign**" : "**off**") + " (" + err +
                    " of the measured saving)");
    } else if (r.status == "in_noise") {
      row.push_back("not scored: " + r.why);
    } else {
      row.push_back("cannot say: " + r.why);
    }
    rows.push_back(std::move(row));
  }
  md.table({"fix", "change", "step without the fix (A)", "A", "measured saving", "predicted saving", ""}, rows, "lllrrrl");
  return std::move(md.blocks);
}

std::string render_savings(const json& doc, const cost::SavingsValidation& v) {
  return blocks::to_markdown(savings_blocks(doc, v));
}

std::string measured_ab_text(const cost::SavingRow& r) {
  const auto& m = *r.measured;
  const std::string where = " at `" + r.pair.a + "`";
  if (r.status == "in_noise" || !(std::fabs(m.seconds) > m.noise_s))
    return "measured here: inside its noise (" + signed_seconds(m.seconds) + where + ")";
  return "measured here: " + signed_seconds(m.seconds) + " (" + pct(m.step_s > 0 ? m.seconds / m.step_s : 0) +
         " of its step" + where + ")";
}

}  // namespace gtb::verdict
