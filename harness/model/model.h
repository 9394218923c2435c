// The cost model's door: what gtb advise, gtb report and the end of gtb run ask of it. The commands
// render these answers; every number and every choice in them is made here (cost_model.h prices a
// step, savings.h sets fixes measured as A/B pairs beside their predictions, cost_terms.h reads the
// terms). harness/model/README.md says what this room holds.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/cost_model.h"
#include "harness/model/savings.h"

namespace gtb::cost {

// Everything gtb advise answers for one configuration, computed once and rendered three ways.
struct Advice {
  StepConfig config;
  std::vector<Prediction> predictions;   // cpu, cuda
  std::vector<std::vector<Fix>> fixes;   // per prediction
  Crossover crossover;
  std::string source;                    // the results file
  json machine = json::object();         // what the file says of its machine and build
  SavingsValidation savings;             // the fixes measured as A/B pairs in the file
  std::vector<Step> steps;               // the file's measured steps (the pairs' sides)
};
Advice advise(const json& doc, const std::string& source, const StepConfig& c);

// The savings validation of a results document: its terms, steps, declared pairs and records. Pairs
// this version cannot read give no rows and `cannot_read` saying why.
SavingsValidation savings_of(const json& doc);

// The measured A/B of a fix (the same id, changing the same configuration key, on its backend) whose
// step is nearest to `near` (the same model first, then the closest width, depth, batch and d_model
// on a log scale); nullptr when none was measured.
const SavingRow* measured_ab(const SavingsValidation& v, const std::vector<Step>& steps, const Fix& fix,
                             const StepConfig& near);

// The reference step of the verdict, stated in the report.
StepConfig reference_step();
// The reference step as the verdict prices it: its loader at the per-sample cost the file's loader
// term was measured at (one worker), so that its part is a measured one.
StepConfig verdict_step(const std::vector<Term>& terms);

// The fix that addresses a part of a step (its largest cause), "" where none does.
const char* fix_for_part(const std::string& part);

// The fix of one prediction (Advice index `i`) with the largest saving as a share of its step:
// measured where an A/B measured it beyond its noise, predicted otherwise. `fix` is nullptr when no
// fix saves anything; `ab` the fix's measured A/B where there is one.
struct LargestSaving {
  const Fix* fix = nullptr;
  const SavingRow* ab = nullptr;
};
LargestSaving largest_saving(const Advice& a, std::size_t i);

// The targets the step validation is held to: the median and the worst absolute error, and at most
// two thirds of the steps predicted on one side.
inline constexpr double kMedianErrorTarget = 0.15, kWorstErrorTarget = 0.35;
// Which side of the measurement the scored steps' predictions fall on; the *_noise counts only where
// the error is beyond the step's own ~95% noise (of the `noise_known` steps whose records can say).
struct ErrorSides {
  int predicted = 0, over = 0, under = 0, noise_known = 0, over_noise = 0, under_noise = 0;
  bool one_sided() const { return 3 * std::max(over, under) > 2 * predicted; }
};
ErrorSides error_sides(const Validation& v);

// The validation of each run of a several-run file (`run_findings`): that run's cost terms against
// its own measured steps. Runs that predicted no step are left out; empty under two runs.
std::vector<std::pair<int, Validation>> per_run_validation(const json& doc);

// The software the file measured (`measured`: measured_framework), where it is not gtb's own: the
// reference step run by it on each backend, to set beside the native one. Empty for a native file.
std::vector<Prediction> reference_under_measured(const std::vector<Term>& terms, const StepConfig& ref,
                                                 std::string& measured);

// Which publisher's term a record's number came from (record id -> family): where its evidence is.
std::map<std::string, std::string> publisher_of_records(const std::vector<Term>& terms);

}  // namespace gtb::cost
