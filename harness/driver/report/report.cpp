// gtb report RESULTS: the findings of a results file in Markdown.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/driver/commands.h"
#include "harness/driver/common/families.h"
#include "harness/driver/common/render_diagnosis.h"
#include "harness/driver/report/render_report.h"
#include "harness/driver/common/runs.h"
#include "harness/document/results.h"

namespace gtb::driver {

namespace {
// Every family's findings derived again by this build's gtb-<family> from the file's records (the
// file itself is only read). Returns what it says at the top of the report.
std::string derive_findings(json& doc, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path work = fs::temp_directory_path() / ("gtb-report-" + std::to_string(::getpid()));
  fs::create_directories(work);
  std::string derived, kept;
  if (doc.contains("findings") && doc["findings"].is_object())
    for (auto& [family, entry] : doc["findings"].items()) {
      const std::string bin = family_binary(family);
      json fresh = fs::exists(bin) ? findings_from(bin, path, work, 300) : json();
      std::string& list = fresh.is_null() ? kept : derived;
      list += (list.empty() ? "" : ", ") + family;
      if (!fresh.is_null()) entry = std::move(fresh);
    }
  std::error_code ec;
  fs::remove_all(work, ec);
  return "Findings derived again from this file's records by this version's family binaries (`--derive-findings`): " +
         (derived.empty() ? std::string("none") : derived) +
         (kept.empty() ? std::string() : "; as recorded (no binary here could derive them): " + kept) + ".\n\n";
}
}  // namespace

int cmd_report(int argc, char** argv) {
  std::string in, out, diagnosis;
  bool derive = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("usage: gtb report RESULTS.json [--out FILE.md] [--diagnosis D.json] [--derive-findings]\n"
                  "  the findings of a results file, in Markdown (stdout unless --out)\n"
                  "  --diagnosis: add a trace's diagnosis (gtb diagnose TRACE --format json)\n"
                  "  --derive-findings: every family's findings derived again from the file's records by this\n"
                  "    version's gtb-<family> binaries (a file written before a finding existed); the file is\n"
                  "    only read\n");
      return kExitOk;
    } else if (a == "--derive-findings") {
      derive = true;
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a.rfind("--out=", 0) == 0) {
      out = a.substr(6);
    } else if (a == "--diagnosis" && i + 1 < argc) {
      diagnosis = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "gtb report: unknown option %s\nusage: gtb report RESULTS.json [--out FILE.md]\n", a.c_str());
      return kExitBadInput;
    } else if (in.empty()) {
      in = a;
    } else {
      std::fprintf(stderr, "gtb report: one results file only (got %s too)\n", a.c_str());
      return kExitBadInput;
    }
  }
  if (in.empty()) {
    std::fprintf(stderr, "usage: gtb report RESULTS.json [--out FILE.md]\n");
    return kExitBadInput;
  }
  try {
    json doc = load_document(in);
    const std::string note = derive ? derive_findings(doc, in) : "";
    std::string md = report::render_markdown(doc, in);
    // Said under the title, before anything the derived findings shaped.
    if (!note.empty()) md.insert(md.find("\n\n") == std::string::npos ? md.size() : md.find("\n\n") + 2, note);
    if (!diagnosis.empty()) md += report::render_diagnosis_section(report::load_diagnosis(diagnosis), diagnosis);
    if (out.empty()) {
      std::fwrite(md.data(), 1, md.size(), stdout);
    } else {
      write_file_atomic(out, md);
      std::printf("gtb report: %s written\n", out.c_str());
    }
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb report: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
