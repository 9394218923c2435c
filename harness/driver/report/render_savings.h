// The savings validation as the report and gtb advise show it: the fixes gtb measured as A/B pairs,
// the predicted saving beside the measured one (harness/document/savings.h computes both).
#pragma once

#include <string>

#include "harness/document/cost_model.h"
#include "harness/document/savings.h"

namespace gtb::verdict {

// The savings validation of a results document: its terms, steps, declared pairs and records.
cost::SavingsValidation savings_of(const json& doc);

// The report's section after the step validation (Markdown, a "###" heading first).
std::string render_savings(const json& doc, const cost::SavingsValidation& v);

// The measured A/B of a fix (the same id, changing the same configuration key, on its backend) whose
// step is nearest to `near` (the same model first, then the closest width, depth, batch and d_model
// on a log scale); nullptr when none was measured.
const cost::SavingRow* measured_ab(const cost::SavingsValidation& v, const std::vector<cost::Step>& steps,
                                   const cost::Fix& fix, const cost::StepConfig& near);
// "measured here: 2.1 ms (12% of its step; A/B at <record>)" or "measured here: inside its noise ...".
std::string measured_ab_text(const cost::SavingRow& r);

}  // namespace gtb::verdict
