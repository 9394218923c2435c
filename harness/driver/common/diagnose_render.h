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

std::string render_text(const json& diagnosis);
// `level` is the heading level of the title (1 standalone, 2 inside gtb report).
std::string render_markdown(const json& diagnosis, int level = 1);

}  // namespace gtb::diagnose
