// Family list (compiled in by CMake) and binary lookup.
#include "harness/driver/common/families.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "harness/driver/common/process.h"

namespace gtb::driver {

std::vector<std::string> known_families() {
  // GTB_FAMILIES (comma-separated) replaces the built-in list: for tests and private families.
  const char* env = std::getenv("GTB_FAMILIES");
  const bool from_env = env && *env;
  std::vector<std::string> out;
  std::stringstream ss(from_env ? env : GTB_FAMILY_LIST);
  std::string f;
  while (std::getline(ss, f, ','))
    if (!f.empty()) out.push_back(f);
  return out;
}

std::vector<std::string> select_families(const std::string& csv) {
  const auto known = known_families();
  if (csv.empty()) return known;
  std::vector<std::string> want;
  std::stringstream ss(csv);
  std::string f;
  while (std::getline(ss, f, ',')) {
    if (f.empty()) continue;
    bool found = false;
    for (const auto& k : known) found = found || k == f;
    if (!found) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown family '" + f + "' (known: " + list + ")");
    }
    want.push_back(f);
  }
  if (want.empty()) throw std::invalid_argument("no family selected");
  std::vector<std::string> ordered;
  for (const auto& k : known)
    for (const auto& w : want)
      if (w == k) {
        ordered.push_back(k);
        break;
      }
  return ordered;
}

std::string family_binary(const std::string& family) {
  const char* dir = std::getenv("GTB_BIN_DIR");
  return std::string(dir && *dir ? dir : self_dir()) + "/gtb-" + family;
}

}  // namespace gtb::driver
