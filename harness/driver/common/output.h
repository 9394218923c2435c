// The one way a command's document leaves gtb: rendered in the format asked for (--format text,
// markdown or json), then written to stdout or, with --out FILE, atomically (a temporary file renamed
// over FILE: an error leaves nothing half-written). Used by compare, ab, report, advise, diagnose and list.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gtb::driver {

enum class Format { text, markdown, json };

// "text", "markdown" (or "md") or "json"; nullopt for anything else.
std::optional<Format> parse_format(const std::string& name);

// A command's result in each format it can be read in; render() calls the one asked for only.
struct Renderers {
  std::function<std::string()> text, markdown, json;
};
std::string render(Format format, const Renderers& r);

// Writes `document` to stdout when `out` is empty, else atomically to the file `out` (throws
// std::runtime_error naming it when it cannot be written). True when it went to the file.
bool write_document(const std::string& document, const std::string& out);

}  // namespace gtb::driver
