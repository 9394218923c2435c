// Internal to gtb compare: record keys, sample pools and the index of a document's records.
#include "harness/driver/common/compare_common.h"

#include <cmath>
#include <stdexcept>

#include "harness/document/format.h"
#include "harness/document/results.h"

namespace gtb::compare::detail {

std::string pct(double ratio) { return format::printf_number("%+.1f%%", (ratio - 1.0) * 100.0); }

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {
// Key-order independent text of a typed object: {"m":1,"n":2} equals {"n":2,"m":1}; 1 and 1.0 differ.
std::string canonical(const json& j) { return nlohmann::json::parse(j.dump()).dump(); }
}  // namespace

std::string record_key(const Record& r) {
  return r.family + '\x1f' + r.workload + '\x1f' + r.variant + '\x1f' + to_string(r.backend) + '\x1f' +
         canonical(r.params) + '\x1f' + canonical(r.options);
}

std::vector<double> metric_samples(const Record& r) {
  std::vector<double> v;
  v.reserve(r.samples.size());
  for (double s : r.samples) {
    if (!(s > 0.0) || !std::isfinite(s)) continue;
    const double m = r.metric_of_seconds(s);
    if (std::isfinite(m) && m > 0.0) v.push_back(m);
  }
  return v;
}

void append_note(Decision& d, const std::string& text) { d.note += (d.note.empty() ? "" : "; ") + text; }

Indexed index_records(const json& doc, const char* side) {
  Indexed ix;
  ix.records = records_of(doc);
  for (std::size_t i = 0; i < ix.records.size(); ++i) {
    const auto [it, fresh] = ix.by_key.emplace(record_key(ix.records[i]), i);
    if (!fresh)
      throw std::runtime_error(std::string(side) + ": two records with the same family, workload, variant, backend, "
                               "params and options: " + ix.records[i].id);
  }
  return ix;
}

}  // namespace gtb::compare::detail
