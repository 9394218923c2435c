// Start-up hooks installed by families, run by family_main.
#include "harness/runtime/startup.h"

#include <vector>

namespace gtb {

namespace {
std::vector<Startup>& hooks() {
  static std::vector<Startup> h;
  return h;
}
}  // namespace

bool add_startup(Startup hook) {
  hooks().push_back(std::move(hook));
  return true;
}

int run_startup_takeover(int argc, char** argv) {
  for (const Startup& h : hooks())
    if (h.takeover)
      if (const int rc = h.takeover(argc, argv); rc >= 0) return rc;
  return -1;
}

void run_startup_before_cases(char** argv) {
  for (const Startup& h : hooks())
    if (h.before_cases) h.before_cases(argv);
}

}  // namespace gtb
