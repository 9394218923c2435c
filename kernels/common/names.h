// One name table per enum: to_string and parse both read it, so the two directions cannot drift.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gtb {

// Every value of an enum once, with the name records, options and command lines use for it.
template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, const char*>, N>;

// The name of `value`; "?" only for a value outside the enum (an integer cast to it).
template <class E, std::size_t N>
constexpr const char* name_of(const NameTable<E, N>& table, E value) {
  for (const auto& entry : table)
    if (entry.first == value) return entry.second;
  return "?";
}

// The names in table order (an option axis, a usage line).
template <class E, std::size_t N>
std::vector<std::string> names_of(const NameTable<E, N>& table) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

// The names of `values`, a subset of the enum in the caller's order.
template <class E, std::size_t N, class Values>
std::vector<std::string> names_of(const NameTable<E, N>& table, const Values& values) {
  std::vector<std::string> out;
  for (const E& v : values) out.emplace_back(name_of(table, v));
  return out;
}

// The value called `text`. An unknown name throws std::invalid_argument that says what was being
// parsed (`what`, e.g. "memory kind") and lists the names it knows.
template <class E, std::size_t N>
E parse_name(const NameTable<E, N>& table, std::string_view text, const char* what) {
  for (const auto& entry : table)
    if (text == entry.second) return entry.first;
  std::string known;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) known += i + 1 == N ? " or " : ", ";
    known += table[i].second;
  }
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(text) + "' (expected " + known + ")");
}

// True when no value and no name appears twice (a copy-paste slip in a table); for static_assert.
template <class E, std::size_t N>
constexpr bool names_unique(const NameTable<E, N>& table) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j) {
      if (table[i].first == table[j].first) return false;
      if (std::string_view(table[i].second) == std::string_view(table[j].second)) return false;
    }
  return true;
}

}  // namespace gtb
