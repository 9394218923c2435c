// The ceilings family's derived results: the measured ceilings other families report percent of
// (context.ceilings in a results file), and why each missing one is missing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::ceilings {

// One ceiling: its value (GB/s or TFLOP/s, see ceiling_unit) or, when no record measured it, why.
struct Ceiling {
  std::string name;  // "host_copy_gbps"
  std::optional<double> value;
  std::string missing;  // set when value is empty
};

// findings.ceilings = {"ceilings": {name: value}, "ceilings_missing": {name: reason}}, each object
// only when it has an entry, and in the order the entries are found. The ceilings, in order:
// host_copy_gbps, host_triad_gbps, host_fma_fp32_tflops, device_copy_gbps, device_triad_gbps (each
// the best ok record of its workload and backend; host bandwidth only from sizes that are not
// cache-resident), then host_stream_gbps and device_stream_gbps (the better of a side's copy and
// triad), which are never missing: they are left out when neither is measured.
struct Findings {
  std::vector<Ceiling> ceilings;
  // The measured ones, in order.
  std::vector<std::pair<std::string, double>> measured() const;
  // stream_bandwidth per backend: bytes moved (read + written) per second by array size.
  std::vector<cost::Term> terms;
};
Findings compute_findings(const std::vector<Record>& records);
void to_json(const Findings& found, json& data);

}  // namespace gtb::ceilings
