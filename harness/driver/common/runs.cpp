// Family binaries as children of the driver, and the merge of repeated runs (gtb run, gtb ab).
#include "harness/driver/common/runs.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/document/json_read.h"
#include "harness/driver/common/health.h"
#include "harness/driver/common/process.h"
#include "harness/document/results.h"
#include "harness/runtime/stopping.h"

namespace gtb::driver {

namespace fs = std::filesystem;

namespace {
// Cases finished so far: Google Benchmark's console prints a case's lines once it has run (each
// repetition's, or their aggregates), named by record id: the distinct ids among them.
int count_finished(const std::string& log_path, const std::string& family) {
  std::ifstream in(log_path);
  std::string line;
  std::set<std::string> ids;
  while (std::getline(in, line))
    if (line.rfind(family + "/", 0) == 0) {
      const std::string name = line.substr(0, line.find_first_of(" \t"));
      ids.insert(name.substr(0, name.find("/iterations:")));
    }
  return static_cast<int>(ids.size());
}

// The id the family binary wrote when it started its last case (GTB_CASE_FILE), or "".
std::string last_case_started(const std::string& path) {
  std::ifstream in(path);
  std::string id;
  std::getline(in, id);
  return id;
}

// load_document's message without the path: the work folder is gone when the user reads it.
std::string without_path(const std::string& what, const std::string& path) {
  return what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : what;
}

int status_rank(Status s) {  // which run's status the merged record takes
  switch (s) {
    case Status::invalid: return 3;
    case Status::failed: return 2;
    case Status::ok: return 1;
    case Status::skipped: return 0;
  }
  return 0;
}
}  // namespace

double default_family_timeout(const std::string& suite, double budget) {
  const Suite st = suite_from_string(suite);
  const double base = st == Suite::full ? 3600 : 600;
  return budget > 0 ? base * std::max(1.0, budget / suite_rule(st).budget_seconds) : base;
}

double family_timeout_of(const RunSettings& s) {
  return s.family_timeout > 0 ? s.family_timeout
                              : default_family_timeout(s.suite, s.budget) * double(std::max(1, s.repetitions));
}

std::vector<std::string> repetition_flags(int repetitions, bool ranked) {
  if (repetitions <= 1 || ranked) return {};
  // Only the aggregates on the console: fewer lines, one case's at a time.
  return {"--benchmark_repetitions=" + std::to_string(repetitions), "--benchmark_enable_random_interleaving=true",
          "--benchmark_display_aggregates_only=true"};
}

std::string family_precheck(const std::string& binary) {
  gtb::ProcessSpec spec;
  spec.program = binary;
  spec.args = {"--gtb_precheck"};
  spec.in = gtb::Redirect::null();
  spec.out = gtb::Redirect::capture();
  spec.err = gtb::Redirect::null();
  spec.timeout_s = 60;
  spec.interrupt = [] { return interrupt_signal(); };  // an interrupted gtb run stops it too
  const gtb::ProcessResult r = gtb::run_process(spec);
  if (!r.started() || r.timed_out || r.signal != 0 || r.exit_code != 2) return "";
  std::string why = r.output;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why.empty() ? binary + " --gtb_precheck rejected its input" : why;
}

std::string precheck_families(const std::vector<std::pair<std::string, std::string>>& family_binaries) {
  for (const auto& [family, binary] : family_binaries) {
    if (interrupted()) return "";
    if (!declares_precheck(family)) continue;
    if (const std::string why = family_precheck(binary); !why.empty()) return family + ": " + why;
  }
  return "";
}

int count_cases(const std::string& binary, const std::string& suite, const fs::path& work, double timeout_s,
                bool* timed_out, const std::vector<std::string>& selection) {
  const std::string tmp = (work / "count.json").string();
  ProcessLimits limits;
  limits.timeout_s = timeout_s > 0 ? timeout_s : default_family_timeout(suite, 0);
  std::vector<std::string> args = {"--gtb_list", "--gtb_suite=" + suite};
  args.insert(args.end(), selection.begin(), selection.end());
  const ProcessResult pr = run_process(binary, args, tmp, nullptr, limits);
  if (timed_out) *timed_out = pr.timed_out;
  int total = -1;
  if (pr.ok()) {
    try {
      std::ifstream in(tmp);
      const json j = json::parse(in);
      total = 0;
      for (const auto& w : j.at("workloads")) total += w.value("cases", 0);
    } catch (const std::exception&) {
      total = -1;
    }
  }
  std::error_code ec;
  fs::remove(tmp, ec);
  return total;
}

json findings_from(const std::string& binary, const std::string& doc_path, const fs::path& work, double timeout_s) {
  const std::string out = (work / "findings-again.json").string(), log = (work / "findings-again.log").string();
  ProcessLimits limits;
  limits.timeout_s = timeout_s;
  const ProcessResult pr = run_process(binary, {"--gtb_findings_from=" + doc_path, "--gtb_out=" + out}, log, nullptr, limits);
  json f;
  if (pr.ok()) {
    try {
      std::ifstream in(out);
      f = json::parse(in);
      if (!f.is_object() || f.empty()) f = json();
    } catch (const std::exception&) {
      f = json();
    }
  }
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(log, ec);
  return f;
}

std::vector<std::string> families_enriched_by_merge(const std::vector<Record>& before, const json& merged_doc) {
  std::map<std::string, const Record*> by_id;
  for (const Record& r : before) by_id[r.id] = &r;
  std::set<std::string> out;
  for (const Record& r : records_of(merged_doc)) {
    auto it = by_id.find(r.id);
    if (it == by_id.end()) continue;
    for (const auto& [name, c] : r.counters)
      if (!it->second->counters.count(name)) out.insert(r.family);
  }
  return {out.begin(), out.end()};
}

std::vector<std::string> families_to_derive_again(const std::vector<Record>& before, const json& merged_doc, int runs) {
  if (runs <= 1) return families_enriched_by_merge(before, merged_doc);
  std::vector<std::string> out;
  if (const auto f = merged_doc.find("findings"); f != merged_doc.end() && f->is_object())
    for (const auto& item : f->items()) out.push_back(item.key());
  return out;
}

FamilyOutcome run_one_family(const FamilyJob& job, const RunSettings& s, int total) {
  FamilyOutcome out;
  const std::string res_path = (s.work / (job.stem + ".json")).string();
  const std::string log_path = (s.work / (job.stem + ".log")).string();
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  double last_print = host_seconds();
  const std::string case_path = (s.work / (job.stem + ".case")).string();
  std::error_code rm_ec;
  fs::remove(case_path, rm_ec);
  ProcessLimits limits;
  limits.timeout_s = family_timeout_of(s);
  limits.env = {{"GTB_CASE_FILE", case_path}};
  if (!tty) {
    if (total >= 0)
      std::fprintf(stderr, "%s running %d case%s (time limit %g s)...\n", job.label.c_str(), total,
                   total == 1 ? "" : "s", limits.timeout_s);
    else
      std::fprintf(stderr, "%s running (time limit %g s)...\n", job.label.c_str(), limits.timeout_s);
  }
  std::vector<std::string> args = {"--gtb_out=" + res_path, "--gtb_suite=" + s.suite,
                                   "--benchmark_out=" + (s.work / (job.stem + ".gbench.json")).string(),
                                   "--benchmark_out_format=json"};
  if (s.budget > 0) args.push_back("--gtb_budget=" + std::to_string(s.budget));
  args.insert(args.end(), s.selection.begin(), s.selection.end());
  for (const std::string& f : repetition_flags(s.repetitions, runs_as_ranks(job.family) && s.launch.ranks > 1))
    args.push_back(f);
  health::Monitor monitor;
  if (s.health) monitor.start();  // before the clock: its speed reading is not the family's time
  const double t0 = host_seconds();
  auto progress = [&] {
    if (s.health) monitor.tick();
    if (job.on_tick) job.on_tick();
    const double now = host_seconds();
    if (!tty && now - last_print < 15) return;
    last_print = now;
    const int done = count_finished(log_path, job.family);
    std::fprintf(stderr, tty ? "\r%s %d/%d cases  %.0f s   " : "%s %d/%d cases  %.0f s\n", job.label.c_str(), done,
                 total, now - t0);
    std::fflush(stderr);
  };
  const ProcessResult pr = run_family(job.family, job.binary, s.launch, args, log_path, progress, limits);
  if (tty) std::fprintf(stderr, "\r%70s\r", "");
  const double secs = host_seconds() - t0;
  out.entry = {{"name", job.family}};
  if (job.tag_run) out.entry["run"] = job.run;
  out.entry["seconds"] = secs;
  if (s.health) {
    out.entry["health"] = monitor.finish();
    health::print_family_warning(stderr, job.label, out.entry["health"]);
  }
  if (interrupted()) {
    out.entry["status"] = "failed";
    out.entry["exit_code"] = 128 + interrupt_signal();
    out.entry["records"] = 0;
    out.entry["error"] = "interrupted";
    std::fprintf(stderr, "%s interrupted after %.1f s\n", job.label.c_str(), secs);
    return out;
  }
  out.finished = true;
  std::string error;
  const std::string last = last_case_started(case_path);
  if (pr.timed_out) {
    error = pr.describe() + " (last case started: " + (last.empty() ? "none" : last) + ")";
  } else if (!pr.ok()) {
    error = pr.describe();
    if (!last.empty() && pr.error.empty()) error += " (last case started: " + last + ")";
  } else if (std::error_code ec; !fs::exists(res_path, ec)) {
    error = "exited with code 0 but wrote no results file";
  } else {
    try {
      const json doc = load_document(res_path);
      out.records = records_of(doc);
      out.context = doc.at("context");
      if (doc.contains("findings") && doc["findings"].is_object()) out.findings = doc["findings"];
      std::map<std::string, int> by_status;
      for (const auto& r : out.records) by_status[to_string(r.status)]++;
      out.entry["status"] = "ok";
      out.entry["exit_code"] = 0;
      out.entry["records"] = out.records.size();
      // What the family declares it publishes for the others (published.h), from its own entry.
      for (const auto& f : json_read::array_at(doc, {"families"}))
        if (const json* p = json_read::find(f, "publishes"); p && json_read::string_at(f, {"name"}) == job.family)
          out.entry["publishes"] = *p;
      std::string counts;
      for (const auto& [st, c] : by_status) counts += (counts.empty() ? "" : ", ") + std::to_string(c) + " " + st;
      std::fprintf(stderr, "%s ok: %zu records (%s) in %.1f s\n", job.label.c_str(), out.records.size(),
                   counts.c_str(), secs);
      out.ok = true;
    } catch (const std::exception& e) {
      error = "exited with code 0 but its results file is unreadable: " + without_path(e.what(), res_path);
    }
  }
  if (!error.empty()) {
    out.records.clear();
    out.entry["status"] = "failed";
    out.entry["exit_code"] = pr.signal ? 128 + pr.signal : pr.exit_code;
    out.entry["records"] = 0;
    out.entry["error"] = error;
    std::fprintf(stderr, "%s FAILED: %s\n%s", job.label.c_str(), error.c_str(), tail_of_file(log_path, 15).c_str());
  }
  return out;
}

void absorb_family_run(const FamilyOutcome& res, const std::string& family, json& context, json& findings,
                       std::vector<Record>& records) {
  merge_family_context(context, res.context, family);
  for (auto it = res.findings.begin(); it != res.findings.end(); ++it) findings[it.key()] = it.value();
  records.insert(records.end(), res.records.begin(), res.records.end());
}

fs::path make_work_folder(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error(std::string("cannot create a temporary folder: ") + std::strerror(errno));
  return tmpl;
}

json not_run_entry(const std::string& family, int run, bool tag_run) {
  json e = {{"name", family}};
  if (tag_run) e["run"] = run;
  e["status"] = "not_run";
  e["exit_code"] = -1;
  e["seconds"] = 0.0;
  e["records"] = 0;
  e["error"] = "not run: the run was interrupted";
  return e;
}

std::vector<Record> merge_runs(const std::vector<std::vector<Record>>& runs) {
  if (runs.size() == 1) return runs.front();
  std::vector<Record> merged;
  std::map<std::string, std::size_t> at;
  // Each merged record's counters and samples from every ok run, in order.
  std::vector<std::vector<std::map<std::string, Counter>>> run_counters;
  std::vector<std::vector<std::vector<double>>> run_samples;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const Record& r : runs[k]) {
      auto it = at.find(r.id);
      if (it == at.end()) {
        it = at.emplace(r.id, merged.size()).first;
        Record first = r;
        first.runs.clear();
        first.samples.clear();
        first.sample_groups.clear();
        first.stats.reset();
        first.value.reset();
        first.paired.clear();
        merged.push_back(std::move(first));
        run_counters.emplace_back();
        run_samples.emplace_back();
      }
      Record& m = merged[it->second];
      RunStat x;
      x.run = static_cast<int>(k + 1);
      x.status = r.status;
      if (r.status == Status::ok) {
        x.value = r.value;
        x.stats = r.stats;
        add_sample_group(m, r.samples, r.sample_groups);  // the run's repetitions stay groups
        for (const PairedRounds& p : r.paired) {  // every run's rounds of a pair, in run order
          auto q = std::find_if(m.paired.begin(), m.paired.end(), [&](const PairedRounds& y) { return y.with == p.with; });
          if (q == m.paired.end()) {
            m.paired.push_back(p);
          } else {
            q->a_s.insert(q->a_s.end(), p.a_s.begin(), p.a_s.end());
            q->b_s.insert(q->b_s.end(), p.b_s.begin(), p.b_s.end());
          }
        }
        run_counters[it->second].push_back(r.counters);
        if (!r.samples.empty()) run_samples[it->second].push_back(r.samples);
        if (m.status != Status::ok && status_rank(m.status) < status_rank(Status::ok)) {
          // The first ok run supplies the descriptive fields (check, counters, info).
          m.check = r.check;
          m.counters = r.counters;
          m.info = r.info;
          m.reps_per_sample = r.reps_per_sample;
          m.warmup_samples = r.warmup_samples;
          m.stop_reason = r.stop_reason;
          m.work_per_rep = r.work_per_rep;
        }
      }
      if (m.runs.empty() || status_rank(r.status) > status_rank(m.status)) {
        m.status = r.status;
        m.status_detail = r.status == Status::ok || (m.runs.empty() && r.status == Status::skipped)
                              ? r.status_detail
                              : "run " + std::to_string(k + 1) + ": " + r.status_detail;
        if (r.status == Status::invalid) m.check = r.check;
      }
      m.runs.push_back(x);
    }
  }
  for (std::size_t i = 0; i < merged.size(); ++i) {
    Record& m = merged[i];
    // A counter every ok run reports (a step's milliseconds, a share of the step) is the median over
    // those runs, as the statistics pool the runs' samples: never the first run's figure alone.
    if (m.status == Status::ok) median_counters(m.counters, run_counters[i]);
    if (m.status == Status::ok && !m.samples.empty()) {
      // Every run weighs the same (a run its stopping rule sampled longer, often a disturbed one,
      // no more than the others); the samples are all kept.
      m.stats = compute_stats_of_runs(run_samples[i]);
      m.value = m.metric_of_seconds(m.stats->median);
    } else if (m.status == Status::ok) {
      // Ok runs without kept samples: the median of their values stands for the record.
      std::vector<double> v;
      for (const auto& x : m.runs)
        if (x.value) v.push_back(*x.value);
      if (!v.empty()) m.value = median(v);
    } else {
      m.samples.clear();
      m.sample_groups.clear();
      m.paired.clear();
    }
  }
  return merged;
}

}  // namespace gtb::driver
