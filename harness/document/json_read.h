// Lenient readers of a results document's JSON: results files from other versions, or written by
// hand, may lack any key or hold another type there. A reader gives its fallback then, never an
// exception. A path is a list of object keys, read from the outside in ({"host", "caches", "l2_bytes"}).
// Readers that must refuse a malformed file (records, findings, compare configs) throw instead, with
// messages naming the key; they live beside the format they check.
#pragma once

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "harness/document/types.h"

namespace gtb::json_read {

// A document that is not what its reader expects: "where: what", as one runtime_error.
[[noreturn]] inline void bad(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

using Path = std::initializer_list<const char*>;

// The value at `key`, or nullptr when `j` is not an object or lacks it.
inline const json* find(const json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}
// The value at the end of `path`, or nullptr when any step is missing.
inline const json* find(const json& j, Path path) {
  const json* cur = &j;
  for (const char* k : path) {
    cur = find(*cur, k);
    if (!cur) return nullptr;
  }
  return cur;
}

// A copy of the value, or null when it is missing (a table cell, a findings value to format).
inline json value_at(const json& j, Path path) {
  const json* v = find(j, path);
  return v ? *v : json();
}
// A number, or `otherwise` when the value is missing or not a number.
inline double number_at(const json& j, Path path, double otherwise = NAN) {
  const json* v = find(j, path);
  return v && v->is_number() ? v->get<double>() : otherwise;
}
// A string, or `otherwise` when the value is missing or not a string.
inline std::string string_at(const json& j, Path path, const std::string& otherwise = "") {
  const json* v = find(j, path);
  return v && v->is_string() ? v->get<std::string>() : otherwise;
}
// A boolean, or `otherwise` when the value is missing or not a boolean.
inline bool bool_at(const json& j, Path path, bool otherwise = false) {
  const json* v = find(j, path);
  return v && v->is_boolean() ? v->get<bool>() : otherwise;
}
// An object, or an empty one when the value is missing or not an object.
inline const json& object_at(const json& j, Path path) {
  static const json empty = json::object();
  const json* v = find(j, path);
  return v && v->is_object() ? *v : empty;
}
// An array, or an empty one when the value is missing or not an array.
inline const json& array_at(const json& j, Path path) {
  static const json empty = json::array();
  const json* v = find(j, path);
  return v && v->is_array() ? *v : empty;
}

}  // namespace gtb::json_read
