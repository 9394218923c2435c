// The savings validation as the report and gtb advise show it: the fixes gtb measured as A/B pairs,
// the predicted saving beside the measured one (harness/model/savings.h computes both).
#pragma once

#include <string>
#include <vector>

#include "harness/driver/common/blocks.h"
#include "harness/model/model.h"

namespace gtb::verdict {

// The report's section after the step validation, as blocks (a level-3 heading first, `close`) and
// in Markdown.
std::vector<blocks::Block> savings_blocks(const json& doc, const cost::SavingsValidation& v);
std::string render_savings(const json& doc, const cost::SavingsValidation& v);

// "measured here: 2.1 ms (12% of its step; A/B at <record>)" or "measured here: inside its noise ...".
std::string measured_ab_text(const cost::SavingRow& r);

}  // namespace gtb::verdict
