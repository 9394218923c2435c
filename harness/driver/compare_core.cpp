// gtb compare's engine: match records of two results files, decide each verdict, render the result.
#include "harness/driver/compare_core.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/driver/compare_stats.h"
#include "harness/driver/summary.h"
#include "harness/document/results.h"

namespace gtb::compare {

namespace {

using driver::fmt;

std::string pct(double ratio) { return fmt("%+.1f%%", (ratio - 1.0) * 100.0); }

double number_in(const json& j, const char* key, const std::string& where) {
  if (!j.at(key).is_number()) throw std::runtime_error(where + ": \"" + key + "\" must be a number");
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v)) throw std::runtime_error(where + ": \"" + key + "\" must be finite");
  return v;
}

void check_threshold(double t, const std::string& where) {
  if (!(t > 0.0 && t < 1.0)) throw std::runtime_error(where + ": threshold must be in (0, 1), e.g. 0.05 for 5%");
}

// A threshold given as a number, or {"threshold": x, "ignore": b}.
void parse_override(const json& v, const std::string& where, std::optional<double>& threshold, bool& ignore) {
  if (v.is_number()) {
    threshold = v.get<double>();
    check_threshold(*threshold, where);
    return;
  }
  if (!v.is_object()) throw std::runtime_error(where + ": expected a number or an object");
  for (const auto& [k, x] : v.items()) {
    if (k == "threshold") {
      threshold = number_in(v, "threshold", where);
      check_threshold(*threshold, where);
    } else if (k == "ignore") {
      if (!x.is_boolean()) throw std::runtime_error(where + ": \"ignore\" must be true or false");
      ignore = x.get<bool>();
    } else {
      throw std::runtime_error(where + ": unknown key \"" + k + "\" (expected threshold, ignore)");
    }
  }
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// FNV-1a: a seed per record that does not depend on the standard library's hash.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Key-order independent text of a typed object: {"m":1,"n":2} equals {"n":2,"m":1}; 1 and 1.0 differ.
std::string canonical(const json& j) { return nlohmann::json::parse(j.dump()).dump(); }

std::string record_key(const Record& r) {
  return r.family + '\x1f' + r.workload + '\x1f' + r.variant + '\x1f' + to_string(r.backend) + '\x1f' +
         canonical(r.params) + '\x1f' + canonical(r.options);
}

std::vector<double> metric_samples(const Record& r) {
  std::vector<double> v;
  v.reserve(r.samples.size());
  for (double s : r.samples) {
    if (!(s > 0.0) || !std::isfinite(s)) continue;
    const double m = r.metric_of_seconds(s);
    if (std::isfinite(m) && m > 0.0) v.push_back(m);
  }
  return v;
}

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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
  return v.empty() ? 0.0 : median_of(v);
}

std::string str_at(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j.at(key).is_string()) return j.at(key).get<std::string>();
  return "";
}

const json& obj_at(const json& j, const char* key) {
  static const json empty = json::object();
  if (j.is_object() && j.contains(key) && j.at(key).is_object()) return j.at(key);
  return empty;
}

bool gpu_available(const json& ctx) {
  const json& g = obj_at(ctx, "gpu");
  return g.contains("available") && g.at("available").is_boolean() && g.at("available").get<bool>();
}

std::vector<std::string> gpu_names(const json& ctx) {
  std::vector<std::string> names;
  const json& g = obj_at(ctx, "gpu");
  if (g.contains("devices") && g.at("devices").is_array())
    for (const auto& d : g.at("devices"))
      if (d.is_object()) names.push_back(str_at(d, "name"));
  return names;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------- config

Config Config::from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("compare config: expected a JSON object");
  Config c;
  Settings& s = c.settings;
  for (const auto& [k, v] : j.items()) {
    const std::string where = "compare config: \"" + k + "\"";
    if (k == "threshold") {
      s.threshold = number_in(j, "threshold", "compare config");
      check_threshold(s.threshold, where);
    } else if (k == "confidence") {
      s.confidence = number_in(j, "confidence", "compare config");
      if (!(s.confidence >= 0.5 && s.confidence < 1.0)) throw std::runtime_error(where + ": must be in [0.5, 1)");
    } else if (k == "alpha") {
      s.alpha = number_in(j, "alpha", "compare config");
      if (!(s.alpha > 0.0 && s.alpha <= 0.5)) throw std::runtime_error(where + ": must be in (0, 0.5]");
    } else if (k == "min_samples" || k == "resamples") {
      if (!v.is_number_integer()) throw std::runtime_error(where + ": must be an integer");
      const auto n = v.get<std::int64_t>();
      if (k == "min_samples") {
        if (n < 2 || n > 100000) throw std::runtime_error(where + ": must be in [2, 100000]");
        s.min_samples = static_cast<int>(n);
      } else {
        if (n < 100 || n > 1000000) throw std::runtime_error(where + ": must be in [100, 1000000]");
        s.resamples = static_cast<int>(n);
      }
    } else if (k == "run_confidence") {
      s.run_confidence = number_in(j, "run_confidence", "compare config");
      if (!(s.run_confidence >= 0.5 && s.run_confidence < 1.0)) throw std::runtime_error(where + ": must be in [0.5, 1)");
    } else if (k == "within_run_floor") {
      s.within_run_floor = number_in(j, "within_run_floor", "compare config");
      if (!(s.within_run_floor >= 0.0 && s.within_run_floor <= 5.0)) throw std::runtime_error(where + ": must be in [0, 5]");
    } else if (k == "single_run_threshold") {
      s.single_run_threshold = number_in(j, "single_run_threshold", "compare config");
      check_threshold(s.single_run_threshold, where);
    } else if (k == "seed") {
      if (!v.is_number_unsigned()) throw std::runtime_error(where + ": must be a non-negative integer");
      s.seed = v.get<std::uint64_t>();
    } else if (k == "families" || k == "records") {
      if (!v.is_object()) throw std::runtime_error(where + ": expected an object");
      for (const auto& [name, ov] : v.items()) {
        std::optional<double> t;
        bool ignore = false;
        parse_override(ov, where + " \"" + name + "\"", t, ignore);
        if (k == "families") {
          if (t) c.family_thresholds.emplace_back(name, *t);
          c.family_ignore.emplace_back(name, ignore);
        } else {
          c.rules.push_back({name, t, ignore});
        }
      }
    } else if (k == "comment" || k == "$comment") {
      // free text for people
    } else {
      throw std::runtime_error("compare config: unknown key \"" + k +
                               "\" (expected threshold, confidence, alpha, min_samples, resamples, seed, "
                               "single_run_threshold, run_confidence, within_run_floor, families, records, comment)");
    }
  }
  return c;
}

double Config::threshold_for(const Record& r) const {
  for (const auto& rule : rules)
    if (rule.threshold && glob_match(rule.pattern, r.id)) return *rule.threshold;
  for (const auto& [f, t] : family_thresholds)
    if (f == r.family) return t;
  return settings.threshold;
}

bool Config::ignored(const Record& r) const {
  for (const auto& rule : rules)
    if (glob_match(rule.pattern, r.id)) {
      if (rule.ignore) return true;
      if (rule.threshold) return false;  // the first matching rule decides
    }
  for (const auto& [f, ig] : family_ignore)
    if (f == r.family && ig) return true;
  return false;
}

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

void append_note(Decision& d, const std::string& text) { d.note += (d.note.empty() ? "" : "; ") + text; }
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
  const json& host = obj_at(ctx, "host");
  const std::string hostname = str_at(host, "hostname");
  std::string what;
  if (gpu_available(ctx)) {
    const auto names = gpu_names(ctx);
    std::map<std::string, int> counts;
    for (const auto& n : names) counts[n]++;
    std::vector<std::string> parts;
    for (const auto& [n, c] : counts) parts.push_back(c > 1 ? std::to_string(c) + "x " + n : n);
    what = parts.empty() ? "unnamed GPU" : join(parts, " + ");
  } else {
    const std::string cpu = str_at(host, "cpu_model");
    what = (cpu.empty() ? "unknown CPU" : cpu) + " (no GPU)";
  }
  return hostname.empty() ? what : what + " on " + hostname;
}

ContextCheck check_contexts(const json& b, const json& n) {
  ContextCheck c;
  const bool bg = gpu_available(b), ng = gpu_available(n);
  if (bg != ng) {
    const json& g = obj_at(bg ? n : b, "gpu");
    c.problems.push_back(std::string(bg ? "BASE" : "NEW") + " has a GPU (" + join(gpu_names(bg ? b : n), ", ") +
                         ") and " + (bg ? "NEW" : "BASE") + " has none" +
                         (str_at(g, "reason").empty() ? "" : " (" + str_at(g, "reason") + ")"));
  } else if (bg) {
    auto bn = gpu_names(b), nn = gpu_names(n);
    std::sort(bn.begin(), bn.end());
    std::sort(nn.begin(), nn.end());
    if (bn != nn)
      c.problems.push_back("different GPUs: BASE " + join(bn, ", ") + ", NEW " + join(nn, ", "));
    const std::string bd = str_at(obj_at(b, "gpu"), "driver_version"), nd = str_at(obj_at(n, "gpu"), "driver_version");
    if (bd != nd) c.warnings.push_back("GPU driver " + bd + " -> " + nd);
  }
  const json& bh = obj_at(b, "host");
  const json& nh = obj_at(n, "host");
  // CPU records run on every machine, so the CPU model matters even when both have the same GPU.
  if (str_at(bh, "cpu_model") != str_at(nh, "cpu_model"))
    c.problems.push_back("different CPUs: BASE \"" + str_at(bh, "cpu_model") + "\", NEW \"" + str_at(nh, "cpu_model") + "\"");
  for (const char* k : {"logical_cpus", "omp_threads"}) {
    const std::string bv = bh.contains(k) ? bh.at(k).dump() : "?", nv = nh.contains(k) ? nh.at(k).dump() : "?";
    if (bv != nv) c.warnings.push_back(std::string(k) + " " + bv + " -> " + nv);
  }
  if (str_at(bh, "hostname") != str_at(nh, "hostname"))
    c.warnings.push_back("host " + str_at(bh, "hostname") + " -> " + str_at(nh, "hostname"));
  const json& bb = obj_at(b, "build");
  const json& nb = obj_at(n, "build");
  for (const char* k : {"build_type", "compiler"})
    if (str_at(bb, k) != str_at(nb, k)) c.warnings.push_back(std::string(k) + " " + str_at(bb, k) + " -> " + str_at(nb, k));
  c.comparable = c.problems.empty();
  return c;
}

// ------------------------------------------------------------------------------------ comparison

namespace {

struct Indexed {
  std::vector<Record> records;
  std::map<std::string, std::size_t> by_key;
};

Indexed index_records(const json& doc, const char* side) {
  Indexed ix;
  ix.records = records_of(doc);
  for (std::size_t i = 0; i < ix.records.size(); ++i) {
    const auto [it, fresh] = ix.by_key.emplace(record_key(ix.records[i]), i);
    if (!fresh)
      throw std::runtime_error(std::string(side) + ": two records with the same family, workload, variant, backend, "
                               "params and options: " + ix.records[i].id);
  }
  return ix;
}

Side side_of(const json& doc) {
  Side s;
  s.generated_at = str_at(doc, "generated_at");
  s.suite = str_at(doc, "suite");
  s.machine = machine_name(obj_at(doc, "context"));
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
  if (regressions() > 0) return 1;
  return count(Verdict::unconfirmed) > 0 ? kExitUnconfirmed : 0;
}

namespace {
// The health warnings of `family` in a document; empty when it was not measured busy.
std::string busy_warnings(const json& doc, const std::string& family) {
  if (!doc.contains("families") || !doc["families"].is_array()) return {};
  std::string out;
  for (const auto& f : doc["families"]) {
    if (!f.is_object() || f.value("name", "") != family || !f.contains("health") || !f["health"].is_object()) continue;
    const json& h = f["health"];
    if (!h.value("busy", false)) continue;
    std::string w;
    if (h.contains("warnings") && h["warnings"].is_array())
      for (const auto& x : h["warnings"])
        if (x.is_string()) w += (w.empty() ? "" : "; ") + x.get<std::string>();
    if (out.find(w) == std::string::npos) out += (out.empty() ? "" : "; ") + (w.empty() ? std::string("busy") : w);
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
  res.context = check_contexts(obj_at(base, "context"), obj_at(next, "context"));
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

Calibration calibrate(const json& base, const json& next, const Config& cfg, int trials_per_record) {
  Calibration cal;
  cal.done = true;
  const Indexed bi = index_records(base, "BASE"), ni = index_records(next, "NEW");
  Settings s = cfg.settings;
  // Fewer resamples per simulated compare keep the run short; the interval's bounds move little.
  s.resamples = std::min(s.resamples, 500);
  const auto min_n = static_cast<std::size_t>(s.min_samples);
  for (const auto& r : bi.records) {
    if (r.status != Status::ok || cfg.ignored(r)) continue;
    const auto pool = metric_samples(r);
    if (pool.size() < min_n) continue;
    std::size_t n_new = pool.size();
    const auto it = ni.by_key.find(record_key(r));
    if (it != ni.by_key.end()) {
      const auto other = metric_samples(ni.records[it->second]).size();
      if (other >= min_n) n_new = other;
    }
    const double t = cfg.threshold_for(r);
    Rng rng(s.seed ^ fnv1a(record_key(r)) ^ 0xA5A5A5A5ull);
    std::size_t slower = 0;
    std::vector<double> a(pool.size()), b(n_new);
    for (int k = 0; k < trials_per_record; ++k) {
      for (auto& x : a) x = pool[rng.index(pool.size())];
      for (auto& x : b) x = pool[rng.index(pool.size())];
      const Decision d = decide(median_of(a), median_of(b), a, b, r.metric.better(), t, s, rng.next());
      cal.trials++;
      if (d.verdict == Verdict::slower) ++slower;
      if (d.verdict == Verdict::faster) cal.false_faster++;
      if (d.verdict == Verdict::noisy) cal.noisy++;
    }
    cal.false_slower += slower;
    cal.records++;
    const double rate = trials_per_record > 0 ? static_cast<double>(slower) / trials_per_record : 0.0;
    cal.expected_false_regressions += rate;
    cal.worst.emplace_back(r.id, rate);
  }
  std::stable_sort(cal.worst.begin(), cal.worst.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (cal.worst.size() > 5) cal.worst.resize(5);
  while (!cal.worst.empty() && cal.worst.back().second <= 0.0) cal.worst.pop_back();
  return cal;
}

// ------------------------------------------------------------------------------------- rendering

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

std::string outcome(const Result& res) {
  if (!res.context.comparable && !res.machines_allowed) return "INCOMPARABLE machines (exit 2)";
  const auto reg = res.regressions();
  if (reg) return std::to_string(reg) + (reg == 1 ? " REGRESSION" : " REGRESSIONS") + " (exit 1)";
  return "no regression (exit 0)";
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
  j["summary"] = {{"counts", counts}, {"regressions", res.regressions()}, {"exit_code", res.exit_code()}};
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
