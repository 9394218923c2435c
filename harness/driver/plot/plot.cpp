// gtb plot RESULTS --out DIR: checks the file, then runs plots/gtb_plot.py (matplotlib) on it.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/document/findings.h"
#include "harness/document/results.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {

// Runs args[0] (looked up in PATH) to completion; returns its exit status, or -1 if it could not
// start or died of a signal.
int run_program(const std::vector<std::string>& args, bool quiet) {
  ProcessSpec spec;
  spec.program = args.at(0);
  spec.args.assign(args.begin() + 1, args.end());
  spec.search_path = true;
  if (quiet) spec.out = spec.err = Redirect::null();
  const ProcessResult r = gtb::run_process(spec);
  return r.started() && r.signal == 0 ? r.exit_code : -1;
}

bool has_matplotlib(const std::string& python) {
  return run_program({python, "-c", "import matplotlib"}, true) == 0;
}

bool file_exists(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

constexpr int kExitNoFigure = 1;

// Why a file from before typed findings (schema 1 or 2) can hold no figure ("" when it can).
std::string no_figure_reason(const json& doc, const std::string& path) {
  const json* v = doc.contains("schema_version") ? &doc.at("schema_version") : nullptr;
  if (!v || !v->is_number() || v->get<double>() >= 3) return "";
  const json* f = doc.contains("findings") ? &doc.at("findings") : nullptr;
  std::string untyped;
  if (f && f->is_object())
    for (auto it = f->begin(); it != f->end(); ++it) {
      if (findings::is_typed(it.value())) return "";
      untyped += (untyped.empty() ? "" : ", ") + it.key();
    }
  const std::string version = doc.contains("schema_version") ? doc.at("schema_version").dump() : "?";
  std::string why = path + " is schema version " + version + ", from before typed findings: it holds no figure specs";
  if (!untyped.empty()) why += " (findings of " + untyped + " are raw data)";
  return why + "; gtb-<family> --gtb_findings_from=" + path + " derives each family's findings again from its records";
}

}  // namespace

int cmd_plot(int argc, char** argv) {
  std::string in, out, format = "png", only;
  CLI::App app{"Regenerates the figures of a results file with Python and matplotlib.", "gtb plot"};
  app.footer("GTB_PYTHON: the Python to use (default: the first of python3, /usr/bin/python3 that has matplotlib)\n"
             "GTB_PLOT_SCRIPT: the plotting script (default: plots/gtb_plot.py of the source tree)");
  app.add_option("results", in, "The results file")->required()->type_name("RESULTS.json");
  app.add_option("--out", out, "The folder the figures go to")->required()->type_name("DIR");
  app.add_option("--format", format, "The figures' formats")->type_name("png|svg|png,svg")->capture_default_str();
  app.add_option("--only", only, "Only these figures")->type_name("NAME,...");
  if (const auto rc = parse_cli(app, argc, argv, "gtb plot")) return *rc;
  // Bad input is refused here, with the same messages as compare and report, before Python starts.
  json doc;
  try {
    doc = load_document(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb plot: %s\n", e.what());
    return kExitBadInput;
  }
  // A file from before typed findings carries no figure spec: exiting 0 with no figure let a job
  // publish an empty folder as if it held the figures.
  if (const std::string why = no_figure_reason(doc, in); !why.empty()) {
    std::fprintf(stderr, "gtb plot: no figure: %s\n", why.c_str());
    return kExitNoFigure;
  }
  const char* script_env = std::getenv("GTB_PLOT_SCRIPT");
  const std::string script = script_env && *script_env ? script_env : std::string(GTB_SOURCE_DIR) + "/plots/gtb_plot.py";
  if (!file_exists(script)) {
    std::fprintf(stderr, "gtb plot: the plotting script %s is missing (set GTB_PLOT_SCRIPT)\n", script.c_str());
    return kExitBadInput;
  }
  std::string python;
  if (const char* p = std::getenv("GTB_PYTHON"); p && *p) {
    python = p;
  } else {
    for (const char* cand : {"python3", "/usr/bin/python3"})
      if (has_matplotlib(cand)) {
        python = cand;
        break;
      }
    if (python.empty()) {
      std::fprintf(stderr, "gtb plot: no Python with matplotlib found (install python3-matplotlib, or set GTB_PYTHON)\n");
      return kExitBadInput;
    }
  }
  std::vector<std::string> args = {python, script, in, "--out", out, "--format", format};
  if (!only.empty()) args.insert(args.end(), {"--only", only});
  std::fflush(stdout);
  const int rc = run_program(args, false);
  if (rc == 0) return kExitOk;
  if (rc < 0) std::fprintf(stderr, "gtb plot: could not run %s %s\n", python.c_str(), script.c_str());
  return kExitBadInput;
}

}  // namespace gtb::driver
