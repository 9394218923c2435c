// gtb ab BASE_BUILD NEW_BUILD: two builds' family binaries run alternately, decided on paired rounds.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/driver/commands.h"
#include "harness/driver/common/compare_cli.h"
#include "harness/driver/common/families.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/process.h"
#include "harness/driver/common/runs.h"
#include "harness/document/results.h"
#include "harness/runtime/stopping.h"

namespace gtb::driver {

namespace fs = std::filesystem;

namespace {

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

// The flags of gtb ab, as given.
struct AbOptions {
  CompareOutput opt;
  std::string families_csv, keep_dir;
  int rounds = 5, confirm_rounds = -1;  // -1: as many as rounds
  bool quick = false, full = false;
  double budget = 0;
  std::vector<std::string> builds;
};

// Parses the flags; an exit code when the command ends here (--help, bad usage).
std::optional<int> parse_ab_flags(int argc, char** argv, AbOptions& o) {
  CLI::App app{"Runs the family binaries of two builds (folders holding bin/gtb-<family>) alternately on this "
               "machine, round by round (the order flips every round), and decides each record from the paired "
               "per-round ratios, so drift of the machine cancels out.",
               "gtb ab"};
  app.footer(std::string(kCompareExitHelp) +
             "An interruption (Ctrl-C, SIGTERM) stops it without a comparison (exit 130 or 143).");
  app.add_option("builds", o.builds, "The two build folders")->required()->expected(2)->type_name("BASE_BUILD NEW_BUILD");
  app.add_option("--family", o.families_csv, "Families (default: all)")->type_name("a,b");
  app.add_option("--rounds", o.rounds, "Rounds, each runs both builds once (default 5, at least 3)")
      ->check(CLI::Range(3, 1000));
  app.add_option("--confirm-rounds", o.confirm_rounds,
                 "A record slower after R rounds is decided again on C fresh rounds of its family and stays slower "
                 "only if they agree (default: R; 0 turns the confirmation off)")
      ->check(CLI::Validator(
          [](std::string& s) {
            const bool ok = s == "0" || (s.find_first_not_of("0123456789") == std::string::npos && s.size() < 5 &&
                                         std::stoi(s) >= 3 && std::stoi(s) <= 1000);
            return ok ? std::string() : "must be 0 (off) or a whole number from 3 to 1000";
          },
          ""));
  auto* quick = app.add_flag("--quick", o.quick, "The quick suite (the default)");
  app.add_flag("--full", o.full, "The full suite")->excludes(quick);
  app.add_option("--budget", o.budget, "Sampling budget per record in seconds")->check(CLI::Range(1e-6, 1e6));
  app.add_option("--keep", o.keep_dir, "Also write DIR/base.json and DIR/new.json (results with runs)")->type_name("DIR");
  add_compare_output_options(app, o.opt);
  if (const auto rc = parse_cli(app, argc, argv, "gtb ab")) return rc;
  if (o.confirm_rounds < 0) o.confirm_rounds = o.rounds;
  return std::nullopt;
}

using PerRun = std::vector<std::vector<Record>>[2];  // [side][round of a range]: the records

// The two builds' family runs, round by round, and the results documents made of them.
struct AbRun {
  std::vector<std::string> families;
  std::vector<std::vector<std::string>> binaries;  // [family][0 base, 1 new]
  RunSettings settings;
  Side sides[2];
  std::vector<int> cases;
  std::size_t step = 0, steps = 0;  // the family runs of the whole command, done and planned

  // Runs rounds first..last of the families in `which` (indices into families) into per_run[side]
  // (one entry per round of that range).
  void run_rounds(int first, int last, const std::vector<std::size_t>& which, PerRun& per_run, const char* what) {
    for (auto& pr : per_run) pr.assign(static_cast<std::size_t>(last - first + 1), {});
    for (int round = first; round <= last && !interrupted(); ++round) {
      for (std::size_t fi : which) {
        // Flipping the order every round keeps "runs first" (cold caches, a turbo budget) from
        // siding with one build.
        for (int k = 0; k < 2 && !interrupted(); ++k) {
          const int side = (round % 2 == 1) ? k : 1 - k;
          if (!run_once(fi, side, round, last, what, per_run[side][static_cast<std::size_t>(round - first)])) break;
        }
        if (interrupted()) break;
      }
    }
  }

  // One family run of one side; false when it was interrupted.
  bool run_once(std::size_t fi, int side, int round, int last, const char* what, std::vector<Record>& records) {
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
    std::snprintf(label, sizeof label, "[%zu/%zu] %-10s round %d/%d%s %-4s", ++step, steps, f.c_str(), round, last,
                  what, s.name.c_str());
    job.label = label;
    FamilyOutcome res = run_one_family(job, settings, cases[fi]);
    s.families.push_back(res.entry);
    if (!res.finished) return false;
    if (!res.ok) {
      s.failures.push_back(f + " in round " + std::to_string(round) + ": " + res.entry.value("error", std::string()));
      return true;
    }
    absorb_family_run(res, f, s.context, s.findings, records);
    return true;
  }

  // The results document of each side from rounds `pr` (n of them), listing the family runs made
  // since entry `from[side]` of that side's list.
  void documents(PerRun& pr, int n, const std::size_t (&from)[2], json (&docs)[2]) {
    for (int k = 0; k < 2; ++k) {
      Side& s = sides[k];
      if (s.context.is_null()) throw std::runtime_error(s.build + ": no family run of this build finished");
      json entries = json::array();
      for (std::size_t i = from[k]; i < s.families.size(); ++i) entries.push_back(s.families[i]);
      docs[k] = make_merged_document(s.context, settings.suite, entries, merge_runs(pr[k]), s.findings, n);
    }
  }
};

void keep_documents(const std::string& keep_dir, const Side (&sides)[2], const json (&docs)[2], const char* suffix) {
  if (keep_dir.empty()) return;
  for (int k = 0; k < 2; ++k)
    write_file_atomic((fs::path(keep_dir) / (sides[k].name + suffix)).string(), docs[k].dump(1) + "\n");
}

// All rounds of every family, compared; then the families of the records found slower run fresh
// rounds, decided on their own (the confirmation).
compare::Result run_and_compare(AbRun& ab, const AbOptions& o, const compare::Config& config) {
  compare::Result result;
  std::vector<std::size_t> all(ab.families.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::vector<Record>> per_run[2];
  ab.run_rounds(1, o.rounds, all, per_run, "");
  if (interrupted()) return result;
  const std::size_t from_start[2] = {0, 0};
  json docs[2];
  ab.documents(per_run, o.rounds, from_start, docs);
  keep_documents(o.keep_dir, ab.sides, docs, ".json");
  result = compare::compare_documents(docs[0], docs[1], config);
  result.confirm_rounds = o.confirm_rounds;
  std::vector<std::size_t> again;
  for (std::size_t fi = 0; fi < ab.families.size(); ++fi)
    for (const auto& row : result.rows)
      if (row.d.verdict == compare::Verdict::slower && row.family == ab.families[fi]) {
        again.push_back(fi);
        result.confirmed_families.push_back(ab.families[fi]);
        break;
      }
  const bool comparable = result.context.comparable || o.opt.allow_machines;
  if (o.confirm_rounds > 0 && !again.empty() && comparable && !interrupted()) {
    ab.steps += 2 * again.size() * static_cast<std::size_t>(o.confirm_rounds);
    const std::size_t from[2] = {ab.sides[0].families.size(), ab.sides[1].families.size()};
    std::vector<std::vector<Record>> fresh[2];
    ab.run_rounds(o.rounds + 1, o.rounds + o.confirm_rounds, again, fresh, " confirming");
    if (!interrupted()) {
      json cdocs[2];
      ab.documents(fresh, o.confirm_rounds, from, cdocs);
      keep_documents(o.keep_dir, ab.sides, cdocs, ".confirm.json");
      compare::apply_confirmation(result, compare::compare_documents(cdocs[0], cdocs[1], config));
    }
  } else {
    result.confirmed_families.clear();
  }
  return result;
}

}  // namespace

int cmd_ab(int argc, char** argv) {
  AbOptions o;
  if (const auto rc = parse_ab_flags(argc, argv, o)) return *rc;

  AbRun ab;
  compare::Config config;
  try {
    ab.families = select_families(o.families_csv);
    for (const auto& f : ab.families) ab.binaries.push_back({binary_in(o.builds[0], f), binary_in(o.builds[1], f)});
    // Input only a family can judge (an interpreter it runs), in either build: said before anything
    // is measured or written.
    std::vector<std::pair<std::string, std::string>> checked;
    for (std::size_t i = 0; i < ab.families.size(); ++i)
      for (const std::string& b : ab.binaries[i]) checked.emplace_back(ab.families[i], b);
    if (const std::string why = precheck_families(checked); !why.empty()) throw std::runtime_error(why);
    config = load_compare_config(o.opt);
    if (!o.keep_dir.empty()) {
      fs::create_directories(o.keep_dir);
      check_writable((fs::path(o.keep_dir) / "base.json").string());
    }
    if (!o.opt.out_path.empty()) check_writable(o.opt.out_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    return kExitBadInput;
  }
  config.paired = true;

  ab.settings.suite = gtb::to_string(o.full ? Suite::full : Suite::quick);
  ab.settings.budget = o.budget;
  try {
    ab.settings.work = make_work_folder("gtb-ab");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    return kExitBadInput;
  }
  install_interrupt_handlers();

  ab.sides[0] = {"base", o.builds[0], {}, json::array(), json::object(), {}};
  ab.sides[1] = {"new", o.builds[1], {}, json::array(), json::object(), {}};
  ab.cases.assign(ab.families.size(), -2);
  ab.steps = 2 * ab.families.size() * static_cast<std::size_t>(o.rounds);
  compare::Result result;
  std::string failed;
  try {
    result = run_and_compare(ab, o, config);
  } catch (const std::exception& e) {
    failed = e.what();
  }
  std::error_code ec;
  fs::remove_all(ab.settings.work, ec);
  if (interrupted()) {
    std::fprintf(stderr, "gtb ab: interrupted; no comparison\n");
    return 128 + interrupt_signal();
  }

  if (!failed.empty()) {
    std::fprintf(stderr, "gtb ab: %s\n", failed.c_str());
    return kExitBadInput;
  }
  try {
    result.base.path = o.builds[0];
    result.next.path = o.builds[1];
    // A family that crashed or wrote nothing: in NEW it is a regression, in BASE the input is bad
    // (the result's exit status, which the comparison prints).
    result.base_failures = ab.sides[0].failures;
    result.new_failures = ab.sides[1].failures;
    for (const auto& f : ab.sides[1].failures) std::fprintf(stderr, "gtb ab: NEW failed: %s\n", f.c_str());
    for (const auto& f : ab.sides[0].failures) std::fprintf(stderr, "gtb ab: BASE failed: %s\n", f.c_str());
    return emit_comparison(result, o.opt, "gtb ab");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb ab: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
