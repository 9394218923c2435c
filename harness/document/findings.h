// Self-describing findings: what a family concludes from its records, typed so that one generic
// report and one generic plot script can render any family without knowing it.
//
// A family's findings are a list of sections. A section holds prose, summary lines (label, value,
// unit and a hint saying what kind of number it is), tables whose columns carry the same hints, and
// figure specs (which records or which table, x and y, series, log scales). `data` keeps the
// family's machine-readable numbers for programs (and for the driver's cross-family step). The
// producer (a family binary), `gtb report` and `plots/gtb_plot.py` share this one JSON form, which
// docs/results-format.md and the JSON Schema describe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/document/types.h"
#include "kernels/common/names.h"

namespace gtb::findings {

// What kind of number a value is: the renderer picks its format from it.
//   text       a string, printed as is
//   number     a plain number followed by its unit
//   count      an integer count
//   bytes      a size in bytes, printed as KiB/MiB/GiB
//   duration   a time, in the unit given beside it
//   bandwidth  GB/s (10^9 bytes per second)
//   rate       work per second in the unit given (TFLOP/s, samples/s)
//   ratio      a factor, printed "1.23x"
//   percent    already in percent, printed "45%"
//   fraction   0..1, printed as a percent
GTB_NAMED_ENUM(Hint, kHintNames, text, number, count, bytes, duration, bandwidth, rate, ratio, percent, fraction);
Hint hint_from_string(const std::string& s);  // throws std::runtime_error for an unknown name
// A hint is written by its name.
template <class BasicJson, std::enable_if_t<nlohmann::detail::is_basic_json<BasicJson>::value, int> = 0>
void to_json(BasicJson& j, Hint h) {
  j = to_string(h);
}

// One summary line: "label: value unit (note)". `value` is a number, a string, or null (not measured).
struct Line {
  std::string id;  // stable key for programs
  std::string label;
  json value;
  std::string unit;
  Hint hint = Hint::number;
  std::string note;
};
GTB_JSON_WRITE(Line, id, label, value, unit, hint)  // and note, when there is one

struct Column {
  Column(std::string name_, std::string unit_ = "", Hint hint_ = Hint::text)
      : name(std::move(name_)), unit(std::move(unit_)), hint(hint_) {}
  Column(const char* name_) : Column(std::string(name_)) {}  // NOLINT: {"name"} in a column list
  std::string name;
  std::string unit;  // printed after each number of the column
  Hint hint = Hint::text;
};
GTB_JSON_WRITE(Column, name, unit, hint)

struct Table {
  std::string id;
  std::vector<Column> columns;
  std::vector<std::vector<json>> rows;  // a cell is a number, a string or null ("-")
};

// A reference line drawn across a figure (a threshold, a crossover, a measured ceiling).
struct Mark {
  double value = 0;
  std::string label;
};
GTB_JSON_WRITE(Mark, value, label)

// A figure spec. Its points come from the records of the family (source empty) or from a table of
// the same section (source = the table's id). Field names address a record as the results file
// does: "workload", "variant", "backend", "params.<name>", "options.<name>", "counters.<name>",
// "info.<name>", "value"; in a table they are column names.
struct Figure {
  std::string id;     // the file name (without extension), unique in the results file
  std::string title;
  std::string kind = "line";  // line: one line per series; bar: one bar per point
  std::string source;         // empty: records; else a table id
  // field -> value or array of values a point must have; "field!": must not have. An array of such
  // objects: a point must match one of them (a reference drawn in one panel only).
  json where = json::object();
  std::vector<std::string> x;   // one field, or several: x is then their geometric mean
  std::string y = "value";
  std::vector<std::string> series;  // fields whose values name a line (or a bar's label)
  std::vector<std::string> panels;  // fields whose values split the figure into subplots
  std::string largest;              // bars: keep only points at the largest value of this field per panel
  std::string reduce;               // "max": several points at one x of a series keep the largest y
  std::string err_low, err_high;    // bars from a table: columns holding the y range
  int logx = 0;                     // log base of the x axis (0: linear)
  bool logy = false;
  std::string xlabel, ylabel;
  std::vector<Mark> hlines, vlines;
  bool ceiling_line = false;        // draw the measured ceiling the records are a percent of
};

struct Section {
  std::string id;
  std::string title;
  std::string not_measured;  // when non-empty: nothing could be concluded, and why
  bool projected = false;    // a projection from measured inputs, never a measurement
  std::vector<std::string> text;
  std::vector<Line> lines;
  std::vector<Table> tables;
  std::vector<Figure> figures;

  Section& say(std::string paragraph);
  Line& line(std::string id, std::string label, json value, std::string unit, Hint hint, std::string note = "");
  Table& table(std::string id, std::vector<Column> columns);
  Figure& figure(std::string id, std::string title);
};

struct Family {
  std::string title;  // "Transfers"
  int order = 100;    // where the report places it (lower numbers first)
  std::vector<Section> sections;
  json data = json::object();  // the family's machine-readable numbers, documented with the family

  Section& section(std::string id, std::string title);
};

json to_json(const Family& f);
// Throws std::runtime_error naming the offending key when `j` is not a findings object of this form.
Family family_from_json(const json& j);
// Whether a results file's findings entry is of this typed form (files before schema 3 hold raw data).
bool is_typed(const json& j);

// The value as the report prints it: "2.5 GB/s", "256 MiB", "1.23x", "45%", "-" for null.
std::string format(const json& value, Hint hint, const std::string& unit);

// Helpers producers share.
// The most common reason a family's records of a backend have no number ("skipped: no GPU").
std::string why_none(const std::vector<Record>& records, Backend backend);
bool any_number(const std::vector<Record>& records, Backend backend);
// "" when some record of the backend has a number, otherwise `prefix` + why_none + `suffix`.
std::string none_note(const std::vector<Record>& records, Backend backend, const std::string& prefix,
                      const std::string& suffix = "");
// An optional number as JSON: the number, or null.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
std::string option_text(const Record& r, const std::string& key);  // "" when absent; numbers as JSON text
double param_number(const Record& r, const std::string& key);      // NaN when absent or not a number
std::string params_text(const json& params);                        // "batch=32, width=256"; "-" when empty

// A family's findings filled by passes over its records, each pass its own part, in the order given.
template <class Found>
Found by_passes(const std::vector<Record>& records,
                std::initializer_list<void (*)(const std::vector<Record>&, Found&)> passes) {
  Found found;
  for (const auto pass : passes) pass(records, found);
  return found;
}

}  // namespace gtb::findings
