// The main() every gtb-<family> binary shares.
#include <cstdio>

#include "harness/runtime/entry.h"

#ifndef GTB_FAMILY_NAME
#error "GTB_FAMILY_NAME must name the family"
#endif

int main(int argc, char** argv) {
  // Line-buffered even into a log file, so stdout and stderr lines interleave whole.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return gtb::family_main(argc, argv, GTB_FAMILY_NAME);
}
