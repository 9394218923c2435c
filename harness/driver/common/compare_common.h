// Internal to gtb compare: what its configuration, decision, calibration and rendering files share
// (record keys, sample pools, the index of a document's records, the text of a ratio).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/driver/common/compare_core.h"

namespace gtb::compare::detail {

// A ratio as a signed percent change: 1.05 -> "+5.0%".
std::string pct(double ratio);
std::string join(const std::vector<std::string>& v, const std::string& sep);
// FNV-1a: a seed per record that does not depend on the standard library's hash.
std::uint64_t fnv1a(const std::string& s);
// What matches a record across files: family, workload, variant, backend, params and options (key
// order of params and options does not matter; 1 and 1.0 differ).
std::string record_key(const Record& r);
// The metric of each positive, finite sample.
std::vector<double> metric_samples(const Record& r);
// Appends to a decision's note, "; " between parts.
void append_note(Decision& d, const std::string& text);

// A document's records and where each key is; two records with one key are refused.
struct Indexed {
  std::vector<Record> records;
  std::map<std::string, std::size_t> by_key;
};
Indexed index_records(const json& doc, const char* side);

}  // namespace gtb::compare::detail
