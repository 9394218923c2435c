// The gtb driver's subcommands; each returns the process exit code.
#pragma once

namespace gtb::driver {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRegression = 1;  // compare: something got slower
inline constexpr int kExitBadInput = 2;    // usage errors, unreadable or incomparable files

int cmd_run(int argc, char** argv);
int cmd_list(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_ab(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_plot(int argc, char** argv);
int cmd_advise(int argc, char** argv);
int cmd_diagnose(int argc, char** argv);

}  // namespace gtb::driver
