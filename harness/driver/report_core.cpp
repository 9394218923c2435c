// gtb report's engine: the findings of a results file as Markdown, each with its numbers.
#include "harness/driver/report_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "harness/driver/compare_core.h"
#include "harness/driver/health.h"
#include "harness/driver/summary.h"
#include "harness/results.h"

namespace gtb::report {

namespace {

using driver::fmt;

std::string num(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a < 1e15 && std::floor(v) == v) return fmt("%.0f", v);  // counts, sizes, batch: exact
  if (a != 0 && (a >= 1e6 || a < 1e-3)) return fmt("%.3g", v);
  if (a >= 100) return fmt("%.0f", v);
  if (a >= 10) return fmt("%.1f", v);
  return fmt("%.3g", v);
}

std::string times(double v) { return fmt("%.2f", v) + "x"; }

// Safe lookups: results files from other versions or hand-written ones may lack any key.
const json* at(const json& j, const std::string& k) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(k);
  return it == j.end() ? nullptr : &*it;
}
const json* path(const json& j, std::initializer_list<const char*> keys) {
  const json* cur = &j;
  for (const char* k : keys) {
    cur = at(*cur, k);
    if (!cur) return nullptr;
  }
  return cur;
}
json val(const json& j, const char* k) {
  const json* v = at(j, k);
  return v ? *v : json();
}
std::string str(const json* j) { return j && j->is_string() ? j->get<std::string>() : ""; }
bool has_num(const json* j) { return j && j->is_number(); }
double dbl(const json* j, double dflt = NAN) { return has_num(j) ? j->get<double>() : dflt; }

std::string scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return num(v.get<double>());
  if (v.is_null()) return "none";
  return v.dump();
}

// "batch=32, width=256" from a params/options object.
std::string kv(const json& o) {
  if (o.is_null()) return "-";
  if (!o.is_object()) return scalar(o);
  std::string s;
  for (auto it = o.begin(); it != o.end(); ++it) s += (s.empty() ? "" : ", ") + it.key() + "=" + scalar(it.value());
  return s.empty() ? "-" : s;
}

// A findings key such as `cpu/cpu_consumer/{"depth":8}/{"preprocess":"sleep"}` with its JSON
// objects written as "depth=8" text: families build keys from params, readers want words.
std::string readable_key(const std::string& key) {
  std::string out;
  std::size_t i = 0;
  while (i < key.size()) {
    if (key[i] == '{') {
      // The object ends at the brace that closes it; braces inside strings do not count.
      int depth = 0;
      bool in_str = false;
      std::size_t j = i;
      for (; j < key.size(); ++j) {
        const char c = key[j];
        if (in_str) {
          if (c == '\\') ++j;
          else if (c == '"') in_str = false;
        } else if (c == '"') {
          in_str = true;
        } else if (c == '{') {
          ++depth;
        } else if (c == '}' && --depth == 0) {
          break;
        }
      }
      if (j < key.size()) {
        const json o = json::parse(key.substr(i, j - i + 1), nullptr, false);
        if (o.is_object()) {
          out += o.empty() ? "-" : kv(o);
          i = j + 1;
          continue;
        }
      }
    }
    out += key[i++];
  }
  return out;
}

std::string opt(const Record& r, const char* k) {
  const json* v = at(r.options, k);
  if (!v) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

double param_num(const Record& r, const char* k) { return dbl(at(r.params, k)); }


std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

struct Md {
  std::ostringstream o;
  void h2(const std::string& t) { o << "\n## " << t << "\n\n"; }
  void h3(const std::string& t) { o << "\n### " << t << "\n\n"; }
  void p(const std::string& t) { o << t << "\n\n"; }
  void li(const std::string& t) { o << "- " << t << "\n"; }
  void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    o << "|";
    for (const auto& h : head) o << " " << h << " |";
    o << "\n|";
    for (std::size_t i = 0; i < head.size(); ++i) o << (i ? " ---: |" : " --- |");
    o << "\n";
    for (const auto& r : rows) {
      o << "|";
      for (const auto& c : r) o << " " << esc(c) << " |";
      o << "\n";
    }
    o << "\n";
  }
};

struct Doc {
  const json& j;
  std::vector<Record> records;
  std::set<std::string> families;  // families with at least one record or a families[] entry
  const json& findings(const std::string& family) const {
    static const json empty = json::object();
    const json* f = path(j, {"findings"});
    const json* ff = f ? at(*f, family) : nullptr;
    return ff && ff->is_object() ? *ff : empty;
  }
  std::vector<const Record*> of(const std::string& family) const {
    std::vector<const Record*> v;
    for (const auto& r : records)
      if (r.family == family) v.push_back(&r);
    return v;
  }
};

const char* kAbsent = "not in this file (the family was not run)";

bool absent(Md& md, const Doc& d, const std::string& family) {
  if (d.families.count(family)) return false;
  md.p("*The `" + family + "` family is " + kAbsent + ".*");
  return true;
}

// Says why a family has no ok record of a backend, from the records' status details.
std::string why_none(const Doc& d, const std::string& family, Backend be) {
  std::map<std::string, int> reasons;
  for (const auto& r : d.records)
    if (r.family == family && r.backend == be && r.status != Status::ok)
      reasons[std::string(to_string(r.status)) + (r.status_detail.empty() ? "" : ": " + r.status_detail)]++;
  if (reasons.empty()) return "no record";
  const auto top = std::max_element(reasons.begin(), reasons.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  return top->first;
}

bool any_ok(const Doc& d, const std::string& family, Backend be) {
  for (const auto& r : d.records)
    if (r.family == family && r.backend == be && usable(r)) return true;
  return false;
}

// ------------------------------------------------------------------------------------ sections

void machine_section(Md& md, const Doc& d, const std::string& source) {
  const json& ctx = *path(d.j, {"context"});
  md.o << "# gtb report: " << compare::machine_name(ctx) << "\n\n";
  const json* synth = at(d.j, "synthetic");
  if (synth && synth->is_boolean() && synth->get<bool>())
    md.p("> **Synthetic data.** This file is a test fixture marked synthetic: its numbers were invented to "
         "exercise the tools and describe no machine.");
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"file", "`" + source + "`"});
  rows.push_back({"generated", str(at(d.j, "generated_at"))});
  rows.push_back({"suite", str(at(d.j, "suite"))});
  const json* gpu = path(ctx, {"gpu"});
  const json* avail = gpu ? at(*gpu, "available") : nullptr;
  if (avail && avail->is_boolean() && avail->get<bool>()) {
    const json* devs = at(*gpu, "devices");
    if (devs && devs->is_array())
      for (const auto& dv : *devs) {
        std::string s = str(at(dv, "name"));
        if (has_num(at(dv, "sm_count"))) s += ", " + num(dbl(at(dv, "sm_count"))) + " SMs";
        if (has_num(at(dv, "memory_bytes"))) s += ", " + fmt("%.0f", dbl(at(dv, "memory_bytes")) / (1 << 30)) + " GiB";
        if (const json* pcie = at(dv, "pcie"))
          if (has_num(at(*pcie, "gen"))) s += ", PCIe gen " + num(dbl(at(*pcie, "gen"))) + " x" + num(dbl(at(*pcie, "width")));
        rows.push_back({"GPU", s});
      }
    rows.push_back({"driver / runtime", str(at(*gpu, "driver_version")) + " / " + str(at(*gpu, "runtime_version"))});
  } else {
    rows.push_back({"GPU", "no GPU" + (gpu && at(*gpu, "reason") ? " (" + str(at(*gpu, "reason")) + ")" : "")});
  }
  const json* host = path(ctx, {"host"});
  if (host) {
    std::string cpu = str(at(*host, "cpu_model"));
    if (has_num(at(*host, "logical_cpus"))) cpu += ", " + num(dbl(at(*host, "logical_cpus"))) + " logical CPUs";
    if (has_num(at(*host, "omp_threads"))) cpu += ", " + num(dbl(at(*host, "omp_threads"))) + " OpenMP threads";
    rows.push_back({"CPU", cpu});
    rows.push_back({"host", str(at(*host, "hostname"))});
  }
  if (const json* b = path(ctx, {"build"})) {
    std::string s = str(at(*b, "build_type")) + ", " + str(at(*b, "compiler"));
    if (!str(at(*b, "cuda")).empty()) s += ", CUDA " + str(at(*b, "cuda"));
    if (!str(at(*b, "git_commit")).empty()) s += ", commit " + str(at(*b, "git_commit")).substr(0, 12);
    rows.push_back({"build", s});
  }
  md.table({"", ""}, rows);
}

void health_section(Md& md, const Doc& d) {
  const auto warn = health::warnings(d.j);
  const json* start = path(d.j, {"context", "health", "start"});
  if (warn.empty() && !start) return;  // a file from before health readings
  md.h2("Measurement health");
  if (!warn.empty()) {
    md.p("> **Measured on a busy machine: the numbers of these families may be low.** Rerun on an idle "
         "machine (or with `gtb run --wait-idle`) before drawing conclusions from them.");
    for (const auto& w : warn) md.li(w);
    md.o << "\n";
  } else {
    md.p("No family saw other load, CPU steal or throttling above the limits.");
  }
  if (const json* t = path(d.j, {"context", "health", "thresholds"}); t && t->is_object())
    md.p("Limits: other processes at most " + fmt("%.0f%%", 100 * dbl(at(*t, "other_cpu_fraction"), 0)) +
         " of the CPUs, steal at most " + fmt("%.0f%%", 100 * dbl(at(*t, "steal_fraction"), 0)) +
         " of the CPU time, no thermal or hardware clock slowdown (see docs/harness.md).");
  if (start && start->is_object()) {
    std::string s = "At the start: load average " + (has_num(at(*start, "loadavg_1min")) ? num(dbl(at(*start, "loadavg_1min"))) : "unknown") +
                    ", CPU governor " + (str(at(*start, "cpu_governor")).empty() ? "unknown" : str(at(*start, "cpu_governor")));
    if (const json* mhz = at(*start, "cpu_mhz"); mhz && has_num(at(*mhz, "min")))
      s += ", core clocks " + num(dbl(at(*mhz, "min"))) + "-" + num(dbl(at(*mhz, "max"))) + " MHz";
    md.p(s + ".");
    if (const json* un = at(*start, "unavailable"); un && un->is_array() && !un->empty()) {
      md.p("Not readable on this machine:");
      for (const auto& u : *un)
        if (u.is_string()) md.li(u.get<std::string>());
      md.o << "\n";
    }
  }
}

void suspect_section(Md& md, const Doc& d) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : d.records)
    if (usable(r) && !r.suspect.empty())
      rows.push_back({r.family + "/" + r.workload + "/" + r.variant + "/" + to_string(r.backend), kv(r.params),
                      num(*r.value) + " " + r.metric.unit, r.suspect});
  if (rows.empty()) return;
  md.h2("Suspect numbers");
  md.p("These records passed their output check but fail a plausibility check; the number is kept and the "
       "reason says why not to trust it. Findings built on them inherit the doubt.");
  md.table({"record", "parameters", "value", "why suspect"}, rows);
}

void records_section(Md& md, const Doc& d) {
  md.h2("What ran");
  std::map<std::string, std::map<std::string, int>> counts;
  for (const auto& r : d.records) counts[r.family][to_string(r.status)]++;
  std::vector<std::vector<std::string>> rows;
  for (const auto& fc : counts) {
    const auto& c = fc.second;
    auto get = [&c](const char* k) { return std::to_string(c.count(k) ? c.at(k) : 0); };
    rows.push_back({fc.first, get("ok"), get("skipped"), get("failed"), get("invalid")});
  }
  if (!rows.empty()) md.table({"family", "ok", "skipped", "failed", "invalid"}, rows);
  std::vector<std::string> missing;
  for (const char* f : kKnownFamilies)
    if (!d.families.count(f)) missing.push_back(f);
  if (!missing.empty()) {
    std::string s;
    for (const auto& m : missing) s += (s.empty() ? "" : ", ") + ("`" + m + "`");
    md.p("Absent from this file: " + s + ". Their findings below say so; nothing is estimated for them.");
  }
  if (const json* fams = at(d.j, "families"); fams && fams->is_array())
    for (const auto& f : *fams)
      if (str(at(f, "status")) == "failed")
        md.li("family `" + str(at(f, "name")) + "` failed: " + str(at(f, "error")));
  // Reasons for records that did not produce a number, grouped.
  std::map<std::string, int> reasons;
  for (const auto& r : d.records)
    if (r.status != Status::ok)
      reasons[r.family + ": " + to_string(r.status) + (r.status_detail.empty() ? "" : " (" + r.status_detail + ")")]++;
  if (!reasons.empty()) {
    md.p("Records without a number:");
    std::vector<std::pair<std::string, int>> v(reasons.begin(), reasons.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::size_t shown = 0;
    for (const auto& [why, n] : v) {
      if (++shown > 12) {
        md.li("... and " + std::to_string(v.size() - 12) + " other reasons");
        break;
      }
      md.li(std::to_string(n) + " x " + why);
    }
    md.o << "\n";
  }
}

void ceilings_section(Md& md, const Doc& d) {
  md.h2("Measured ceilings (ceilings)");
  const json* c = path(d.j, {"context", "ceilings"});
  if (!c || !c->is_object() || c->empty()) {
    if (!absent(md, d, "ceilings")) md.p("No ceiling was measured (every ceilings record lacks a number).");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (auto it = c->begin(); it != c->end(); ++it)
    if (it.value().is_number()) rows.push_back({it.key(), num(it.value().get<double>()) + " " + ceiling_unit(it.key())});
  md.table({"ceiling", "value"}, rows);
  md.p("Other families report percent of these (GB = 10^9 bytes). Host bandwidth ceilings count only sizes "
       "well above the last-level cache; the FMA ceiling is the most the CPU's cores compute in FP32.");
}

void transfer_section(Md& md, const Doc& d) {
  md.h2("Transfers (transfer)");
  if (absent(md, d, "transfer")) return;
  const json& f = d.findings("transfer");
  // Pinned vs pageable: the same copy at the largest size both ran, device clock preferred.
  md.h3("Pinned vs pageable host memory");
  {
    std::vector<std::vector<std::string>> rows;
    for (const char* wl : {"copy_h2d", "copy_d2h", "copy_bidir"}) {
      std::map<std::string, std::map<double, double>> by;  // memory/clock -> bytes -> GB/s
      for (const auto& r : d.records) {
        if (!usable(r) || r.workload != wl || r.backend != Backend::cuda) continue;
        by[opt(r, "memory") + "/" + opt(r, "clock")][param_num(r, "bytes")] = *r.value;
      }
      for (const char* clock : {"device", "host", ""}) {
        const auto pin = by.find(std::string("pinned/") + clock), page = by.find(std::string("pageable/") + clock);
        if (pin == by.end() || page == by.end()) continue;
        double best_bytes = -1;
        for (const auto& [b, v] : pin->second)
          if (page->second.count(b)) best_bytes = std::max(best_bytes, b);
        if (best_bytes < 0) continue;
        const double pv = pin->second.at(best_bytes), gv = page->second.at(best_bytes);
        rows.push_back({wl, std::string(clock[0] ? clock : "-"), size_text(best_bytes), num(pv) + " GB/s", num(gv) + " GB/s",
                        times(pv / gv)});
        break;
      }
    }
    if (rows.empty())
      md.p("Not measured: no pinned and pageable GPU copy of the same size ran (" +
           why_none(d, "transfer", Backend::cuda) + ").");
    else
      md.table({"copy", "clock", "size", "pinned", "pageable", "pinned speedup"}, rows);
  }
  md.h3("Latency, peak bandwidth and half-peak size");
  if (const json* cm = at(f, "copy_model"); cm && cm->is_object() && !cm->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (auto it = cm->begin(); it != cm->end(); ++it) {
      const json& m = it.value();
      const json* ok = at(m, "ok");
      if (!ok || !ok->is_boolean() || !ok->get<bool>()) {
        rows.push_back({it.key(), "-", "-", "-", "no fit: " + str(at(m, "note"))});
        continue;
      }
      const json* good = at(m, "good_fit");
      const bool is_good = !good || !good->is_boolean() || good->get<bool>();
      // A latency clamped to zero (or a zero half-peak size) is what is left when the times do not
      // follow latency + bytes / bandwidth at all: no finding, so no "0 us" figure either.
      if (!(dbl(at(m, "latency_us"), 0) > 0) || !(dbl(at(m, "half_peak_bytes"), 0) > 0)) {
        std::string why = str(at(m, "note"));
        if (why.empty()) why = "no positive latency";
        if (has_num(at(m, "max_rel_residual")))
          why += ": the times do not follow latency + bytes / bandwidth (max residual " +
                 fmt("%.0f%%", 100 * dbl(at(m, "max_rel_residual"))) + ")";
        rows.push_back({it.key(), "-", "-", "-", "no fit (" + why + ")"});
        continue;
      }
      rows.push_back({it.key(), num(dbl(at(m, "latency_us"))) + " us", num(dbl(at(m, "bandwidth_gbps"))) + " GB/s",
                      has_num(at(m, "half_peak_bytes")) ? size_text(dbl(at(m, "half_peak_bytes"))) : "-",
                      is_good ? "" : fmt("poor fit (max residual %.0f%%)", 100 * dbl(at(m, "max_rel_residual")))});
    }
    md.table({"copy", "latency", "peak (fit)", "half-peak size", "note"}, rows);
    md.p("Model t(bytes) = latency + bytes / bandwidth; below the half-peak size a copy spends more time in "
         "latency than in moving bytes, so batching small copies pays.");
  } else {
    md.p("Not measured (findings.transfer.copy_model is absent).");
  }
  md.h3("Pinning break-even");
  if (const json* pb = at(f, "pinning_break_even"); pb && pb->is_object() && !pb->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (auto m = pb->begin(); m != pb->end(); ++m)
      if (m.value().is_object())
        for (auto s = m.value().begin(); s != m.value().end(); ++s) {
          const json* be = at(s.value(), "break_even_copies");
          rows.push_back({m.key(), size_text(std::atof(s.key().c_str())), num(dbl(at(s.value(), "pin_ms"))) + " ms",
                          be ? scalar(*be) : "-"});
        }
    md.table({"method", "size", "pin cost", "copies to break even"}, rows);
  } else {
    md.p("Not measured.");
  }
  md.h3("Loader threads needed to keep the consumer fed");
  if (const json* ld = at(f, "loader"); ld && ld->is_object() && !ld->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (auto it = ld->begin(); it != ld->end(); ++it) {
      const json* w = at(it.value(), "smallest_fed_workers");
      std::string idle;
      if (const json* by = at(it.value(), "idle_fraction_by_workers"); by && by->is_object())
        for (auto x = by->begin(); x != by->end(); ++x)
          if (x.value().is_number()) idle += (idle.empty() ? "" : ", ") + x.key() + ": " + fmt("%.0f%%", 100 * x.value().get<double>());
      rows.push_back({readable_key(it.key()), w && w->is_number() ? num(w->get<double>()) : "more than measured",
                      fmt("%.0f%%", 100 * dbl(at(it.value(), "max_idle_fraction"), 0.1)), idle});
    }
    md.table({"loader", "workers needed", "idle allowed", "idle by workers"}, rows);
  } else {
    md.p("Not measured.");
  }
  if (const json* ov = at(f, "overlap_speedup_vs_1_stream"); ov && ov->is_object() && !ov->empty()) {
    double best = 0;
    std::string which;
    for (auto it = ov->begin(); it != ov->end(); ++it)
      if (it.value().is_number() && it.value().get<double>() > best) best = it.value().get<double>(), which = it.key();
    md.h3("Copy/compute overlap");
    md.p("Best speedup of several streams over one: " + times(best) + " (`" + which + "`).");
  }
}

// Per workload x backend x variant: percent of the ceiling at the largest problem measured. The
// ceilings stream arrays far larger than the caches, so only large problems are comparable with
// them; a cache-resident size can exceed a DRAM ceiling.
double problem_size(const Record& r) {
  double p = 1;
  for (auto it = r.params.begin(); it != r.params.end(); ++it)
    if (it.value().is_number()) p *= std::max(1.0, std::fabs(it.value().get<double>()));
  return p;
}

void ceiling_pct_rows(const Doc& d, const std::string& family, std::vector<std::vector<std::string>>& rows) {
  std::map<std::string, const Record*> largest;
  for (const auto& r : d.records) {
    if (r.family != family || !usable(r) || !r.counters.count("pct_of_ceiling")) continue;
    const std::string k = r.workload + " / " + to_string(r.backend) + " / " + r.variant;
    const Record*& cur = largest[k];
    if (!cur || problem_size(r) > problem_size(*cur) ||
        (problem_size(r) == problem_size(*cur) && *r.value > *cur->value))
      cur = &r;
  }
  for (const auto& [k, r] : largest) {
    // A cache-resident working set is not bounded by a memory ceiling: say so beside the figure.
    const bool cached = r->info.contains("cache_resident") && r->info["cache_resident"] == true;
    rows.push_back({family, k, num(*r->value) + " " + r->metric.unit + (r->suspect.empty() ? "" : " (suspect)"),
                    fmt("%.0f%%", r->counters.at("pct_of_ceiling").value) + " of " + r->ceiling +
                        (cached ? " (cache-resident size)" : ""),
                    kv(r->params)});
  }
}

// Workload + params of the family's suspect records: a finding row built on one of them says so.
std::set<std::string> suspect_problems(const Doc& d, const std::string& family) {
  std::set<std::string> s;
  for (const auto& r : d.records)
    if (r.family == family && !r.suspect.empty()) s.insert(r.workload + " " + kv(r.params));
  return s;
}

void ratio_summary(Md& md, const json& f, const char* key, const std::string& label,
                   const std::set<std::string>& suspect = {}) {
  const json* a = at(f, key);
  if (!a || !a->is_array() || a->empty()) {
    md.li(label + ": not measured");
    return;
  }
  std::vector<std::pair<double, std::string>> v;
  std::size_t doubtful = 0;
  for (const auto& row : *a)
    if (has_num(at(row, "speedup"))) {
      v.push_back({dbl(at(row, "speedup")), str(at(row, "workload")) + " " + kv(val(row, "params"))});
      doubtful += suspect.count(v.back().second);
    }
  if (v.empty()) {
    md.li(label + ": not measured");
    return;
  }
  std::sort(v.begin(), v.end());
  md.li(label + ": " + times(v.front().first) + " to " + times(v.back().first) + " (best at " + v.back().second + ", " +
        driver::count_of(v.size(), "case") + ")" +
        (doubtful ? " -- " + driver::count_of(doubtful, "case") + " built on suspect numbers" : ""));
}

void vectorize_section(Md& md, const Doc& d) {
  md.h2("Loops, vectorization and launches (vectorize)");
  if (absent(md, d, "vectorize")) return;
  const json& f = d.findings("vectorize");
  md.h3("Launch-bound threshold and CUDA Graph gain");
  // Launch-bound: graph over one launch per step >= 2 means launches take at least half the time.
  const json* g = at(f, "graph_over_launch_loop");
  if (g && g->is_array() && !g->empty()) {
    std::map<std::string, std::vector<std::pair<double, double>>> by;  // workload -> (n, speedup)
    for (const auto& row : *g)
      if (has_num(at(row, "speedup")) && row.contains("params")) by[str(at(row, "workload"))].push_back({dbl(path(row, {"params", "n"})), dbl(at(row, "speedup"))});
    std::vector<std::vector<std::string>> rows;
    for (auto& [wl, pts] : by) {
      std::sort(pts.begin(), pts.end());
      double bound = -1, best = 0;
      for (const auto& [n, s] : pts) {
        if (s >= 2.0) bound = n;
        best = std::max(best, s);
      }
      rows.push_back({wl, bound >= 0 ? "n <= " + num(bound) : "not launch-bound at any measured n", times(best)});
    }
    md.table({"workload", "launch-bound (graph >= 2x)", "best CUDA Graph gain"}, rows);
  } else {
    md.p("Not measured" + std::string(any_ok(d, "vectorize", Backend::cuda) ? "." : " (no GPU record: " + why_none(d, "vectorize", Backend::cuda) + ")."));
  }
  md.h3("Speedups");
  ratio_summary(md, f, "vec4_over_scalar", "GPU float4 over scalar kernel");
  ratio_summary(md, f, "vec4_over_launch_loop", "GPU one kernel over a launch per step");
  ratio_summary(md, f, "fused_over_unfused", "GPU fused over unfused kernels");
  ratio_summary(md, f, "thrust_over_vec4", "Thrust over the hand kernel");
  const auto doubt = suspect_problems(d, "vectorize");
  ratio_summary(md, f, "autovec_over_scalar", "CPU auto-vectorized over scalar", doubt);
  ratio_summary(md, f, "openmp_over_scalar", "CPU OpenMP over scalar", doubt);
  md.o << "\n";
}

void gemm_section(Md& md, const Doc& d) {
  md.h2("Matrix multiply (gemm)");
  if (absent(md, d, "gemm")) return;
  // Per backend and precision: best TFLOP/s, speedup over the same backend's FP32, worst error seen.
  struct Acc {
    double best = 0, worst_err = -1, tol = -1, pct_peak = -1;
    std::string shape, variant;
  };
  std::map<std::string, std::map<std::string, Acc>> acc;
  for (const auto& r : d.records) {
    if (r.family != "gemm" || !usable(r)) continue;
    std::string prec = opt(r, "precision");
    if (prec.empty()) prec = "fp32";
    Acc& a = acc[to_string(r.backend)][prec];
    if (*r.value > a.best) {
      a.best = *r.value;
      a.shape = kv(r.params);
      a.variant = r.variant;
      if (r.counters.count("pct_of_datasheet_peak")) a.pct_peak = r.counters.at("pct_of_datasheet_peak").value;
    }
    for (const char* c : {"rel_fro_err", "max_rel_error"})
      if (r.counters.count(c)) a.worst_err = std::max(a.worst_err, r.counters.at(c).value);
    if (r.counters.count("tolerance")) a.tol = std::max(a.tol, r.counters.at("tolerance").value);
  }
  if (acc.empty()) {
    md.p("Not measured: no gemm record has a number (" + why_none(d, "gemm", Backend::cuda) + ").");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [be, precs] : acc) {
    const double fp32 = precs.count("fp32") ? precs.at("fp32").best : 0;
    for (const auto& [prec, a] : precs)
      rows.push_back({be, prec, num(a.best) + " TFLOP/s", fp32 > 0 ? times(a.best / fp32) : "-",
                      a.worst_err >= 0 ? fmt("%.2g", a.worst_err) + (a.tol > 0 ? fmt(" (tol %.2g)", a.tol) : "") : "-",
                      a.pct_peak >= 0 ? fmt("%.0f%%", a.pct_peak) : "-", a.variant + ", " + a.shape});
  }
  md.table({"backend", "precision", "best", "best over best FP32", "worst relative error", "of datasheet peak", "at"}, rows);
  if (!any_ok(d, "gemm", Backend::cuda)) md.p("GPU: not measured (" + why_none(d, "gemm", Backend::cuda) + ").");
  const json& f = d.findings("gemm");
  if (const json* a = at(f, "gpu_vs_cpu_same_precision"); a && a->is_array() && !a->empty()) {
    double lo = INFINITY, hi = 0;
    for (const auto& e : *a)
      if (has_num(at(e, "gpu_over_cpu"))) lo = std::min(lo, dbl(at(e, "gpu_over_cpu"))), hi = std::max(hi, dbl(at(e, "gpu_over_cpu")));
    if (hi > 0) md.p("GPU over CPU at the same precision and shape: " + times(lo) + " to " + times(hi) + ".");
  }
  if (const json* a = at(f, "alignment"); a && a->is_array() && !a->empty()) {
    double worst = INFINITY;
    for (const auto& e : *a)
      if (has_num(at(e, "ratio"))) worst = std::min(worst, dbl(at(e, "ratio")));
    if (std::isfinite(worst)) md.p("Misaligned shapes ran at as little as " + fmt("%.0f%%", 100 * worst) + " of the aligned shape's rate.");
  }
}

void train_section(Md& md, const Doc& d) {
  md.h2("Training steps (train)");
  if (absent(md, d, "train")) return;
  const json& f = d.findings("train");
  md.h3("GPU/CPU crossover batch");
  if (const json* a = at(f, "crossover_batch"); a && a->is_array() && !a->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : *a) {
      const json* x = at(e, "crossover_batch");
      std::string best;
      if (const json* pts = at(e, "points"); pts && pts->is_array() && !pts->empty())
        best = "GPU/CPU " + times(dbl(at(pts->front(), "gpu_over_cpu"))) + " at batch " + num(dbl(at(pts->front(), "batch"))) +
               ", " + times(dbl(at(pts->back(), "gpu_over_cpu"))) + " at batch " + num(dbl(at(pts->back(), "batch")));
      rows.push_back({"width " + scalar(val(e, "width")) + ", depth " + scalar(val(e, "depth")) + ", " +
                          kv(val(e, "options")),
                      x && x->is_number() ? "batch >= " + num(x->get<double>()) : "GPU never ahead", best});
    }
    md.table({"model", "GPU ahead from", "ends"}, rows);
  } else {
    md.p("Not measured" + std::string(any_ok(d, "train", Backend::cuda) ? "." : " (no GPU record: " + why_none(d, "train", Backend::cuda) + ")."));
  }
  md.h3("Model size below which the GPU loses");
  if (const json* a = at(f, "gpu_slower_below"); a && a->is_array() && !a->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : *a) {
      const json* w = at(e, "gpu_slower_up_to_width");
      const json* p = at(e, "gpu_slower_up_to_parameters");
      const json* x = at(e, "crossover_width");
      rows.push_back({"batch " + scalar(val(e, "batch")) + ", depth " + scalar(val(e, "depth")) + ", " +
                          kv(val(e, "options")),
                      w && w->is_number() ? "width <= " + num(w->get<double>()) + (has_num(p) && dbl(p) > 0 ? " (" + num(dbl(p)) + " parameters)" : "") : "GPU never slower",
                      x && x->is_number() ? "width >= " + num(x->get<double>()) : "-"});
    }
    md.table({"model family", "GPU slower up to", "GPU ahead from"}, rows);
  } else {
    md.p("Not measured.");
  }
  md.h3("CUDA Graph gain and mixed precision");
  if (const json* a = at(f, "graph_speedup"); a && a->is_array() && !a->empty()) {
    double lo = INFINITY, hi = 0;
    std::string at_hi;
    for (const auto& e : *a)
      if (has_num(at(e, "speedup"))) {
        const double s = dbl(at(e, "speedup"));
        lo = std::min(lo, s);
        if (s > hi) hi = s, at_hi = kv(val(e, "params"));
      }
    md.li("CUDA Graph over eager launches: " + times(lo) + " to " + times(hi) + " (best at " + at_hi + ")");
  } else {
    md.li("CUDA Graph over eager launches: not measured");
  }
  if (const json* a = at(f, "mixed_precision"); a && a->is_array() && !a->empty()) {
    std::map<std::string, std::pair<double, double>> by;  // precision -> (best speedup, memory saved)
    for (const auto& e : *a) {
      auto& v = by[str(at(e, "precision"))];
      v.first = std::max(v.first, dbl(at(e, "speedup_over_fp32"), 0));
      v.second = std::max(v.second, dbl(at(e, "memory_saved_fraction"), -1));
    }
    for (const auto& [p, v] : by)
      md.li(p + " training step over FP32: up to " + times(v.first) + (v.second >= 0 ? fmt(", %.0f%% less device memory", 100 * v.second) : ""));
  } else {
    md.li("Mixed precision: not measured");
  }
  md.o << "\n";
}

// The pitfalls family: each habit's cost per step, where it stops dominating, each build's slowdown.
// Results files from before this family do not carry it: no section then, rather than an absence note.
void pitfalls_section(Md& md, const Doc& d) {
  if (!d.families.count("pitfalls")) return;
  md.h2("Code-level pitfalls (pitfalls)");
  const json& f = d.findings("pitfalls");
  const std::string gpu_note =
      any_ok(d, "pitfalls", Backend::cuda) ? "" : " GPU records: " + why_none(d, "pitfalls", Backend::cuda) + ".";
  md.h3("Habits in the training loop (times in us per step)");
  std::vector<std::vector<std::string>> rows;
  if (const json* s = at(f, "steps"); s && s->is_array())
    for (const auto& r : *s) {
      std::string extra = num(dbl(at(r, "extra_us")));
      if (has_num(at(r, "us_per_read"))) extra += " (" + num(dbl(at(r, "us_per_read"))) + " per read)";
      rows.push_back({str(at(r, "backend")), str(at(r, "pitfall")) + " " + str(at(r, "variant")),
                      num(dbl(at(r, "width"))), num(dbl(at(r, "batch"))), num(dbl(at(r, "clean_us"))),
                      num(dbl(at(r, "step_us"))), extra, fmt("%+.0f%%", dbl(at(r, "pct_of_clean")))});
    }
  if (rows.empty())
    md.p("Not measured." + gpu_note);
  else
    md.table({"backend", "habit", "width", "batch", "clean step", "with the habit", "extra", "of the clean step"}, rows);
  rows.clear();
  if (const json* s = at(f, "dominance"); s && s->is_array())
    for (const auto& r : *s) {
      const json* up = at(r, "dominates_up_to_width");
      const json* stop = at(r, "stops_dominating_at_width");
      const json* small = at(r, "under_10pct_from_width");
      std::string stops = "-";
      if (has_num(up)) stops = has_num(stop) ? "width " + num(dbl(stop)) : "not within the widths measured";
      rows.push_back({str(at(r, "backend")), str(at(r, "pitfall")) + " " + str(at(r, "variant")),
                      num(dbl(at(r, "batch"))), has_num(up) ? "width <= " + num(dbl(up)) : "at no width measured",
                      stops, has_num(small) ? "width " + num(dbl(small)) : "not within the widths measured"});
    }
  if (!rows.empty()) {
    md.p("A habit dominates where it costs at least the clean step itself (the step takes twice as long).");
    md.table({"backend", "habit", "batch", "dominates", "stops dominating at", "under 10% from"}, rows);
  }
  md.h3("Build flags against the project's default build");
  rows.clear();
  if (const json* s = at(f, "builds"); s && s->is_array())
    for (const auto& r : *s) {
      if (str(at(r, "variant")) == str(at(r, "baseline"))) continue;
      std::string slow = times(dbl(at(r, "slowdown")));
      if (has_num(at(r, "slowdown_q1")))
        slow += " (" + fmt("%.2f", dbl(at(r, "slowdown_q1"))) + "-" + fmt("%.2f", dbl(at(r, "slowdown_q3"))) + ")";
      rows.push_back({str(at(r, "backend")), str(at(r, "workload")), num(dbl(at(r, "n"))),
                      str(at(r, "variant")) + (str(at(r, "variant")) == "O3_isa" ? " (" + str(at(r, "isa")) + ")" : ""),
                      str(at(r, "baseline")), num(dbl(at(r, "time_us"))), slow,
                      fmt("%.1e", dbl(at(r, "rel_norm_err"))) + " vs " + fmt("%.1e", dbl(at(r, "baseline_rel_norm_err")))});
    }
  if (rows.empty()) {
    md.p("Not measured." + gpu_note);
  } else {
    md.p("Time of this build over the default build's (above 1: slower), with a conservative spread (its "
         "quartiles over the default's opposite quartiles); error = relative norm against float64.");
    md.table({"backend", "workload", "n", "build", "against", "time (us)", "time ratio", "error vs default"}, rows);
    if (!gpu_note.empty()) md.p(gpu_note.substr(1));
  }
}

void comparisons_section(Md& md, const Doc& d) {
  md.h2("GPU vs CPU on the same problem");
  const json* c = at(d.j, "comparisons");
  if (!c || !c->is_array() || c->empty()) {
    md.p("No comparison: the file has no pair of ok CPU and GPU records of the same problem.");
    return;
  }
  struct Agg {
    int n = 0, gpu_wins = 0;
    double lo = INFINITY, hi = 0;
    std::string lo_at, hi_at;
  };
  std::map<std::string, Agg> by;
  for (const auto& e : *c) {
    const double r = dbl(at(e, "gpu_over_cpu"));
    if (!std::isfinite(r)) continue;
    Agg& a = by[str(at(e, "family")) + " / " + str(at(e, "workload"))];
    a.n++;
    if (str(at(e, "winner")) == "cuda") a.gpu_wins++;
    const std::string where = kv(val(e, "params"));
    if (r < a.lo) a.lo = r, a.lo_at = where;
    if (r > a.hi) a.hi = r, a.hi_at = where;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, a] : by)
    rows.push_back({k, std::to_string(a.gpu_wins) + " of " + std::to_string(a.n), times(a.lo) + " (" + a.lo_at + ")",
                    times(a.hi) + " (" + a.hi_at + ")"});
  md.table({"workload", "GPU wins", "lowest GPU/CPU", "highest GPU/CPU"}, rows);
}

void ceilings_pct_section(Md& md, const Doc& d) {
  md.h2("Percent of measured ceilings");
  std::vector<std::vector<std::string>> rows;
  for (const auto& fam : d.families) ceiling_pct_rows(d, fam, rows);
  if (rows.empty()) {
    md.p("Not measured: no record carries a percent of a measured ceiling (the ceilings family must run in the "
         "same file).");
    return;
  }
  md.table({"family", "workload / backend / variant", "rate", "of ceiling", "at (largest problem)"}, rows);
  md.p("Ceilings are streaming bandwidths over arrays far larger than the caches; smaller, cache-resident "
       "problems can exceed them, so each row is the largest problem measured.");
}

}  // namespace

std::string size_text(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) return "n/a";
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  if (u == 0) return fmt("%.0f", v) + " bytes";
  return (std::fabs(v - std::round(v)) < 1e-9 ? fmt("%.0f", v) : fmt("%.3g", v)) + " " + units[u];
}

// Collective bandwidth and the data-parallel step, from the family's findings.
void parallel_section(Md& md, const Doc& d) {
  // Files from before this family (the fixtures among them) simply lack it: no section, not a gap.
  if (!d.families.count("parallel")) return;
  md.h2("Data parallelism (parallel)");
  const json& f = d.findings("parallel");
  const json* ranks = path(d.j, {"context", "parallel", "ranks"});
  md.p("Ranks: " + (has_num(ranks) ? num(dbl(ranks)) : std::string("unknown")) +
       ". busbw as nccl-tests defines it (GB = 10^9 bytes); one rank has busbw 0 by definition.");
  if (const json* a = at(f, "largest_size"); a && a->is_array() && !a->empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : *a)
      rows.push_back({str(at(e, "record")), size_text(dbl(at(e, "bytes"))), num(dbl(at(e, "algbw_gbps"))),
                      num(dbl(at(e, "busbw_gbps")))});
    md.table({"collective at its largest size", "size", "algbw GB/s", "busbw GB/s"}, rows);
  }
  if (const json* p = at(f, "vs_plain_loop"); p && p->is_object())
    md.li("All-reduce in gtb vs a plain MPI_Allreduce loop at " + size_text(dbl(at(*p, "bytes"))) + ": " +
          times(dbl(at(*p, "ratio"))) + " (target >= 0.9x)");
  if (const json* a = at(f, "dp_step"); a && a->is_array()) {
    for (const auto& e : *a) {
      std::string m = "width " + scalar(val(e, "width")) + ", depth " + scalar(val(e, "depth")) + ", " +
                      scalar(val(e, "rows_per_rank")) + " rows per rank: ";
      if (const json* on = at(e, "overlap_on")) m += "best bucket " + num(dbl(at(*on, "best_bucket_mb"))) + " MiB with overlap";
      if (has_num(at(e, "overlap_gain"))) m += ", overlap gain " + times(dbl(at(e, "overlap_gain")));
      if (const json* off = at(e, "overlap_off"))
        m += fmt(", communication %.0f%% of a step without overlap", 100 * dbl(at(*off, "comm_fraction"), 0));
      if (const json* s = at(e, "scaling_efficiency"))
        m += fmt(", scaling efficiency %.2f", dbl(at(*s, "value"), 0)) + " over " + num(dbl(at(*s, "ranks"))) + " ranks";
      md.li(m);
    }
  }
  md.o << "\n";
}

std::string render_markdown(const json& doc, const std::string& source) {
  Doc d{doc, records_of(doc), {}};
  for (const auto& r : d.records) d.families.insert(r.family);
  if (const json* fams = at(doc, "families"); fams && fams->is_array())
    for (const auto& f : *fams)
      if (!str(at(f, "name")).empty()) d.families.insert(str(at(f, "name")));
  Md md;
  machine_section(md, d, source);
  // Findings come from families that evolve on their own; a shape this version does not expect
  // costs one section a sentence, not the whole report.
  auto guarded = [&](void (*section)(Md&, const Doc&), const char* what) {
    try {
      section(md, d);
    } catch (const std::exception& e) {
      md.p(std::string("*Could not read the ") + what + " of this file: " + e.what() + "*");
    }
  };
  guarded(health_section, "measurement health");
  guarded(suspect_section, "suspect records");
  guarded(records_section, "records");
  guarded(ceilings_section, "ceilings");
  guarded(transfer_section, "transfer findings");
  guarded(vectorize_section, "vectorize findings");
  guarded(gemm_section, "gemm findings");
  guarded(train_section, "train findings");
  guarded(pitfalls_section, "pitfalls findings");
  guarded(parallel_section, "parallel findings");
  guarded(comparisons_section, "comparisons");
  guarded(ceilings_pct_section, "ceiling percentages");
  std::set<std::string> other;
  for (const auto& f : d.families)
    if (f != "pitfalls" && std::find_if(std::begin(kKnownFamilies), std::end(kKnownFamilies), [&](const char* k) { return f == k; }) ==
        std::end(kKnownFamilies))
      other.insert(f);
  for (const auto& f : other) {
    md.h2("Other family: " + f);
    const json& fi = d.findings(f);
    md.p(fi.empty() ? "No findings recorded." : "Findings as recorded:\n\n```json\n" + fi.dump(1) + "\n```");
  }
  return md.o.str();
}

}  // namespace gtb::report
