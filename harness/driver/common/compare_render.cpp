// gtb compare's renderers: the result as text, markdown and JSON (presentation only: decides nothing).
#include "harness/driver/common/compare_core.h"

#include <sstream>

#include "harness/document/format.h"
#include "harness/driver/common/compare_common.h"

namespace gtb::compare {

using namespace detail;

// ------------------------------------------------------------------------------------- rendering

namespace {
std::string family_runs(std::size_t n) { return std::to_string(n) + (n == 1 ? " family run" : " family runs"); }
}  // namespace

std::string outcome(const Result& res) {
  const int rc = res.exit_code();
  std::string what;
  if (rc == 2) {
    what = !res.context.comparable && !res.machines_allowed ? "INCOMPARABLE machines"
                                                            : "BASE FAILED: " + family_runs(res.base_failures.size());
  } else if (rc == 1) {
    const auto reg = res.regressions();
    if (reg) what = std::to_string(reg) + (reg == 1 ? " REGRESSION" : " REGRESSIONS");
    if (!res.new_failures.empty())
      what += (reg ? ", " : "") + std::string("NEW FAILED: ") + family_runs(res.new_failures.size());
  } else if (rc == kExitUnconfirmed) {
    what = std::to_string(res.count(Verdict::unconfirmed)) +
           " UNCONFIRMED (slower on a busy machine: decide again on fresh rounds)";
  } else {
    what = "no regression";
  }
  return what + " (exit " + std::to_string(rc) + ")";
}

namespace {

std::string value_text(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  return fmt("%.4g", *v) + " " + unit;
}

std::string side_value(const Row& r, bool base) {
  const auto& status = base ? r.base_status : r.new_status;
  if (status.empty()) return "-";
  if (status != "ok") return status;
  return value_text(base ? r.base_value : r.new_value, r.unit);
}

std::string change_text(const Row& r) { return r.has_ratio ? pct(r.d.ratio) : "-"; }

std::string ci_text(const Row& r) {
  if (!r.has_ratio || !r.d.tested) return "-";
  return "[" + pct(r.d.ci_low) + ", " + pct(r.d.ci_high) + "]";
}

std::string p_text(const Row& r) {
  if (!r.has_ratio || !r.d.tested) return "-";
  return fmt("%.2g", std::min(r.d.p_slower, r.d.p_faster));
}

std::string samples_text(const Row& r) {
  if (r.base_status.empty() || r.new_status.empty()) return "-";
  if (!r.evidence.empty() && r.evidence != "samples")
    return std::to_string(r.base_runs) + "r/" + std::to_string(r.new_runs) + "r";
  return std::to_string(r.base_n) + "/" + std::to_string(r.new_n);
}

std::string summary_counts(const Result& res) {
  std::vector<std::string> parts;
  for (Verdict v : {Verdict::broken, Verdict::slower, Verdict::unconfirmed, Verdict::noisy, Verdict::faster, Verdict::same, Verdict::missing,
                    Verdict::added, Verdict::unmeasured, Verdict::ignored}) {
    const auto c = res.count(v);
    if (c) parts.push_back(std::to_string(c) + " " + to_string(v));
  }
  return parts.empty() ? "no records" : join(parts, ", ");
}

std::string settings_text(const Result& res) {
  const Settings& s = res.settings;
  const std::string conf = fmt("%.3g%%", s.confidence * 100), run_conf = fmt("%.3g%%", s.run_confidence * 100);
  std::string e = "threshold " + fmt("%.3g%%", s.threshold * 100) + " (default; per family/record in --config); evidence: ";
  if (res.paired) {
    e += "paired rounds (r): the " + run_conf + " Student t interval of the mean paired ratio excludes 1";
    if (res.confirm_rounds > 0)
      e += "; a record slower there is decided again on " + std::to_string(res.confirm_rounds) +
           " fresh rounds of its family and stays slower only if they agree" +
           (res.confirmed_families.empty() ? std::string(" (none was needed)")
                                           : " (ran for: " + join(res.confirmed_families, ", ") + ")");
    return e;
  }
  return e + "several runs on a side (r): the " + run_conf +
         " Student t interval of the ratio of per-run geometric means excludes 1 (its width is the noise floor "
         "learned from the run-to-run spread); one run on each side (weak): the change exceeds " +
         fmt("%.3g%%", s.single_run_threshold * 100) + ", the " + conf +
         " bootstrap CI of the median ratio excludes 1 and one-sided Mann-Whitney p < " + fmt("%.3g", s.alpha) +
         " with at least " + std::to_string(s.min_samples) + " samples per side";
}

std::string calibration_text(const Calibration& c, const std::string& bullet) {
  std::ostringstream o;
  if (!c.done) return "";
  if (c.records == 0) {
    o << bullet << "A/A calibration: no BASE record has enough kept samples to simulate\n";
    return o.str();
  }
  const double rate = c.trials ? static_cast<double>(c.false_slower) / static_cast<double>(c.trials) : 0.0;
  o << bullet << "A/A calibration (BASE's own samples compared with themselves, " << c.trials << " simulated compares over "
    << c.records << " records): false regressions " << c.false_slower << " = " << fmt("%.2f%%", rate * 100)
    << " per record, false improvements " << c.false_faster << ", noisy " << c.noisy
    << "; expected false regressions per compare of these files: " << fmt("%.3g", c.expected_false_regressions) << "\n";
  for (const auto& [id, r] : c.worst) o << bullet << "  most alarm-prone: " << id << " " << fmt("%.1f%%", r * 100) << "\n";
  return o.str();
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}

void md_table(std::ostringstream& o, const std::vector<const Row*>& rows) {
  o << "| verdict | record | BASE | NEW | change | CI | p | samples | note |\n";
  o << "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n";
  for (const Row* r : rows)
    o << "| " << (is_regression(r->d.verdict) ? "**" + std::string(to_string(r->d.verdict)) + "**" : to_string(r->d.verdict))
      << " | `" << md_escape(r->id) << "` | " << side_value(*r, true) << " | " << side_value(*r, false) << " | "
      << change_text(*r) << " | " << ci_text(*r) << " | " << p_text(*r) << " | " << samples_text(*r) << " | "
      << md_escape(r->d.note) << " |\n";
}

}  // namespace

std::string render_text(const Result& res) {
  std::ostringstream o;
  o << "gtb compare\n";
  o << "  BASE " << res.base.path << ": " << res.base.machine << ", " << res.base.generated_at << ", suite " << res.base.suite << "\n";
  o << "  NEW  " << res.next.path << ": " << res.next.machine << ", " << res.next.generated_at << ", suite " << res.next.suite << "\n";
  o << "  " << settings_text(res) << "\n";
  for (const auto& p : res.context.problems)
    o << "  machines differ: " << p << (res.machines_allowed ? " (allowed)" : "") << "\n";
  for (const auto& w : res.context.warnings) o << "  note: " << w << "\n";
  o << "  change: + means NEW is better, - worse, in the metric's better direction\n\n";
  std::size_t idw = 6;
  for (const auto& r : res.rows) idw = std::max(idw, r.id.size());
  char line[4096];
  std::snprintf(line, sizeof line, "%-10s %8s %-20s %6s %7s  %-*s  %s\n", "verdict", "change", "CI", "p", "samples",
                static_cast<int>(idw), "record", "BASE -> NEW, note");
  o << line;
  // Records skipped on both sides (a CPU-only machine's GPU records) are counted, not listed.
  std::map<std::string, int> both_skipped;
  for (const auto& r : res.rows) {
    if (r.d.verdict == Verdict::unmeasured && r.base_status == "skipped" && r.new_status == "skipped") {
      both_skipped[r.d.note]++;
      continue;
    }
    std::string tail = side_value(r, true) + " -> " + side_value(r, false);
    if (!r.d.note.empty()) tail += "; " + r.d.note;
    std::snprintf(line, sizeof line, "%-10s %8s %-20s %6s %7s  %-*s  %s\n", to_string(r.d.verdict),
                  change_text(r).c_str(), ci_text(r).c_str(), p_text(r).c_str(), samples_text(r).c_str(),
                  static_cast<int>(idw), r.id.c_str(), tail.c_str());
    o << line;
  }
  for (const auto& [why, n] : both_skipped) o << "unmeasured: " << n << " records skipped on both sides (" << why << ")\n";
  o << "\n" << calibration_text(res.calibration, "");
  o << "summary: " << summary_counts(res) << " -> " << outcome(res) << "\n";
  return o.str();
}

std::string render_markdown(const Result& res) {
  std::ostringstream o;
  o << "## gtb compare: " << outcome(res) << "\n\n";
  o << "- **BASE** `" << md_escape(res.base.path) << "`: " << md_escape(res.base.machine) << ", " << res.base.generated_at
    << ", " << res.base.suite << " suite\n";
  o << "- **NEW** `" << md_escape(res.next.path) << "`: " << md_escape(res.next.machine) << ", " << res.next.generated_at
    << ", " << res.next.suite << " suite\n";
  o << "- " << md_escape(settings_text(res)) << "\n";
  o << "- " << summary_counts(res) << "\n";
  for (const auto& p : res.context.problems)
    o << "- machines differ: " << md_escape(p) << (res.machines_allowed ? " (allowed by --allow-different-machines)" : "") << "\n";
  for (const auto& w : res.context.warnings) o << "- note: " << md_escape(w) << "\n";
  o << calibration_text(res.calibration, "- ");
  o << "\n";
  std::vector<const Row*> notable, all;
  for (const auto& r : res.rows) {
    all.push_back(&r);
    if (r.d.verdict != Verdict::same && r.d.verdict != Verdict::ignored) notable.push_back(&r);
  }
  o << "Change: + means NEW is better, - worse, in the metric's better direction. A regression needs both the effect "
       "(beyond the threshold) and the evidence (interval and test).\n\n";
  if (notable.empty()) {
    o << "Every compared record is within its threshold.\n\n";
  } else {
    md_table(o, notable);
    o << "\n";
  }
  o << "<details><summary>All " << all.size() << " records</summary>\n\n";
  md_table(o, all);
  o << "\n</details>\n";
  return o.str();
}

json render_json(const Result& res) {
  json j;
  j["schema"] = "gtb-compare";
  j["schema_version"] = 1;
  auto side = [](const Side& s) {
    return json{{"path", s.path}, {"generated_at", s.generated_at}, {"machine", s.machine}, {"suite", s.suite}};
  };
  j["base"] = side(res.base);
  j["new"] = side(res.next);
  j["settings"] = {{"threshold", res.settings.threshold}, {"confidence", res.settings.confidence},
                   {"alpha", res.settings.alpha}, {"min_samples", res.settings.min_samples},
                   {"resamples", res.settings.resamples}, {"seed", res.settings.seed},
                   {"single_run_threshold", res.settings.single_run_threshold},
                   {"run_confidence", res.settings.run_confidence}, {"paired", res.paired},
                   {"confirm_rounds", res.confirm_rounds}, {"confirmed_families", res.confirmed_families}};
  j["machines"] = {{"comparable", res.context.comparable}, {"allowed", res.machines_allowed},
                   {"problems", res.context.problems}, {"warnings", res.context.warnings}};
  json counts = json::object();
  for (Verdict v : {Verdict::broken, Verdict::slower, Verdict::unconfirmed, Verdict::noisy, Verdict::faster, Verdict::same, Verdict::missing,
                    Verdict::added, Verdict::unmeasured, Verdict::ignored})
    counts[to_string(v)] = res.count(v);
  j["summary"] = {{"counts", counts}, {"regressions", res.regressions()}, {"exit_code", res.exit_code()},
                  {"outcome", outcome(res)}};
  if (!res.base_failures.empty() || !res.new_failures.empty())
    j["summary"]["failed_family_runs"] = {{"base", res.base_failures}, {"new", res.new_failures}};
  json rows = json::array();
  for (const auto& r : res.rows) {
    json x;
    x["id"] = r.id;
    x["family"] = r.family;
    x["workload"] = r.workload;
    x["variant"] = r.variant;
    x["backend"] = r.backend;
    x["params"] = r.params;
    x["options"] = r.options;
    x["metric"] = r.metric;
    x["unit"] = r.unit;
    x["better"] = r.better;
    x["verdict"] = to_string(r.d.verdict);
    x["regression"] = is_regression(r.d.verdict);
    x["threshold"] = r.threshold;
    if (!r.base_status.empty()) x["base"] = {{"status", r.base_status}, {"samples", r.base_n}, {"runs", r.base_runs}};
    if (r.base_value) x["base"]["value"] = *r.base_value;
    if (!r.new_status.empty()) x["new"] = {{"status", r.new_status}, {"samples", r.new_n}, {"runs", r.new_runs}};
    if (r.new_value) x["new"]["value"] = *r.new_value;
    if (!r.evidence.empty()) x["evidence"] = r.evidence;
    if (r.has_ratio) {
      x["ratio"] = r.d.ratio;
      if (r.d.tested) {
        x["ci"] = {r.d.ci_low, r.d.ci_high};
        x["p_slower"] = r.d.p_slower;
        x["p_faster"] = r.d.p_faster;
      }
    }
    x["note"] = r.d.note;
    rows.push_back(std::move(x));
  }
  j["records"] = std::move(rows);
  if (res.calibration.done) {
    const auto& c = res.calibration;
    json worst = json::array();
    for (const auto& [id, rate] : c.worst) worst.push_back({{"id", id}, {"false_regression_rate", rate}});
    j["calibration"] = {{"records", c.records},
                        {"trials", c.trials},
                        {"false_regressions", c.false_slower},
                        {"false_improvements", c.false_faster},
                        {"noisy", c.noisy},
                        {"false_regression_rate",
                         c.trials ? static_cast<double>(c.false_slower) / static_cast<double>(c.trials) : 0.0},
                        {"expected_false_regressions_per_compare", c.expected_false_regressions},
                        {"most_alarm_prone", worst}};
  }
  return j;
}

}  // namespace gtb::compare
