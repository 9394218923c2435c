// gtb report's engine: the findings of a results file as Markdown, each with its numbers.
#include "harness/driver/report/render_report.h"
#include "harness/driver/common/render_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/published.h"
#include "harness/driver/common/compare_core.h"
#include "harness/driver/common/health.h"
#include "harness/driver/common/render_summary.h"
#include "harness/document/findings.h"
#include "harness/document/results.h"

namespace gtb::report {

namespace {

const auto& fmt = format::printf_number;

std::string num(double v) { return findings::format(v, findings::Hint::number, ""); }
std::string times(double v) { return findings::format(v, findings::Hint::ratio, ""); }

// Safe lookups (json_read.h): results files from other versions or hand-written ones may lack any key.
using json_read::find;
using json_read::number_at;
using json_read::string_at;
json val(const json& j, const char* k) { return json_read::value_at(j, {k}); }
bool has_num(const json* j) { return j && j->is_number(); }

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



// The report as it is built: each call adds one block (report::Block), the one result that the
// Markdown, the text and the JSON are written from.
using Md = blocks::Builder;

struct Doc {
  const json& j;
  std::vector<Record> records;
  std::set<std::string> families;  // families with at least one record or a families[] entry
  const json& findings(const std::string& family) const {
    static const json empty = json::object();
    const json* f = find(j, {"findings"});
    const json* ff = f ? find(*f, family) : nullptr;
    return ff && ff->is_object() ? *ff : empty;
  }
  std::vector<const Record*> of(const std::string& family) const {
    std::vector<const Record*> v;
    for (const auto& r : records)
      if (r.family == family) v.push_back(&r);
    return v;
  }
};

// ------------------------------------------------------------------------------------ sections

void machine_section(Md& md, const Doc& d, const std::string& source) {
  const json& ctx = *find(d.j, {"context"});
  md.h1("gtb report: " + compare::machine_name(ctx));
  const json* synth = find(d.j, "synthetic");
  if (synth && synth->is_boolean() && synth->get<bool>())
    md.p("> **Synthetic data.** This file is a test fixture marked synthetic: its numbers were invented to "
         "exercise the tools and describe no machine.");
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"file", "`" + source + "`"});
  rows.push_back({"generated", string_at(d.j, {"generated_at"})});
  rows.push_back({"suite", string_at(d.j, {"suite"})});
  {
    const json* runs = find(d.j, "runs");
    const json* reps = find(d.j, "repetitions");
    const bool several_runs = has_num(runs) && runs->get<double>() > 1, repeated = has_num(reps) && reps->get<double>() > 1;
    if (several_runs || repeated) {
      std::string s = several_runs ? num(runs->get<double>()) + " runs of the families in turn" : "one run";
      if (repeated)
        s += "; within " + std::string(several_runs ? "each" : "it") + ", each family's cases " + num(reps->get<double>()) +
             " times in a random interleaved order (a family run as MPI ranks, once), every record pooling "
             "its repetitions";
      rows.push_back({"runs", s});
    }
  }
  const json* gpu = find(ctx, {"gpu"});
  const json* avail = gpu ? find(*gpu, "available") : nullptr;
  if (avail && avail->is_boolean() && avail->get<bool>()) {
    const json* devs = find(*gpu, "devices");
    if (devs && devs->is_array())
      for (const auto& dv : *devs) {
        std::string s = string_at(dv, {"name"});
        if (has_num(find(dv, "sm_count"))) s += ", " + num(number_at(dv, {"sm_count"})) + " SMs";
        if (has_num(find(dv, "memory_bytes"))) s += ", " + fmt("%.0f", number_at(dv, {"memory_bytes"}) / (1 << 30)) + " GiB";
        if (const json* pcie = find(dv, "pcie"))
          if (has_num(find(*pcie, "gen"))) s += ", PCIe gen " + num(number_at(*pcie, {"gen"})) + " x" + num(number_at(*pcie, {"width"}));
        rows.push_back({"GPU", s});
      }
    rows.push_back({"driver / runtime", string_at(*gpu, {"driver_version"}) + " / " + string_at(*gpu, {"runtime_version"})});
  } else {
    rows.push_back({"GPU", "no GPU" + (gpu && find(*gpu, "reason") ? " (" + string_at(*gpu, {"reason"}) + ")" : "")});
  }
  const json* host = find(ctx, {"host"});
  if (host) {
    std::string cpu = string_at(*host, {"cpu_model"});
    if (has_num(find(*host, "logical_cpus"))) cpu += ", " + num(number_at(*host, {"logical_cpus"})) + " logical CPUs";
    if (has_num(find(*host, "omp_threads"))) cpu += ", " + num(number_at(*host, {"omp_threads"})) + " OpenMP threads";
    // Which thread pool the BLAS GEMMs ran on (docs/contributing.md, "One thread pool").
    const std::string threading = string_at(*host, {"blas", "threading"});
    if (threading == "openmp") {
      cpu += "; OpenBLAS on the same OpenMP threads";
    } else if (threading == "pthreads") {
      cpu += "; OpenBLAS with a thread pool of its own (pthreads): its multi-threaded GEMMs between OpenMP loops "
             "competed with the loops' waiting threads for the cores";
    } else if (!threading.empty()) {
      cpu += "; OpenBLAS threading: " + threading;
    }
    rows.push_back({"CPU", cpu});
    rows.push_back({"host", string_at(*host, {"hostname"})});
  }
  if (const json* b = find(ctx, {"build"})) {
    std::string s = string_at(*b, {"build_type"}) + ", " + string_at(*b, {"compiler"});
    if (!string_at(*b, {"cuda"}).empty()) s += ", CUDA " + string_at(*b, {"cuda"});
    if (!string_at(*b, {"git_commit"}).empty()) s += ", commit " + string_at(*b, {"git_commit"}).substr(0, 12);
    rows.push_back({"build", s});
  }
  // Variables that change what NVIDIA's libraries compute (context.environment), as found.
  if (const json* env = find(ctx, {"environment"}); env && env->is_object() && !env->empty()) {
    std::string s;
    for (auto it = env->begin(); it != env->end(); ++it)
      s += (s.empty() ? "`" : ", `") + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump()) + "`";
    rows.push_back({"environment", s});
  }
  md.table({"", ""}, rows);
}

void health_section(Md& md, const Doc& d) {
  const auto warn = health::warnings(d.j);
  const json* start = find(d.j, {"context", "health", "start"});
  if (warn.empty() && !start && !health::speed_spread(d.j)) return;  // a file from before health readings
  md.h2("Measurement health");
  if (!warn.empty()) {
    md.p("> **Measured on a busy machine: the numbers of these families may be low.** Rerun on an idle "
         "machine (or with `gtb run --wait-idle`) before drawing conclusions from them. A speed that changed "
         "while a family ran is the host's (a shared or virtual machine) and waiting does not cure it: decide a "
         "change between two builds with `gtb ab`, which alternates them.");
    for (const auto& w : warn) md.li(w);
    md.end_list();
  } else {
    md.p("No family saw other load, CPU steal or throttling above the limits.");
  }
  if (const json* t = find(d.j, {"context", "health", "thresholds"}); t && t->is_object())
    md.p("Limits: other processes at most " + fmt("%.0f%%", 100 * number_at(*t, {"other_cpu_fraction"}, 0)) +
         " of the CPUs, steal at most " + fmt("%.0f%%", 100 * number_at(*t, {"steal_fraction"}, 0)) +
         " of the CPU time, no thermal or hardware clock slowdown, a loop's speed before and after a family within " +
         fmt("%.0f%%", 100 * health::kSpeedSpreadLimit) + " of each other, and the CPUs' cache reading on one side of " +
         fmt("%.2f", health::kCacheSharedLimit) + " (see docs/harness.md).");
  if (const auto sp = health::speed_spread(d.j)) md.p(health::speed_sentence(*sp));
  if (start && start->is_object()) {
    std::string s = "At the start: load average " + (has_num(find(*start, "loadavg_1min")) ? num(number_at(*start, {"loadavg_1min"})) : "unknown") +
                    ", CPU governor " + (string_at(*start, {"cpu_governor"}).empty() ? "unknown" : string_at(*start, {"cpu_governor"}));
    if (const json* mhz = find(*start, "cpu_mhz"); mhz && has_num(find(*mhz, "min"))) {
      // Name the reading: the kernel's cpuinfo figure is often the nominal clock, not the running one.
      const std::string src = string_at(*mhz, {"source"});
      const bool running = src.rfind("cpufreq", 0) == 0;
      s += std::string(running ? ", core clocks " : ", reported core clock ") + num(number_at(*mhz, {"min"})) + "-" +
           num(number_at(*mhz, {"max"})) + " MHz" +
           (running ? "" : src.empty() ? " (source not recorded)" : " (" + src + ")");
    }
    md.p(s + ".");
    if (const json* un = find(*start, "unavailable"); un && un->is_array() && !un->empty()) {
      md.p("Not readable on this machine:");
      for (const auto& u : *un)
        if (u.is_string()) md.li(u.get<std::string>());
      md.end_list();
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
  if (const json* fams = find(d.j, "families"); fams && fams->is_array())
    for (const auto& f : *fams)
      if (string_at(f, {"status"}) == "not_run")
        md.li("family `" + string_at(f, {"name"}) + "` did not run: its findings are absent; nothing is estimated for it");
  if (const json* fams = find(d.j, "families"); fams && fams->is_array())
    for (const auto& f : *fams)
      if (string_at(f, {"status"}) == "failed")
        md.li("family `" + string_at(f, {"name"}) + "` failed: " + string_at(f, {"error"}));
  // Records without a number, one line per cause (a missing GPU skips hundreds of records in every
  // family: said once, with what it skipped).
  struct Cause {
    int n = 0;
    std::map<std::string, int> by_family;
    std::set<std::string> backends;
  };
  std::map<std::string, Cause> causes;
  std::map<std::string, int> per_backend;
  for (const auto& r : d.records) {
    per_backend[to_string(r.backend)]++;
    if (r.status == Status::ok) continue;
    Cause& c = causes[to_string(r.status) + (r.status_detail.empty() ? "" : ": " + r.status_detail)];
    c.n++;
    c.by_family[r.family]++;
    c.backends.insert(to_string(r.backend));
  }
  if (causes.empty()) return;
  md.p("Records without a number, one line per cause:");
  std::vector<std::pair<std::string, Cause>> v(causes.begin(), causes.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.n > b.second.n; });
  const std::string gpu_reason = string_at(d.j, {"context", "gpu", "reason"});
  std::size_t shown = 0;
  for (const auto& [why, c] : v) {
    if (++shown > 12) {
      md.li("... and " + std::to_string(v.size() - 12) + " other causes");
      break;
    }
    std::string text = why;
    // The machine table above states the GPU error; here it is named, not repeated.
    if (gpu_reason.size() > 20)
      if (auto at = text.find(gpu_reason); at != std::string::npos) text.replace(at, gpu_reason.size(), "the error in the GPU row above");
    std::vector<std::pair<int, std::string>> fams;
    for (const auto& [fam, n] : c.by_family) fams.push_back({-n, fam});
    std::sort(fams.begin(), fams.end());
    std::string where;
    for (const auto& [n, fam] : fams) where += (where.empty() ? "" : ", ") + fam + " " + std::to_string(-n);
    std::string every;
    if (c.backends.size() == 1 && per_backend[*c.backends.begin()] == c.n)
      every = std::string(" (every ") + (*c.backends.begin() == "cuda" ? "GPU" : *c.backends.begin() == "cpu" ? "CPU" : *c.backends.begin()) + " record)";
    md.li("**" + std::to_string(c.n) + "** " + text + every + ": " + where);
  }
  md.end_list();
}

// Reasons shared by the records of several families: family sections name them in a few words and
// point to the one full line under "What ran" instead of repeating it in every section.
std::vector<std::pair<std::string, std::string>> repeated_reasons(const Doc& d) {
  std::map<std::string, std::set<std::string>> fams;
  for (const auto& r : d.records)
    if (r.status != Status::ok && r.status_detail.size() >= 40) fams[r.status_detail].insert(r.family);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [why, f] : fams) {
    if (f.size() < 2) continue;
    const auto colon = why.find(": ");
    const std::string head = colon != std::string::npos && colon <= 40 ? why.substr(0, colon) : why.substr(0, 40) + "...";
    out.push_back({why, head + ", see [What ran](#what-ran)"});
  }
  // Longest first: a reason that contains another is replaced whole.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return out;
}

std::string shorten(std::string text, const std::vector<std::pair<std::string, std::string>>& reasons) {
  for (const auto& [full, brief] : reasons)
    for (auto at = text.find(full); at != std::string::npos; at = text.find(full, at + brief.size()))
      text.replace(at, full.size(), brief);
  return text;
}

// Per workload x backend x variant: percent of the ceiling at the largest problem measured. A
// bandwidth ceiling streams arrays far larger than the caches, so only large problems are comparable
// with it; a cache-resident size can exceed a DRAM ceiling.
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


// One family from its typed findings: sections in their order, each with its prose, summary lines,
// tables and the figures `gtb plot` draws from it. No family is special here.
void family_section(Md& md, const Doc& d, const std::string& family) {
  const json* entry = find(d.j, {"findings"});
  entry = entry ? find(*entry, family) : nullptr;
  if (!entry || !findings::is_typed(*entry)) {
    md.h2("Family: " + family);
    if (!entry || !entry->is_object() || entry->empty()) {
      md.p("No findings recorded.");
    } else {
      md.p("Findings as recorded by an older gtb (`gtb-" + family + " --gtb_findings_from=FILE` derives them again "
           "with this version):\n\n```json\n" + entry->dump(1) + "\n```");
    }
    return;
  }
  const findings::Family f = findings::family_from_json(*entry);
  md.h2(f.title + " (" + family + ")");
  if (f.sections.empty()) md.p("No findings: the family's records carry its numbers.");
  for (const auto& s : f.sections) {
    md.h3(s.title + (s.projected ? " (projected, not measured)" : ""));
    if (s.projected) md.p("> Projected from the inputs stated below; not a measurement.");
    if (!s.not_measured.empty()) md.p("Not measured: " + s.not_measured + ".");
    for (const auto& t : s.text) md.p(t);
    // Lines and table rows without a number are named together in one "Not measured" line, not
    // printed one by one as "-" (a machine without a GPU has a dozen of them).
    std::vector<std::string> unmeasured;
    std::size_t listed = 0;
    for (const auto& l : s.lines) {
      if (l.value.is_null()) {
        const bool says = l.note.empty() || l.note == "not measured";
        unmeasured.push_back(l.label + (says ? "" : " (" + l.note + ")"));
        continue;
      }
      md.li(l.label + ": " + findings::format(l.value, l.hint, l.unit) + (l.note.empty() ? "" : " (" + l.note + ")"));
      ++listed;
    }
    if (listed) md.end_list();
    for (const auto& t : s.tables) {
      if (t.rows.empty()) continue;  // the section's not_measured says why
      std::vector<std::string> head;
      for (const auto& c : t.columns) head.push_back(c.name);
      std::vector<std::vector<std::string>> rows;
      std::vector<std::pair<std::string, std::string>> row_groups;  // why -> the rows' names
      for (const auto& r : t.rows) {
        // A row whose every measured column (not text, not a count) is empty has nothing to show.
        bool any_measured_col = false, any_value = false;
        for (std::size_t i = 1; i < r.size() && i < t.columns.size(); ++i) {
          const auto h = t.columns[i].hint;
          if (h == findings::Hint::text || h == findings::Hint::count) continue;
          any_measured_col = true;
          any_value = any_value || !r[i].is_null();
        }
        if (any_measured_col && !any_value && !r.empty()) {
          // The row's own words (a note saying why) stay with its name; rows sharing them are one item.
          std::string why;
          for (std::size_t i = 1; i < r.size() && i < t.columns.size(); ++i)
            if (t.columns[i].hint == findings::Hint::text && r[i].is_string() && !r[i].get<std::string>().empty() &&
                r[i].get<std::string>() != "not measured" && r[i].get<std::string>() != "-")
              why += (why.empty() ? "" : ", ") + r[i].get<std::string>();
          const std::string name = r[0].is_string() ? r[0].get<std::string>() : r[0].dump();
          auto same = std::find_if(row_groups.begin(), row_groups.end(), [&](const auto& g) { return g.first == why; });
          if (same == row_groups.end()) row_groups.push_back({why, name});
          else same->second += ", " + name;
          continue;
        }
        std::vector<std::string> cells;
        for (std::size_t i = 0; i < r.size() && i < t.columns.size(); ++i)
          cells.push_back(findings::format(r[i], t.columns[i].hint, t.columns[i].unit));
        rows.push_back(cells);
      }
      if (!rows.empty()) md.table(head, rows);
      for (const auto& [why, names] : row_groups) unmeasured.push_back(names + (why.empty() ? "" : " (" + why + ")"));
    }
    if (!unmeasured.empty()) {
      std::string names;
      for (const auto& u : unmeasured) names += (names.empty() ? "" : "; ") + u;
      md.p("Not measured: " + names + ".");
    }
    if (!s.figures.empty()) {
      std::string figs;
      for (const auto& g : s.figures) figs += (figs.empty() ? "" : ", ") + ("`" + g.id + "`");
      md.p("Figures (`gtb plot`): " + figs + ".");
    }
  }
}

// Families in the report's order: as each family's findings ask (`order`), then by name.
std::vector<std::string> family_order(const Doc& d) {
  std::vector<std::pair<int, std::string>> v;
  const json* all = find(d.j, {"findings"});
  for (const auto& f : d.families) {
    const json* e = all ? find(*all, f) : nullptr;
    v.push_back({e && findings::is_typed(*e) && has_num(find(*e, "order")) ? int(number_at(*e, {"order"})) : 1000, f});
  }
  std::sort(v.begin(), v.end());
  std::vector<std::string> out;
  for (auto& p : v) out.push_back(p.second);
  return out;
}

void comparisons_section(Md& md, const Doc& d) {
  md.h2("GPU vs CPU on the same problem");
  const json* c = find(d.j, "comparisons");
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
    const double r = number_at(e, {"gpu_over_cpu"});
    if (!std::isfinite(r)) continue;
    Agg& a = by[string_at(e, {"family"}) + " / " + string_at(e, {"workload"})];
    a.n++;
    if (string_at(e, {"winner"}) == "cuda") a.gpu_wins++;
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
  // A ceiling that is missing takes its percentages with it: say which and why.
  // Ceilings whose records were all skipped (no GPU) are said once where the skip is; the others here.
  if (const json* miss = find(d.j, {"context", published::kCeilingsMissing}); miss && miss->is_object()) {
    std::vector<std::vector<std::string>> why;
    for (auto it = miss->begin(); it != miss->end(); ++it) {
      const std::string text = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      if (text.rfind("skipped", 0) != 0) why.push_back({it.key(), text});
    }
    if (!why.empty()) {
      md.p("Ceilings not measured in this file (records that divide by them carry no percent):");
      md.table({"ceiling", "why"}, why);
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& fam : d.families) ceiling_pct_rows(d, fam, rows);
  if (rows.empty()) {
    md.p("Not measured: no record carries a percent of a measured ceiling (the family that measures them must "
         "run in the same file).");
    return;
  }
  md.table({"family", "workload / backend / variant", "rate", "of ceiling", "at (largest problem)"}, rows);
  md.p("Ceilings are streaming bandwidths over arrays far larger than the caches; smaller, cache-resident "
       "problems can exceed them, so each row is the largest problem measured.");
}

}  // namespace

// ------------------------------------------------------------------------------------ formats

std::string to_markdown(const Report& r) { return blocks::to_markdown(r.blocks); }
std::string to_text(const Report& r) { return blocks::to_text(r.blocks); }
json to_json(const Report& r) {
  return {{"schema", "gtb-report"}, {"version", kReportJsonVersion}, {"source", r.source},
          {"sections", blocks::to_json_sections(r.blocks)}};
}

Report build_report(const json& doc, const std::string& source) {
  Doc d{doc, records_of(doc), {}};
  for (const auto& r : d.records) d.families.insert(r.family);
  if (const json* fams = find(doc, "families"); fams && fams->is_array())
    for (const auto& f : *fams)
      if (!string_at(f, {"name"}).empty()) d.families.insert(string_at(f, {"name"}));
  Md md;
  machine_section(md, d, source);
  md.append(verdict::report_verdict_blocks(doc));
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
  const auto reasons = repeated_reasons(d);
  for (const auto& f : family_order(d)) {
    Md fam;
    try {
      family_section(fam, d, f);
    } catch (const std::exception& e) {
      fam.p("*Could not read the `" + f + "` findings of this file: " + e.what() + "*");
    }
    for (Block& b : fam.blocks) {
      b.text = shorten(std::move(b.text), reasons);
      for (auto& row : b.rows)
        for (auto& cell : row) cell = shorten(std::move(cell), reasons);
      for (auto& cell : b.head) cell = shorten(std::move(cell), reasons);
      md.blocks.push_back(std::move(b));
    }
  }
  guarded(comparisons_section, "comparisons");
  guarded(ceilings_pct_section, "ceiling percentages");
  return {source, std::move(md.blocks)};
}

std::string render_markdown(const json& doc, const std::string& source) { return to_markdown(build_report(doc, source)); }

}  // namespace gtb::report
