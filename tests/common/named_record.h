// A record that has only its name: family, workload, variant, backend, params and options, the id made
// from them as the harness makes it. What a test starts from when it needs a record to carry
// something (a status, device timing, a measurement) rather than a measurement of its own.
#pragma once

#include <string>

#include "harness/document/types.h"

namespace gtb::test {

inline Record named_record(const std::string& family, const std::string& workload, const std::string& variant,
                           Backend backend, json params = json::object(), json options = json::object()) {
  Record r;
  r.family = family;
  r.workload = workload;
  r.variant = variant;
  r.backend = backend;
  r.params = std::move(params);
  r.options = std::move(options);
  r.id = make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  return r;
}

// The same record measured: ok, with the value the findings read (and no samples).
inline Record ok_record(const std::string& family, const std::string& workload, const std::string& variant,
                        Backend backend, json params, json options, double value) {
  Record r = named_record(family, workload, variant, backend, std::move(params), std::move(options));
  r.status = Status::ok;
  r.value = value;
  return r;
}

}  // namespace gtb::test
