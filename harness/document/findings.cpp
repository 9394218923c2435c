// Findings: the typed form, its one JSON (de)serialisation and the value formats the report uses.
#include "harness/document/findings.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "harness/document/format.h"

namespace gtb::findings {

namespace {

using format::printf_number;

// Readers get a clear message naming the key, never an exception from deep inside the JSON library.
const json& need(const json& j, const char* key, const char* where) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(std::string(where) + ": \"" + key + "\" is missing");
  return j.at(key);
}
std::string str_of(const json& j, const char* key, const char* where, bool required = false) {
  if (!j.contains(key)) {
    if (required) throw std::runtime_error(std::string(where) + ": \"" + key + "\" is missing");
    return "";
  }
  if (!j.at(key).is_string()) throw std::runtime_error(std::string(where) + ": \"" + key + "\" is not a string");
  return j.at(key).get<std::string>();
}
std::vector<std::string> strs_of(const json& j, const char* key, const char* where) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  const json& a = j.at(key);
  if (!a.is_array()) throw std::runtime_error(std::string(where) + ": \"" + key + "\" is not an array");
  for (const auto& s : a) {
    if (!s.is_string()) throw std::runtime_error(std::string(where) + ": \"" + key + "\" holds a non-string");
    out.push_back(s.get<std::string>());
  }
  return out;
}
const json& array_of(const json& j, const char* key, const char* where) {
  static const json empty = json::array();
  if (!j.contains(key)) return empty;
  if (!j.at(key).is_array()) throw std::runtime_error(std::string(where) + ": \"" + key + "\" is not an array");
  return j.at(key);
}
bool is_cell(const json& v) { return v.is_null() || v.is_string() || v.is_number() || v.is_boolean(); }

std::vector<Mark> marks_of(const json& j, const char* key, const char* where) {
  std::vector<Mark> out;
  for (const auto& m : array_of(j, key, where)) {
    const json& v = need(m, "value", where);
    if (!v.is_number()) throw std::runtime_error(std::string(where) + ": a mark's \"value\" is not a number");
    out.push_back({v.get<double>(), str_of(m, "label", where)});
  }
  return out;
}

json figure_json(const Figure& f) {
  json j = {{"id", f.id}, {"title", f.title}, {"kind", f.kind}};
  if (!f.source.empty()) j["source"] = f.source;
  if (!f.where.empty()) j["where"] = f.where;
  j["x"] = f.x;
  j["y"] = f.y;
  j["series"] = f.series;
  if (!f.panels.empty()) j["panels"] = f.panels;
  if (!f.largest.empty()) j["largest"] = f.largest;
  if (!f.reduce.empty()) j["reduce"] = f.reduce;
  if (!f.err_low.empty()) j["err_low"] = f.err_low, j["err_high"] = f.err_high;
  j["logx"] = f.logx;
  j["logy"] = f.logy;
  if (!f.xlabel.empty()) j["xlabel"] = f.xlabel;
  if (!f.ylabel.empty()) j["ylabel"] = f.ylabel;
  if (!f.hlines.empty()) j["hlines"] = f.hlines;
  if (!f.vlines.empty()) j["vlines"] = f.vlines;
  if (f.ceiling_line) j["ceiling_line"] = true;
  return j;
}

Figure figure_of(const json& j) {
  const char* w = "figure";
  Figure f;
  f.id = str_of(j, "id", w, true);
  f.title = str_of(j, "title", w);
  f.kind = j.contains("kind") ? str_of(j, "kind", w) : "line";
  if (f.kind != "line" && f.kind != "bar") throw std::runtime_error("figure " + f.id + ": unknown kind \"" + f.kind + "\"");
  f.source = str_of(j, "source", w);
  if (j.contains("where")) {
    const json& wh = j.at("where");
    bool ok = wh.is_object() || (wh.is_array() && !wh.empty());
    if (wh.is_array())
      for (const auto& alt : wh) ok = ok && alt.is_object();
    if (!ok) throw std::runtime_error("figure " + f.id + ": \"where\" is not an object or a non-empty array of objects");
    f.where = j.at("where");
  }
  f.x = strs_of(j, "x", w);
  if (f.x.empty()) throw std::runtime_error("figure " + f.id + ": \"x\" is missing or empty");
  f.y = j.contains("y") ? str_of(j, "y", w) : "value";
  f.series = strs_of(j, "series", w);
  f.panels = strs_of(j, "panels", w);
  f.largest = str_of(j, "largest", w);
  f.reduce = str_of(j, "reduce", w);
  f.err_low = str_of(j, "err_low", w);
  f.err_high = str_of(j, "err_high", w);
  if (j.contains("logx")) {
    if (!j.at("logx").is_number_integer()) throw std::runtime_error("figure " + f.id + ": \"logx\" is not an integer");
    f.logx = j.at("logx").get<int>();
  }
  if (j.contains("logy")) {
    if (!j.at("logy").is_boolean()) throw std::runtime_error("figure " + f.id + ": \"logy\" is not a boolean");
    f.logy = j.at("logy").get<bool>();
  }
  f.xlabel = str_of(j, "xlabel", w);
  f.ylabel = str_of(j, "ylabel", w);
  f.hlines = marks_of(j, "hlines", w);
  f.vlines = marks_of(j, "vlines", w);
  f.ceiling_line = j.contains("ceiling_line") && j.at("ceiling_line") == true;
  return f;
}

}  // namespace

Hint hint_from_string(const std::string& s) {
  try {
    return parse_name(kHintNames, s, "hint");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
}

Section& Section::say(std::string paragraph) {
  text.push_back(std::move(paragraph));
  return *this;
}

Line& Section::line(std::string id_, std::string label, json value, std::string unit, Hint hint, std::string note) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) value = nullptr;
  lines.push_back({std::move(id_), std::move(label), std::move(value), std::move(unit), hint, std::move(note)});
  return lines.back();
}

Table& Section::table(std::string id_, std::vector<Column> columns) {
  tables.push_back({std::move(id_), std::move(columns), {}});
  return tables.back();
}

Figure& Section::figure(std::string id_, std::string title_) {
  figures.push_back({});
  figures.back().id = std::move(id_);
  figures.back().title = std::move(title_);
  return figures.back();
}

Section& Family::section(std::string id, std::string title_) {
  sections.push_back({});
  sections.back().id = std::move(id);
  sections.back().title = std::move(title_);
  return sections.back();
}

json to_json(const Family& f) {
  json sections = json::array();
  for (const auto& s : f.sections) {
    json js = {{"id", s.id}, {"title", s.title}};
    if (!s.not_measured.empty()) js["not_measured"] = s.not_measured;
    if (s.projected) js["projected"] = true;
    js["text"] = s.text;
    json lines = json::array();
    for (const auto& l : s.lines) {
      json jl = l;
      if (!l.note.empty()) jl["note"] = l.note;
      lines.push_back(jl);
    }
    js["lines"] = lines;
    json tables = json::array();
    for (const auto& t : s.tables) {
      json cols = t.columns;
      json rows = json::array();
      for (const auto& r : t.rows) {
        json row = json::array();
        for (const auto& cell : r)
          row.push_back(cell.is_number_float() && !std::isfinite(cell.get<double>()) ? json(nullptr) : cell);
        rows.push_back(row);
      }
      tables.push_back({{"id", t.id}, {"columns", cols}, {"rows", rows}});
    }
    js["tables"] = tables;
    json figures = json::array();
    for (const auto& g : s.figures) figures.push_back(figure_json(g));
    js["figures"] = figures;
    sections.push_back(js);
  }
  return {{"title", f.title}, {"order", f.order}, {"sections", sections}, {"data", f.data}};
}

bool is_typed(const json& j) { return j.is_object() && j.contains("sections") && j.at("sections").is_array(); }

Family family_from_json(const json& j) {
  if (!is_typed(j)) throw std::runtime_error("findings: not a typed findings object (no \"sections\" array)");
  Family f;
  f.title = str_of(j, "title", "findings");
  if (j.contains("order")) {
    if (!j.at("order").is_number_integer()) throw std::runtime_error("findings: \"order\" is not an integer");
    f.order = j.at("order").get<int>();
  }
  if (j.contains("data")) f.data = j.at("data");
  for (const auto& js : j.at("sections")) {
    Section s;
    s.id = str_of(js, "id", "section", true);
    const std::string where = "section " + s.id;
    s.title = str_of(js, "title", where.c_str());
    s.not_measured = str_of(js, "not_measured", where.c_str());
    s.projected = js.contains("projected") && js.at("projected") == true;
    s.text = strs_of(js, "text", where.c_str());
    for (const auto& jl : array_of(js, "lines", where.c_str())) {
      Line l;
      l.id = str_of(jl, "id", where.c_str());
      l.label = str_of(jl, "label", where.c_str(), true);
      l.value = need(jl, "value", where.c_str());
      if (!is_cell(l.value)) throw std::runtime_error(where + ": line \"" + l.label + "\" has a value that is not a number or text");
      l.unit = str_of(jl, "unit", where.c_str());
      l.hint = hint_from_string(jl.contains("hint") ? str_of(jl, "hint", where.c_str()) : "number");
      l.note = str_of(jl, "note", where.c_str());
      s.lines.push_back(l);
    }
    for (const auto& jt : array_of(js, "tables", where.c_str())) {
      Table t;
      t.id = str_of(jt, "id", where.c_str());
      for (const auto& jc : array_of(jt, "columns", where.c_str()))
        t.columns.push_back({str_of(jc, "name", where.c_str(), true), str_of(jc, "unit", where.c_str()),
                             hint_from_string(jc.contains("hint") ? str_of(jc, "hint", where.c_str()) : "text")});
      for (const auto& jr : array_of(jt, "rows", where.c_str())) {
        if (!jr.is_array() || jr.size() != t.columns.size())
          throw std::runtime_error(where + ": table " + t.id + " has a row whose length is not its column count");
        std::vector<json> row;
        for (const auto& cell : jr) {
          if (!is_cell(cell)) throw std::runtime_error(where + ": table " + t.id + " has a cell that is not a number or text");
          row.push_back(cell);
        }
        t.rows.push_back(std::move(row));
      }
      s.tables.push_back(std::move(t));
    }
    for (const auto& jg : array_of(js, "figures", where.c_str())) s.figures.push_back(figure_of(jg));
    f.sections.push_back(std::move(s));
  }
  return f;
}

std::string format(const json& v, Hint hint, const std::string& unit) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (!v.is_number()) return v.dump();
  const double x = v.get<double>();
  if (!std::isfinite(x)) return "n/a";
  const std::string u = unit.empty() ? "" : " " + unit;
  switch (hint) {
    case Hint::bytes:
      return format::binary_bytes(x);
    case Hint::ratio:
      return printf_number("%.2f", x) + "x";
    case Hint::percent:
      return printf_number(std::fabs(x) < 10 && x != std::floor(x) ? "%.1f" : "%.0f", x) + "%";
    case Hint::fraction:
      return printf_number("%.0f", 100 * x) + "%";
    case Hint::count:
      return printf_number("%.0f", x) + u;
    default:
      break;
  }
  return format::plain_number(x) + u;
}

std::string why_none(const std::vector<Record>& records, Backend backend) {
  std::map<std::string, int> reasons;
  for (const auto& r : records)
    if (r.backend == backend && r.status != Status::ok)
      reasons[std::string(gtb::to_string(r.status)) + (r.status_detail.empty() ? "" : ": " + r.status_detail)]++;
  if (reasons.empty()) return "no record";
  return std::max_element(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

bool any_number(const std::vector<Record>& records, Backend backend) {
  return std::any_of(records.begin(), records.end(), [&](const Record& r) { return r.backend == backend && usable(r); });
}

std::string none_note(const std::vector<Record>& records, Backend backend, const std::string& prefix,
                      const std::string& suffix) {
  return any_number(records, backend) ? "" : prefix + why_none(records, backend) + suffix;
}

std::string option_text(const Record& r, const std::string& key) {
  if (!r.options.is_object() || !r.options.contains(key)) return "";
  const json& v = r.options.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

double param_number(const Record& r, const std::string& key) {
  if (!r.params.is_object() || !r.params.contains(key) || !r.params.at(key).is_number()) return NAN;
  return r.params.at(key).get<double>();
}

std::string params_text(const json& params) {
  if (!params.is_object() || params.empty()) return "-";
  std::string s;
  for (auto it = params.begin(); it != params.end(); ++it)
    s += (s.empty() ? "" : ", ") + it.key() + "=" +
         (it.value().is_string() ? it.value().get<std::string>() : format(it.value(), Hint::number, ""));
  return s;
}

}  // namespace gtb::findings
