// Renderings of a diagnosis (the JSON of diagnose_trace, priced or not): text, Markdown, one line per symptom.
#pragma once

#include "harness/document/types.h"
#include <string>
#include <vector>

namespace gtb::diagnose {

// One symptom as a line: what it is, its numbers, and the events it came from.
struct SymptomLine {
  std::string id, label, text, from;
};
std::vector<SymptomLine> symptom_lines(const json& diagnosis);

// The mean of a number over the steps that have it (per-step figures), or the overall value where
// the trace has no steps; `per` says which ("per step" or "in the trace").
struct PerStep {
  double value = 0;
  std::string per;
};
PerStep per_step(const json& diagnosis, const std::vector<std::string>& path);

// The number formats every diagnosis rendering shares (a single trace's, a job's, a diff's): one number
// through a printf format; microseconds in us, ms or s to 3 significant digits; a share as a percentage
// to one decimal ("n/a" where the number is not finite).
std::string format_number(const char* printf_format, double v);
std::string format_us(double us);
std::string format_share(double fraction);

std::string render_text(const json& diagnosis);
// `level` is the heading level of the title (1 standalone, 2 inside gtb report).
std::string render_markdown(const json& diagnosis, int level = 1);

}  // namespace gtb::diagnose
