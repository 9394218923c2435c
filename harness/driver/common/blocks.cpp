// The writers of a list of blocks (blocks.h): Markdown, text for a terminal, JSON sections.
#include "harness/driver/common/blocks.h"

#include <algorithm>
#include <sstream>

namespace gtb::blocks {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

bool any_named(const std::vector<std::string>& head) {
  return std::any_of(head.begin(), head.end(), [](const std::string& h) { return !h.empty(); });
}

void markdown_table(std::ostringstream& o, const Block& b) {
  // A column without a name in a table with named ones is "| |"; a table of name and value rows
  // (no column named) keeps a space on each side of its empty names.
  const bool named = any_named(b.head);
  o << "|";
  for (const auto& h : b.head) o << (named && h.empty() ? std::string(" |") : " " + h + " |");
  o << "\n|";
  for (std::size_t i = 0; i < b.head.size(); ++i) {
    const bool right = i < b.align.size() ? b.align[i] == 'r' : i > 0;
    o << (right ? " ---: |" : " --- |");
  }
  o << "\n";
  for (const auto& row : b.rows) {
    o << "|";
    for (const auto& c : row) o << " " << esc(c) << " |";
    o << "\n";
  }
  o << "\n";
}

// Markdown's marks a terminal shows as clutter: **bold** loses its stars, [text](#anchor) keeps its text.
std::string plain(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    if (s[i] == '[') {
      const auto close = s.find("](", i);
      const auto end = close == std::string::npos ? close : s.find(')', close);
      if (end != std::string::npos && s.find('\n', i) > end && s.find('[', i + 1) > close) {
        o += s.substr(i + 1, close - i - 1);
        i = end;
        continue;
      }
    }
    o += s[i];
  }
  return o;
}

// Characters a terminal shows (UTF-8 continuation bytes take no column).
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `text` wrapped at kWidth columns, each line after `indent` (the first after `first`); its own line
// breaks are kept.
constexpr std::size_t kWidth = 100;
std::string wrap(const std::string& text, const std::string& first, const std::string& indent) {
  std::string out, line = first;
  bool empty = true;
  std::istringstream lines(text);
  std::string para;
  bool first_line = true;
  while (std::getline(lines, para)) {
    if (!first_line) {
      out += line + "\n";
      line = indent;
      empty = true;
    }
    first_line = false;
    std::istringstream words(para);
    std::string w;
    while (words >> w) {
      if (!empty && columns(line) + 1 + columns(w) > kWidth) {
        out += line + "\n";
        line = indent;
        empty = true;
      }
      line += (empty ? "" : " ") + w;
      empty = false;
    }
  }
  return out + line + "\n";
}

void text_heading(std::ostringstream& o, int level, const std::string& title) {
  const std::string t = plain(title);
  if (level > 1) o << "\n";
  o << t << "\n";
  if (level < 3) o << std::string(columns(t), level == 1 ? '=' : '-') << "\n";
  o << "\n";
}

// A cell's words in lines of at most `width` columns (a longer word stands alone on its line).
std::vector<std::string> cell_lines(const std::string& text, std::size_t width) {
  std::vector<std::string> out;
  std::istringstream words(text);
  std::string w, line;
  while (words >> w) {
    if (!line.empty() && columns(line) + 1 + columns(w) > width) out.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + w;
  }
  out.push_back(line);
  return out;
}

// A table in columns that fit kWidth: the widest columns narrowed first (to no less than kMinCell),
// their cells wrapped onto more lines; rows that take several lines are set apart by a blank line.
constexpr std::size_t kMinCell = 12;
void text_table(std::ostringstream& o, const Block& b) {
  // A column as wide as its widest cell; its name may wrap (at its longest word) to leave room.
  std::vector<std::size_t> width(b.head.size(), 0);
  for (std::size_t i = 0; i < b.head.size(); ++i)
    for (const auto& w : cell_lines(plain(b.head[i]), 1)) width[i] = std::max(width[i], columns(w));
  for (const auto& row : b.rows)
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], columns(plain(row[i])));
  auto total = [&] {
    std::size_t t = 2 + (width.empty() ? 0 : 2 * (width.size() - 1));
    for (std::size_t w : width) t += w;
    return t;
  };
  while (total() > kWidth) {
    auto widest = std::max_element(width.begin(), width.end());
    if (widest == width.end() || *widest <= kMinCell) break;
    --*widest;
  }
  bool wrapped = false;
  auto lines_of = [&](const std::vector<std::string>& row) {
    std::vector<std::vector<std::string>> cells;
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) cells.push_back(cell_lines(plain(row[i]), width[i]));
    return cells;
  };
  auto line = [&](const std::vector<std::string>& row) {
    const auto cells = lines_of(row);
    std::size_t height = 1;
    for (const auto& c : cells) height = std::max(height, c.size());
    wrapped = wrapped || height > 1;
    for (std::size_t k = 0; k < height; ++k) {
      std::string l;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string c = k < cells[i].size() ? cells[i][k] : "";
        l += c + (i + 1 < cells.size() ? std::string(width[i] > columns(c) ? width[i] - columns(c) + 2 : 2, ' ') : "");
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      o << "  " << l << "\n";
    }
  };
  for (const auto& row : b.rows)
    for (const auto& c : lines_of(row)) wrapped = wrapped || c.size() > 1;
  // A table without column names (name and value rows) has no header; the last column's rule is as
  // long as its name.
  if (any_named(b.head)) {
    line(b.head);
    std::vector<std::string> rule;
    for (std::size_t i = 0; i < width.size(); ++i)
      rule.push_back(std::string(i + 1 < width.size() ? width[i] : std::min(width[i], columns(plain(b.head[i]))), '-'));
    line(rule);
  }
  for (std::size_t r = 0; r < b.rows.size(); ++r) {
    if (wrapped && r > 0) o << "\n";
    line(b.rows[r]);
  }
  o << "\n";
}

}  // namespace

std::string to_markdown(const std::vector<Block>& blocks) {
  std::ostringstream o;
  for (const Block& b : blocks) switch (b.kind) {
      case Block::Kind::heading:
        o << (b.level == 1 || b.close ? "" : "\n") << std::string(b.level, '#') << " " << b.text << "\n\n";
        break;
      case Block::Kind::paragraph: o << b.text << "\n\n"; break;
      case Block::Kind::item: o << "- " << b.text << "\n"; break;
      case Block::Kind::list_end: o << "\n"; break;
      case Block::Kind::table: markdown_table(o, b); break;
      case Block::Kind::data: break;
      case Block::Kind::whole: o << b.markdown; break;
    }
  return o.str();
}

std::string to_text(const std::vector<Block>& blocks) {
  std::ostringstream o;
  for (const Block& b : blocks) switch (b.kind) {
      case Block::Kind::heading: text_heading(o, b.level, b.text); break;
      // A paragraph with line breaks of its own (a JSON listing) is printed as it is.
      case Block::Kind::paragraph:
        o << (b.text.find('\n') == std::string::npos ? wrap(plain(b.text), "", "") : plain(b.text) + "\n") << "\n";
        break;
      case Block::Kind::item: o << wrap(plain(b.text), "  - ", "    "); break;
      case Block::Kind::list_end: o << "\n"; break;
      case Block::Kind::table: text_table(o, b); break;
      case Block::Kind::data: break;
      case Block::Kind::whole:
        text_heading(o, b.level, b.text);
        o << b.as_text;
        break;
    }
  return o.str();
}

json to_json_sections(const std::vector<Block>& blocks) {
  json sections = json::array();
  auto section = [&](const std::string& title, int level) {
    sections.push_back({{"title", title}, {"level", level}, {"blocks", json::array()}});
  };
  auto current = [&]() -> json& {
    if (sections.empty()) section("", 1);
    return sections.back();
  };
  bool in_list = false;
  for (const Block& b : blocks) {
    if (b.kind != Block::Kind::item) in_list = false;
    switch (b.kind) {
      case Block::Kind::heading: section(b.text, b.level); break;
      case Block::Kind::paragraph: current()["blocks"].push_back({{"type", "paragraph"}, {"text", b.text}}); break;
      case Block::Kind::item:
        if (!in_list) current()["blocks"].push_back({{"type", "list"}, {"items", json::array()}});
        current()["blocks"].back()["items"].push_back(b.text);
        in_list = true;
        break;
      case Block::Kind::list_end: break;
      case Block::Kind::table:
        current()["blocks"].push_back({{"type", "table"}, {"columns", b.head}, {"rows", b.rows}});
        break;
      case Block::Kind::data:
        if (!b.data.is_null()) current()["data"] = b.data;
        break;
      case Block::Kind::whole:
        section(b.text, b.level);
        if (!b.data.is_null()) sections.back()["data"] = b.data;
        break;
    }
  }
  return sections;
}

}  // namespace gtb::blocks
