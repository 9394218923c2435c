// The cost model's answers as text and Markdown: the advice for one step (gtb advise) and the
// verdict and validation table at the top of gtb report.
#pragma once

#include <string>
#include <vector>

#include "harness/document/cost_model.h"
#include "harness/document/savings.h"

namespace gtb::verdict {

// Everything gtb advise answers for one configuration, computed once and rendered three ways.
struct Advice {
  cost::StepConfig config;
  std::vector<cost::Prediction> predictions;          // cpu, cuda
  std::vector<std::vector<cost::Fix>> fixes;          // per prediction
  cost::Crossover crossover;
  std::string source;                                 // the results file
  json machine = json::object();                      // what the file says of its machine and build
  cost::SavingsValidation savings;                    // the fixes measured as A/B pairs in the file
  std::vector<cost::Step> steps;                      // the file's measured steps (the pairs' sides)
};
Advice advise(const json& doc, const std::string& source, const cost::StepConfig& c);

std::string render_text(const Advice& a);
std::string render_markdown(const Advice& a);
json to_json(const Advice& a);

// The verdict and the validation table for gtb report (Markdown, starting with a "##" heading);
// a file without cost terms gets one line saying to rerun gtb.
std::string render_report_verdict(const json& doc);

// The verdict's headline, for the end of gtb run: a heading naming the reference step, then per
// backend its predicted time, its three largest predicted causes and the fix with the largest saving
// (as a share of its step: measured where an A/B measured it beyond its noise, predicted otherwise),
// one line each; a backend that cannot say gets one line with the reason. One line saying why when
// the file has no cost terms or they cannot be read. Lines are not cut: the caller fits them.
std::vector<std::string> render_headline(const json& doc);

// The reference step of the verdict, stated in the report.
cost::StepConfig reference_step();

// The formatters every answer uses: seconds with their unit ("12.3 ms"), a fraction as "12%", and
// as "12.3%" where a whole percent would mislead (a median of 15.4% must not read as 15%).
std::string seconds_text(double s);
std::string pct(double f);
std::string pct1(double f);

}  // namespace gtb::verdict
