// gtb report RESULTS: the findings of a results file, in Markdown (the default), text or JSON.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/output.h"
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
         (kept.empty() ? std::string() : "; as recorded (no binary here could derive them): " + kept) + ".";
}
// The diagnosis section, written whole by gtb diagnose's renderers: in Markdown as the report has
// always shown it, as text (a trace's, a job's or a diff's diagnosis as gtb diagnose --format text
// writes it, then where its figures come from), and in JSON as the diagnosis file itself.
report::Block diagnosis_block(json d, const std::string& path) {
  report::Block b = report::make_block(report::Block::Kind::whole, 2, "Diagnosis");
  b.markdown = report::render_diagnosis_section(d, path);  // throws for a file that is not a diagnosis
  b.as_text = report::render_diagnosis_text(d, path);
  b.data = std::move(d);
  return b;
}
}  // namespace

int cmd_report(int argc, char** argv) {
  CLI::App app{"The findings of a results file, in Markdown (the default), text or JSON (stdout unless --out).",
               "gtb report"};
  std::string in, out, diagnosis, format = "markdown";
  bool derive = false;
  app.add_option("results", in, "The results file")->required()->type_name("RESULTS.json");
  add_format_option(app, format);
  app.add_option("--out", out, "Write the report there (atomically) instead of stdout")->type_name("FILE");
  app.add_option("--diagnosis", diagnosis, "Add a trace's diagnosis (gtb diagnose TRACE --format json)")->type_name("D.json");
  app.add_flag("--derive-findings", derive,
               "Every family's findings derived again from the file's records by this version's gtb-<family> "
               "binaries (a file written before a finding existed); the file is only read");
  if (const auto rc = parse_cli(app, argc, argv, "gtb report")) return *rc;
  try {
    json doc = load_document(in);
    const std::string note = derive ? derive_findings(doc, in) : "";
    report::Report r = report::build_report(doc, in);
    // Said under the title, before anything the derived findings shaped.
    if (!note.empty())
      r.blocks.insert(r.blocks.begin() + (r.blocks.empty() ? 0 : 1), report::make_block(report::Block::Kind::paragraph, 0, note));
    if (!diagnosis.empty()) r.blocks.push_back(diagnosis_block(report::load_diagnosis(diagnosis), diagnosis));
    const std::string document = render(*parse_format(format), {[&] { return report::to_text(r); },
                                                                [&] { return report::to_markdown(r); },
                                                                [&] { return report::to_json(r).dump(1) + "\n"; }});
    if (write_document(document, out)) std::printf("gtb report: %s written\n", out.c_str());
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb report: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
