// A framework record for the family's tests: ok, three equal samples of `seconds`, its id made as the
// harness makes it.
#pragma once

#include <string>

#include "harness/document/stats.h"
#include "harness/document/types.h"
#include "tests/common/named_record.h"

namespace gtb::test {

inline Record framework_record(const std::string& workload, Backend be, json params, json options, double seconds,
                               const std::string& variant = "pytorch") {
  Record r = named_record("framework", workload, variant, be, std::move(params), std::move(options));
  r.samples = {seconds, seconds, seconds};
  r.stats = compute_stats(r.samples);
  r.value = 1.0 / seconds;
  return r;
}

}  // namespace gtb::test
