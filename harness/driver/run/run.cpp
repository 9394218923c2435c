// gtb run: each family in its own process, merged into one results file written atomically.
#include <CLI/CLI.hpp>

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

#include "harness/driver/commands.h"
#include "harness/driver/common/families.h"
#include "harness/driver/run/health.h"
#include "harness/driver/run/launch.h"
#include "harness/driver/common/process.h"
#include "harness/driver/run/runs.h"
#include "harness/driver/report/render_summary.h"
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

// --family-timeout: a positive, finite number of seconds; returns 0 when `text` is not one.
double parse_timeout(const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || !(x > 0)) return 0;
  return x;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  CLI::App app{"Run benchmark families and write one results file.", "gtb run"};
  std::string families_csv;
  bool quick = false, full = false, keep_logs = false, quiet = false;
  std::string out = "gtb-results.json";
  std::string logs_dir;
  double budget = 0;
  double wait_idle = 0;
  int runs = 1;
  app.add_option("--family", families_csv, "Comma-separated families (default: all)");
  app.add_flag("--quick", quick, "Quick suite: few points, small budgets (default)");
  app.add_flag("--full", full, "Full suite: every point, larger budgets");
  app.add_option("--out", out, "Results file to write (atomically)")->capture_default_str();
  app.add_option("--budget", budget, "Sampling budget per record in seconds (overrides the suite's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--runs", runs,
                 "Run the families K times, interleaved (A, B, C, A, B, C...); the file keeps each run's "
                 "statistics. A CI baseline wants K >= 3")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  std::string timeout_text;
  CLI::Option* timeout_opt = app.add_option("--family-timeout", timeout_text,
                 "Seconds one run of a family may take before it is stopped (with its process group) and "
                 "recorded failed (default: 600 quick, 3600 full, scaled up by a larger --budget)")
      ->type_name("SECONDS");
  app.add_option("--logs", logs_dir, "Keep each family's output log in this folder");
  app.add_flag("--keep-logs", keep_logs, "Keep the logs next to the results file (<out>.logs/)");
  app.add_flag("-q,--quiet", quiet, "No summary table");
  app.add_flag("--wait-idle{60}", wait_idle,
               "Before measuring, wait (at most SECONDS, default 60, up to 3600) for other processes to leave the CPUs idle")
      ->type_name("[=SECONDS]")
      ->check(CLI::Range(0.0, 3600.0));
  LaunchRequest launch;
  add_launch_options(app, launch);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gtb run: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (quick && full) {
    std::cerr << "gtb run: --quick and --full exclude each other\n";
    return kExitBadInput;
  }
  if (const std::string why = prepare_launch(launch); !why.empty()) {
    std::cerr << "gtb run: " << why << "\n";
    return kExitBadInput;
  }
  RunSettings settings;
  settings.suite = gtb::to_string(full ? Suite::full : Suite::quick);
  settings.budget = budget;
  settings.launch = launch;
  if (timeout_opt->count() > 0) {
    settings.family_timeout = parse_timeout(timeout_text);
    if (settings.family_timeout <= 0) {
      std::cerr << "gtb run: --family-timeout must be a positive number of seconds, not '" << timeout_text << "'\n";
      return kExitBadInput;
    }
  }
  std::vector<std::string> families;
  try {
    families = families_csv.empty() ? known_families() : select_families(families_csv);
  } catch (const std::exception& e) {
    std::cerr << "gtb run: " << e.what() << "\n";
    return kExitBadInput;
  }
  try {
    check_writable(out);
  } catch (const std::exception& e) {
    std::cerr << "gtb run: --out " << out << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  const bool logs_beside_out = keep_logs && logs_dir.empty();
  if (logs_beside_out) logs_dir = out + ".logs";
  if (!logs_dir.empty()) {
    if (const std::string why = check_logs_dir(logs_dir); !why.empty()) {
      std::cerr << "gtb run: " << (logs_beside_out ? "--keep-logs " : "--logs ") << logs_dir << ": " << why << "\n";
      return kExitBadInput;
    }
  }

  std::string tmpl = (fs::temp_directory_path() / "gtb-run-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    std::cerr << "gtb run: cannot create a temporary folder: " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  settings.work = tmpl;
  install_interrupt_handlers();

  json health_ctx = {{"thresholds", health::thresholds_json({})}};
  if (wait_idle > 0) health_ctx["wait_idle"] = health::wait_idle(wait_idle);
  health_ctx["start"] = health::describe(health::take());

  // Runs are interleaved (A, B, C, then A, B, C again) so that slow drift on the machine spreads
  // over every family instead of landing on the ones that happened to run last.
  const bool several = runs > 1;
  json context;
  json fams = json::array();
  json findings = json::object();
  // Each run's findings as its family binaries computed them (kept beside the merged ones: the report
  // validates the cost model within each run, its terms against its own steps).
  std::vector<json> run_findings(static_cast<std::size_t>(runs), json::object());
  std::vector<std::vector<Record>> per_run(static_cast<std::size_t>(runs));
  std::map<std::string, int> cases;
  std::map<std::string, bool> list_timed_out;
  const double limit = family_timeout_of(settings);
  bool any_failed = false;
  std::size_t finished = 0;
  const std::size_t steps = families.size() * static_cast<std::size_t>(runs);
  std::size_t step = 0;
  for (int run = 1; run <= runs; ++run) {
    for (const auto& f : families) {
      ++step;
      if (interrupted()) {
        fams.push_back(not_run_entry(f, run, several));
        continue;
      }
      FamilyJob job;
      job.family = f;
      job.binary = family_binary(f);
      job.run = run;
      job.tag_run = several;
      job.stem = several ? f + ".run" + std::to_string(run) : f;
      if (!cases.count(f)) cases[f] = count_cases(job.binary, settings.suite, settings.work, limit, &list_timed_out[f]);
      if (list_timed_out[f] && !interrupted()) {
        // Hung before its first case: running it would hang again.
        json e = {{"name", f}};
        if (several) e["run"] = run;
        char why[96];
        std::snprintf(why, sizeof why, "timed out after %g s listing its cases (last case started: none)", limit);
        e.update({{"status", "failed"}, {"exit_code", -1}, {"seconds", limit}, {"records", 0}, {"error", why}});
        std::fprintf(stderr, "[%zu/%zu] %-10s FAILED: %s\n", step, steps, f.c_str(), why);
        fams.push_back(e);
        ++finished;
        any_failed = true;
        continue;
      }
      char label[160];
      if (several)
        std::snprintf(label, sizeof label, "[%zu/%zu] %-10s run %d/%d", step, steps, f.c_str(), run, runs);
      else
        std::snprintf(label, sizeof label, "[%zu/%zu] %-10s", step, steps, f.c_str());
      job.label = label;
      FamilyOutcome res = run_one_family(job, settings, cases[f]);
      fams.push_back(res.entry);
      if (!res.finished) continue;
      ++finished;
      if (!res.ok) {
        any_failed = true;
        continue;
      }
      merge_family_context(context, res.context, f);
      for (auto it = res.findings.begin(); it != res.findings.end(); ++it) {
        findings[it.key()] = it.value();
        run_findings[static_cast<std::size_t>(run - 1)][it.key()] = it.value();
      }
      auto& recs = per_run[static_cast<std::size_t>(run - 1)];
      recs.insert(recs.end(), res.records.begin(), res.records.end());
    }
  }

  // An interruption keeps what finished: the old file is replaced only when some family ended.
  const int sig = interrupt_signal();
  if (sig && finished == 0) {
    finish_work_folder(settings.work, logs_dir);
    std::fprintf(stderr, "gtb run: interrupted before any family finished; %s left as it was\n", out.c_str());
    return 128 + sig;
  }
  bool logs_lost = false;
  if (context.is_null()) context = json{{"note", "no family produced a context"}};
  context["health"] = health_ctx;
  try {
    const std::vector<Record> merged = merge_runs(per_run);
    json doc = make_merged_document(context, settings.suite, fams, merged, findings, runs);
    if (several) {
      json per = json::array();
      for (int k = 0; k < runs; ++k) per.push_back({{"run", k + 1}, {"findings", run_findings[static_cast<std::size_t>(k)]}});
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
          if (json fresh = findings_from(family_binary(f), merged_path, settings.work, limit); !fresh.is_null())
            doc["findings"][f] = fresh;
      std::error_code ec;
      std::filesystem::remove(merged_path, ec);
    }
    write_file_atomic(out, doc.dump(1) + "\n");
    logs_lost = !finish_work_folder(settings.work, logs_dir).empty();
    if (!quiet) print_summary(std::cout, doc);
  } catch (const std::exception& e) {
    finish_work_folder(settings.work, logs_dir);
    std::cerr << "gtb run: cannot write " << out << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  if (sig) {
    std::fprintf(stderr, "gtb run: interrupted; %s holds the %zu family runs that finished\n", out.c_str(), finished);
    return 128 + sig;
  }
  std::fprintf(stderr, "results: %s\n", out.c_str());
  return any_failed || logs_lost ? 1 : kExitOk;
}

}  // namespace gtb::driver
