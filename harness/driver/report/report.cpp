// gtb report RESULTS: the findings of a results file in Markdown.
#include <cstdio>
#include <string>

#include "harness/driver/commands.h"
#include "harness/driver/report/render_diagnosis.h"
#include "harness/driver/report/render_report.h"
#include "harness/document/results.h"

namespace gtb::driver {

int cmd_report(int argc, char** argv) {
  std::string in, out, diagnosis;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("usage: gtb report RESULTS.json [--out FILE.md] [--diagnosis D.json]\n"
                  "  the findings of a results file, in Markdown (stdout unless --out)\n"
                  "  --diagnosis: add a trace's diagnosis (gtb diagnose TRACE --format json)\n");
      return kExitOk;
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
    const json doc = load_document(in);
    std::string md = report::render_markdown(doc, in);
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
