// gtb: the driver. Runs family binaries, lists workloads, compares, reports and plots results.
#include <cstdio>
#include <cstring>
#include <string>

#include "harness/driver/commands.h"

namespace gtb {
const char* build_git_commit();  // generated at build time (cmake/BuildInfo.cmake)
bool build_git_dirty();
}  // namespace gtb

namespace {
void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: gtb <command> [options]   (gtb --version: the version and commit)\n"
               "  run      run benchmark families and write one results file (gtb run --help)\n"
               "  list     show families, workloads and axes\n"
               "  compare  compare two results files; exit 1 on a regression (gtb compare --help)\n"
               "  ab       run two builds alternately and compare them on paired rounds (gtb ab --help)\n"
               "  report   the findings of a results file, in Markdown\n"
               "  plot     regenerate the figures of a results file\n"
               "  advise   predict your training step from a results file and rank the fixes (gtb advise --help)\n"
               "  diagnose the symptoms in a PyTorch profiler trace, priced with a results file (gtb diagnose --help)\n");
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gtb::driver;
  // Line-buffered even into a pipe or a file: progress on stderr must not land inside a stdout line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    usage(stderr);
    return kExitBadInput;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return kExitOk;
  }
  if (cmd == "--version" || cmd == "version") {
    // The commit the build was made from, so a results file and a bug report name the same code.
    std::printf("gtb %s (commit %s%s)\n", GTB_VERSION, gtb::build_git_commit(), gtb::build_git_dirty() ? ", with uncommitted changes" : "");
    return kExitOk;
  }
  // Subcommands see argv[0] = "gtb <cmd>" style: argv shifted by one.
  if (cmd == "run") return cmd_run(argc - 1, argv + 1);
  if (cmd == "list") return cmd_list(argc - 1, argv + 1);
  if (cmd == "compare") return cmd_compare(argc - 1, argv + 1);
  if (cmd == "ab") return cmd_ab(argc - 1, argv + 1);
  if (cmd == "report") return cmd_report(argc - 1, argv + 1);
  if (cmd == "plot") return cmd_plot(argc - 1, argv + 1);
  if (cmd == "advise") return cmd_advise(argc - 1, argv + 1);
  if (cmd == "diagnose") return cmd_diagnose(argc - 1, argv + 1);
  std::fprintf(stderr, "gtb: unknown command '%s'\n", cmd.c_str());
  usage(stderr);
  return kExitBadInput;
}
