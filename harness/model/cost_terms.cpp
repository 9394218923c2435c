// Cost terms: their JSON form, reading them from a results document, and the lookups the model uses.
#include "harness/model/cost_terms.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"

namespace gtb::cost {

namespace {

const char* const kForms[] = {"latency_bandwidth", "table", "constant"};

using json_read::bad;

std::string str(const json& j, const char* key, const std::string& where, bool required = false) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) bad(where, std::string("missing \"") + key + "\"");
    return "";
  }
  if (!it->is_string()) bad(where, std::string("\"") + key + "\" is not a string");
  return it->get<std::string>();
}

double num(const json& j, const char* key, const std::string& where, bool required, double otherwise = 0) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) bad(where, std::string("missing \"") + key + "\"");
    return otherwise;
  }
  if (!it->is_number()) bad(where, std::string("\"") + key + "\" is not a number");
  const double v = it->get<double>();
  if (!std::isfinite(v)) bad(where, std::string("\"") + key + "\" is not finite");
  return v;
}

std::vector<std::string> strings(const json& j, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) bad(where, std::string("\"") + key + "\" is not a list");
  for (const auto& v : *it) {
    if (!v.is_string()) bad(where, std::string("\"") + key + "\" holds a non-string");
    out.push_back(v.get<std::string>());
  }
  return out;
}

void merge_records(std::vector<std::string>& into, const std::vector<std::string>& from) {
  for (const auto& r : from)
    if (std::find(into.begin(), into.end(), r) == into.end()) into.push_back(r);
}

// A selector value equals a wanted one: strings exactly, numbers numerically.
bool where_matches(const json& where, const std::string& key, const json& want) {
  const auto it = where.find(key);
  if (it == where.end()) return false;
  if (it->is_number() && want.is_number()) return std::fabs(it->get<double>() - want.get<double>()) < 1e-9;
  return *it == want;
}

std::string describe(const std::string& name, Backend b, const std::string& sel) {
  return "no measured " + name + " term on " + to_string(b) + (sel.empty() ? "" : " (" + sel + ")");
}

// The terms of a name and backend, usable first; `reason` gets the first unusable one's cannot_say.
std::vector<const Term*> select(const std::vector<Term>& terms, const std::string& name, Backend b,
                                const std::function<bool(const Term&)>& ok, std::string& reason) {
  std::vector<const Term*> out;
  for (const auto& t : terms) {
    if (t.name != name || t.backend != b || !ok(t)) continue;
    if (t.usable())
      out.push_back(&t);
    else if (reason.empty())
      reason = t.cannot_say;
  }
  return out;
}

Estimate cannot(const std::string& why, const std::vector<std::string>& records = {}) {
  Estimate e;
  e.cannot_say = why;
  e.records = records;
  return e;
}

Estimate from_latency_bandwidth(const Term& t, double x) {
  Estimate e;
  if (t.per_second <= 0) return cannot(t.name + ": the fitted rate is not positive", t.records);
  e.seconds = t.latency_s + x / t.per_second;
  e.records = t.records;
  if ((t.x_min > 0 && x < t.x_min) || (t.x_max > 0 && x > t.x_max)) {
    e.outside_measured = true;
    std::ostringstream os;
    os << t.name << " at " << x << " " << (t.x.empty() ? "units" : t.x) << " is outside the measured " << t.x_min
       << ".." << t.x_max << " (the fitted line, not a measured point)";
    e.note = os.str();
  }
  return e;
}

double axis_value(const json& at, const std::string& axis) {
  const auto it = at.find(axis);
  return it != at.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Term cannot_say_term(const std::string& name, Backend b, const json& where, const std::string& form,
                     const std::string& reason, const std::vector<std::string>& records) {
  Term t;
  t.name = name;
  t.backend = b;
  t.where = where;
  t.form = form;
  t.cannot_say = reason.empty() ? "no record" : reason;
  t.records = records;
  return t;
}

std::string reason_none(const std::vector<Record>& records, Backend b, const std::function<bool(const Record&)>& pick,
                        const std::string& what) {
  std::map<std::string, int> reasons;
  for (const auto& r : records)
    if (r.backend == b && pick(r) && !gtb::usable(r))
      reasons[std::string(to_string(r.status)) + (r.status_detail.empty() ? "" : ": " + r.status_detail)]++;
  if (reasons.empty()) return "no " + what + " record on " + to_string(b);
  return "no usable " + what + " record on " + std::string(to_string(b)) + " (" +
         std::max_element(reasons.begin(), reasons.end(), [](const auto& x, const auto& y) { return x.second < y.second; })
             ->first +
         ")";
}

Term table_term(const std::string& name, Backend b, const json& where, const std::vector<std::string>& axes,
                const std::string& y, const std::vector<Record>& records, const std::function<bool(const Record&)>& pick,
                const std::function<json(const Record&)>& at, const std::function<double(const Record&)>& y_of,
                const std::string& what, bool lower_is_better) {
  Term t;
  t.name = name;
  t.backend = b;
  t.where = where;
  t.form = "table";
  t.axes = axes;
  t.y = y;
  for (const auto& r : records) {
    if (r.backend != b || !pick(r) || !gtb::usable(r) || !r.stats) continue;
    const double v = y_of(r);
    if (!std::isfinite(v) || v <= 0) continue;
    const json a = at(r);
    auto same = std::find_if(t.points.begin(), t.points.end(), [&](const Point& p) { return p.at == a; });
    if (same == t.points.end()) {
      t.points.push_back({a, v, r.id});
    } else if (lower_is_better ? v < same->y : v > same->y) {
      same->y = v;
      same->record = r.id;
    }
  }
  if (t.points.empty()) return cannot_say_term(name, b, where, "table", reason_none(records, b, pick, what));
  for (const auto& p : t.points) merge_records(t.records, {p.record});
  return t;
}

void write_evidence(json& data, const std::vector<Term>& terms, const std::vector<Step>& steps) {
  // A family none of whose terms saw a record (it ran nothing) offers nothing rather than a list of
  // "no record" reasons.
  const bool any = !steps.empty() || std::any_of(terms.begin(), terms.end(), [](const Term& t) {
    return t.usable() || !t.records.empty() || t.cannot_say.rfind("no usable", 0) == 0;
  });
  if (!any) return;
  json jt = json::array(), js = json::array();
  for (const auto& t : terms) jt.push_back(to_json(t));
  for (const auto& s : steps) js.push_back(to_json(s));
  data["cost_terms"] = std::move(jt);
  if (!steps.empty()) data["cost_steps"] = std::move(js);
}

json to_json(const Term& t) {
  json j = {{"name", t.name}, {"backend", to_string(t.backend)}, {"where", t.where}, {"form", t.form}};
  if (!t.cannot_say.empty()) {
    j["cannot_say"] = t.cannot_say;
  } else if (t.form == "latency_bandwidth") {
    j["x"] = t.x;
    j["latency_s"] = t.latency_s;
    j["per_second"] = t.per_second;
    j["x_min"] = t.x_min;
    j["x_max"] = t.x_max;
  } else if (t.form == "table") {
    j["axes"] = t.axes;
    j["y"] = t.y;
    // A table that applies only above a size of something else (matmul_from_memory: a step's working
    // set above the last-level cache): that quantity and the bound.
    if (!t.x.empty()) {
      j["x"] = t.x;
      j["x_min"] = t.x_min;
    }
    json pts = json::array();
    for (const auto& p : t.points) pts.push_back({{"at", p.at}, {"y", p.y}, {"record", p.record}});
    j["points"] = pts;
  } else {
    j["value"] = t.value;
    j["unit"] = t.unit;
  }
  j["records"] = t.records;
  if (!t.note.empty()) j["note"] = t.note;
  return j;
}

json to_json(const Step& s) {
  json j = {{"record", s.record}, {"backend", to_string(s.backend)}, {"seconds", s.seconds}, {"config", s.config}};
  if (s.leave_out != "family") j["leave_out"] = s.leave_out;
  return j;
}

Term term_from_json(const json& j, const std::string& family) {
  if (!j.is_object()) bad("terms (" + family + ")", "a term is not an object");
  Term t;
  t.family = family;
  t.name = str(j, "name", "term", true);
  const std::string where = "term " + t.name + " (" + family + ")";
  try {
    t.backend = backend_from_string(str(j, "backend", where, true));
  } catch (const std::invalid_argument& e) {
    bad(where, std::string("\"backend\": ") + e.what());
  }
  if (j.contains("where")) {
    if (!j.at("where").is_object()) bad(where, "\"where\" is not an object");
    t.where = j.at("where");
  }
  t.form = str(j, "form", where, true);
  if (std::none_of(std::begin(kForms), std::end(kForms), [&](const char* f) { return t.form == f; }))
    bad(where, "\"form\": unknown form \"" + t.form + "\"");
  t.cannot_say = str(j, "cannot_say", where);
  t.note = str(j, "note", where);
  t.records = strings(j, "records", where);
  if (!t.cannot_say.empty()) return t;
  if (t.form == "latency_bandwidth") {
    t.x = str(j, "x", where);
    t.latency_s = num(j, "latency_s", where, true);
    t.per_second = num(j, "per_second", where, true);
    t.x_min = num(j, "x_min", where, false);
    t.x_max = num(j, "x_max", where, false);
    if (t.per_second <= 0) bad(where, "\"per_second\" is not positive");
  } else if (t.form == "table") {
    t.axes = strings(j, "axes", where);
    t.y = str(j, "y", where, true);
    t.x = str(j, "x", where);
    t.x_min = num(j, "x_min", where, false);
    if (std::none_of(std::begin(kTableUnits), std::end(kTableUnits), [&](const char* u) { return t.y == u; }))
      bad(where, "\"y\": unknown unit \"" + t.y + "\"");
    const auto it = j.find("points");
    if (it == j.end() || !it->is_array()) bad(where, "\"points\" is missing or not a list");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& jp = it->at(i);
      const std::string pw = where + " points[" + std::to_string(i) + "]";
      if (!jp.is_object() || !jp.contains("at") || !jp.at("at").is_object()) bad(pw, "\"at\" is missing or not an object");
      Point p;
      p.at = jp.at("at");
      for (const auto& a : t.axes)
        if (!p.at.contains(a) || !p.at.at(a).is_number()) bad(pw, "\"at\" lacks the numeric axis \"" + a + "\"");
      p.y = num(jp, "y", pw, true);
      p.record = str(jp, "record", pw);
      t.points.push_back(std::move(p));
    }
  } else {
    t.value = num(j, "value", where, true);
    t.unit = str(j, "unit", where, true);
    if (std::none_of(std::begin(kConstantUnits), std::end(kConstantUnits), [&](const char* u) { return t.unit == u; }))
      bad(where, "\"unit\": unknown unit \"" + t.unit + "\"");
  }
  return t;
}

Step step_from_json(const json& j, const std::string& family) {
  const std::string where = "steps (" + family + ")";
  if (!j.is_object()) bad(where, "a step is not an object");
  Step s;
  s.family = family;
  s.record = str(j, "record", where, true);
  try {
    s.backend = backend_from_string(str(j, "backend", where + " " + s.record, true));
  } catch (const std::invalid_argument& e) {
    bad(where + " " + s.record, std::string("\"backend\": ") + e.what());
  }
  s.seconds = num(j, "seconds", where + " " + s.record, true);
  if (j.contains("config")) {
    if (!j.at("config").is_object()) bad(where + " " + s.record, "\"config\" is not an object");
    s.config = j.at("config");
  }
  if (j.contains("leave_out")) {
    s.leave_out = str(j, "leave_out", where + " " + s.record, true);
    if (s.leave_out != "family" && s.leave_out != "record") bad(where + " " + s.record, "\"leave_out\" is family or record");
  }
  return s;
}

bool has_terms(const json& doc) {
  for (const auto& [family, entry] : json_read::object_at(doc, {"findings"}).items())
    if (entry.is_object() && entry.contains("terms")) return true;
  return false;
}

namespace {
// Files written before matmul_autocast was its own term hold the BF16 step sites measured with their
// operands' rounding (the step_shapes/plan records) inside the reduced-precision matmul tables: their
// points move to a matmul_autocast term of the same selector, so that no step is priced from them and
// charged the operand casts again.
void split_autocast_points(std::vector<Term>& terms) {
  const std::string plan = "/step_shapes/plan/";  // workload and variant of the record id
  std::vector<Term> moved;
  for (Term& t : terms) {
    if (t.name != term::kMatmul || t.form != "table" || t.where.value("precision", "fp32") == "fp32") continue;
    Term a = t;
    a.name = term::kMatmulAutocast;
    a.points.clear();
    a.records.clear();
    auto from_plan = [&](const std::string& id) { return id.find(plan) != std::string::npos; };
    for (const Point& p : t.points)
      if (from_plan(p.record)) a.points.push_back(p);
    if (a.points.empty()) continue;
    t.points.erase(std::remove_if(t.points.begin(), t.points.end(), [&](const Point& p) { return from_plan(p.record); }),
                   t.points.end());
    for (const std::string& id : t.records)
      if (from_plan(id)) a.records.push_back(id);
    t.records.erase(std::remove_if(t.records.begin(), t.records.end(), from_plan), t.records.end());
    moved.push_back(std::move(a));
  }
  terms.insert(terms.end(), moved.begin(), moved.end());
}

std::vector<Term> terms_of_findings(const json& findings) {
  std::vector<Term> out;
  for (const auto& [family, entry] : findings.items()) {
    if (!entry.is_object() || !entry.contains("terms")) continue;
    if (!entry.at("terms").is_array()) bad("findings." + family + ".terms", "not a list");
    for (const auto& jt : entry.at("terms")) out.push_back(term_from_json(jt, family));
  }
  split_autocast_points(out);
  return out;
}
std::vector<Step> steps_of_findings(const json& findings) {
  std::vector<Step> out;
  for (const auto& [family, entry] : findings.items()) {
    if (!entry.is_object() || !entry.contains("steps")) continue;
    if (!entry.at("steps").is_array()) bad("findings." + family + ".steps", "not a list");
    for (const auto& js : entry.at("steps")) out.push_back(step_from_json(js, family));
  }
  return out;
}

// Each run's own findings of a file of several runs (run_findings); empty for a file of one run. A
// run whose findings this version cannot read counts as absent: the merged figure stands.
std::vector<json> findings_of_runs(const json& doc) {
  std::vector<json> out;
  const json* runs = json_read::find(doc, "run_findings");
  if (!runs || !runs->is_array() || runs->size() < 2) return {};
  for (const json& r : *runs)
    if (r.is_object() && r.contains("findings") && r.at("findings").is_object()) out.push_back(r.at("findings"));
  return out;
}

bool same_term(const Term& a, const Term& b) {
  return a.family == b.family && a.name == b.name && a.backend == b.backend && a.form == b.form && a.where == b.where;
}

// A term's figure in a file of several runs: the median over the runs of each run's own figure
// (run_findings), not the figure of the samples pooled over the runs. Each run measured its records
// in one state of the machine; pooled, a figure derived from several records (matmul_in_step's hot /
// (chain - passes)) can take each record from another state, and a run in a slower state moves every
// pooled median towards it. A figure fewer than two runs hold keeps the merged value.
void median_over_runs(std::vector<Term>& merged, const std::vector<std::vector<Term>>& runs) {
  for (Term& t : merged) {
    if (!t.usable() || (t.form != "table" && t.form != "constant")) continue;
    std::vector<const Term*> same;
    for (const auto& run : runs)
      for (const Term& u : run)
        if (u.usable() && same_term(t, u)) {
          same.push_back(&u);
          break;
        }
    if (same.size() < 2) continue;
    if (t.form == "constant") {
      std::vector<double> v;
      for (const Term* u : same) v.push_back(u->value);
      t.value = median(v);
      continue;
    }
    for (Point& p : t.points) {
      std::vector<double> v;
      for (const Term* u : same)
        for (const Point& q : u->points)
          if (q.at == p.at) {
            v.push_back(q.y);
            break;
          }
      if (v.size() >= 2) p.y = median(v);
    }
  }
}
}  // namespace

std::vector<Term> terms_from_document(const json& doc) {
  std::vector<Term> out = terms_of_findings(json_read::object_at(doc, {"findings"}));
  std::vector<std::vector<Term>> runs;
  for (const json& f : findings_of_runs(doc)) {
    try {
      runs.push_back(terms_of_findings(f));
    } catch (const std::runtime_error&) {
      // A run whose terms this version cannot read: the merged figures stand for it.
    }
  }
  median_over_runs(out, runs);
  return out;
}

namespace {
// A record's median noise (median_noise) read as the results file holds it; infinity where the record
// cannot be read (a file this reader validates elsewhere) or keeps too few samples.
double median_noise_of_json(const json& r) {
  try {
    return median_noise(record_from_json(r));
  } catch (const std::runtime_error&) {
    return std::numeric_limits<double>::infinity();
  }
}
}  // namespace

std::vector<Step> steps_from_document(const json& doc) {
  std::vector<Step> out = steps_of_findings(json_read::object_at(doc, {"findings"}));
  // A step's seconds in a file of several runs: the median of the runs' own, as for the terms (a run
  // in a slower state moves a pooled median towards it; the model's terms come from the runs' medians).
  std::vector<std::vector<Step>> runs;
  for (const json& f : findings_of_runs(doc)) {
    try {
      runs.push_back(steps_of_findings(f));
    } catch (const std::runtime_error&) {
      // A run whose steps this version cannot read: the merged figure stands for it.
    }
  }
  std::map<std::string, std::string> suspect;
  std::map<std::string, double> noise;
  if (const json* recs = json_read::find(doc, "records"); recs && recs->is_array())
    for (const json& r : *recs) {
      if (!r.is_object()) continue;
      if (r.value("suspect", json()).is_string() && !r["suspect"].get<std::string>().empty())
        suspect[r.value("id", std::string())] = r["suspect"].get<std::string>();
      noise[r.value("id", std::string())] = median_noise_of_json(r);
    }
  for (Step& s : out) {
    std::vector<double> v;
    for (const auto& run : runs)
      for (const Step& u : run)
        if (u.record == s.record && u.backend == s.backend && u.seconds > 0) {
          v.push_back(u.seconds);
          break;
        }
    if (v.size() >= 2) s.seconds = median(v);
    if (const auto it = suspect.find(s.record); it != suspect.end()) s.not_scored = it->second;
    if (const auto it = noise.find(s.record); it != noise.end()) s.noise = it->second;
  }
  return out;
}

std::vector<Step> steps_of_run(const json& doc, int run, double max_spread) {
  const json* runs = json_read::find(doc, "run_findings");
  if (!runs || !runs->is_array()) return {};
  std::vector<Step> out;
  for (const json& r : *runs)
    if (r.is_object() && r.value("run", json()) == json(run) && r.contains("findings") && r.at("findings").is_object())
      out = steps_of_findings(r.at("findings"));
  if (out.empty()) return out;
  std::map<std::string, double> spread;  // record -> that run's interquartile range / median
  if (const json* recs = json_read::find(doc, "records"); recs && recs->is_array())
    for (const json& rec : *recs) {
      if (!rec.is_object() || !rec.value("runs", json()).is_array()) continue;
      for (const json& one : rec["runs"]) {
        if (!one.is_object() || one.value("run", json()) != json(run)) continue;
        const double iqr = json_read::number_at(one, {"stats", "iqr"}), med = json_read::number_at(one, {"stats", "median"});
        if (med > 0 && iqr >= 0) spread[rec.value("id", std::string())] = iqr / med;
      }
    }
  for (Step& s : out)
    if (const auto it = spread.find(s.record); it != spread.end() && it->second > max_spread)
      s.not_scored = "in run " + std::to_string(run) + " the samples spread over " + format::sig3(100 * it->second) +
                     "% of their median (interquartile range): the median is not a steady figure";
  return out;
}

Estimate operator+(const Estimate& a, const Estimate& b) {
  Estimate e;
  e.records = a.records;
  merge_records(e.records, b.records);
  e.outside_measured = a.outside_measured || b.outside_measured;
  // A note already said is not said again (a step sums many parts of one kind).
  e.note = a.note.empty() || a.note.find(b.note) != std::string::npos ? (a.note.empty() ? b.note : a.note)
                                                                      : a.note + "; " + b.note;
  if (a.seconds && b.seconds)
    e.seconds = *a.seconds + *b.seconds;
  else
    e.cannot_say = !a.seconds ? a.cannot_say : b.cannot_say;
  return e;
}

Estimate scaled(const Estimate& e, double factor) {
  Estimate out = e;
  if (out.seconds) *out.seconds *= factor;
  return out;
}

std::optional<Interpolated> interpolate(const Term& t, const json& at) {
  if (t.points.empty() || t.axes.empty()) return std::nullopt;
  const std::size_t na = t.axes.size();
  std::vector<double> q(na);
  for (std::size_t a = 0; a < na; ++a) {
    q[a] = axis_value(at, t.axes[a]);
    if (!(q[a] > 0)) return std::nullopt;
  }
  Interpolated out;
  // Outside: beyond the measured range on any axis; the query is then clamped into it.
  std::vector<double> lo(na, std::numeric_limits<double>::infinity()), hi(na, 0);
  for (const auto& p : t.points)
    for (std::size_t a = 0; a < na; ++a) {
      lo[a] = std::min(lo[a], axis_value(p.at, t.axes[a]));
      hi[a] = std::max(hi[a], axis_value(p.at, t.axes[a]));
    }
  for (std::size_t a = 0; a < na; ++a) {
    if (q[a] < lo[a] * (1 - 1e-9) || q[a] > hi[a] * (1 + 1e-9)) out.outside_measured = true;
    q[a] = std::clamp(q[a], lo[a], hi[a]);
  }
  if (na == 1) {
    // Log-log between the two neighbours.
    std::vector<const Point*> pts;
    for (const auto& p : t.points) pts.push_back(&p);
    std::sort(pts.begin(), pts.end(),
              [&](const Point* a, const Point* b) { return axis_value(a->at, t.axes[0]) < axis_value(b->at, t.axes[0]); });
    const Point* below = pts.front();
    const Point* above = pts.back();
    for (const Point* p : pts) {
      const double x = axis_value(p->at, t.axes[0]);
      if (x <= q[0]) below = p;
      if (x >= q[0]) {
        above = p;
        break;
      }
    }
    const double x0 = axis_value(below->at, t.axes[0]), x1 = axis_value(above->at, t.axes[0]);
    if (x1 <= x0 || below->y <= 0 || above->y <= 0) {
      out.y = below->y;
      out.records = {below->record};
    } else {
      const double f = std::log(q[0] / x0) / std::log(x1 / x0);
      out.y = std::exp(std::log(below->y) + f * (std::log(above->y) - std::log(below->y)));
      out.records = {below->record};
      if (above != below) merge_records(out.records, {above->record});
    }
    return out;
  }
  // Several axes with scattered points: inverse-distance weighting in log space over the nearest few;
  // an exact hit is that point.
  std::vector<std::pair<double, const Point*>> d;
  for (const auto& p : t.points) {
    double s = 0;
    for (std::size_t a = 0; a < na; ++a) {
      const double l = std::log(axis_value(p.at, t.axes[a]) / q[a]);
      s += l * l;
    }
    d.emplace_back(std::sqrt(s), &p);
  }
  std::sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (d.front().first < 1e-9 || d.front().second->y <= 0) {
    out.y = d.front().second->y;
    out.records = {d.front().second->record};
    return out;
  }
  const std::size_t k = std::min<std::size_t>(d.size(), na + 1);
  double wsum = 0, lsum = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (d[i].second->y <= 0) continue;
    const double w = 1.0 / (d[i].first * d[i].first);
    wsum += w;
    lsum += w * std::log(d[i].second->y);
    merge_records(out.records, {d[i].second->record});
  }
  out.y = std::exp(lsum / wsum);
  return out;
}

Estimate copy_seconds(const std::vector<Term>& terms, const std::string& name, Backend b, const std::string& memory,
                      double bytes) {
  std::string reason;
  const auto found = select(
      terms, name, b, [&](const Term& t) { return memory.empty() || where_matches(t.where, "memory", memory); }, reason);
  for (const Term* t : found)
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
  return cannot(reason.empty() ? describe(name, b, memory.empty() ? "" : "memory=" + memory) : reason);
}

namespace {
// A term's orientation: files written before orientations were measured hold A B ("nn") tables.
bool orientation_is(const Term& t, const std::string& orientation) {
  const auto it = t.where.find("orientation");
  if (it == t.where.end()) return orientation == "nn";
  return it->is_string() && it->get<std::string>() == orientation;
}

// The rate of the first usable table of `name` for this precision and orientation; nullopt (with
// the publisher's reason) when none.
std::optional<Estimate> table_matmul(const std::vector<Term>& terms, const std::string& name, Backend b,
                                     const std::string& precision, const std::string& orientation, double m, double n,
                                     double k, double count, std::string& reason) {
  const auto found = select(
      terms, name, b,
      [&](const Term& t) { return where_matches(t.where, "precision", precision) && orientation_is(t, orientation); },
      reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    const auto ip = interpolate(*t, json{{"m", m}, {"n", n}, {"k", k}});
    if (!ip || ip->y <= 0) continue;
    Estimate e;
    e.seconds = 2.0 * m * n * k * count / ip->y;
    e.records = ip->records;
    e.outside_measured = ip->outside_measured;
    if (e.outside_measured) {
      std::ostringstream os;
      os << name << " " << m << "x" << n << "x" << k << " " << orientation << " " << precision
         << " is outside the measured shapes: the nearest measured rate is used";
      e.note = os.str();
    }
    return e;
  }
  return std::nullopt;
}
}  // namespace

namespace {
Estimate matmul_at_precision(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                             double n, double k, const std::string& orientation);

// The measured point of `precision`'s nn table nearest (in log m, n, k) to the query, with the FP32 nn
// rate at that very shape where FP32 was measured there: their ratio is the reduced-precision speedup
// at the nearest shape both were measured at.
struct SpeedupRatio {
  double ratio = 0;
  json at;
  std::vector<std::string> records;
};
std::optional<SpeedupRatio> nearest_speedup(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                            double m, double n, double k, const std::string& name = term::kMatmul) {
  std::string unused;
  const Point* best = nullptr;
  double dist = std::numeric_limits<double>::infinity();
  for (const Term* t : select(
           terms, name, b,
           [&](const Term& x) { return where_matches(x.where, "precision", precision) && orientation_is(x, "nn"); },
           unused)) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    for (const auto& p : t->points) {
      const double d = std::fabs(std::log(axis_value(p.at, "m") / m)) + std::fabs(std::log(axis_value(p.at, "n") / n)) +
                       std::fabs(std::log(axis_value(p.at, "k") / k));
      if (p.y > 0 && d < dist) dist = d, best = &p;
    }
  }
  if (!best) return std::nullopt;
  for (const Term* t : select(
           terms, term::kMatmul, b,
           [&](const Term& x) { return where_matches(x.where, "precision", "fp32") && orientation_is(x, "nn"); },
           unused)) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    const auto ip = interpolate(*t, best->at);
    if (!ip || ip->outside_measured || ip->y <= 0) continue;
    SpeedupRatio r;
    r.ratio = best->y / ip->y;
    r.at = best->at;
    r.records = ip->records;
    merge_records(r.records, {best->record});
    return r;
  }
  return std::nullopt;
}
}  // namespace

// FP32 from its tables. A reduced precision (tf32, bf16, fp16) from its own tables where they cover the
// shape; elsewhere the FP32 seconds of this shape and orientation divided by the speedup measured at
// the nearest shape both precisions were measured at (the reduced-precision records are library
// shapes, square and large, while FP32 has the step's own sites). Either way no slower than FP32 at
// that shape: a step runs its products as FP32 on rounded operands where that is the faster path (the
// CPU steps do where the CPU has no native BF16).
Estimate matmul_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m, double n,
                        double k, const std::string& orientation) {
  if (precision == "fp32") return matmul_at_precision(terms, b, precision, m, n, k, orientation);
  Estimate own = matmul_at_precision(terms, b, precision, m, n, k, orientation);
  if (!own.seconds) return own;  // no record of this precision: cannot say, never FP32 in its place
  const Estimate fp = matmul_at_precision(terms, b, "fp32", m, n, k, orientation);
  if (!fp.seconds) return own;
  Estimate e = own;
  if (own.outside_measured) {
    if (const auto r = nearest_speedup(terms, b, precision, m, n, k)) {
      e = fp;
      e.seconds = *fp.seconds / r->ratio;
      merge_records(e.records, r->records);
      e.outside_measured = true;
      std::ostringstream os;
      os.precision(3);
      os << precision << " " << m << "x" << n << "x" << k << " " << orientation << " outside its measured shapes: the fp32 "
         << "rate of this shape x the " << precision << "/fp32 speedup " << r->ratio << " measured at "
         << axis_value(r->at, "m") << "x" << axis_value(r->at, "n") << "x" << axis_value(r->at, "k");
      e.note = os.str();
    }
  }
  if (*fp.seconds < *e.seconds) {
    Estimate faster = fp;
    merge_records(faster.records, e.records);
    faster.outside_measured = fp.outside_measured;
    faster.note = (fp.note.empty() ? "" : fp.note + "; ") + precision +
                  " products run as fp32 on rounded operands: the faster path at this shape";
    return faster;
  }
  return e;
}

namespace {
Estimate matmul_at_precision(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                             double n, double k, const std::string& orientation) {
  std::string reason;
  if (orientation != "nn") {
    if (auto e = table_matmul(terms, term::kMatmul, b, precision, orientation, m, n, k, 1, reason)) return *e;
    reason.clear();
  }
  if (auto e = table_matmul(terms, term::kMatmul, b, precision, "nn", m, n, k, 1, reason)) {
    if (orientation != "nn") {
      // No transposed records (a GPU run, an older file): the A B rate stands in, and says so.
      e->note = (e->note.empty() ? "" : e->note + "; ") + std::string("no ") + orientation +
                " matmul records: priced at the A B rate";
    }
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kMatmul, b, "precision=" + precision) : reason);
}
}  // namespace

Estimate matmul_autocast_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                                 double n, double k, const std::string& orientation) {
  std::string reason;
  for (const std::string& o : {orientation, std::string("nn")}) {
    auto e = table_matmul(terms, term::kMatmulAutocast, b, precision, o, m, n, k, 1, reason);
    if (!e) continue;
    // Outside its shapes (the small and skinny sites): the FP32 seconds of this shape over the
    // speedup measured at the nearest autocast point, as matmul_seconds does for the library shapes.
    const Estimate fp = matmul_at_precision(terms, b, "fp32", m, n, k, orientation);
    const auto r = e->outside_measured && fp.seconds ? nearest_speedup(terms, b, precision, m, n, k, term::kMatmulAutocast)
                                                     : std::nullopt;
    if (r) {
      std::ostringstream os;
      os.precision(3);
      os << "the fp32 rate of this shape x the " << precision << " autocast/fp32 speedup " << r->ratio
         << " measured at the nearest autocast shape";
      *e = scaled(fp, 1.0 / r->ratio);
      merge_records(e->records, r->records);
      e->outside_measured = true;
      e->note = os.str();
    }
    if (o != orientation) e->note = (e->note.empty() ? "" : e->note + "; ") + "no " + orientation +
                                    " matmul_autocast records: priced at the A B rate";
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kMatmulAutocast, b, "precision=" + precision) : reason);
}

Estimate matmul_batched_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                                double n, double k, const std::string& orientation, double count) {
  std::string reason;
  if (auto e = table_matmul(terms, term::kMatmulBatched, b, precision, orientation, m, n, k, count, reason)) return *e;
  // A reduced precision without batched records of its own: the FP32 batched rate, times the ratio of
  // the two precisions' single-product prices at this shape (see matmul_seconds).
  if (precision != "fp32") {
    std::string unused;
    const auto fpb = table_matmul(terms, term::kMatmulBatched, b, "fp32", orientation, m, n, k, count, unused);
    const Estimate own = matmul_seconds(terms, b, precision, m, n, k, orientation);
    const Estimate fp = matmul_seconds(terms, b, "fp32", m, n, k, orientation);
    if (fpb && own.seconds && fp.seconds && *fp.seconds > 0) {
      Estimate e = scaled(*fpb, *own.seconds / *fp.seconds);
      merge_records(e.records, own.records);
      e.outside_measured = fpb->outside_measured || own.outside_measured;
      e.note = "the fp32 batched rate x the " + precision + "/fp32 price ratio of one product of this shape";
      return e;
    }
    if (!own.seconds) return own;
  }
  // No batched records: each product at the single-GEMM rate of its shape.
  Estimate e = scaled(matmul_seconds(terms, b, precision, m, n, k, orientation), count);
  if (e.seconds) e.note = (e.note.empty() ? "" : e.note + "; ") + std::string("no batched matmul records: each product priced alone");
  return e;
}

namespace {
// A fraction table's value at `at` (the share in the estimate's number, the table's records), or none.
std::optional<Estimate> fraction_at(const Term& t, const json& at) {
  const auto ip = interpolate(t, at);
  if (!ip || !(ip->y > 0)) return std::nullopt;
  Estimate e;
  e.seconds = ip->y;  // a fraction, carried in the estimate's number
  e.records = t.records;
  e.outside_measured = ip->outside_measured;
  return e;
}
}  // namespace

namespace {
// The first of a precision's fraction tables `name` of backend `b` that gives a value where `at_of`
// places the query (nullopt: the table does not apply), or why none does.
Estimate first_fraction(const std::vector<Term>& terms, const std::string& name, Backend b, const std::string& precision,
                        const std::function<std::optional<json>(const Term&)>& at_of) {
  std::string reason;
  const auto found = select(
      terms, name, b, [&](const Term& t) { return where_matches(t.where, "precision", precision); }, reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "fraction") continue;
    if (const auto at = at_of(*t))
      if (auto e = fraction_at(*t, *at)) return *e;
  }
  return cannot(reason.empty() ? describe(name, b, "precision=" + precision) : reason);
}
}  // namespace

Estimate matmul_in_step_fraction(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                 double working_set_bytes, double gemm_flop) {
  return first_fraction(terms, term::kMatmulInStep, b, precision, [&](const Term& t) -> std::optional<json> {
    // Over one GEMM's FLOPs (this gtb's sequence records), or over the step's working set (older files).
    const std::string axis = t.axes.empty() ? "bytes" : t.axes[0];
    const double at = axis == "flop" ? gemm_flop : working_set_bytes;
    if (!(at > 0)) return std::nullopt;
    return json{{axis, at}};
  });
}

Estimate matmul_from_memory_fraction(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                     double working_set_bytes, double gemm_flop) {
  return first_fraction(terms, term::kMatmulFromMemory, b, precision, [&](const Term& t) -> std::optional<json> {
    // Over one GEMM's FLOPs, for a step whose working set is above the cache the term was measured past.
    if (t.axes != std::vector<std::string>{"flop"} || !(t.x_min > 0 && working_set_bytes > t.x_min && gemm_flop > 0))
      return std::nullopt;
    return json{{"flop", gemm_flop}};
  });
}

Estimate pass_in_step_fraction(const std::vector<Term>& terms, Backend b, const std::string& name,
                               const std::string& precision, const std::string& threads, double bytes, double rows) {
  std::string reason;
  const auto found = select(
      terms, name, b,
      [&](const Term& t) {
        return where_matches(t.where, "precision", precision) && t.where.value("threads", "all") == threads;
      },
      reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "fraction" || !(bytes > 0)) continue;
    if (t->axes == std::vector<std::string>{"bytes"}) {
      if (auto e = fraction_at(*t, json{{"bytes", bytes}})) return *e;
    } else if (t->axes == std::vector<std::string>{"bytes", "rows"} && rows > 0) {
      if (auto e = fraction_at(*t, json{{"bytes", bytes}, {"rows", rows}})) return *e;
    }
  }
  return cannot(reason.empty() ? describe(name, b, "precision=" + precision + " threads=" + threads) : reason);
}

namespace {
Estimate constant_seconds(const std::vector<Term>& terms, const std::string& name, Backend b,
                          const std::function<bool(const Term&)>& ok, const std::string& sel) {
  std::string reason;
  for (const Term* t : select(terms, name, b, ok, reason))
    if (t->form == "constant" && std::isfinite(t->value)) {
      Estimate e;
      e.seconds = t->value;
      e.records = t->records;
      e.note = t->note;
      return e;
    }
  return cannot(reason.empty() ? describe(name, b, sel) : reason);
}
}  // namespace

Estimate constant_value(const std::vector<Term>& terms, const std::string& name, Backend b) {
  return constant_seconds(terms, name, b, [](const Term&) { return true; }, "");
}

Estimate launch_seconds(const std::vector<Term>& terms, const std::string& mode) {
  return constant_seconds(terms, term::kLaunch, Backend::cuda,
                          [&](const Term& t) { return where_matches(t.where, "mode", mode); }, "mode=" + mode);
}

Estimate host_sync_seconds(const std::vector<Term>& terms, Backend b) {
  return constant_seconds(terms, term::kHostSync, b, [](const Term&) { return true; }, "");
}

Estimate overlap_fraction(const std::vector<Term>& terms, Backend b) {
  return constant_seconds(terms, term::kCommOverlap, b, [](const Term&) { return true; }, "");
}

Estimate allreduce_seconds(const std::vector<Term>& terms, Backend b, int ranks, double bytes) {
  if (ranks <= 1) {
    Estimate e;
    e.seconds = 0.0;
    return e;
  }
  std::string reason;
  const auto found = select(
      terms, term::kAllreduce, b, [&](const Term& t) { return where_matches(t.where, "ranks", ranks); }, reason);
  for (const Term* t : found)
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
  return cannot(reason.empty() ? describe(term::kAllreduce, b, "ranks=" + std::to_string(ranks)) : reason);
}

namespace {
// `amount` (bytes, logits) at the rate a table term in unit `y` gives at it (along `axis` where the
// term names no axis), or none when the term is no such table or has no positive rate there.
std::optional<Estimate> seconds_at_rate(const Term& t, const std::string& y, const std::string& axis, double amount) {
  if (t.form != "table" || t.y != y) return std::nullopt;
  const auto ip = interpolate(t, json{{t.axes.empty() ? axis : t.axes[0], amount}});
  if (!ip || ip->y <= 0) return std::nullopt;
  Estimate e;
  e.seconds = amount / ip->y;
  e.records = ip->records;
  e.outside_measured = ip->outside_measured;
  return e;
}
}  // namespace

Estimate stream_seconds(const std::vector<Term>& terms, Backend b, double bytes, const std::string& op) {
  std::string reason;
  // A plain pass uses the terms without an op; a GELU pass those measured computing one.
  auto ok = [&](const Term& t) { return op.empty() ? !t.where.contains("op") : where_matches(t.where, "op", op); };
  // Several publishers may measure streaming over different sizes (large arrays only, or cache-sized
  // ones too): the table whose sizes cover the pass, else the one whose sizes come nearest (in log).
  std::vector<const Term*> found = select(terms, term::kStreamBandwidth, b, ok, reason);
  auto distance = [&](const Term* t) {
    if (t->form != "table" || t->points.empty()) return t->form == "latency_bandwidth" ? 0.0 : 1e300;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& p : t->points) {
      const double x = axis_value(p.at, t->axes.empty() ? "bytes" : t->axes[0]);
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (!(bytes > 0) || !(lo > 0)) return 1e300;
    return bytes < lo ? std::log(lo / bytes) : bytes > hi ? std::log(bytes / hi) : 0.0;
  };
  std::stable_sort(found.begin(), found.end(), [&](const Term* x, const Term* y) { return distance(x) < distance(y); });
  for (const Term* t : found) {
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
    auto e = seconds_at_rate(*t, "bytes_per_s", "bytes", bytes);
    if (!e) continue;
    if (e->outside_measured) e->note = "streaming work outside the measured sizes: the nearest measured rate is used";
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kStreamBandwidth, b, op.empty() ? "" : "op=" + op) : reason);
}

Estimate softmax_xent_seconds(const std::vector<Term>& terms, Backend b, const std::string& threads, double logits) {
  std::string reason;
  const auto found =
      select(terms, term::kSoftmaxXent, b, [&](const Term& t) { return where_matches(t.where, "threads", threads); }, reason);
  for (const Term* t : found)
    if (auto e = seconds_at_rate(*t, "logits_per_s", "logits", logits)) return *e;
  return cannot(reason.empty() ? describe(term::kSoftmaxXent, b, "threads=" + threads) : reason);
}

Estimate loader_seconds(const std::vector<Term>& terms, Backend b, int workers, double sample_us, double batch) {
  std::string reason;
  const auto found = select(terms, term::kLoader, b, [](const Term& t) { return t.form == "table"; }, reason);
  // The loader measured at the per-sample cost nearest (in log) to the one asked for.
  const Term* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const Term* t : found) {
    const double us = json_read::number_at(t->where, {"sample_us"});
    const double d = std::isfinite(us) && us > 0 && sample_us > 0 ? std::fabs(std::log(us / sample_us)) : 1e9;
    if (d < best_d) best_d = d, best = t;
  }
  if (!best) return cannot(reason.empty() ? describe(term::kLoader, b, "") : reason);
  const auto ip = interpolate(*best, json{{best->axes.empty() ? "workers" : best->axes[0], workers}});
  if (!ip || ip->y <= 0) return cannot("the loader term has no positive rate", best->records);
  Estimate e;
  const double measured_us = json_read::number_at(best->where, {"sample_us"});
  double rate = ip->y;
  // Scaled to the asked per-sample cost: the loader's rate is bound by preprocessing work per worker.
  if (std::isfinite(measured_us) && measured_us > 0 && sample_us > 0 && best_d > 1e-9) {
    rate *= measured_us / sample_us;
    e.note = "loader measured at " + std::to_string(static_cast<long>(measured_us)) +
             " us per sample, scaled to the asked cost";
    e.outside_measured = true;
  }
  e.seconds = batch / rate;
  e.records = ip->records;
  e.outside_measured = e.outside_measured || ip->outside_measured;
  return e;
}

}  // namespace gtb::cost
