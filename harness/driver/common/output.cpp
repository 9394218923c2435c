#include "harness/driver/common/output.h"

#include <cstdio>

#include "harness/document/results.h"

namespace gtb::driver {

std::optional<Format> parse_format(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "markdown" || name == "md") return Format::markdown;
  if (name == "json") return Format::json;
  return std::nullopt;
}

std::string render(Format format, const Renderers& r) {
  switch (format) {
    case Format::json: return r.json();
    case Format::markdown: return r.markdown();
    case Format::text: break;
  }
  return r.text();
}

bool write_document(const std::string& document, const std::string& out) {
  if (out.empty()) {
    std::fwrite(document.data(), 1, document.size(), stdout);
    return false;
  }
  write_file_atomic(out, document);
  return true;
}

}  // namespace gtb::driver
