// gtb ab BASE_BUILD NEW_BUILD: two builds' family binaries run alternately, decided on paired rounds.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/driver/commands.h"
#include "harness/driver/compare_cli.h"
#include "harness/driver/families.h"
#include "harness/driver/process.h"
#include "harness/driver/runs.h"
#include "harness/results.h"
#include "harness/stopping.h"

namespace gtb::driver {

namespace fs = std::filesystem;

namespace {

void ab_usage(std::FILE* f) {
  std::fprintf(f,
               "usage: gtb ab BASE_BUILD NEW_BUILD [options]\n"
               "  Runs the family binaries of two builds (folders holding bin/gtb-<family>) alternately on\n"
               "  this machine, round by round (the order flips every round), and decides each record from\n"
               "  the paired per-round ratios, so drift of the machine cancels out.\n"
               "  --family a,b                 families (default: all)\n"
               "  --rounds R                   rounds, each runs both builds once (default 5, at least 3)\n"
               "  --quick | --full             suite (default quick)\n"
               "  --budget S                   sampling budget per record in seconds\n"
               "  --keep DIR                   also write DIR/base.json and DIR/new.json (results with runs)\n"
               "%s%s"
               "An interruption (Ctrl-C, SIGTERM) stops it without a comparison (exit 130 or 143).\n",
               kCompareOutputHelp, kCompareExitHelp);
}

std::string binary_in(const std::string& build, const std::string& family) {
  for (const auto& p : {fs::path(build) / "bin" / ("gtb-" + family), fs::path(build) / ("gtb-" + family)})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  throw std::runtime_error(build + ": no executable gtb-" + family + " in it or in its bin/");
}

struct Side {
  std::string name;  // "base" or "new"
  std::string build;
  std::vector<std::vector<Record>> per_run;
  json context;
  json families = json::array();
  json findings = json::object();
  std::vector<std::string> failures;
};

}  // namespace

int cmd_ab(int argc, char** argv) {
  CompareOutput opt;
  std::string families_csv, keep_dir;
  int rounds = 5;
  bool quick = false, full = false;
  double budget = 0;
  std::vector<std::string> builds;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&](const std::string& flag) -> std::string {
        if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) return a.substr(flag.size() + 1);
        if (i + 1 >= argc) throw std::runtime_error(flag + " needs a value");
        return argv[++i];
      };
      auto is = [&](const std::string& flag) { return a == flag || a.rfind(flag + "=", 0) == 0; };
      auto number = [&](const std::string& flag, double lo, double hi) {
        const std::string v = value(flag);
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(x >= lo && x <= hi))
          throw std::runtime_error(flag + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
        return x;
      };
      if (a == "-h" || a == "--help") {
        ab_usage(stdout);
        return kExitOk;
      } else if (parse_compare_output_flag(argc, argv, i, opt)) {
        continue;
      } else if (is("--family")) {
        families_csv = value("--family");
      } else if (is("--rounds")) {
        const double r = number("--rounds", 3, 1000);
        if (r != static_cast<int>(r)) throw std::runtime_error("--rounds must be a whole number");
        rounds = static_cast<int>(r);
      } else if (is("--budget")) {
        budget = number("--budget", 1e-6, 1e6);
      } else if (is("--keep")) {
        keep_dir = value("--keep");
      } else if (a == "--quick") {
        quick = true;
      } else if (a == "--full") {
        full = true;
      } else if (!a.empty() && a[0] == '-') {
        throw std::runtime_error("unknown option " + a);
      } else {
        builds.push_back(a);
      }
    }
    if (builds.size() != 2) throw std::runtime_error("needs two build folders, BASE_BUILD and NEW_BUILD");
    if (quick && full) throw std::runtime_error("--quick and --full exclude each other");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    ab_usage(stderr);
    return kExitBadInput;
  }

  std::vector<std::string> families;
  std::vector<std::vector<std::string>> binaries;  // [family][0 base, 1 new]
  compare::Config config;
  try {
    families = families_csv.empty() ? known_families() : select_families(families_csv);
    for (const auto& f : families) binaries.push_back({binary_in(builds[0], f), binary_in(builds[1], f)});
    config = load_compare_config(opt);
    if (!keep_dir.empty()) {
      fs::create_directories(keep_dir);
      check_writable((fs::path(keep_dir) / "base.json").string());
    }
    if (!opt.out_path.empty()) check_writable(opt.out_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    return kExitBadInput;
  }
  config.paired = true;

  RunSettings settings;
  settings.suite = gtb::to_string(full ? Suite::full : Suite::quick);
  settings.budget = budget;
  std::string tmpl = (fs::temp_directory_path() / "gtb-ab-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "gtb ab: cannot create a temporary folder: %s\n", std::strerror(errno));
    return kExitBadInput;
  }
  settings.work = tmpl;
  install_interrupt_handlers();

  Side sides[2] = {{"base", builds[0], {}, {}, json::array(), json::object(), {}},
                   {"new", builds[1], {}, {}, json::array(), json::object(), {}}};
  for (auto& s : sides) s.per_run.resize(static_cast<std::size_t>(rounds));
  std::vector<int> cases(families.size(), -2);
  const std::size_t steps = 2 * families.size() * static_cast<std::size_t>(rounds);
  std::size_t step = 0;
  for (int round = 1; round <= rounds && !interrupted(); ++round) {
    for (std::size_t fi = 0; fi < families.size() && !interrupted(); ++fi) {
      // Flipping the order every round keeps "runs first" (cold caches, a turbo budget) from
      // siding with one build.
      for (int k = 0; k < 2 && !interrupted(); ++k) {
        const int side = (round % 2 == 1) ? k : 1 - k;
        Side& s = sides[side];
        const std::string& f = families[fi];
        if (cases[fi] == -2) cases[fi] = count_cases(binaries[fi][0], settings.suite, settings.work);
        FamilyJob job;
        job.family = f;
        job.binary = binaries[fi][static_cast<std::size_t>(side)];
        job.run = round;
        job.tag_run = true;
        job.stem = s.name + "." + f + ".round" + std::to_string(round);
        char label[160];
        std::snprintf(label, sizeof label, "[%zu/%zu] %-10s round %d/%d %-4s", ++step, steps, f.c_str(), round, rounds,
                      s.name.c_str());
        job.label = label;
        FamilyOutcome res = run_one_family(job, settings, cases[fi]);
        s.families.push_back(res.entry);
        if (!res.finished) break;
        if (!res.ok) {
          s.failures.push_back(f + " in round " + std::to_string(round) + ": " + res.entry.value("error", std::string()));
          continue;
        }
        if (s.context.is_null()) s.context = res.context;
        for (auto it = res.findings.begin(); it != res.findings.end(); ++it) s.findings[it.key()] = it.value();
        auto& recs = s.per_run[static_cast<std::size_t>(round - 1)];
        recs.insert(recs.end(), res.records.begin(), res.records.end());
      }
    }
  }
  std::error_code ec;
  fs::remove_all(settings.work, ec);
  if (interrupted()) {
    std::fprintf(stderr, "gtb ab: interrupted; no comparison\n");
    return 128 + interrupt_signal();
  }

  try {
    json docs[2];
    for (int k = 0; k < 2; ++k) {
      Side& s = sides[k];
      if (s.context.is_null()) throw std::runtime_error(s.build + ": no family run of this build finished");
      docs[k] = make_merged_document(s.context, settings.suite, s.families, merge_runs(s.per_run), s.findings, rounds);
      if (!keep_dir.empty())
        write_file_atomic((fs::path(keep_dir) / (s.name + ".json")).string(), docs[k].dump(1) + "\n");
    }
    compare::Result res = compare::compare_documents(docs[0], docs[1], config);
    res.base.path = builds[0];
    res.next.path = builds[1];
    int rc = emit_comparison(res, opt, "gtb ab");
    // A family that crashed or wrote nothing: in NEW it is a regression, in BASE the input is bad.
    for (const auto& f : sides[1].failures) std::fprintf(stderr, "gtb ab: NEW failed: %s\n", f.c_str());
    for (const auto& f : sides[0].failures) std::fprintf(stderr, "gtb ab: BASE failed: %s\n", f.c_str());
    if (!sides[0].failures.empty()) return kExitBadInput;
    if (!sides[1].failures.empty() && rc == kExitOk) rc = kExitRegression;
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
