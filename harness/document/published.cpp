// The concepts a family may publish (see published.h).
#include "harness/document/published.h"

namespace gtb::published {

bool known(const std::string& what) { return what == kCeilings || what == kCeilingsMissing || what == kPeaks; }

json legacy_declaration() {
  return {{kCeilings, "ceilings"}, {kCeilingsMissing, "ceilings_missing"}, {kPeaks, "best_rate"}};
}

}  // namespace gtb::published
