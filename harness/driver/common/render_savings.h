// The savings validation as the report and gtb advise show it: the fixes gtb measured as A/B pairs,
// the predicted saving beside the measured one (harness/model/savings.h computes both).
#pragma once

#include <string>

#include "harness/model/model.h"

namespace gtb::verdict {

// The report's section after the step validation (Markdown, a "###" heading first).
std::string render_savings(const json& doc, const cost::SavingsValidation& v);

// "measured here: 2.1 ms (12% of its step; A/B at <record>)" or "measured here: inside its noise ...".
std::string measured_ab_text(const cost::SavingRow& r);

}  // namespace gtb::verdict
