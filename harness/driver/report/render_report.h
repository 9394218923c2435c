// gtb report's engine: the findings of a results file, each with its numbers, as one list of blocks
// written as Markdown, text or JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/document/types.h"

namespace gtb::report {

// One block of the report, in the order the report reads. Its strings are Markdown inline text (`code`,
// **bold**, [links](#anchor)); the sections that other renderers write whole (the verdict, a diagnosis)
// are one `markdown` block each.
struct Block {
  enum class Kind { heading, paragraph, item, list_end, table, markdown };
  Kind kind = Kind::paragraph;
  int level = 0;     // heading: 1 (the title), 2 or 3; markdown: the level of the section it is
  std::string text;  // heading: its title; paragraph, item: the text; markdown: the section's title
  std::vector<std::string> head;               // table: the columns' names
  std::vector<std::vector<std::string>> rows;  // table: its cells
  std::string markdown;                        // markdown: the section as written by its renderer
  json data;                                   // markdown: its facts as data, when its renderer has them
};

// A block of `kind` at `level` with `text`, its other members empty.
inline Block make_block(Block::Kind kind, int level, std::string text) {
  Block b;
  b.kind = kind;
  b.level = level;
  b.text = std::move(text);
  return b;
}

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
// verdict's block also holds the model's answer as data, "gtb-advice").
std::string to_markdown(const Report& r);
std::string to_text(const Report& r);
inline constexpr int kReportJsonVersion = 1;
json to_json(const Report& r);

// to_markdown(build_report(doc, source)).
std::string render_markdown(const json& doc, const std::string& source);

}  // namespace gtb::report
