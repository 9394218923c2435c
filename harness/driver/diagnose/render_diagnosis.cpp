// The report's diagnosis section: the Markdown rendering of a diagnosis, one heading level down.
#include "harness/driver/common/render_diagnosis.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/driver/diagnose/diagnose_job.h"
#include "harness/driver/common/diagnose_render.h"

namespace gtb::report {

json load_diagnosis(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the diagnosis " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

std::string render_diagnosis_section(const json& diagnosis, const std::string& source) {
  // A job (one trace per rank) or a diff (two traces) of gtb diagnose.
  if (diagnosis.is_object() && diagnosis.value("tool", "") == "gtb diagnose" && diagnosis.contains("kind")) {
    const std::string kind = diagnosis.value("kind", "");
    if (kind == "job" && diagnosis.contains("ranks") && diagnosis.contains("across_ranks"))
      return "\n" + diagnose::render_job_markdown(diagnosis, 2) +
             "\nThe job's figures come from `gtb diagnose` on each rank's trace (docs/diagnose.md, \"A whole job\").\n";
    if (kind == "diff" && diagnosis.contains("categories") && diagnosis.contains("names"))
      return "\n" + diagnose::render_diff_markdown(diagnosis, 2) +
             "\nThe comparison comes from `gtb diagnose --diff` (docs/diagnose.md, \"Two traces side by side\").\n";
  }
  if (!diagnosis.is_object() || diagnosis.value("tool", "") != "gtb diagnose" || !diagnosis.contains("trace") ||
      !diagnosis.contains("overall"))
    throw std::runtime_error(source + ": not a diagnosis (write one with gtb diagnose TRACE --format json; a job: DIR or several traces; two traces: --diff)");
  return "\n" + diagnose::render_markdown(diagnosis, 2) +
         "\nThe trace's symptoms come from `gtb diagnose` (docs/diagnose.md); each price, where given, from "
         "the records named beside it.\n";
}

std::string render_diagnosis_text(const json& diagnosis, const std::string& source) {
  const std::string kind = diagnosis.is_object() ? diagnosis.value("kind", "") : "";
  // The Markdown form checks the file and says where its figures come from: its last line.
  std::string md = render_diagnosis_section(diagnosis, source);
  while (!md.empty() && md.back() == '\n') md.pop_back();
  const std::string source_line = md.substr(md.rfind('\n') + 1);
  const std::string body = kind == "job"    ? diagnose::render_job_text(diagnosis)
                           : kind == "diff" ? diagnose::render_diff_text(diagnosis)
                                            : diagnose::render_text(diagnosis);
  return body + "\n" + source_line + "\n\n";
}

}  // namespace gtb::report
