// gtb report (placeholder until implemented).
#include <cstdio>

#include "harness/driver/commands.h"

namespace gtb::driver {
int cmd_report(int, char**) {
  std::fprintf(stderr, "gtb report: not implemented yet\n");
  return kExitBadInput;
}
}  // namespace gtb::driver
