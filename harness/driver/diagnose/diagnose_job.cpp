// The job (one trace per rank) and the diff (two traces): documents built from single-trace diagnoses
// and the few facts the reader keeps beyond them (communication calls, per-name tallies).
#include "harness/driver/diagnose/diagnose_job.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "harness/model/cost_terms.h"
#include "harness/document/json_read.h"
#include "harness/document/stats.h"
#include "harness/driver/diagnose/diagnose_price.h"
#include "harness/driver/common/diagnose_render.h"

namespace gtb::diagnose {

// Named, not anonymous: the diagnose folder compiles as one unity unit, whose anonymous namespaces merge.
namespace job_impl {

json jnum(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double median_of(std::vector<double> v) { return v.empty() ? NAN : quantile(v, 0.5); }
double min_of(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return v.empty() ? NAN : *std::max_element(v.begin(), v.end()); }

double at(const json& j, std::initializer_list<const char*> path) {
  const json* c = &j;
  for (const char* k : path) {
    if (!c->is_object() || !c->contains(k)) return NAN;
    c = &(*c)[k];
  }
  return c->is_number() ? c->get<double>() : NAN;
}

// The figures of one step of a rank's diagnosis: the GPU window and its split where the trace has GPU
// events, the host step otherwise.
struct StepFigures {
  double step_us = NAN, idle_us = NAN, compute_us = NAN, communication_us = NAN, memory_us = NAN, exposed_us = NAN;
  double host_launch_us = NAN, sync_us = NAN, other_idle_us = NAN, loader_us = NAN;
};
StepFigures step_figures(const json& s) {
  StepFigures f;
  if (s.contains("gpu")) {
    const auto& g = s["gpu"];
    f.step_us = at(g, {"window_us"});
    f.idle_us = at(g, {"idle_us"});
    f.compute_us = at(g, {"split", "compute_us"});
    f.communication_us = at(g, {"split", "communication_us"});
    f.memory_us = at(g, {"split", "memory_us"});
    f.exposed_us = at(g, {"communication", "exposed_us"});
    f.host_launch_us = at(g, {"idle_by_cause", "host_launch_us"});
    f.sync_us = at(g, {"idle_by_cause", "sync_us"});
    f.other_idle_us = at(g, {"idle_by_cause", "other_us"});
  } else {
    f.step_us = at(s, {"host_us"});
  }
  f.loader_us = at(s, {"host", "data_loader", "us"});
  return f;
}

// The figures a job compares, in the order it shows them.
const std::vector<std::pair<const char*, double StepFigures::*>>& figure_list() {
  static const std::vector<std::pair<const char*, double StepFigures::*>> v = {
      {"step_us", &StepFigures::step_us},
      {"idle_us", &StepFigures::idle_us},
      {"compute_us", &StepFigures::compute_us},
      {"communication_us", &StepFigures::communication_us},
      {"memory_us", &StepFigures::memory_us},
      {"exposed_communication_us", &StepFigures::exposed_us},
      {"wait_in_collectives_us", nullptr},
  };
  return v;
}

std::string normalized(const std::string& s) {
  std::string o;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

std::string fmtd(const char* f, double v) { return format_number(f, v); }
std::string dur(double us) { return format_us(us); }
std::string signed_dur(double us) { return (us >= 0 ? "+" : "-") + dur(std::fabs(us)); }
std::string pct(double f) { return format_share(f); }
std::string bytes_text(double b) {
  if (!std::isfinite(b) || b < 0) return "unknown size";
  if (b >= 1e9) return fmtd("%.3g GB", b / 1e9);
  if (b >= 1e6) return fmtd("%.3g MB", b / 1e6);
  if (b >= 1e3) return fmtd("%.3g kB", b / 1e3);
  return fmtd("%.0f B", b);
}
double jd(const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : NAN; }

}  // namespace job_impl

std::optional<std::int64_t> rank_from_file_name(const std::string& file_name) {
  static const std::regex re("rank[-_]?([0-9]+)", std::regex::icase);
  std::smatch m;
  if (std::regex_search(file_name, m, re)) return std::stoll(m[1].str());
  return std::nullopt;
}

// ---- the job ------------------------------------------------------------------------------------

namespace job_impl {

json job_rules() {
  return {
      {"rank", "A trace's rank is its distributedInfo.rank, else the rank-N (rank_N, rankN) in its file name."},
      {"steps", "Each rank's steps and their figures are its single-trace diagnosis's (docs/diagnose.md): the GPU "
                "window where the trace has GPU events, the host ProfilerStep otherwise. Steps are matched across "
                "ranks by name; steps some rank lacks are listed, not guessed."},
      {"collectives", "A rank's communication calls are its communication kernels (NCCL/RCCL), or where it has none "
                      "its host library's collectives (gloo:, mpi:, ucc:). Within a step, the k-th call of every "
                      "rank is one collective (matched only where every rank made the same number of calls)."},
      {"straggler", "Ranks wait inside a collective for the last one to arrive, so the collective lasts longest on "
                    "the ranks that came first: each rank's wait is its duration minus the shortest duration of "
                    "that collective among the ranks (no clock is compared across ranks). The straggler of a "
                    "collective is the rank of the shortest duration; a step's straggler is the one of the "
                    "collective whose longest wait is the largest in the step."},
      {"bus_bandwidth", "Achieved bus bandwidth of a collective = its bytes (from its own arguments) over its "
                        "shortest duration among the ranks (the data movement without the wait), times 2(n-1)/n for "
                        "all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all (nccl-tests' "
                        "convention). Measured: the same of the results file's all-reduce term at that size and "
                        "rank count."},
      {"across", "For each figure, each rank's median over its steps; across ranks their min, median and max, the "
                 "spread (max - min) and the ranks at either end."}};
}

// Each rank's steps: their figures and names, and the names every rank has (in the first rank's order).
struct RankSteps {
  std::map<std::int64_t, std::vector<StepFigures>> figs;
  std::map<std::int64_t, std::vector<std::string>> names;
  std::set<std::string> all_names;
  std::vector<std::string> common;
  bool any_gpu = false;
  bool is_common(const std::string& n) const { return std::find(common.begin(), common.end(), n) != common.end(); }
};

RankSteps rank_steps(const std::vector<RankInput>& ranks) {
  RankSteps rs;
  for (const auto& r : ranks) {
    const json& d = r.diagnosis;
    std::vector<StepFigures> v;
    std::vector<std::string> names;
    for (const auto& s : d.value("steps", json::array())) {
      v.push_back(step_figures(s));
      names.push_back(s.value("name", ""));
      rs.all_names.insert(names.back());
    }
    rs.any_gpu |= d["overall"].contains("gpu");
    rs.figs[r.rank] = v;
    rs.names[r.rank] = names;
  }
  if (!ranks.empty())
    for (const auto& n : rs.names[ranks.front().rank]) {
      bool everywhere = true;
      for (const auto& r : ranks) {
        const auto& sn = rs.names[r.rank];
        everywhere &= std::find(sn.begin(), sn.end(), n) != sn.end();
      }
      if (everywhere) rs.common.push_back(n);
    }
  return rs;
}

// Whether the ranks agree on their steps; those some rank lacks.
json step_count_section(const std::vector<RankInput>& ranks, const RankSteps& rs) {
  json by = json::object();
  std::set<std::size_t> counts;
  for (const auto& r : ranks) {
    by[std::to_string(r.rank)] = rs.names.at(r.rank).size();
    counts.insert(rs.names.at(r.rank).size());
  }
  json missing = json::array();
  for (const auto& r : ranks) {
    json lacks = json::array();
    const auto& sn = rs.names.at(r.rank);
    for (const auto& n : rs.all_names)
      if (std::find(sn.begin(), sn.end(), n) == sn.end()) lacks.push_back(n);
    if (!lacks.empty()) missing.push_back({{"rank", r.rank}, {"lacks", lacks}});
  }
  const bool agree = counts.size() <= 1 && missing.empty();
  return {{"agree", agree},
          {"by_rank", by},
          {"common_steps", rs.common.size()},
          {"missing", missing},
          {"message", agree ? "every rank has the same " + std::to_string(rs.common.size()) + " steps"
                            : "the ranks disagree on their steps: only the " + std::to_string(rs.common.size()) +
                                  " steps every rank has are compared across ranks"}};
}

// One collective matched across ranks: its kind and size (the first rank's), its shortest duration.
struct Instance {
  std::string collective;
  double bytes, out_bytes, min_dur;
  std::int64_t group;
  bool gpu;
};

// The collectives matched across ranks, step by step: each step's row, the waits and stragglers.
struct Matched {
  json steps = json::array(), mismatched = json::array();
  std::vector<Instance> instances;
  std::map<std::int64_t, std::map<std::string, double>> wait_by_step;  // rank -> step name -> wait
  std::map<std::int64_t, int> straggler_steps;
  std::map<std::int64_t, double> caused;  // rank -> the others' wait it caused, summed
  std::map<std::int64_t, std::map<std::string, std::vector<const CommCall*>>> calls;  // rank -> step name -> calls
};

// The waits of one step whose ranks made `k_n` calls each; its straggler into `st`.
void match_step(const std::string& name, std::size_t k_n, const std::vector<RankInput>& ranks, Matched& m, json& st) {
  const std::size_t n_ranks = ranks.size();
  double best_wait = -1;
  std::int64_t best_rank = -1;
  std::string best_coll;
  json waits = json::object();
  std::map<std::int64_t, double> step_wait;
  for (std::size_t k = 0; k < k_n; ++k) {
    double mn = INFINITY, mx = -INFINITY;
    std::int64_t mn_rank = -1;
    for (const auto& r : ranks) {
      const double du = m.calls[r.rank][name][k]->dur;
      if (du < mn) mn = du, mn_rank = r.rank;
      mx = std::max(mx, du);
    }
    for (const auto& r : ranks) step_wait[r.rank] += m.calls[r.rank][name][k]->dur - mn;
    const CommCall& c0 = *m.calls[ranks.front().rank][name][k];
    m.instances.push_back({c0.collective, c0.bytes, c0.out_bytes, mn,
                           c0.group_size > 0 ? c0.group_size : static_cast<std::int64_t>(n_ranks), c0.on_gpu});
    if (n_ranks > 1 && mx - mn > best_wait) best_wait = mx - mn, best_rank = mn_rank, best_coll = c0.collective;
  }
  for (const auto& [rk, w] : step_wait) {
    waits[std::to_string(rk)] = w;
    m.wait_by_step[rk][name] = w;
  }
  if (best_rank >= 0 && best_wait > 0) {
    ++m.straggler_steps[best_rank];
    double others = 0;
    for (const auto& [rk, w] : step_wait)
      if (rk != best_rank) others += w;
    m.caused[best_rank] += others;
    st["straggler"] = {{"rank", best_rank},
                       {"collective", best_coll},
                       {"longest_wait_us", best_wait},
                       {"others_wait_us", n_ranks > 1 ? others / static_cast<double>(n_ranks - 1) : 0.0}};
  } else {
    st["straggler"] = nullptr;
    st["why_no_straggler"] = k_n == 0      ? "no communication call in this step"
                             : n_ranks < 2 ? "one rank: nobody waits"
                                           : "every rank's collectives lasted the same: nobody waited";
  }
  st["wait_us_by_rank"] = waits;
}

Matched match_collectives(const std::vector<RankInput>& ranks, const RankSteps& rs) {
  Matched m;
  for (const auto& r : ranks) {
    const auto& sn = rs.names.at(r.rank);
    for (const auto& c : r.calls)
      if (c.step >= 0 && static_cast<std::size_t>(c.step) < sn.size())
        m.calls[r.rank][sn[static_cast<std::size_t>(c.step)]].push_back(&c);
  }
  for (const auto& name : rs.common) {
    json st;
    st["name"] = name;
    json per_rank = json::object();
    for (const auto& r : ranks) {
      const auto& sn = rs.names.at(r.rank);
      const auto i = static_cast<std::size_t>(std::find(sn.begin(), sn.end(), name) - sn.begin());
      per_rank[std::to_string(r.rank)] = jnum(rs.figs.at(r.rank)[i].step_us);
    }
    st["step_us_by_rank"] = per_rank;
    std::set<std::size_t> counts;
    for (const auto& r : ranks) counts.insert(m.calls[r.rank][name].size());
    st["collectives"] = *counts.begin();
    if (counts.size() != 1) {
      json by = json::object();
      for (const auto& r : ranks) by[std::to_string(r.rank)] = m.calls[r.rank][name].size();
      m.mismatched.push_back({{"step", name}, {"calls_by_rank", by}});
      st["straggler"] = nullptr;
      st["why_no_straggler"] = "the ranks made different numbers of communication calls in this step";
    } else {
      match_step(name, *counts.begin(), ranks, m, st);
    }
    m.steps.push_back(st);
  }
  return m;
}

using Across = std::map<std::string, std::vector<std::pair<double, std::int64_t>>>;  // figure -> (rank's median, rank)

// One rank's row; its medians over the common steps go into `across` too.
json rank_row(const RankInput& r, const RankSteps& rs, const Matched& m, Across& across) {
  const json& d = r.diagnosis;
  json row;
  row["rank"] = r.rank;
  row["file"] = r.file;
  row["rank_from"] = r.rank_from;
  row["steps"] = rs.names.at(r.rank).size();
  row["devices"] = d["trace"].value("devices", json::array());
  row["distributed_backend"] = d["trace"].value("distributed_backend", "");
  row["world_size"] = d["trace"].value("world_size", json(nullptr));
  row["communication_calls"] = r.calls.size();
  json medians = json::object();
  for (const auto& [key, member] : figure_list()) {
    std::vector<double> v;
    if (member) {
      const auto& sn = rs.names.at(r.rank);
      for (std::size_t i = 0; i < sn.size(); ++i) {
        if (!rs.is_common(sn[i])) continue;
        const double x = rs.figs.at(r.rank)[i].*member;
        if (std::isfinite(x)) v.push_back(x);
      }
    } else if (const auto w = m.wait_by_step.find(r.rank); w != m.wait_by_step.end()) {
      for (const auto& [n, x] : w->second) v.push_back(x);
    }
    const double med = median_of(v);
    medians[key] = jnum(med);
    if (std::isfinite(med)) across[key].push_back({med, r.rank});
  }
  row["median_per_step"] = medians;
  // The whole trace's figures (gtb's whole-trace window: the first GPU event's start to the last one's
  // end), which the HTA agreement test compares with HTA's temporal breakdown and overlap per trace.
  if (d["overall"].contains("gpu")) {
    const auto& g = d["overall"]["gpu"];
    row["whole_trace"] = {{"window_us", g["window_us"]},
                          {"busy_us", g["busy_us"]},
                          {"idle_us", g["idle_us"]},
                          {"compute_us", g["split"]["compute_us"]},
                          {"non_compute_us", g["split"]["non_compute_us"]},
                          {"communication_us", g["split"]["communication_us"]},
                          {"memory_us", g["split"]["memory_us"]},
                          {"communication_overlap_share", g["communication"]["overlap_share"]},
                          {"sync_markers_outside_busy_in_window_us",
                           g.contains("sync_markers") ? g["sync_markers"].value("us_outside_busy_in_window", 0.0) : 0.0}};
  }
  row["symptoms"] = json::array();
  for (const auto& l : symptom_lines(d)) row["symptoms"].push_back({{"id", l.id}, {"label", l.label}, {"text", l.text}});
  return row;
}

// Each figure across ranks: min, median, max, spread and the ranks at either end.
json across_section(Across& across) {
  json acr = json::object();
  for (const auto& [key, member] : figure_list()) {
    (void)member;
    auto& v = across[key];
    if (v.empty()) {
      acr[key] = nullptr;
      continue;
    }
    std::sort(v.begin(), v.end());
    std::vector<double> xs;
    for (const auto& x : v) xs.push_back(x.first);
    const double med = median_of(xs);
    acr[key] = {{"min", v.front().first},
                {"median", med},
                {"max", v.back().first},
                {"spread", v.back().first - v.front().first},
                {"spread_share_of_median", med > 0 ? jnum((v.back().first - v.front().first) / med) : json(nullptr)},
                {"min_rank", v.front().second},
                {"max_rank", v.back().second}};
  }
  return acr;
}

// The job's straggler: the rank that is a step's straggler most often (ties: the larger wait caused);
// -1 if none.
std::int64_t job_straggler(Matched& m) {
  std::int64_t straggler = -1;
  for (const auto& [rk, n] : m.straggler_steps)
    if (straggler < 0 || n > m.straggler_steps[straggler] ||
        (n == m.straggler_steps[straggler] && m.caused[rk] > m.caused[straggler]))
      straggler = rk;
  return straggler;
}

json straggler_section(std::int64_t straggler, const std::vector<RankInput>& ranks, std::size_t common_steps, Matched& m) {
  if (straggler < 0) return nullptr;
  const double steps_n = static_cast<double>(std::max<std::size_t>(1, common_steps));
  const std::size_t n_ranks = ranks.size();
  json s = {{"rank", straggler},
            {"straggler_in_steps", m.straggler_steps[straggler]},
            {"of_steps", common_steps},
            {"others_wait_per_step_us", n_ranks > 1 ? m.caused[straggler] / static_cast<double>(n_ranks - 1) / steps_n : 0.0}};
  for (const auto& r : ranks)
    if (r.rank == straggler) {
      s["file"] = r.file;
      json lines = json::array();
      for (const auto& l : symptom_lines(r.diagnosis))
        lines.push_back({{"id", l.id}, {"label", l.label}, {"text", l.text}, {"from", l.from}});
      s["its_symptoms"] = lines;  // its single-trace diagnosis
    }
  return s;
}

// The results' cost terms as the job may use them: why not (`reason`) where they do not apply.
struct JobTerms {
  std::vector<cost::Term> terms;
  std::string reason, machine_note;
  Backend backend = Backend::cpu;
};

JobTerms job_terms(const std::vector<RankInput>& ranks, const json* results, bool any_gpu) {
  JobTerms t;
  if (results) {
    if (!cost::has_terms(*results)) t.reason = "the results file has no cost terms";
    else t.terms = cost::terms_from_document(*results);
  }
  t.backend = any_gpu ? Backend::cuda : Backend::cpu;
  if (results && any_gpu) {
    std::string results_gpu;
    if (const auto* g = json_read::find(*results, {"context", "gpu"}))
      if (g->value("available", false) && g->contains("devices") && !(*g)["devices"].empty())
        results_gpu = (*g)["devices"][0].value("name", "");
    std::string trace_gpu;
    for (const auto& r : ranks)
      if (!r.diagnosis["trace"]["devices"].empty()) trace_gpu = r.diagnosis["trace"]["devices"][0].get<std::string>();
    if (results_gpu.empty()) t.reason = "the results have no GPU records";
    else if (trace_gpu.empty()) t.reason = "the traces do not name their GPU, so " + results_gpu + "'s records cannot be said to apply";
    else if (normalized(results_gpu) != normalized(trace_gpu))
      t.reason = "the results are of " + results_gpu + ", the traces of " + trace_gpu;
  } else if (results) {
    t.machine_note = "a CPU trace does not name its CPU: the measured figures are those of the results file's "
                     "machine, assumed to be the job's";
  }
  return t;
}

// A collective's measured bus bandwidth from the results' all-reduce term, into `c`.
void measured_busbw(json& c, const std::string& coll, double b, std::int64_t n, double achieved, const json* results,
                    const JobTerms& t) {
  std::string cannot;
  if (!results) cannot = "no --results";
  else if (!t.reason.empty()) cannot = t.reason;
  else if (coll != "allreduce") cannot = "gtb measures all-reduce only";
  else if (b < 0) cannot = "the collective's size is unknown";
  if (cannot.empty()) {
    const auto e = cost::allreduce_seconds(t.terms, t.backend, static_cast<int>(n), b);
    if (e.seconds && *e.seconds > 0) {
      const double m = bus_bandwidth_gbps(coll, b, *e.seconds, n);
      c["measured_busbw_gbps"] = m;
      c["achieved_share_of_measured"] = jnum(achieved / m);
      c["measured_us"] = *e.seconds * 1e6;
      c["records"] = e.records;
      c["outside_measured"] = e.outside_measured;
      return;
    }
    cannot = e.cannot_say.empty() ? "no all-reduce term" : e.cannot_say;
  }
  c["measured_busbw_gbps"] = nullptr;
  c["measured_cannot_say"] = cannot;
}

// Collectives by kind and size: achieved bus bandwidth, and the measured one from the results.
json collectives_section(const std::vector<Instance>& instances, const json* results, const JobTerms& t) {
  std::map<std::tuple<std::string, double, std::int64_t>, std::vector<double>> groups;
  for (const auto& in : instances)
    groups[{in.collective, in.collective == "allgather" ? in.out_bytes : in.bytes, in.group}].push_back(in.min_dur);
  json colls = json::array();
  for (const auto& [key, durs] : groups) {
    const auto& [coll, b, n] = key;
    const double med = median_of(durs);
    json c = {{"collective", coll.empty() ? json(nullptr) : json(coll)},
              {"bytes", b >= 0 ? json(b) : json(nullptr)},
              {"ranks", n},
              {"count", durs.size()},
              {"median_transfer_us", med}};
    const double achieved = bus_bandwidth_gbps(coll, b, med * 1e-6, n);
    c["achieved_busbw_gbps"] = jnum(achieved);
    if (!std::isfinite(achieved))
      c["achieved_cannot_say"] = b < 0 ? "the trace's collective carries no size (no In msg nelems / dtype)"
                                       : "no bus-bandwidth rule for this collective";
    measured_busbw(c, coll, b, n, achieved, results, t);
    colls.push_back(c);
  }
  return colls;
}

// What the job's fixes are priced from.
struct FixInputs {
  const std::vector<RankInput>& ranks;
  const json* results;
  const std::string& results_label;
  const JobTerms& terms;
  const std::vector<Instance>& instances;
  std::size_t common_steps;
  double step_med, exposed_med;
};

// The straggler: the others' wait is what evening it out saves, from the traces themselves.
json straggler_fix(const FixInputs& in, std::int64_t straggler, const json& straggler_doc) {
  json f = {{"fix", "even out the straggler's work before the collective (its own symptoms below)"}, {"symptom", "straggler"}};
  if (straggler < 0) {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = "no straggler found (one rank, no communication, or collectives not matched)";
    return f;
  }
  const double w = straggler_doc["others_wait_per_step_us"].get<double>();
  f["saving_per_step_s"] = w * 1e-6;
  f["share_of_step"] = in.step_med > 0 ? jnum(w / in.step_med) : json(nullptr);
  f["how"] = "the other ranks' mean wait per step in the collectives where rank " + std::to_string(straggler) +
             " came last (from the traces; no results needed)";
  if (in.results)
    for (const auto& r : in.ranks)
      if (r.rank == straggler) {
        json d = r.diagnosis;
        price_diagnosis(d, *in.results, in.results_label);
        f["its_fixes"] = d["pricing"]["fixes"];
      }
  return f;
}

json overlap_fix(const FixInputs& in) {
  json f = {{"fix", "overlap the exposed communication with compute (bucketed all-reduce during backward)"},
            {"symptom", "exposed_communication"}};
  const double ex = in.exposed_med;
  if (!std::isfinite(ex)) {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = "exposed communication is a GPU figure (communication kernels outside compute); these traces have none";
  } else if (!in.results) {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = "no --results: the measured overlap (comm_overlap) prices it";
  } else if (!in.terms.reason.empty()) {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = in.terms.reason;
  } else {
    const auto o = cost::overlap_fraction(in.terms.terms, in.terms.backend);
    if (o.seconds) {
      f["saving_per_step_s"] = ex * 1e-6 * *o.seconds;
      f["share_of_step"] = in.step_med > 0 ? jnum(ex * *o.seconds / in.step_med) : json(nullptr);
      f["records"] = o.records;
    } else {
      f["saving_per_step_s"] = nullptr;
      f["cannot_say"] = o.cannot_say;
    }
    f["how"] = "median exposed communication per step across ranks times the measured fraction overlap hides";
  }
  return f;
}

// Bucket size: the all-reduces of a step merged into one; each call pays the measured latency.
json bucket_fix(const FixInputs& in) {
  json f = {{"fix", "larger gradient buckets (fewer, larger all-reduces per step)"}, {"symptom", "bucket_size"}};
  std::vector<double> sizes;
  std::int64_t group = static_cast<std::int64_t>(in.ranks.size());
  bool unknown = false;
  const std::size_t steps_n = std::max<std::size_t>(1, in.common_steps);
  for (const auto& x : in.instances)
    if (x.collective == "allreduce") {
      if (x.bytes < 0) unknown = true;
      sizes.push_back(x.bytes);
      group = x.group;
    }
  f["allreduce_per_step"] = static_cast<double>(sizes.size()) / static_cast<double>(steps_n);
  std::string cannot;
  if (sizes.size() <= steps_n) cannot = sizes.empty() ? "no all-reduce matched across ranks" : "one all-reduce per step already";
  else if (unknown) cannot = "the all-reduces carry no size in the trace (no In msg nelems / dtype)";
  else if (!in.results) cannot = "no --results: the measured all-reduce latency and bandwidth price it";
  else if (!in.terms.reason.empty()) cannot = in.terms.reason;
  if (!cannot.empty()) {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = cannot;
    return f;
  }
  const auto& t = in.terms;
  cost::Estimate each, merged;
  each.seconds = 0.0;  // the sum starts from nothing, not from "cannot say"
  double total = 0;
  for (double b : sizes) {
    each = each + cost::allreduce_seconds(t.terms, t.backend, static_cast<int>(group), b);
    total += b;
  }
  merged = cost::allreduce_seconds(t.terms, t.backend, static_cast<int>(group), total / static_cast<double>(steps_n));
  if (each.seconds && merged.seconds) {
    const double s = *each.seconds / static_cast<double>(steps_n) - *merged.seconds;
    f["saving_per_step_s"] = std::max(0.0, s);
    f["share_of_step"] = in.step_med > 0 ? jnum(std::max(0.0, s) * 1e6 / in.step_med) : json(nullptr);
    f["records"] = each.records;
    f["outside_measured"] = each.outside_measured || merged.outside_measured;
  } else {
    f["saving_per_step_s"] = nullptr;
    f["cannot_say"] = each.cannot_say.empty() ? merged.cannot_say : each.cannot_say;
  }
  f["how"] = "the step's all-reduces at the measured latency+bandwidth each, minus one all-reduce of their "
             "total bytes (an upper bound: one bucket hides nothing behind backward)";
  return f;
}

// The fixes, priced ones first by saving.
json pricing_section(const FixInputs& in, std::int64_t straggler, const json& straggler_doc) {
  json fixes = json::array({straggler_fix(in, straggler, straggler_doc), overlap_fix(in), bucket_fix(in)});
  std::stable_sort(fixes.begin(), fixes.end(), [](const json& a, const json& b) {
    const bool pa = a["saving_per_step_s"].is_number(), pb = b["saving_per_step_s"].is_number();
    if (pa != pb) return pa;
    return pa && a["saving_per_step_s"].get<double>() > b["saving_per_step_s"].get<double>();
  });
  return {{"priced", in.results != nullptr},
          {"results", in.results ? json(in.results_label) : json(nullptr)},
          {"note", in.terms.machine_note.empty() ? json(nullptr) : json(in.terms.machine_note)},
          {"fixes", fixes}};
}

}  // namespace job_impl

json diagnose_job(const std::vector<RankInput>& ranks, const json* results, const std::string& results_label) {
  using namespace job_impl;
  json job;
  job["tool"] = "gtb diagnose";
  job["kind"] = "job";
  job["format_version"] = 1;
  job["rules"] = job_rules();
  const RankSteps rs = rank_steps(ranks);
  job["step_count"] = step_count_section(ranks, rs);
  Matched m = match_collectives(ranks, rs);
  job["steps"] = m.steps;
  job["collective_count_mismatch"] = m.mismatched;
  Across across;
  json rows = json::array();
  for (const auto& r : ranks) rows.push_back(rank_row(r, rs, m, across));
  job["ranks"] = rows;
  const json acr = across_section(across);
  job["across_ranks"] = acr;
  const std::int64_t straggler = job_straggler(m);
  job["straggler"] = straggler_section(straggler, ranks, rs.common.size(), m);
  const JobTerms terms = job_terms(ranks, results, rs.any_gpu);
  job["collectives"] = collectives_section(m.instances, results, terms);
  auto med_across = [&](const char* key) { return acr.contains(key) && acr[key].is_object() ? acr[key]["median"].get<double>() : NAN; };
  const FixInputs in{ranks,         results,          results_label, terms, m.instances, rs.common.size(),
                     med_across("step_us"), med_across("exposed_communication_us")};
  job["pricing"] = pricing_section(in, straggler, job["straggler"]);
  job["world_size"] = ranks.size();
  return job;
}

// ---- the diff ----------------------------------------------------------------------------------

namespace job_impl {

std::vector<double> per_step_values(const json& d, double StepFigures::*member) {
  std::vector<double> v;
  for (const auto& s : d.value("steps", json::array())) {
    const double x = step_figures(s).*member;
    if (std::isfinite(x)) v.push_back(x);
  }
  if (v.empty()) {
    // No steps: the whole trace as one.
    json o = d.value("overall", json::object());
    o["host_us"] = d["overall"].value("steps_host_us", 0.0);
    const double x = step_figures(o).*member;
    if (std::isfinite(x)) v.push_back(x);
  }
  return v;
}

// One figure before and after: medians, step-to-step spread (max - min), the change and whether it
// is beyond the noise (the larger of the two spreads).
json compare(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = median_of(a), mb = median_of(b);
  const double sa = a.empty() ? NAN : max_of(a) - min_of(a), sb = b.empty() ? NAN : max_of(b) - min_of(b);
  const double noise = std::max(std::isfinite(sa) ? sa : 0.0, std::isfinite(sb) ? sb : 0.0);
  const double delta = mb - ma;
  return {{"before_median", jnum(ma)},
          {"after_median", jnum(mb)},
          {"before_spread", jnum(sa)},
          {"after_spread", jnum(sb)},
          {"change", jnum(delta)},
          {"change_share", ma > 0 ? jnum(delta / ma) : json(nullptr)},
          {"noise", noise},
          {"beyond_noise", std::isfinite(delta) && std::fabs(delta) > noise}};
}

}  // namespace job_impl

namespace job_impl {

json diff_rules() {
  return {
      {"step", "Each trace's steps as its diagnosis has them (GPU window, or the host step without GPU events); "
               "a figure's value is the median over the steps, its noise the larger of the two traces' "
               "step-to-step spread (max - min). A change beyond the noise is one larger than that noise."},
      {"names", "Kernels (by launch) and CPU operators (by start) tallied by name per step: appeared (none "
                "before), vanished (none after), or changed: median time per step moved by more than the "
                "larger step-to-step spread of that name's time and by at least 1% of the step, or its mean count per "
                "step moved by more than 10% (counts are exact)."},
      {"collectives", "Communication calls by kind (as the job reads them: communication kernels, else the host "
                      "library's collectives), per step: mean calls, mean bytes (from each call's own arguments; "
                      "null where a call carries no size) and the distinct call sizes. Changed: the calls per step "
                      "or the set of sizes differ (both exact)."},
      {"symptoms", "A symptom came or went when its line is in one diagnosis and not the other."}};
}

// The change of each category (step, compute, communication, memory, idle by cause, data loader).
json diff_categories(const json& before, const json& after) {
  json cats = json::object();
  for (const auto& [key, member] :
       std::vector<std::pair<const char*, double StepFigures::*>>{{"step_us", &StepFigures::step_us},
                                                                  {"compute_us", &StepFigures::compute_us},
                                                                  {"communication_us", &StepFigures::communication_us},
                                                                  {"memory_us", &StepFigures::memory_us},
                                                                  {"idle_us", &StepFigures::idle_us},
                                                                  {"idle_host_launch_us", &StepFigures::host_launch_us},
                                                                  {"idle_sync_us", &StepFigures::sync_us},
                                                                  {"idle_other_us", &StepFigures::other_idle_us},
                                                                  {"data_loader_us", &StepFigures::loader_us}}) {
    const auto a = per_step_values(before, member), b = per_step_values(after, member);
    if (a.empty() && b.empty()) continue;
    cats[key] = compare(a, b);
  }
  return cats;
}

std::string diff_verdict(const json& st) {
  if (!st.is_object() || !st.contains("change") || !st["change"].is_number()) return "no step time in one of the traces";
  const double c = st["change"].get<double>();
  return std::string("step time ") + (c >= 0 ? "grew" : "shrank") + " by " + dur(std::fabs(c)) + " (" +
         pct(jd(st, "change_share")) + ") from " + dur(jd(st, "before_median")) + " to " + dur(jd(st, "after_median")) +
         (st["beyond_noise"].get<bool>() ? ", beyond the steps' noise (" + dur(jd(st, "noise")) + ")"
                                         : ", within the steps' noise (" + dur(jd(st, "noise")) + "): no change can be claimed");
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// Kernels and CPU operators that appeared, vanished or changed beyond their noise.
json diff_names(const std::vector<NameTally>& bn, const std::vector<NameTally>& an, double step_before) {
  std::map<std::pair<std::string, std::string>, std::pair<const NameTally*, const NameTally*>> names;
  for (const auto& x : bn)
    if (x.kind != "collective") names[{x.kind, x.name}].first = &x;
  for (const auto& x : an)
    if (x.kind != "collective") names[{x.kind, x.name}].second = &x;
  json appeared = json::array(), vanished = json::array(), changed = json::array();
  const double min_change = std::isfinite(step_before) ? 0.01 * step_before : 0.0;
  for (const auto& [key, pr] : names) {
    const auto& [a, b] = pr;
    auto row = [&](const NameTally* x) {
      return json{{"count_per_step", x ? median_of(x->count) : 0.0}, {"us_per_step", x ? median_of(x->us) : 0.0},
                  {"count", x ? sum_of(x->count) : 0.0}, {"us", x ? sum_of(x->us) : 0.0}};
    };
    json r = {{"name", key.second}, {"kind", key.first}, {"before", row(a)}, {"after", row(b)}};
    const double ub = a ? median_of(a->us) : 0, ua = b ? median_of(b->us) : 0;
    r["change_us_per_step"] = ua - ub;
    if (!a || sum_of(a->count) == 0) {
      if (ua >= min_change || ua > 0) appeared.push_back(r);
    } else if (!b || sum_of(b->count) == 0) {
      vanished.push_back(r);
    } else {
      const double noise = std::max(max_of(a->us) - min_of(a->us), max_of(b->us) - min_of(b->us));
      r["noise_us"] = noise;
      // Counts are exact: a mean count per step that moved by more than 10% is a change whatever the time did.
      const double ca = sum_of(a->count) / static_cast<double>(a->count.size()), cb = sum_of(b->count) / static_cast<double>(b->count.size());
      r["before"]["mean_count_per_step"] = ca;
      r["after"]["mean_count_per_step"] = cb;
      const bool count_moved = std::fabs(cb - ca) > 0.1 * ca;
      r["count_changed"] = count_moved;
      if ((std::fabs(ua - ub) > noise && std::fabs(ua - ub) >= min_change) || count_moved) changed.push_back(r);
    }
  }
  auto by_size = [](json& v) {
    std::vector<json> x(v.begin(), v.end());
    std::sort(x.begin(), x.end(), [](const json& p, const json& q) {
      return std::fabs(p["change_us_per_step"].get<double>()) > std::fabs(q["change_us_per_step"].get<double>());
    });
    json out = json::array();
    for (std::size_t i = 0; i < x.size() && i < 25; ++i) out.push_back(x[i]);
    return json{{"total", x.size()}, {"largest", out}};
  };
  return {{"appeared", by_size(appeared)}, {"vanished", by_size(vanished)}, {"changed", by_size(changed)}};
}

// Collectives by kind before and after: calls and bytes per step, the sizes of the calls.
json diff_collectives(const std::vector<NameTally>& bn, const std::vector<NameTally>& an) {
  std::map<std::string, std::pair<const NameTally*, const NameTally*>> kinds;
  for (const auto& x : bn)
    if (x.kind == "collective") kinds[x.name].first = &x;
  for (const auto& x : an)
    if (x.kind == "collective") kinds[x.name].second = &x;
  auto side = [](const NameTally* x) {
    if (!x) return json{{"calls_per_step", 0.0}, {"bytes_per_step", 0.0}, {"sizes", json::array()}, {"us_per_step", 0.0}};
    const double n = static_cast<double>(std::max<std::size_t>(1, x->count.size()));
    return json{{"calls_per_step", sum_of(x->count) / n},
                {"bytes_per_step", jnum(sum_of(x->bytes) / n)},
                {"sizes", x->sizes},
                {"us_per_step", median_of(x->us)}};
  };
  json out = json::array();
  for (const auto& [kind, pr] : kinds) {
    json r = {{"collective", kind}, {"before", side(pr.first)}, {"after", side(pr.second)}};
    r["calls_changed"] = r["before"]["calls_per_step"] != r["after"]["calls_per_step"];
    r["sizes_changed"] = r["before"]["sizes"] != r["after"]["sizes"];
    r["changed"] = r["calls_changed"].get<bool>() || r["sizes_changed"].get<bool>();
    out.push_back(r);
  }
  return out;
}

// Symptoms that came or went: each symptom's figure per step (the mean over the steps), present when above 0.
json diff_symptoms(const json& before, const json& after) {
  json came = json::array(), went = json::array(), both = json::array();
  for (const auto& [label, path] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"sync calls per step", {"host", "syncs", "total"}},
           {"item()-style scalar reads per step", {"host", "scalar_reads", "count"}},
           {"data-loader time per step (us)", {"host", "data_loader", "us"}},
           {"kernels shorter than a launch per step", {"gpu", "kernels", "shorter_than_launch"}},
           {"FP32 SIMT GEMM kernels per step", {"gpu", "gemm_kernels", "simt_fp32", "count"}},
           {"exposed communication per step (us)", {"gpu", "communication", "exposed_us"}},
           {"GPU idle waiting for the host to launch per step (us)", {"gpu", "idle_by_cause", "host_launch_us"}},
           {"GPU idle after a host sync per step (us)", {"gpu", "idle_by_cause", "sync_us"}}}) {
    const double vb = per_step(before, path).value, va = per_step(after, path).value;
    const bool pb = std::isfinite(vb) && vb > 0, pa = std::isfinite(va) && va > 0;
    const json r = {{"symptom", label}, {"before", jnum(vb)}, {"after", jnum(va)}};
    if (pa && !pb) came.push_back(r);
    else if (pb && !pa) went.push_back(r);
    else if (pa && pb) both.push_back(r);
  }
  return {{"came", came}, {"went", went}, {"in_both", both}};
}

}  // namespace job_impl

json diagnose_diff(const json& before, const std::vector<NameTally>& bn, const json& after,
                   const std::vector<NameTally>& an) {
  using namespace job_impl;
  json d;
  d["tool"] = "gtb diagnose";
  d["kind"] = "diff";
  d["format_version"] = 1;
  d["before"] = {{"file", before["trace"].value("file", "")}, {"steps", before.value("steps", json::array()).size()},
                 {"gpu", before["overall"].contains("gpu")}};
  d["after"] = {{"file", after["trace"].value("file", "")}, {"steps", after.value("steps", json::array()).size()},
                {"gpu", after["overall"].contains("gpu")}};
  d["rules"] = diff_rules();
  d["categories"] = diff_categories(before, after);
  const json& st = d["categories"].value("step_us", json::object());
  const double step_before = st.contains("before_median") && st["before_median"].is_number() ? st["before_median"].get<double>() : NAN;
  d["verdict"] = diff_verdict(st);
  d["names"] = diff_names(bn, an, step_before);
  d["collectives"] = diff_collectives(bn, an);
  d["symptoms"] = diff_symptoms(before, after);
  return d;
}

// ---- renderings -------------------------------------------------------------------------------------

namespace job_impl {

const char* figure_label(const std::string& key) {
  static const std::map<std::string, const char*> m = {{"step_us", "step"},
                                                       {"idle_us", "idle"},
                                                       {"compute_us", "compute"},
                                                       {"communication_us", "communication"},
                                                       {"memory_us", "memory"},
                                                       {"exposed_communication_us", "exposed communication"},
                                                       {"wait_in_collectives_us", "wait in collectives"},
                                                       {"idle_host_launch_us", "idle: host launch"},
                                                       {"idle_sync_us", "idle: sync"},
                                                       {"idle_other_us", "idle: other"},
                                                       {"data_loader_us", "data loader (host)"}};
  auto it = m.find(key);
  return it == m.end() ? key.c_str() : it->second;
}

std::string fix_line(const json& f) {
  std::string s = f.value("fix", "");
  if (f["saving_per_step_s"].is_number())
    s += ": saves " + dur(f["saving_per_step_s"].get<double>() * 1e6) + " per step" +
         (f.contains("share_of_step") && f["share_of_step"].is_number() ? " (" + pct(f["share_of_step"].get<double>()) + " of the median step)" : "");
  else
    s += ": not priced (" + f.value("cannot_say", std::string("no measured term")) + ")";
  return s;
}

std::string job_body(const json& j, bool md, int level) {
  std::ostringstream o;
  const std::string h(static_cast<std::size_t>(level + 1), '#');
  auto sec = [&](const std::string& t) { o << (md ? "\n" + h + " " + t + "\n\n" : "\n  " + t + ":\n"); };
  o << (md ? "" : "  ") << j["step_count"].value("message", "") << "\n";
  sec("Per rank (median over the common steps)");
  const auto& rows = j["ranks"];
  std::vector<std::string> keys;
  for (const auto& [k, v] : j["across_ranks"].items())
    if (v.is_object()) keys.push_back(k);
  // The order of figure_list.
  std::vector<std::string> order = {"step_us", "idle_us", "compute_us", "communication_us", "memory_us",
                                    "exposed_communication_us", "wait_in_collectives_us"};
  std::vector<std::string> shown;
  for (const auto& k : order)
    if (std::find(keys.begin(), keys.end(), k) != keys.end()) shown.push_back(k);
  if (md) {
    o << "| rank | file |";
    for (const auto& k : shown) o << " " << figure_label(k) << " |";
    o << "\n| ---: | --- |";
    for (std::size_t i = 0; i < shown.size(); ++i) o << " ---: |";
    o << "\n";
  }
  for (const auto& r : rows) {
    o << (md ? "| " : "    rank ") << r["rank"].get<std::int64_t>() << (md ? " | " : " (") << r.value("file", "")
      << (md ? " |" : "):");
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const auto& v = r["median_per_step"][shown[i]];
      o << (md ? " " : " " + std::string(figure_label(shown[i])) + " ") << (v.is_number() ? dur(v.get<double>()) : "n/a")
        << (md ? " |" : i + 1 < shown.size() ? "," : "");
    }
    o << "\n";
  }
  sec("Across ranks");
  for (const auto& k : shown) {
    const auto& a = j["across_ranks"][k];
    o << (md ? "- " : "    ") << figure_label(k) << ": median " << dur(a["median"].get<double>()) << ", min "
      << dur(a["min"].get<double>()) << " (rank " << a["min_rank"].get<std::int64_t>() << "), max "
      << dur(a["max"].get<double>()) << " (rank " << a["max_rank"].get<std::int64_t>() << "), spread "
      << dur(a["spread"].get<double>()) << "\n";
  }
  sec("Straggler");
  if (j["straggler"].is_object()) {
    const auto& s = j["straggler"];
    o << (md ? "" : "    ") << "rank " << s["rank"].get<std::int64_t>() << " (" << s.value("file", "")
      << ") came last to the collectives in " << s["straggler_in_steps"].get<int>() << " of " << s["of_steps"].get<int>()
      << " steps; the other ranks waited " << dur(s["others_wait_per_step_us"].get<double>()) << " per step on average\n";
    if (md) o << "\n| step | straggler | collective | longest wait | the others' mean wait |\n| --- | ---: | --- | ---: | ---: |\n";
    for (const auto& st : j["steps"]) {
      if (!st["straggler"].is_object()) continue;
      const auto& x = st["straggler"];
      if (md)
        o << "| " << st["name"].get<std::string>() << " | " << x["rank"].get<std::int64_t>() << " | "
          << x.value("collective", "") << " | " << dur(x["longest_wait_us"].get<double>()) << " | "
          << dur(x["others_wait_us"].get<double>()) << " |\n";
      else
        o << "    " << st["name"].get<std::string>() << ": rank " << x["rank"].get<std::int64_t>() << " last to "
          << x.value("collective", "a collective") << ", longest wait " << dur(x["longest_wait_us"].get<double>())
          << ", the others " << dur(x["others_wait_us"].get<double>()) << " each\n";
    }
    if (s.contains("its_symptoms")) {
      o << (md ? "\nIts own diagnosis (single trace):\n\n" : "    its own diagnosis:\n");
      for (const auto& l : s["its_symptoms"]) o << (md ? "- " : "      ") << l["label"].get<std::string>() << ": " << l["text"].get<std::string>() << "\n";
    }
  } else {
    o << (md ? "" : "    ") << "none found\n";
  }
  if (!j["collective_count_mismatch"].empty())
    o << (md ? "\n" : "    ") << "steps where the ranks made different numbers of communication calls: "
      << j["collective_count_mismatch"].size() << " (no straggler said there)\n";
  sec("Collectives (bus bandwidth)");
  if (j["collectives"].empty()) o << (md ? "" : "    ") << "none matched across ranks\n";
  for (const auto& c : j["collectives"]) {
    o << (md ? "- " : "    ") << (c["collective"].is_string() ? c["collective"].get<std::string>() : "unknown collective") << " of "
      << bytes_text(c["bytes"].is_number() ? c["bytes"].get<double>() : -1) << " among " << c["ranks"].get<std::int64_t>()
      << " ranks, " << c["count"].get<std::size_t>() << "x, moving data for " << dur(c["median_transfer_us"].get<double>()) << ": ";
    if (c["achieved_busbw_gbps"].is_number()) o << fmtd("%.3g GB/s", c["achieved_busbw_gbps"].get<double>());
    else o << "bus bandwidth n/a (" << c.value("achieved_cannot_say", std::string()) << ")";
    if (c["measured_busbw_gbps"].is_number())
      o << " against " << fmtd("%.3g GB/s", c["measured_busbw_gbps"].get<double>()) << " measured ("
        << pct(jd(c, "achieved_share_of_measured")) << " of it)";
    else
      o << "; measured: " << c.value("measured_cannot_say", std::string("n/a"));
    o << "\n";
  }
  sec("What fixing it saves");
  if (j["pricing"]["note"].is_string()) o << (md ? "" : "    ") << j["pricing"]["note"].get<std::string>() << "\n";
  for (const auto& f : j["pricing"]["fixes"]) {
    o << (md ? "- " : "    ") << fix_line(f) << "\n";
    if (f.contains("its_fixes"))
      for (const auto& g : f["its_fixes"]) o << (md ? "  - " : "      ") << fix_line(g) << "\n";
  }
  return o.str();
}

std::string diff_body(const json& d, bool md, int level) {
  std::ostringstream o;
  const std::string h(static_cast<std::size_t>(level + 1), '#');
  auto sec = [&](const std::string& t) { o << (md ? "\n" + h + " " + t + "\n\n" : "\n  " + t + ":\n"); };
  o << (md ? "" : "  ") << d.value("verdict", "") << "\n";
  sec("By category (median per step; noise = the larger step-to-step spread)");
  if (md) o << "| category | before | after | change | noise | beyond noise |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const auto& [k, c] : d["categories"].items()) {
    if (md)
      o << "| " << figure_label(k) << " | " << dur(jd(c, "before_median")) << " | " << dur(jd(c, "after_median")) << " | "
        << signed_dur(jd(c, "change")) << " | " << dur(jd(c, "noise")) << " | " << (c["beyond_noise"].get<bool>() ? "yes" : "no") << " |\n";
    else
      o << "    " << figure_label(k) << ": " << dur(jd(c, "before_median")) << " -> " << dur(jd(c, "after_median")) << " ("
        << signed_dur(jd(c, "change")) << (c["beyond_noise"].get<bool>() ? ", beyond" : ", within") << " the noise of "
        << dur(jd(c, "noise")) << ")\n";
  }
  for (const auto& [what, title] : std::vector<std::pair<std::string, std::string>>{
           {"appeared", "Appeared"}, {"vanished", "Vanished"}, {"changed", "Changed beyond their noise"}}) {
    const auto& n = d["names"][what];
    sec(title + " (" + std::to_string(n["total"].get<std::size_t>()) + " kernels and CPU operators)");
    for (const auto& r : n["largest"]) {
      o << (md ? "- " : "    ") << r["kind"].get<std::string>() << " `" << r["name"].get<std::string>() << "`: "
        << fmtd("%.3g", r["before"].value("mean_count_per_step", r["before"]["count_per_step"].get<double>())) << " -> "
        << fmtd("%.3g", r["after"].value("mean_count_per_step", r["after"]["count_per_step"].get<double>())) << " per step, "
        << dur(r["before"]["us_per_step"].get<double>()) << " -> " << dur(r["after"]["us_per_step"].get<double>())
        << " per step (" << signed_dur(r["change_us_per_step"].get<double>()) << ")\n";
    }
  }
  if (d.contains("collectives") && !d["collectives"].empty()) {
    sec("Collectives per step (calls, their sizes, bytes)");
    auto side = [](const json& x) {
      std::string sizes;
      for (const auto& b : x["sizes"]) sizes += (sizes.empty() ? "" : ", ") + bytes_text(b.get<double>());
      const double n = x["calls_per_step"].get<double>();
      return fmtd("%.3g", n) + (n == 1 ? " call of " : " calls of ") + (sizes.empty() ? "unknown size" : sizes) + " (" +
             (x["bytes_per_step"].is_number() ? bytes_text(x["bytes_per_step"].get<double>()) : "unknown bytes") + " per step)";
    };
    for (const auto& c : d["collectives"])
      o << (md ? "- " : "    ") << c["collective"].get<std::string>() << ": " << side(c["before"]) << " -> "
        << side(c["after"]) << (c["changed"].get<bool>() ? " (changed)" : " (unchanged)") << "\n";
  }
  sec("Symptoms");
  auto val = [](const json& v) { return v.is_number() ? fmtd("%.3g", v.get<double>()) : std::string("n/a"); };
  for (const char* what : {"came", "went", "in_both"})
    for (const auto& s : d["symptoms"][what])
      o << (md ? "- " : "    ") << (std::string(what) == "in_both" ? "in both" : what) << ": "
        << s["symptom"].get<std::string>() << ": " << val(s["before"]) << " -> " << val(s["after"]) << "\n";
  if (d["symptoms"]["came"].empty() && d["symptoms"]["went"].empty())
    o << (md ? "" : "    ") << "no symptom came or went\n";
  return o.str();
}

}  // namespace job_impl

std::string render_job_text(const json& j) {
  return "gtb diagnose: a job of " + std::to_string(j["ranks"].size()) + " ranks\n" + job_impl::job_body(j, false, 1);
}
std::string render_job_markdown(const json& j, int level) {
  return std::string(static_cast<std::size_t>(level), '#') + " Diagnosis of a job of " + std::to_string(j["ranks"].size()) +
         " ranks\n\n" + job_impl::job_body(j, true, level);
}
std::string render_diff_text(const json& d) {
  return "gtb diagnose --diff " + d["before"].value("file", "") + " -> " + d["after"].value("file", "") + "\n" +
         job_impl::diff_body(d, false, 1);
}
std::string render_diff_markdown(const json& d, int level) {
  return std::string(static_cast<std::size_t>(level), '#') + " What changed: " + d["before"].value("file", "") +
         " to " + d["after"].value("file", "") + "\n\n" + job_impl::diff_body(d, true, level);
}

}  // namespace gtb::diagnose
