// gtb compare's decisions: a verdict per record from its samples or runs, the machines' context
// check, and the comparison of two documents (matching, confirmation, busy machines).
#include "harness/driver/common/compare_core.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"
#include "harness/driver/common/compare_common.h"
#include "harness/driver/common/compare_stats.h"
#include "harness/driver/common/health.h"

namespace gtb::compare {

using namespace detail;
using json_read::array_at;
using json_read::object_at;
using json_read::string_at;

namespace {

// Metric value of each ok run by run number; a record of a one-run file is run 1.
std::map<int, double> run_values(const Record& r) {
  std::map<int, double> v;
  if (r.runs.empty()) {
    if (r.value) v[1] = *r.value;
    return v;
  }
  for (const auto& x : r.runs)
    if (x.status == Status::ok && x.value) v[x.run] = *x.value;
  return v;
}

// The typical spread of the samples inside one run, in log units: per ok run of either record, the
// standard deviation a normal distribution with the run's quartiles would have (ln(q3/q1) / 1.349),
// and the median of those. 0 when no run has quartiles.
double within_run_spread(const Record& b, const Record& n) {
  std::vector<double> v;
  for (const Record* r : {&b, &n})
    for (const auto& x : r->runs)
      if (x.status == Status::ok && x.stats && x.stats->q1 > 0 && x.stats->q3 >= x.stats->q1)
        v.push_back(std::log(x.stats->q3 / x.stats->q1) / 1.349);
  return v.empty() ? 0.0 : gtb::median(v);
}

bool gpu_available(const json& ctx) { return json_read::bool_at(ctx, {"gpu", "available"}); }

std::vector<std::string> gpu_names(const json& ctx) {
  std::vector<std::string> names;
  for (const auto& d : array_at(ctx, {"gpu", "devices"}))
    if (d.is_object()) names.push_back(string_at(d, {"name"}));
  return names;
}
}  // namespace

// -------------------------------------------------------------------------------------- verdicts

bool is_regression(Verdict v) { return v == Verdict::slower || v == Verdict::broken; }

namespace {
// The verdict from the effect (d.ratio against the threshold) and the evidence (d.ci_*, p-values),
// the same rule whatever the evidence is made of: `what` names it in the notes ("samples", "runs").
void apply_verdict(Decision& d, double t, const Settings& s, const std::string& what, const std::string& test,
                   const std::string& few, double confidence) {
  const std::string interval = fmt("%.0f%%", confidence * 100) + " CI [" + pct(d.ci_low) + ", " + pct(d.ci_high) + "]";
  const bool need_p = what == "samples";  // run level: the t interval and the t-test are one and the same
  if (d.ratio < 1.0 - t || d.ratio > 1.0 + t) {
    const bool worse = d.ratio < 1.0;
    const double p = worse ? d.p_slower : d.p_faster;
    if (!d.tested) {
      d.verdict = Verdict::noisy;
      d.note = pct(d.ratio) + " beyond the " + fmt("%.0f%%", t * 100) + " threshold, but " + few;
    } else if ((worse ? d.ci_high < 1.0 : d.ci_low > 1.0) && (!need_p || p < s.alpha)) {
      d.verdict = worse ? Verdict::slower : Verdict::faster;
    } else {
      d.verdict = Verdict::noisy;
      d.note = pct(d.ratio) + " beyond the threshold, but the " + what + " do not show it (" + interval + ", " + test +
               fmt(" p=%.3g)", p);
    }
  } else if (need_p && d.tested && (d.ci_low < 1.0 - 2 * t || d.ci_high > 1.0 + 2 * t)) {
    // Within-run samples of one run: a wide interval says more samples are needed. With several
    // runs the interval's width is the run-to-run noise floor itself, reported below instead.
    d.verdict = Verdict::noisy;
    d.note = "within the threshold, but the " + interval + " cannot rule out a change of twice the threshold";
  } else {
    d.verdict = Verdict::same;
    if (!d.tested) d.note = few;
    else if (!need_p && (d.ci_low < 1.0 - 2 * t || d.ci_high > 1.0 + 2 * t))
      d.note = "noise floor: the " + interval + " is wider than twice the threshold; more runs would narrow it";
  }
}

}  // namespace

Decision decide(double base_value, double new_value, const std::vector<double>& bs, const std::vector<double>& ns,
                Better better, double t, const Settings& s, std::uint64_t seed) {
  Decision d;
  const bool higher = better == Better::higher;
  if (!(base_value > 0.0) || !(new_value > 0.0) || !std::isfinite(base_value) || !std::isfinite(new_value)) {
    d.verdict = Verdict::unmeasured;
    d.note = "a value is zero, negative or not finite: no ratio";
    return d;
  }
  d.ratio = higher ? new_value / base_value : base_value / new_value;
  d.ci_low = d.ci_high = d.ratio;
  // The same samples on both sides (a file compared with itself) are no evidence of any change; the
  // bootstrap interval of one wide sample set against itself would otherwise read as noise.
  if (base_value == new_value && bs == ns) {
    d.tested = !bs.empty();
    d.note = bs.empty() ? "identical values" : "identical samples";
    return d;
  }
  const auto min_n = static_cast<std::size_t>(s.min_samples);
  d.tested = bs.size() >= min_n && ns.size() >= min_n;
  if (d.tested) {
    const RatioInterval ci =
        higher ? bootstrap_median_ratio(ns, bs, s.confidence, s.resamples, seed)
               : bootstrap_median_ratio(bs, ns, s.confidence, s.resamples, seed);
    d.ci_low = ci.low;
    d.ci_high = ci.high;
    d.p_slower = higher ? mann_whitney_less(ns, bs) : mann_whitney_less(bs, ns);
    d.p_faster = higher ? mann_whitney_less(bs, ns) : mann_whitney_less(ns, bs);
  }
  const std::string few = "only " + std::to_string(bs.size()) + " and " + std::to_string(ns.size()) +
                          " kept samples (a verdict needs " + std::to_string(s.min_samples) + " on each side)";
  apply_verdict(d, t, s, "samples", "Mann-Whitney", few, s.confidence);
  return d;
}

Decision decide_runs(const std::vector<double>& base, const std::vector<double>& next, bool paired, Better better,
                     double t, const Settings& s, double within_spread) {
  Decision d;
  const double sign = better == Better::higher ? 1.0 : -1.0;  // log values oriented: larger is better
  std::vector<double> lb, ln;
  for (const auto* from : {&base, &next})
    for (double v : *from) {
      if (!(v > 0.0) || !std::isfinite(v)) {
        d.verdict = Verdict::unmeasured;
        d.note = "a run's value is zero, negative or not finite: no ratio";
        return d;
      }
      (from == &base ? lb : ln).push_back(sign * std::log(v));
    }
  auto mean = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x;
    return v.empty() ? 0.0 : m / static_cast<double>(v.size());
  };
  auto sum_sq = [](const std::vector<double>& v, double m) {
    double q = 0;
    for (double x : v) q += (x - m) * (x - m);
    return q;
  };
  double diff = 0, se = 0;
  int df = 0;
  std::string few, floor_note;
  if (paired) {
    std::vector<double> dl(std::min(lb.size(), ln.size()));
    for (std::size_t i = 0; i < dl.size(); ++i) dl[i] = ln[i] - lb[i];
    const auto n = dl.size();
    diff = mean(dl);
    df = static_cast<int>(n) - 1;
    if (n >= 2) {
      double spread = std::sqrt(sum_sq(dl, diff) / static_cast<double>(n - 1));
      // A paired ratio is the difference of two runs' values: at least sqrt(2) times the floor of one.
      const double within = std::sqrt(2.0) * s.within_run_floor * within_spread;
      if (within > spread) {
        spread = within;
        floor_note = fmt("round-to-round spread taken from the spread inside runs (%.1f%%), wider than between rounds",
                         100 * within_spread);
      }
      se = spread / std::sqrt(static_cast<double>(n));
    }
    few = "only " + std::to_string(n) + " paired rounds (a verdict needs 3)";
    d.tested = n >= 3;
  } else {
    const auto k = lb.size(), m = ln.size();
    if (k == 0 || m == 0) {
      d.verdict = Verdict::unmeasured;
      d.note = "no ok run on a side";
      return d;
    }
    const double mb = mean(lb), mn = mean(ln);
    diff = mn - mb;
    const double qb = sum_sq(lb, mb), qn = sum_sq(ln, mn);
    double spread = 0;
    if (k >= 2 && m >= 2) {
      // The baseline's own spread is the floor; pooling in NEW's keeps a baseline that happened to
      // be quiet from making it too low.
      spread = std::max(std::sqrt(qb / static_cast<double>(k - 1)), std::sqrt((qb + qn) / static_cast<double>(k + m - 2)));
      df = static_cast<int>(k + m) - 2;
    } else if (k >= 2) {
      spread = std::sqrt(qb / static_cast<double>(k - 1));
      df = static_cast<int>(k) - 1;
    } else if (m >= 2) {
      spread = std::sqrt(qn / static_cast<double>(m - 1));
      df = static_cast<int>(m) - 1;
    }
    const double within = s.within_run_floor * within_spread;
    if (df >= 1 && within > spread) {
      spread = within;
      floor_note = fmt("run-to-run spread taken from the spread inside runs (%.1f%%), wider than between them",
                       100 * within_spread);
    }
    se = spread * std::sqrt(1.0 / static_cast<double>(k) + 1.0 / static_cast<double>(m));
    few = "one run on each side";
    d.tested = df >= 1;
  }
  d.ratio = std::exp(diff);
  d.ci_low = d.ci_high = d.ratio;
  if (d.tested) {
    const double half = student_t_quantile(0.5 + 0.5 * s.run_confidence, df) * se;
    d.ci_low = std::exp(diff - half);
    d.ci_high = std::exp(diff + half);
    const double tstat = se > 0 ? diff / se : (diff < 0 ? -INFINITY : diff > 0 ? INFINITY : 0.0);
    d.p_slower = student_t_cdf(tstat, df);
    d.p_faster = 1.0 - d.p_slower;
  }
  apply_verdict(d, t, s, paired ? "paired rounds" : "runs", "t-test", few, s.run_confidence);
  if (!floor_note.empty()) append_note(d, floor_note);
  return d;
}

// --------------------------------------------------------------------------------------- context

std::string machine_name(const json& ctx) {
  const json& host = object_at(ctx, {"host"});
  const std::string hostname = string_at(host, {"hostname"});
  std::string what;
  if (gpu_available(ctx)) {
    const auto names = gpu_names(ctx);
    std::map<std::string, int> counts;
    for (const auto& n : names) counts[n]++;
    std::vector<std::string> parts;
    for (const auto& [n, c] : counts) parts.push_back(c > 1 ? std::to_string(c) + "x " + n : n);
    what = parts.empty() ? "unnamed GPU" : join(parts, " + ");
  } else {
    const std::string cpu = string_at(host, {"cpu_model"});
    what = (cpu.empty() ? "unknown CPU" : cpu) + " (no GPU)";
  }
  return hostname.empty() ? what : what + " on " + hostname;
}

ContextCheck check_contexts(const json& b, const json& n) {
  ContextCheck c;
  const bool bg = gpu_available(b), ng = gpu_available(n);
  if (bg != ng) {
    const json& g = object_at(bg ? n : b, {"gpu"});
    c.problems.push_back(std::string(bg ? "BASE" : "NEW") + " has a GPU (" + join(gpu_names(bg ? b : n), ", ") +
                         ") and " + (bg ? "NEW" : "BASE") + " has none" +
                         (string_at(g, {"reason"}).empty() ? "" : " (" + string_at(g, {"reason"}) + ")"));
  } else if (bg) {
    auto bn = gpu_names(b), nn = gpu_names(n);
    std::sort(bn.begin(), bn.end());
    std::sort(nn.begin(), nn.end());
    if (bn != nn)
      c.problems.push_back("different GPUs: BASE " + join(bn, ", ") + ", NEW " + join(nn, ", "));
    const std::string bd = string_at(object_at(b, {"gpu"}), {"driver_version"}), nd = string_at(object_at(n, {"gpu"}), {"driver_version"});
    if (bd != nd) c.warnings.push_back("GPU driver " + bd + " -> " + nd);
  }
  const json& bh = object_at(b, {"host"});
  const json& nh = object_at(n, {"host"});
  // CPU records run on every machine, so the CPU model matters even when both have the same GPU.
  if (string_at(bh, {"cpu_model"}) != string_at(nh, {"cpu_model"}))
    c.problems.push_back("different CPUs: BASE \"" + string_at(bh, {"cpu_model"}) + "\", NEW \"" + string_at(nh, {"cpu_model"}) + "\"");
  for (const char* k : {"logical_cpus", "omp_threads"}) {
    const std::string bv = bh.contains(k) ? bh.at(k).dump() : "?", nv = nh.contains(k) ? nh.at(k).dump() : "?";
    if (bv != nv) c.warnings.push_back(std::string(k) + " " + bv + " -> " + nv);
  }
  if (string_at(bh, {"hostname"}) != string_at(nh, {"hostname"}))
    c.warnings.push_back("host " + string_at(bh, {"hostname"}) + " -> " + string_at(nh, {"hostname"}));
  const json& bb = object_at(b, {"build"});
  const json& nb = object_at(n, {"build"});
  for (const char* k : {"build_type", "compiler"})
    if (string_at(bb, {k}) != string_at(nb, {k})) c.warnings.push_back(std::string(k) + " " + string_at(bb, {k}) + " -> " + string_at(nb, {k}));
  c.comparable = c.problems.empty();
  return c;
}

// ------------------------------------------------------------------------------------ comparison

namespace {

Side side_of(const json& doc) {
  Side s;
  s.generated_at = string_at(doc, {"generated_at"});
  s.suite = string_at(doc, {"suite"});
  s.machine = machine_name(object_at(doc, {"context"}));
  return s;
}

void fill_from(Row& row, const Record& r) {
  row.id = r.id;
  row.family = r.family;
  row.workload = r.workload;
  row.variant = r.variant;
  row.backend = to_string(r.backend);
  row.params = r.params;
  row.options = r.options;
  row.metric = r.metric.name;
  row.unit = r.metric.unit;
  row.better = to_string(r.metric.better());
}

Row compare_pair(const Record* b, const Record* n, const Config& cfg) {
  Row row;
  const Record& any = n ? *n : *b;
  fill_from(row, any);
  row.threshold = cfg.threshold_for(any);
  if (b) {
    row.base_status = to_string(b->status);
    row.base_value = b->value;
    row.base_n = b->samples.size();
  }
  if (n) {
    row.new_status = to_string(n->status);
    row.new_value = n->value;
    row.new_n = n->samples.size();
  }
  Decision& d = row.d;
  if (cfg.ignored(any)) {
    d.verdict = Verdict::ignored;
    d.note = "ignored by the compare config";
    return row;
  }
  if (!n) {
    d.verdict = Verdict::missing;
    d.note = "in BASE only";
    return row;
  }
  if (!b) {
    d.verdict = Verdict::added;
    d.note = "in NEW only";
    return row;
  }
  if (b->status == Status::ok && (n->status == Status::failed || n->status == Status::invalid)) {
    d.verdict = Verdict::broken;
    d.note = std::string("ok in BASE, ") + to_string(n->status) + " in NEW: " + n->status_detail;
    return row;
  }
  if (b->status != Status::ok || n->status != Status::ok) {
    d.verdict = Verdict::unmeasured;
    if (b->status != Status::ok)
      d.note = std::string(to_string(b->status)) + " in BASE" + (b->status_detail.empty() ? "" : ": " + b->status_detail);
    else
      d.note = std::string(to_string(n->status)) + " in NEW" + (n->status_detail.empty() ? "" : ": " + n->status_detail);
    return row;
  }
  if (b->metric.name != n->metric.name || b->metric.unit != n->metric.unit || b->metric.better() != n->metric.better()) {
    d.verdict = Verdict::unmeasured;
    d.note = "the metric changed: " + b->metric.name + " [" + b->metric.unit + "] -> " + n->metric.name + " [" +
             n->metric.unit + "]";
    return row;
  }
  if (!b->value || !n->value) {
    d.verdict = Verdict::unmeasured;
    d.note = "an ok record without a value";
    return row;
  }
  const auto bs = metric_samples(*b), ns = metric_samples(*n);
  row.base_n = bs.size();
  row.new_n = ns.size();
  std::vector<double> bv, nv;
  if (cfg.paired) {
    const auto bm = run_values(*b), nm = run_values(*n);
    for (const auto& [run, v] : bm) {
      const auto it = nm.find(run);
      if (it == nm.end()) continue;
      bv.push_back(v);
      nv.push_back(it->second);
    }
  } else {
    for (const auto& [run, v] : run_values(*b)) bv.push_back(v);
    for (const auto& [run, v] : run_values(*n)) nv.push_back(v);
  }
  row.base_runs = bv.size();
  row.new_runs = nv.size();
  const Better better = n->metric.better();
  if (cfg.paired) {
    row.evidence = "paired rounds";
    row.d = decide_runs(bv, nv, true, better, row.threshold, cfg.settings, within_run_spread(*b, *n));
  } else if (bv.size() >= 2 || nv.size() >= 2) {
    row.evidence = "runs";
    row.d = decide_runs(bv, nv, false, better, row.threshold, cfg.settings, within_run_spread(*b, *n));
    if (bv.size() < 2 || nv.size() < 2) append_note(row.d, "one run on a side: weak evidence");
  } else {
    // Within-run samples say nothing about the next run: only a generous threshold counts.
    row.evidence = "samples";
    const double t = std::max(row.threshold, cfg.settings.single_run_threshold);
    row.d = decide(*b->value, *n->value, bs, ns, better, t, cfg.settings, cfg.settings.seed ^ fnv1a(record_key(*n)));
    if (row.d.verdict != Verdict::unmeasured)
      append_note(row.d, "one run on each side: weak evidence, only changes beyond " + fmt("%.0f%%", t * 100) + " count");
  }
  row.has_ratio = row.d.verdict != Verdict::unmeasured;
  return row;
}

// Regressions first, then the rest by verdict and id.
void sort_rows(Result& res) {
  std::stable_sort(res.rows.begin(), res.rows.end(), [](const Row& a, const Row& b) {
    if (a.d.verdict != b.d.verdict) return a.d.verdict < b.d.verdict;
    return a.id < b.id;
  });
}

}  // namespace

void apply_confirmation(Result& res, const Result& confirm) {
  std::map<std::string, const Row*> by_id;
  for (const Row& r : confirm.rows) by_id[r.id] = &r;
  for (Row& r : res.rows) {
    if (r.d.verdict != Verdict::slower) continue;
    const auto it = by_id.find(r.id);
    const Row* c = it == by_id.end() ? nullptr : it->second;
    std::string again = "not decided again";
    if (c && c->has_ratio && c->d.tested)
      again = std::string(to_string(c->d.verdict)) + " on " + std::to_string(c->base_runs) + " fresh rounds (" +
              pct(c->d.ratio) + " [" + pct(c->d.ci_low) + ", " + pct(c->d.ci_high) + "])";
    else if (c)
      again = std::string(to_string(c->d.verdict)) + " on the fresh rounds";
    if (c && c->d.verdict == Verdict::slower) {
      append_note(r.d, "confirmed: " + again);
    } else {
      r.d.verdict = Verdict::noisy;
      append_note(r.d, "slower in these rounds, not confirmed: " + again);
    }
  }
  sort_rows(res);
}

std::size_t Result::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [v](const Row& r) { return r.d.verdict == v; }));
}

std::size_t Result::regressions() const { return count(Verdict::slower) + count(Verdict::broken); }

int Result::exit_code() const {
  if (!context.comparable && !machines_allowed) return 2;
  if (!base_failures.empty()) return 2;
  if (regressions() > 0 || !new_failures.empty()) return 1;
  return count(Verdict::unconfirmed) > 0 ? kExitUnconfirmed : 0;
}

namespace {
// The health warnings of `family` in a document (every run of it); empty when it was not measured
// busy and its speed readings did not change (health::busy_text).
std::string busy_warnings(const json& doc, const std::string& family) {
  std::string out;
  for (const auto& f : array_at(doc, {"families"})) {
    if (string_at(f, {"name"}) != family) continue;
    const std::string w = health::busy_text(object_at(f, {"health"}));
    if (!w.empty() && out.find(w) == std::string::npos) out += (out.empty() ? "" : "; ") + w;
  }
  return out;
}
}  // namespace

void mark_unconfirmed_on_busy(Result& res, const json& base, const json& next) {
  for (Row& r : res.rows) {
    if (r.d.verdict != Verdict::slower) continue;
    const std::string b = busy_warnings(base, r.family), n = busy_warnings(next, r.family);
    if (b.empty() && n.empty()) continue;
    r.d.verdict = Verdict::unconfirmed;
    append_note(r.d, "slower, but measured on a busy machine (" + (b.empty() ? "" : "BASE: " + b) +
                         (b.empty() || n.empty() ? "" : "; ") + (n.empty() ? "" : "NEW: " + n) +
                         "): confirm on fresh rounds (gtb ab, or gtb compare --paired --confirmed-by)");
  }
  sort_rows(res);
}

Result compare_documents(const json& base, const json& next, const Config& cfg) {
  Result res;
  res.settings = cfg.settings;
  res.paired = cfg.paired;
  res.base = side_of(base);
  res.next = side_of(next);
  res.context = check_contexts(object_at(base, {"context"}), object_at(next, {"context"}));
  if (res.base.suite != res.next.suite && !res.base.suite.empty() && !res.next.suite.empty())
    res.context.warnings.push_back("suite " + res.base.suite + " -> " + res.next.suite +
                                   " (records of one suite only are reported missing/new)");
  const Indexed bi = index_records(base, "BASE"), ni = index_records(next, "NEW");
  for (const auto& r : bi.records) {
    const auto it = ni.by_key.find(record_key(r));
    res.rows.push_back(compare_pair(&r, it == ni.by_key.end() ? nullptr : &ni.records[it->second], cfg));
  }
  for (const auto& r : ni.records)
    if (!bi.by_key.count(record_key(r))) res.rows.push_back(compare_pair(nullptr, &r, cfg));
  sort_rows(res);
  const auto weak = std::count_if(res.rows.begin(), res.rows.end(), [](const Row& r) { return r.evidence == "samples"; });
  if (weak > 0)
    res.context.warnings.push_back(std::to_string(weak) + " records have one run on each side: weak evidence, only changes beyond " +
                                   fmt("%.0f%%", cfg.settings.single_run_threshold * 100) +
                                   " count (make baselines with gtb run --runs 3, or use gtb ab)");
  return res;
}

}  // namespace gtb::compare
