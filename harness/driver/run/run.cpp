// gtb run: each family in its own process, merged into one results file written atomically.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/families.h"
#include "harness/driver/common/health.h"
#include "harness/driver/common/launch.h"
#include "harness/driver/common/process.h"
#include "harness/driver/common/runs.h"
#include "harness/driver/common/render_summary.h"
#include "harness/document/results.h"
#include "harness/runtime/stopping.h"

namespace gtb::driver {

namespace fs = std::filesystem;

namespace {

// Copies the families' logs out of the work folder, then removes it. Returns what went wrong with
// the copy ("" when nothing): whoever asked for the logs (gpu-check reads them) must hear of a loss.
std::string finish_work_folder(const fs::path& work, const std::string& logs_dir) {
  std::string problem;
  if (!logs_dir.empty()) {
    std::error_code ec;
    fs::create_directories(logs_dir, ec);
    if (ec) problem = "cannot create " + logs_dir + ": " + ec.message();
    for (auto it = fs::directory_iterator(work, ec); problem.empty() && !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.extension() != ".log" && p.string().find(".gbench.json") == std::string::npos) continue;
      std::error_code cec;
      fs::copy_file(p, fs::path(logs_dir) / p.filename(), fs::copy_options::overwrite_existing, cec);
      if (cec) problem = "cannot copy " + p.filename().string() + " into " + logs_dir + ": " + cec.message();
    }
    if (problem.empty() && ec) problem = "cannot list the families' logs: " + ec.message();
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  if (!problem.empty()) std::fprintf(stderr, "gtb run: logs not kept: %s\n", problem.c_str());
  return problem;
}

// --logs DIR must be a folder this run can write into, checked before anything runs. Creates it;
// removes it again when it was made here and turns out unusable.
std::string check_logs_dir(const std::string& dir) {
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the folder (" + ec.message() + ")";
  if (!fs::is_directory(dir, ec)) return "is not a folder";
  try {
    check_writable((fs::path(dir) / "probe.log").string());
  } catch (const std::exception& e) {
    if (!existed) fs::remove(dir, ec);
    return e.what();
  }
  return "";
}

// --cases: "FROM:TO", either end may be left out, TO not below FROM (the family binary's --gtb_cases).
bool valid_cases(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
  for (const std::string& n : {a, b})
    if (n.size() > 12 || n.find_first_not_of("0123456789") != std::string::npos) return false;
  return a.empty() || b.empty() || std::stoull(b) >= std::stoull(a);
}

// --family-timeout: a positive, finite number of seconds; returns 0 when `text` is not one.
double parse_timeout(const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || !(x > 0)) return 0;
  return x;
}

// The flags of gtb run, as given.
struct RunOptions {
  std::string families_csv;
  bool quick = false, full = false, keep_logs = false, quiet = false;
  std::string summary = "short";  // --summary: what the end of the run prints
  std::string out = "gtb-results.json";
  std::string logs_dir;
  double budget = 0;
  double wait_idle = 0;
  int runs = 1;
  int repetitions = 1;
  std::string timeout_text;
  bool timeout_given = false;
  std::string backend, cases_text;  // --backend, --cases: passed on to each family binary
  LaunchRequest launch;
};

// Parses the flags; an exit code when the command ends here (--help, a flag CLI11 refuses).
std::optional<int> parse_run_flags(int argc, char** argv, RunOptions& o) {
  CLI::App app{"Run benchmark families and write one results file.", "gtb run"};
  app.add_option("--family", o.families_csv, "Comma-separated families (default: all)");
  app.add_flag("--quick", o.quick, "Quick suite: few points, small budgets (default)");
  app.add_flag("--full", o.full, "Full suite: every point, larger budgets");
  app.add_option("--out", o.out, "Results file to write (atomically)")->capture_default_str();
  app.add_option("--budget", o.budget, "Sampling budget per record in seconds (overrides the suite's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--runs", o.runs,
                 "Run the families K times, interleaved (A, B, C, A, B, C...); the file keeps each run's "
                 "statistics. A CI baseline wants K >= 3")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--repetitions", o.repetitions,
                 "Within each run, run each family's cases R times in a random interleaved order (Google Benchmark's "
                 "random interleaving), each record pooling its repetitions' samples: the two sides of an A/B pair "
                 "then share the machine's moments instead of meeting it at two")
      ->check(CLI::Range(1, 20))
      ->type_name("R")
      ->capture_default_str();
  CLI::Option* timeout_opt = app.add_option("--family-timeout", o.timeout_text,
                 "Seconds one run of a family may take before it is stopped (with its process group) and "
                 "recorded failed (default: 600 quick, 3600 full, scaled up by a larger --budget)")
      ->type_name("SECONDS");
  app.add_option("--backend", o.backend, "Only this backend's records: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--cases", o.cases_text,
                 "Only these of each family's (backend's) records, in run order: FROM:TO, 0-based, TO excluded, "
                 "either end may be left out (0:2 the first two, 2: the rest); a family with none is not run")
      ->type_name("FROM:TO");
  app.add_option("--logs", o.logs_dir, "Keep each family's output log in this folder");
  app.add_flag("--keep-logs", o.keep_logs, "Keep the logs next to the results file (<out>.logs/)");
  app.add_flag("-q,--quiet", o.quiet, "No summary: none printed at the end, no table file written");
  app.add_option("--summary", o.summary,
                 "short: the end fits one screen (families, warnings, records counted, the verdict's headline), "
                 "every record in a table written beside the results file (OUT without .json, -summary.txt) and "
                 "named; full: that table printed too, before the short end")
      ->check(CLI::IsMember({"short", "full"}))
      ->capture_default_str();
  app.add_flag("--wait-idle{60}", o.wait_idle,
               "Before measuring, wait (at most SECONDS, default 60, up to 3600) for other processes to leave the CPUs idle")
      ->type_name("[=SECONDS]")
      ->check(CLI::Range(0.0, 3600.0));
  add_launch_options(app, o.launch);
  if (const auto rc = parse_cli(app, argc, argv, "gtb run")) return rc;
  o.timeout_given = timeout_opt->count() > 0;
  return std::nullopt;
}

// Everything checked before anything runs: the suite, the launch, the time limit, the families, the
// results file and the logs folder. Fills `settings` (all but the work folder) and `families`; an
// error message when the request cannot run.
std::string check_run_request(RunOptions& o, RunSettings& settings, std::vector<std::string>& families) {
  if (o.quick && o.full) return "--quick and --full exclude each other";
  if (!o.cases_text.empty() && !valid_cases(o.cases_text))
    return "--cases is FROM:TO (0-based, TO excluded, TO not below FROM), not '" + o.cases_text + "'";
  if (const std::string why = prepare_launch(o.launch); !why.empty()) return why;
  settings.suite = gtb::to_string(o.full ? Suite::full : Suite::quick);
  settings.budget = o.budget;
  settings.repetitions = o.repetitions;
  if (!o.backend.empty()) settings.selection.push_back("--gtb_backend=" + o.backend);
  if (!o.cases_text.empty()) settings.selection.push_back("--gtb_cases=" + o.cases_text);
  settings.launch = o.launch;
  if (o.timeout_given) {
    settings.family_timeout = parse_timeout(o.timeout_text);
    if (settings.family_timeout <= 0)
      return "--family-timeout must be a positive number of seconds, not '" + o.timeout_text + "'";
  }
  try {
    families = select_families(o.families_csv);
  } catch (const std::exception& e) {
    return e.what();
  }
  try {
    check_writable(o.out);
  } catch (const std::exception& e) {
    return "--out " + o.out + ": " + e.what();
  }
  const bool logs_beside_out = o.keep_logs && o.logs_dir.empty();
  if (logs_beside_out) o.logs_dir = o.out + ".logs";
  if (!o.logs_dir.empty()) {
    if (const std::string why = check_logs_dir(o.logs_dir); !why.empty())
      return (logs_beside_out ? "--keep-logs " : "--logs ") + o.logs_dir + ": " + why;
  }
  return "";
}

// What the family runs gave, run by run.
struct RunTally {
  json context;
  json fams = json::array();
  json findings = json::object();
  // Each run's findings as its family binaries computed them (kept beside the merged ones: the report
  // validates the cost model within each run, its terms against its own steps).
  std::vector<json> run_findings;
  std::vector<std::vector<Record>> per_run;
  bool any_failed = false;
  std::size_t finished = 0;
};

// The families entry of a family that hung before its first case: running it would hang again.
json list_timed_out_entry(const std::string& f, int run, bool several, double limit, std::size_t step,
                          std::size_t steps) {
  json e = {{"name", f}};
  if (several) e["run"] = run;
  char why[96];
  std::snprintf(why, sizeof why, "timed out after %g s listing its cases (last case started: none)", limit);
  e.update({{"status", "failed"}, {"exit_code", -1}, {"seconds", limit}, {"records", 0}, {"error", why}});
  std::fprintf(stderr, "[%zu/%zu] %-10s FAILED: %s\n", step, steps, f.c_str(), why);
  return e;
}

// Runs are interleaved (A, B, C, then A, B, C again) so that slow drift on the machine spreads
// over every family instead of landing on the ones that happened to run last.
RunTally run_families(const std::vector<std::string>& families, int runs, const RunSettings& settings) {
  const bool several = runs > 1;
  RunTally r;
  r.run_findings.assign(static_cast<std::size_t>(runs), json::object());
  r.per_run.resize(static_cast<std::size_t>(runs));
  std::map<std::string, int> cases;
  std::map<std::string, bool> list_timed_out;
  const double limit = family_timeout_of(settings);
  const std::size_t steps = families.size() * static_cast<std::size_t>(runs);
  std::size_t step = 0;
  for (int run = 1; run <= runs; ++run) {
    for (const auto& f : families) {
      ++step;
      if (interrupted()) {
        r.fams.push_back(not_run_entry(f, run, several));
        continue;
      }
      FamilyJob job;
      job.family = f;
      job.binary = family_binary(f);
      job.run = run;
      job.tag_run = several;
      job.stem = several ? f + ".run" + std::to_string(run) : f;
      if (!cases.count(f))
        cases[f] = count_cases(job.binary, settings.suite, settings.work, limit, &list_timed_out[f], settings.selection);
      if (!settings.selection.empty() && cases[f] == 0) {
        // Nothing of this family is selected (no record of the backend, or the slice is past its end).
        std::fprintf(stderr, "[%zu/%zu] %-10s none of its records selected; not run\n", step, steps, f.c_str());
        continue;
      }
      if (list_timed_out[f] && !interrupted()) {
        r.fams.push_back(list_timed_out_entry(f, run, several, limit, step, steps));
        ++r.finished;
        r.any_failed = true;
        continue;
      }
      char label[160];
      if (several)
        std::snprintf(label, sizeof label, "[%zu/%zu] %-10s run %d/%d", step, steps, f.c_str(), run, runs);
      else
        std::snprintf(label, sizeof label, "[%zu/%zu] %-10s", step, steps, f.c_str());
      job.label = label;
      FamilyOutcome res = run_one_family(job, settings, cases[f]);
      r.fams.push_back(res.entry);
      if (!res.finished) continue;
      ++r.finished;
      if (!res.ok) {
        r.any_failed = true;
        continue;
      }
      absorb_family_run(res, f, r.context, r.findings, r.per_run[static_cast<std::size_t>(run - 1)]);
      for (auto it = res.findings.begin(); it != res.findings.end(); ++it)
        r.run_findings[static_cast<std::size_t>(run - 1)][it.key()] = it.value();
    }
  }
  return r;
}

// The results document of the runs: the merged records, each run's findings when there are several,
// and the findings derived again where the merge changed what a family's findings rest on.
json results_document(const RunTally& r, const RunSettings& settings, int runs, const json& context) {
  const std::vector<Record> merged = merge_runs(r.per_run);
  json doc = make_merged_document(context, settings.suite, r.fams, merged, r.findings, runs);
  if (settings.repetitions > 1) doc["repetitions"] = settings.repetitions;
  if (runs > 1) {
    json per = json::array();
    for (int k = 0; k < runs; ++k) per.push_back({{"run", k + 1}, {"findings", r.run_findings[static_cast<std::size_t>(k)]}});
    doc["run_findings"] = per;
  }
  // Each family computed its findings in its own process, from its own run's records, before the
  // merge added what another family measured to its records (a percent of a measured peak): such a
  // family, and with several runs every family, derives its findings again from the merged
  // records, so that they stand for every run and carry those counters too.
  if (const auto again = families_to_derive_again(merged, doc, runs); !again.empty()) {
    const std::string merged_path = (settings.work / "merged.json").string();
    write_file_atomic(merged_path, doc.dump() + "\n");
    for (const std::string& f : again)
      if (doc["findings"].contains(f))
        if (json fresh = findings_from(family_binary(f), merged_path, settings.work, family_timeout_of(settings));
            !fresh.is_null())
          doc["findings"][f] = fresh;
    std::error_code ec;
    std::filesystem::remove(merged_path, ec);
  }
  return doc;
}

// The end of the run: the whole table into its file beside the results, then the screen's end
// (with --summary full, the whole table first). False when the table file could not be written (said
// on stderr; the screen's end then names no file).
bool print_end(const json& doc, const RunOptions& o) {
  const std::string table = summary_path(o.out);
  std::ostringstream whole;
  print_summary(whole, doc);
  bool written = true;
  try {
    write_file_atomic(table, whole.str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb run: the summary table not kept: cannot write %s: %s\n", table.c_str(), e.what());
    written = false;
  }
  if (o.summary == "full") std::cout << whole.str();
  print_short_summary(std::cout, doc, written ? table : "");
  std::cout.flush();  // before the results line on stderr, when both go to one log
  return written;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  RunOptions o;
  if (const auto rc = parse_run_flags(argc, argv, o)) return *rc;
  RunSettings settings;
  std::vector<std::string> families;
  if (const std::string why = check_run_request(o, settings, families); !why.empty()) {
    std::cerr << "gtb run: " << why << "\n";
    return kExitBadInput;
  }
  try {
    settings.work = make_work_folder("gtb-run");
  } catch (const std::exception& e) {
    std::cerr << "gtb run: " << e.what() << "\n";
    return kExitBadInput;
  }
  install_interrupt_handlers();
  // Input only a family can judge (an interpreter it runs): said before anything is measured or written.
  std::vector<std::pair<std::string, std::string>> binaries;
  for (const auto& f : families) binaries.emplace_back(f, family_binary(f));
  if (const std::string why = precheck_families(binaries); !why.empty()) {
    std::error_code ec;
    fs::remove_all(settings.work, ec);
    std::cerr << "gtb run: " << why << "\n";
    return kExitBadInput;
  }

  json health_ctx = {{"thresholds", health::thresholds_json({})}};
  if (o.wait_idle > 0) health_ctx["wait_idle"] = health::wait_idle(o.wait_idle);
  health_ctx["start"] = health::describe(health::take());

  RunTally r = run_families(families, o.runs, settings);

  // An interruption keeps what finished: the old file is replaced only when some family ended.
  const int sig = interrupt_signal();
  if (sig && r.finished == 0) {
    finish_work_folder(settings.work, o.logs_dir);
    std::fprintf(stderr, "gtb run: interrupted before any family finished; %s left as it was\n", o.out.c_str());
    return 128 + sig;
  }
  bool logs_lost = false, table_lost = false;
  if (r.context.is_null()) r.context = json{{"note", "no family produced a context"}};
  r.context["health"] = health_ctx;
  try {
    const json doc = results_document(r, settings, o.runs, r.context);
    write_file_atomic(o.out, doc.dump(1) + "\n");
    logs_lost = !finish_work_folder(settings.work, o.logs_dir).empty();
    if (!o.quiet) table_lost = !print_end(doc, o);
  } catch (const std::exception& e) {
    finish_work_folder(settings.work, o.logs_dir);
    std::cerr << "gtb run: cannot write " << o.out << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  if (sig) {
    std::fprintf(stderr, "gtb run: interrupted; %s holds the %zu family runs that finished\n", o.out.c_str(), r.finished);
    return 128 + sig;
  }
  std::fprintf(stderr, "results: %s\n", o.out.c_str());
  return r.any_failed || logs_lost || table_lost ? 1 : kExitOk;
}

}  // namespace gtb::driver
