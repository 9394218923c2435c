// gtb run: each family in its own process, merged into one results file written atomically.
#include <CLI/CLI.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "harness/driver/commands.h"
#include "harness/driver/families.h"
#include "harness/driver/health.h"
#include "harness/driver/launch.h"
#include "harness/driver/process.h"
#include "harness/driver/summary.h"
#include "harness/results.h"
#include "harness/stopping.h"

namespace gtb::driver {

namespace fs = std::filesystem;

namespace {
// Number of cases a family will run (asked of the binary itself), or -1 if it cannot say.
int count_cases(const std::string& family, const std::string& suite) {
  const std::string tmp = (fs::temp_directory_path() / ("gtb-count-" + std::to_string(::getpid()))).string();
  const ProcessResult pr = run_process(family_binary(family), {"--gtb_list", "--gtb_suite=" + suite}, tmp);
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
// Cases finished so far: Google Benchmark's console prints one line per case, named by record id.
int count_finished(const std::string& log_path, const std::string& family) {
  std::ifstream in(log_path);
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (line.rfind(family + "/", 0) == 0) ++n;
  return n;
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
  app.add_option("--family", families_csv, "Comma-separated families (default: all)");
  app.add_flag("--quick", quick, "Quick suite: few points, small budgets (default)");
  app.add_flag("--full", full, "Full suite: every point, larger budgets");
  app.add_option("--out", out, "Results file to write (atomically)")->capture_default_str();
  app.add_option("--budget", budget, "Sampling budget per record in seconds (overrides the suite's)")
      ->check(CLI::PositiveNumber);
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
  const std::string suite = full ? "full" : "quick";
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
  if (keep_logs && logs_dir.empty()) logs_dir = out + ".logs";

  std::string tmpl = (fs::temp_directory_path() / "gtb-run-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    std::cerr << "gtb run: cannot create a temporary folder: " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  const fs::path work = tmpl;
  install_interrupt_handlers();

  json health_ctx = {{"thresholds", health::thresholds_json({})}};
  if (wait_idle > 0) health_ctx["wait_idle"] = health::wait_idle(wait_idle);
  health_ctx["start"] = health::describe(health::take());

  json context;
  json fams = json::array();
  json findings = json::object();
  std::vector<Record> records;
  bool any_failed = false;
  const std::size_t n = families.size();
  for (std::size_t i = 0; i < n && !interrupted(); ++i) {
    const std::string& f = families[i];
    const std::string res_path = (work / (f + ".json")).string();
    const std::string log_path = (work / (f + ".log")).string();
    const int total = count_cases(f, suite);
    if (interrupted()) break;
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    double last_print = host_seconds();
    if (!tty) std::fprintf(stderr, "[%zu/%zu] %-10s running %d cases...\n", i + 1, n, f.c_str(), total);
    std::vector<std::string> args = {"--gtb_out=" + res_path, "--gtb_suite=" + suite,
                                     "--benchmark_out=" + (work / (f + ".gbench.json")).string(),
                                     "--benchmark_out_format=json"};
    if (budget > 0) args.push_back("--gtb_budget=" + std::to_string(budget));
    const double t0 = host_seconds();
    health::Monitor monitor;
    monitor.start();
    auto progress = [&] {
      monitor.tick();
      const double now = host_seconds();
      if (!tty && now - last_print < 15) return;
      last_print = now;
      const int done = count_finished(log_path, f);
      std::fprintf(stderr, tty ? "\r[%zu/%zu] %-10s %d/%d cases  %.0f s   " : "[%zu/%zu] %-10s %d/%d cases  %.0f s\n",
                   i + 1, n, f.c_str(), done, total, now - t0);
      std::fflush(stderr);
    };
    const ProcessResult pr = run_family(f, launch, args, log_path, progress);
    if (tty) std::fprintf(stderr, "\r%70s\r", "");
    const double secs = host_seconds() - t0;
    if (interrupted()) break;
    json entry = {{"name", f}, {"seconds", secs}};
    entry["health"] = monitor.finish();
    health::print_family_warning(stderr, "[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + f, entry["health"]);
    std::string error;
    if (!pr.ok()) {
      error = pr.describe();
    } else {
      try {
        const json doc = load_document(res_path);
        auto recs = records_of(doc);
        if (context.is_null()) context = doc.at("context");
        else if (doc.at("context").contains(f)) context[f] = doc.at("context")[f];  // a family's own section
        if (doc.contains("findings") && doc["findings"].is_object())
          for (auto it = doc["findings"].begin(); it != doc["findings"].end(); ++it) findings[it.key()] = it.value();
        std::map<std::string, int> by_status;
        for (const auto& r : recs) by_status[to_string(r.status)]++;
        entry["status"] = "ok";
        entry["exit_code"] = 0;
        entry["records"] = recs.size();
        std::string counts;
        for (const auto& [s, c] : by_status) counts += (counts.empty() ? "" : ", ") + std::to_string(c) + " " + s;
        std::fprintf(stderr, "[%zu/%zu] %-10s ok: %zu records (%s) in %.1f s\n", i + 1, n, f.c_str(), recs.size(),
                     counts.c_str(), secs);
        records.insert(records.end(), recs.begin(), recs.end());
      } catch (const std::exception& e) {
        error = std::string("unreadable results: ") + e.what();
      }
    }
    if (!error.empty()) {
      any_failed = true;
      entry["status"] = "failed";
      entry["exit_code"] = pr.signal ? 128 + pr.signal : pr.exit_code;
      entry["records"] = 0;
      entry["error"] = error;
      std::fprintf(stderr, "[%zu/%zu] %-10s FAILED: %s\n%s", i + 1, n, f.c_str(), error.c_str(),
                   tail_of_file(log_path, 15).c_str());
    }
    fams.push_back(entry);
  }

  auto cleanup = [&] {
    if (!logs_dir.empty()) {
      std::error_code ec;
      fs::create_directories(logs_dir, ec);
      for (const auto& e : fs::directory_iterator(work, ec))
        if (e.path().extension() == ".log" || e.path().string().find(".gbench.json") != std::string::npos)
          fs::copy_file(e.path(), fs::path(logs_dir) / e.path().filename(), fs::copy_options::overwrite_existing, ec);
    }
    std::error_code ec;
    fs::remove_all(work, ec);
  };
  if (interrupted()) {
    cleanup();
    std::fprintf(stderr, "gtb run: interrupted; %s left as it was\n", out.c_str());
    return 130;
  }
  if (context.is_null()) context = json{{"note", "no family produced a context"}};
  context["health"] = health_ctx;
  try {
    const json doc = make_document(context, suite, fams, records, findings);
    write_file_atomic(out, doc.dump(1) + "\n");
    cleanup();
    if (!quiet) print_summary(std::cout, doc);
  } catch (const std::exception& e) {
    cleanup();
    std::cerr << "gtb run: cannot write " << out << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  std::fprintf(stderr, "results: %s\n", out.c_str());
  return any_failed ? 1 : kExitOk;
}

}  // namespace gtb::driver
