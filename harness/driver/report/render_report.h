// gtb report's engine: the findings of a results file, each with its numbers, as one list of blocks
// written as Markdown, text or JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/document/types.h"
#include "harness/driver/common/blocks.h"

namespace gtb::report {

// One block of the report (common/blocks.h), in the order the report reads; the verdict is blocks
// too (render_verdict.h), a diagnosis one whole section written by gtb diagnose's renderers.
using Block = blocks::Block;
using blocks::make_block;

// The report of a results file: what every format is written from.
struct Report {
  std::string source;
  std::vector<Block> blocks;
};

// The report of a validated results document. `source` names the file in the heading. Every family
// is rendered from its typed findings (harness/findings.h), in the order they ask for; findings
// that could not be concluded say "not measured" and why; nothing is estimated.
Report build_report(const json& doc, const std::string& source);

// The report written for a reader: Markdown (the default of gtb report), plain text for a terminal
// (headings underlined, lists indented, tables in aligned columns, lines wrapped at 100 columns), or
// JSON (schema "gtb-report", kReportJsonVersion: the sections in order, each with its blocks; the
// verdict's section also holds the model's answer as "data" ("gtb-advice"), a diagnosis section the
// diagnosis file).
std::string to_markdown(const Report& r);
std::string to_text(const Report& r);
inline constexpr int kReportJsonVersion = 1;
json to_json(const Report& r);

// to_markdown(build_report(doc, source)).
std::string render_markdown(const json& doc, const std::string& source);

}  // namespace gtb::report
