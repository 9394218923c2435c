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
#include "harness/driver/compare/compare_cli.h"
#include "harness/driver/common/families.h"
#include "harness/driver/common/process.h"
#include "harness/driver/run/runs.h"
#include "harness/document/results.h"
#include "harness/runtime/stopping.h"

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
               "  --confirm-rounds C           a record slower after R rounds is decided again on C fresh\n"
               "                               rounds of its family and stays slower only if they agree\n"
               "                               (default: R; 0 turns the confirmation off)\n"
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
  json context;
  json families = json::array();
  json findings = json::object();
  std::vector<std::string> failures;
};

}  // namespace

int cmd_ab(int argc, char** argv) {
  CompareOutput opt;
  std::string families_csv, keep_dir;
  int rounds = 5, confirm_rounds = -1;  // -1: as many as rounds
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
      } else if (is("--confirm-rounds")) {
        const double r = number("--confirm-rounds", 0, 1000);
        if (r != static_cast<int>(r) || (r > 0 && r < 3))
          throw std::runtime_error("--confirm-rounds must be 0 (off) or a whole number of at least 3");
        confirm_rounds = static_cast<int>(r);
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
    if (confirm_rounds < 0) confirm_rounds = rounds;
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

  Side sides[2] = {{"base", builds[0], {}, json::array(), json::object(), {}},
                   {"new", builds[1], {}, json::array(), json::object(), {}}};
  std::vector<int> cases(families.size(), -2);
  // Runs rounds first..last of the families in `which` (indices into families) into per_run[side]
  // (one entry per round of that range); `steps` counts the family runs of the whole command.
  std::size_t step = 0, steps = 2 * families.size() * static_cast<std::size_t>(rounds);
  auto run_rounds = [&](int first, int last, const std::vector<std::size_t>& which,
                        std::vector<std::vector<Record>> (&per_run)[2], const char* what) {
    for (auto& pr : per_run) pr.assign(static_cast<std::size_t>(last - first + 1), {});
    for (int round = first; round <= last && !interrupted(); ++round) {
      for (std::size_t fi : which) {
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
          char label[200];
          std::snprintf(label, sizeof label, "[%zu/%zu] %-10s round %d/%d%s %-4s", ++step, steps, f.c_str(), round,
                        last, what, s.name.c_str());
          job.label = label;
          FamilyOutcome res = run_one_family(job, settings, cases[fi]);
          s.families.push_back(res.entry);
          if (!res.finished) break;
          if (!res.ok) {
            s.failures.push_back(f + " in round " + std::to_string(round) + ": " + res.entry.value("error", std::string()));
            continue;
          }
          merge_family_context(s.context, res.context, f);
          for (auto it = res.findings.begin(); it != res.findings.end(); ++it) s.findings[it.key()] = it.value();
          auto& recs = per_run[side][static_cast<std::size_t>(round - first)];
          recs.insert(recs.end(), res.records.begin(), res.records.end());
        }
        if (interrupted()) break;
      }
    }
  };
  std::vector<std::size_t> all(families.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::vector<Record>> per_run[2];
  run_rounds(1, rounds, all, per_run, "");

  // The results document of each side from rounds `pr` (n of them), listing the family runs made
  // since entry `from[side]` of that side's list.
  auto documents = [&](std::vector<std::vector<Record>> (&pr)[2], int n, const std::size_t (&from)[2],
                       json (&docs)[2]) {
    for (int k = 0; k < 2; ++k) {
      Side& s = sides[k];
      if (s.context.is_null()) throw std::runtime_error(s.build + ": no family run of this build finished");
      json entries = json::array();
      for (std::size_t i = from[k]; i < s.families.size(); ++i) entries.push_back(s.families[i]);
      docs[k] = make_merged_document(s.context, settings.suite, entries, merge_runs(pr[k]), s.findings, n);
    }
  };
  const std::size_t from_start[2] = {0, 0};
  compare::Result result;
  std::string failed;
  try {
    if (!interrupted()) {
      json docs[2];
      documents(per_run, rounds, from_start, docs);
      if (!keep_dir.empty())
        for (int k = 0; k < 2; ++k)
          write_file_atomic((fs::path(keep_dir) / (sides[k].name + ".json")).string(), docs[k].dump(1) + "\n");
      result = compare::compare_documents(docs[0], docs[1], config);
      result.confirm_rounds = confirm_rounds;
      // Confirmation: the families of the records found slower run fresh rounds, decided on their own.
      std::vector<std::size_t> again;
      for (std::size_t fi = 0; fi < families.size(); ++fi)
        for (const auto& row : result.rows)
          if (row.d.verdict == compare::Verdict::slower && row.family == families[fi]) {
            again.push_back(fi);
            result.confirmed_families.push_back(families[fi]);
            break;
          }
      const bool comparable = result.context.comparable || opt.allow_machines;
      if (confirm_rounds > 0 && !again.empty() && comparable && !interrupted()) {
        steps += 2 * again.size() * static_cast<std::size_t>(confirm_rounds);
        const std::size_t from[2] = {sides[0].families.size(), sides[1].families.size()};
        std::vector<std::vector<Record>> fresh[2];
        run_rounds(rounds + 1, rounds + confirm_rounds, again, fresh, " confirming");
        if (!interrupted()) {
          json cdocs[2];
          documents(fresh, confirm_rounds, from, cdocs);
          if (!keep_dir.empty())
            for (int k = 0; k < 2; ++k)
              write_file_atomic((fs::path(keep_dir) / (sides[k].name + ".confirm.json")).string(),
                                cdocs[k].dump(1) + "\n");
          compare::apply_confirmation(result, compare::compare_documents(cdocs[0], cdocs[1], config));
        }
      } else {
        result.confirmed_families.clear();
      }
    }
  } catch (const std::exception& e) {
    failed = e.what();
  }
  std::error_code ec;
  fs::remove_all(settings.work, ec);
  if (interrupted()) {
    std::fprintf(stderr, "gtb ab: interrupted; no comparison\n");
    return 128 + interrupt_signal();
  }

  if (!failed.empty()) {
    std::fprintf(stderr, "gtb ab: %s\n", failed.c_str());
    return kExitBadInput;
  }
  try {
    result.base.path = builds[0];
    result.next.path = builds[1];
    int rc = emit_comparison(result, opt, "gtb ab");
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
