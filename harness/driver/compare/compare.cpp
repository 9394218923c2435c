// gtb compare BASE NEW: decides, record by record, whether NEW regressed against BASE (exit 1 if so).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/compare_cli.h"
#include "harness/driver/common/compare_core.h"
#include "harness/document/results.h"

namespace gtb::driver {

int cmd_compare(int argc, char** argv) {
  CLI::App app{"Decides, record by record, whether NEW regressed against BASE.", "gtb compare"};
  app.footer(std::string(kCompareExitHelp) +
             "      3 (compare of two files) only unconfirmed: found slower in a family that either file\n"
             "        measured on a busy machine; decide again on fresh rounds (gtb ab, --confirmed-by)");
  std::vector<std::string> files, confirm;
  CompareOutput opt;
  int calibrate_trials = 0;
  bool paired = false;
  app.add_option("files", files, "The results files to compare")->required()->expected(2)->type_name("BASE.json NEW.json");
  add_compare_output_options(app, opt);
  app.add_flag("--calibrate{200}", calibrate_trials,
               "Also estimate the A/A false-alarm rate (--calibrate=N: N simulated compares per record, 10 to "
               "100000, default 200)")
      ->check(CLI::Range(10, 100000));
  auto* pair = app.add_flag("--paired", paired,
                            "Pair the runs of BASE and NEW by run number (files written by gtb ab --keep, whose runs "
                            "were interleaved round by round)");
  app.add_option("--confirmed-by", confirm,
                 "With --paired: a record slower in BASE/NEW stays slower only if B2/N2 (gtb ab --keep's "
                 "base.confirm.json, new.confirm.json) find it slower too, as gtb ab decides")
      ->expected(2)
      ->type_name("B2 N2")
      ->needs(pair);
  if (const auto rc = parse_cli(app, argc, argv, "gtb compare")) return *rc;
  const std::string &base_path = files[0], &new_path = files[1];
  const std::string confirm_base = confirm.empty() ? "" : confirm[0], confirm_new = confirm.empty() ? "" : confirm[1];

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
