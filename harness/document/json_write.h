// Fixed-shape types written to JSON by declaration, not field by field: GTB_JSON_WRITE(Type, a, b)
// defines to_json(json&, const Type&), which adds each listed member under its own name, in the
// order listed, so that `json j = x;`, `j["key"] = x;` and a std::vector of such types convert as
// nlohmann converts any type. nlohmann's own NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE does the same, but
// before 3.11.3 (Debian 12 ships 3.11.2) only for nlohmann::json, whose objects sort their keys;
// gtb::json is nlohmann::ordered_json, whose objects keep the order written, and the results files
// are byte-for-byte what they were. This is 3.11.3's form of the macro: nlohmann's own field
// expansion, for any JSON type. Writing only: the readers refuse a malformed file with a message naming the key, which
// the generated readers would not.
//
// Declare it in the type's namespace (nlohmann finds to_json by argument-dependent lookup). A
// std::optional member listed is written as null when empty; a type whose optional members are left
// out when absent declares its fixed members and adds the others after:
//   json j = line;  if (!line.note.empty()) j["note"] = line.note;
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#define GTB_JSON_WRITE(Type, ...)                                                                       \
  template <class BasicJson,                                                                            \
            std::enable_if_t<nlohmann::detail::is_basic_json<BasicJson>::value, int> = 0>               \
  void to_json(BasicJson& nlohmann_json_j, const Type& nlohmann_json_t) {                               \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                            \
  }

// An optional member is written as its value, or null when it has none (findings::or_null's form).
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  template <class BasicJson>
  static void to_json(BasicJson& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
};
}  // namespace nlohmann

namespace gtb {
// A list under `key` only when it has elements: a family's findings leave an empty list out.
template <class BasicJson, class T>
void write_nonempty(BasicJson& j, const char* key, const std::vector<T>& list) {
  if (!list.empty()) j[key] = list;
}
}  // namespace gtb
