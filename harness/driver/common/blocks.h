// A document as a list of blocks (headings, paragraphs, list items, tables), written as Markdown, as
// text for a terminal or as JSON sections. gtb report is built this way, and so is the verdict it
// shows (render_verdict.h), so that each format is written from the same blocks.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/document/types.h"

namespace gtb::blocks {

// One block, in the order the document reads. Its strings are Markdown inline text (`code`, **bold**,
// [links](#anchor)): the Markdown writes them as they are, the text drops the marks a terminal shows
// as clutter, the JSON keeps them.
struct Block {
  enum class Kind { heading, paragraph, item, list_end, table, data, whole };
  Kind kind = Kind::paragraph;
  int level = 0;     // heading, whole: 1 (the title), 2 or 3
  std::string text;  // heading, whole: the title; paragraph, item: the text
  // heading: Markdown leaves one blank line before it, not two (the verdict's subsections).
  bool close = false;
  std::vector<std::string> head;               // table: the columns' names
  std::vector<std::vector<std::string>> rows;  // table: its cells
  // table: each column's alignment in Markdown, 'l' or 'r'; empty: the first left, the others right.
  std::string align;
  // whole: a section another command's renderer writes (a diagnosis), as it writes it in Markdown
  // (its heading included) and as text (under a heading of `text`); its facts are `data`.
  std::string markdown, as_text;
  // data: the facts of the section it is in, for the JSON (Markdown and text show nothing of it).
  json data;
};

// A block of `kind` at `level` with `text`, its other members empty.
inline Block make_block(Block::Kind kind, int level, std::string text) {
  Block b;
  b.kind = kind;
  b.level = level;
  b.text = std::move(text);
  return b;
}

// Builds a list of blocks, one call per block.
struct Builder {
  std::vector<Block> blocks;
  void h1(const std::string& t) { blocks.push_back(make_block(Block::Kind::heading, 1, t)); }
  void h2(const std::string& t) { blocks.push_back(make_block(Block::Kind::heading, 2, t)); }
  void h3(const std::string& t) { blocks.push_back(make_block(Block::Kind::heading, 3, t)); }
  void p(const std::string& t) { blocks.push_back(make_block(Block::Kind::paragraph, 0, t)); }
  void li(const std::string& t) { blocks.push_back(make_block(Block::Kind::item, 0, t)); }
  void end_list() { blocks.push_back(make_block(Block::Kind::list_end, 0, "")); }
  void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
             std::string align = "") {
    blocks.push_back(make_block(Block::Kind::table, 0, ""));
    blocks.back().head = head;
    blocks.back().rows = rows;
    blocks.back().align = std::move(align);
  }
  void data(json facts) {
    blocks.push_back(make_block(Block::Kind::data, 0, ""));
    blocks.back().data = std::move(facts);
  }
  void append(std::vector<Block> more) {
    for (auto& b : more) blocks.push_back(std::move(b));
  }
};

// Markdown: "#" headings, "- " items, pipe tables (a '|' in a cell escaped).
std::string to_markdown(const std::vector<Block>& blocks);
// Text for a terminal: headings underlined ('=' for level 1, '-' for 2), items indented, tables in
// aligned columns, lines wrapped at 100 columns, no Markdown bold or link syntax.
std::string to_text(const std::vector<Block>& blocks);
// JSON: the sections in order, each {"title", "level", "blocks"} (a heading starts one), its blocks
// {"type": "paragraph", "text"}, {"type": "list", "items"}, {"type": "table", "columns", "rows"}, and
// "data" where the section has facts (a whole section: its facts, no blocks).
json to_json_sections(const std::vector<Block>& blocks);

}  // namespace gtb::blocks
