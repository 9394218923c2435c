// gtb compare BASE NEW: decides, record by record, whether NEW regressed against BASE (exit 1 if so).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "harness/driver/commands.h"
#include "harness/driver/common/compare_cli.h"
#include "harness/driver/common/compare_core.h"
#include "harness/document/results.h"

namespace gtb::driver {

namespace {

void compare_usage(std::FILE* f) {
  std::fprintf(f,
               "usage: gtb compare BASE.json NEW.json [options]\n"
               "%s"
               "  --calibrate[=N]              also estimate the A/A false-alarm rate (N simulated compares\n"
               "                               per record, default 200)\n"
               "  --paired                     pair the runs of BASE and NEW by run number (files written by\n"
               "                               gtb ab --keep, whose runs were interleaved round by round)\n"
               "  --confirmed-by B2 N2         with --paired: a record slower in BASE/NEW stays slower only if\n"
               "                               B2/N2 (gtb ab --keep's base.confirm.json, new.confirm.json)\n"
               "                               find it slower too, as gtb ab decides\n"
               "%s"
               "      3 (compare of two files) only unconfirmed: found slower in a family that either file\n"
               "        measured on a busy machine; decide again on fresh rounds (gtb ab, --confirmed-by)\n",
               kCompareOutputHelp, kCompareExitHelp);
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  std::string base_path, new_path;
  CompareOutput opt;
  int calibrate_trials = 0;
  bool paired = false;
  std::string confirm_base, confirm_new;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        compare_usage(stdout);
        return kExitOk;
      } else if (parse_compare_output_flag(argc, argv, i, opt)) {
        continue;
      } else if (a == "--paired") {
        paired = true;
      } else if (a == "--confirmed-by") {
        if (i + 2 >= argc) throw std::runtime_error("--confirmed-by needs two results files");
        confirm_base = argv[++i];
        confirm_new = argv[++i];
      } else if (a == "--calibrate") {
        calibrate_trials = 200;
      } else if (a.rfind("--calibrate=", 0) == 0) {
        const std::string v = a.substr(12);
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 10 || n > 100000)
          throw std::runtime_error("--calibrate=N needs N between 10 and 100000");
        calibrate_trials = static_cast<int>(n);
      } else if (!a.empty() && a[0] == '-') {
        throw std::runtime_error("unknown option " + a);
      } else if (base_path.empty()) {
        base_path = a;
      } else if (new_path.empty()) {
        new_path = a;
      } else {
        throw std::runtime_error("too many files: " + a);
      }
    }
    if (new_path.empty()) throw std::runtime_error("needs two results files, BASE and NEW");
    if (!confirm_base.empty() && !paired) throw std::runtime_error("--confirmed-by needs --paired");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb compare: %s\n", e.what());
    compare_usage(stderr);
    return kExitBadInput;
  }

  try {
    compare::Config config = load_compare_config(opt);
    config.paired = paired;
    const json base = load_document(base_path);
    const json next = load_document(new_path);
    compare::Result res = compare::compare_documents(base, next, config);
    // Files from different times on a busy machine cannot tell drift from a regression; paired
    // rounds (gtb ab's files) can, and fresh rounds (--confirmed-by) decide it again.
    if (!paired) compare::mark_unconfirmed_on_busy(res, base, next);
    if (!confirm_base.empty()) {
      const compare::Result again =
          compare::compare_documents(load_document(confirm_base), load_document(confirm_new), config);
      for (const auto& r : again.rows) res.confirm_rounds = std::max(res.confirm_rounds, static_cast<int>(r.base_runs));
      for (const auto& r : res.rows)
        if (r.d.verdict == compare::Verdict::slower &&
            std::find(res.confirmed_families.begin(), res.confirmed_families.end(), r.family) ==
                res.confirmed_families.end())
          res.confirmed_families.push_back(r.family);
      compare::apply_confirmation(res, again);
    }
    res.base.path = base_path;
    res.next.path = new_path;
    if (calibrate_trials > 0) res.calibration = compare::calibrate(base, next, config, calibrate_trials);
    return emit_comparison(res, opt, "gtb compare");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb compare: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
