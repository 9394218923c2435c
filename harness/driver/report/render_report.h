// gtb report's engine: the findings of a results file as Markdown, each with its numbers.
#pragma once

#include <string>

#include "harness/document/types.h"

namespace gtb::report {

// The report of a validated results document. `source` names the file in the heading. Every family
// is rendered from its typed findings (harness/findings.h), in the order they ask for; findings
// that could not be concluded say "not measured" and why; nothing is estimated.
std::string render_markdown(const json& doc, const std::string& source);

}  // namespace gtb::report
