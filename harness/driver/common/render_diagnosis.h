// The diagnosis section of `gtb report --diagnosis D.json`: a trace's symptoms and their prices.
#pragma once

#include <string>

#include "harness/document/types.h"

namespace gtb::report {

// Reads a diagnosis file; throws std::runtime_error naming the file (and the byte where it is malformed).
json load_diagnosis(const std::string& path);
// Throws std::runtime_error naming the file when `diagnosis` is not a `gtb diagnose --format json` output.
std::string render_diagnosis_section(const json& diagnosis, const std::string& source);
// The same section as text for a terminal (a single trace, a job or a diff as gtb diagnose --format
// text writes it, then where its figures come from); throws as render_diagnosis_section does.
std::string render_diagnosis_text(const json& diagnosis, const std::string& source);

}  // namespace gtb::report
