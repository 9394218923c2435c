// The registry of what families publish (see publish.h).
#include "gtb/publish.h"

#include <map>
#include <stdexcept>

namespace gtb {

namespace {
std::map<std::string, json>& declarations() {
  static std::map<std::string, json> d;
  return d;
}
}  // namespace

bool publish(const std::string& family, const std::string& what, const std::string& data_key) {
  if (!published::known(what)) throw std::invalid_argument("gtb::publish: unknown concept '" + what + "'");
  if (data_key.empty()) throw std::invalid_argument("gtb::publish: '" + what + "' needs the key of its findings data");
  json& d = declarations()[family];
  if (!d.is_object()) d = json::object();
  if (d.contains(what) && d[what] != data_key)
    throw std::invalid_argument("gtb::publish: " + family + " declares '" + what + "' twice");
  d[what] = data_key;
  return true;
}

json publications(const std::string& family) {
  const auto it = declarations().find(family);
  return it == declarations().end() ? json::object() : it->second;
}

}  // namespace gtb
