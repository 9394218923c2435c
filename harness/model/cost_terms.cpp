// Cost terms: their JSON form, the producers' helpers and reading them from a results document (the
// lookups the model prices with are in lookup.cpp).
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
  for (const auto& p : t.points)
    if (std::find(t.records.begin(), t.records.end(), p.record) == t.records.end()) t.records.push_back(p.record);
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

// What read(item, family) makes of each item of every family's `key` list in a findings object: a
// family without the list has none; a `key` that is not a list is an error that names it.
template <class T, class Read>
std::vector<T> family_lists(const json& findings, const std::string& key, Read read) {
  std::vector<T> out;
  for (const auto& [family, entry] : findings.items()) {
    if (!entry.is_object() || !entry.contains(key)) continue;
    if (!entry.at(key).is_array()) bad("findings." + family + "." + key, "not a list");
    for (const auto& j : entry.at(key)) out.push_back(read(j, family));
  }
  return out;
}

std::vector<Term> terms_of_findings(const json& findings) {
  std::vector<Term> out = family_lists<Term>(
      findings, "terms", [](const json& j, const std::string& family) { return term_from_json(j, family); });
  split_autocast_points(out);
  return out;
}
std::vector<Step> steps_of_findings(const json& findings) {
  return family_lists<Step>(findings, "steps",
                            [](const json& j, const std::string& family) { return step_from_json(j, family); });
}

// What read(findings) makes of each run's own findings in a file of several runs (run_findings);
// empty for a file of one run. A run whose findings this version cannot read (read throws) counts as
// absent: the merged figure stands for it.
template <class Read>
auto read_runs(const json& doc, Read read) {
  std::vector<decltype(read(json()))> out;
  const json* runs = json_read::find(doc, "run_findings");
  if (!runs || !runs->is_array() || runs->size() < 2) return out;
  for (const json& r : *runs) {
    if (!r.is_object() || !r.contains("findings") || !r.at("findings").is_object()) continue;
    try {
      out.push_back(read(r.at("findings")));
    } catch (const std::runtime_error&) {
    }
  }
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
  median_over_runs(out, read_runs(doc, [](const json& f) { return terms_of_findings(f); }));
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
  const std::vector<std::vector<Step>> runs = read_runs(doc, [](const json& f) { return steps_of_findings(f); });
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

}  // namespace gtb::cost
