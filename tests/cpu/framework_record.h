// A framework record for the family's tests: ok, three equal samples of `seconds`, its id made as the
// harness makes it.
#pragma once

#include <string>

#include "harness/document/stats.h"
#include "harness/document/types.h"

namespace gtb::test {

inline Record framework_record(const std::string& workload, Backend be, json params, json options, double seconds,
                               const std::string& variant = "pytorch") {
  Record r;
  r.family = "framework";
  r.workload = workload;
  r.variant = variant;
  r.backend = be;
  r.params = std::move(params);
  r.options = std::move(options);
  r.id = make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  r.samples = {seconds, seconds, seconds};
  r.stats = compute_stats(r.samples);
  r.value = 1.0 / seconds;
  return r;
}

}  // namespace gtb::test
