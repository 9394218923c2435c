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
// Declare it in the type's namespace (nlohmann finds to_json by argument-dependent lookup). A type
// with optional members declares its fixed members and adds the optional ones after:
//   json j = line;  if (!line.note.empty()) j["note"] = line.note;
#pragma once

#include <type_traits>

#include <nlohmann/json.hpp>

#define GTB_JSON_WRITE(Type, ...)                                                                       \
  template <class BasicJson,                                                                            \
            std::enable_if_t<nlohmann::detail::is_basic_json<BasicJson>::value, int> = 0>               \
  void to_json(BasicJson& nlohmann_json_j, const Type& nlohmann_json_t) {                               \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                            \
  }
