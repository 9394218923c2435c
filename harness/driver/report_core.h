// gtb report's engine: the findings of a results file as Markdown, each with its numbers.
#pragma once

#include <string>

#include "harness/types.h"

namespace gtb::report {

// Families the report has a section for, in the order it writes them.
inline constexpr const char* kKnownFamilies[] = {"ceilings", "transfer", "vectorize", "gemm", "train", "parallel"};

// The report of a validated results document. `source` names the file in the heading. Missing
// families are said to be absent and missing findings "not measured"; nothing is estimated.
std::string render_markdown(const json& doc, const std::string& source);

// Human-readable size: 4096 -> "4 KiB", 1.5e6 -> "1.43 MiB".
std::string size_text(double bytes);

}  // namespace gtb::report
