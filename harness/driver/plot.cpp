// gtb plot (placeholder until implemented).
#include <cstdio>

#include "harness/driver/commands.h"

namespace gtb::driver {
int cmd_plot(int, char**) {
  std::fprintf(stderr, "gtb plot: not implemented yet\n");
  return kExitBadInput;
}
}  // namespace gtb::driver
