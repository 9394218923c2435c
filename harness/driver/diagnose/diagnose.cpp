// gtb diagnose TRACE [--results RESULTS.json]: the symptoms of a PyTorch profiler trace, priced with gtb's records.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/flags.h"
#include "harness/driver/diagnose/diagnose_price.h"
#include "harness/driver/diagnose/diagnose_render.h"
#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {
constexpr const char* kUsage =
    "usage: gtb diagnose TRACE [--results RESULTS.json] [--format text|markdown|json] [--out FILE]\n"
    "  TRACE    a PyTorch profiler trace (Chrome-trace JSON, plain or gzipped)\n"
    "  --results  a gtb results file from the same kind of machine: prices each fix from its records\n"
    "  --format   text (default), markdown or json (the json is what `gtb report --diagnosis` reads)\n"
    "  --out      write there (atomically) instead of stdout\n"
    "  --plot DIR also draw one step's GPU timeline by cause: DIR/diagnose_timeline.png (matplotlib;\n"
    "             GTB_PYTHON picks the Python) and DIR/diagnosis.json beside it\n"
    "exit 0 on a diagnosis, 2 on bad usage or a malformed trace (the message names the byte offset)\n";

// The figure: plots/diagnose_plot.py of the source tree, on the diagnosis written beside it.
int draw(const json& d, const std::string& dir) {
  const std::string script = std::string(GTB_SOURCE_DIR) + "/plots/diagnose_plot.py";
  const std::string data = dir + "/diagnosis.json";
  const char* py = std::getenv("GTB_PYTHON");
  ProcessSpec mk;
  mk.program = "mkdir";
  mk.args = {"-p", dir};
  mk.search_path = true;
  if (!gtb::run_process(mk).started()) return kExitBadInput;
  write_file_atomic(data, d.dump(1) + "\n");
  ProcessSpec spec;
  spec.program = py && *py ? py : "python3";
  spec.args = {script, data, "--out", dir};
  spec.search_path = true;
  std::fflush(stdout);
  const ProcessResult r = gtb::run_process(spec);
  if (!r.started() || r.signal != 0 || r.exit_code != 0) {
    std::fprintf(stderr, "gtb diagnose: the timeline figure was not drawn (%s %s)\n", spec.program.c_str(), script.c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}
}  // namespace

int cmd_diagnose(int argc, char** argv) {
  std::string trace, results, format = "text", out, plot;
  for (int i = 1; i < argc; ++i) {
    FlagArg arg(argc, argv, i);
    const std::string a = arg.text();
    auto value = [&](const std::string& flag, std::string& dst) {
      if (!arg.is(flag)) return false;
      dst = arg.value(flag);
      return true;
    };
    try {
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return kExitOk;
      }
      if (value("--results", results) || value("--format", format) || value("--out", out) || value("--plot", plot)) continue;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: %s\n%s", e.what(), kUsage);
      return kExitBadInput;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "gtb diagnose: unknown option %s\n%s", a.c_str(), kUsage);
      return kExitBadInput;
    }
    if (!trace.empty()) {
      std::fprintf(stderr, "gtb diagnose: one trace only (got %s too)\n", a.c_str());
      return kExitBadInput;
    }
    trace = a;
  }
  if (trace.empty()) {
    std::fprintf(stderr, "gtb diagnose: no trace given\n%s", kUsage);
    return kExitBadInput;
  }
  if (format != "text" && format != "markdown" && format != "json") {
    std::fprintf(stderr, "gtb diagnose: --format must be text, markdown or json (got '%s')\n", format.c_str());
    return kExitBadInput;
  }
  json results_doc;
  if (!results.empty()) {
    try {
      results_doc = load_document(results);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: --results %s: %s\n", results.c_str(), e.what());
      return kExitBadInput;
    }
  }
  json d;
  try {
    const auto t = diagnose::read_trace(trace);
    d = diagnose::diagnose_trace(t, base_name(trace));
  } catch (const diagnose::TraceError& e) {
    std::fprintf(stderr, "gtb diagnose: %s: %s\n", trace.c_str(), e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb diagnose: %s: %s\n", trace.c_str(), e.what());
    return kExitBadInput;
  }
  try {
    if (!results.empty()) diagnose::price_diagnosis(d, results_doc, base_name(results));
    else diagnose::explain_unpriced(d);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb diagnose: --results %s\n", e.what());
    return kExitBadInput;
  }
  const std::string text = format == "json"       ? d.dump(1) + "\n"
                           : format == "markdown" ? diagnose::render_markdown(d)
                                                  : diagnose::render_text(d);
  try {
    if (out.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
    else write_file_atomic(out, text);
    if (!out.empty()) std::fprintf(stderr, "gtb diagnose: %s written\n", out.c_str());
    if (!plot.empty()) return draw(d, plot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb diagnose: %s\n", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gtb::driver
