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

// An enum whose names are its enumerators, declared once with its table:
//   GTB_NAMED_ENUM(Color, kColorNames, red, green, blue);
// is `enum class Color { red, green, blue };`, a NameTable<Color, 3> kColorNames of {Color::red,
// "red"}, ... in that order, and to_string(Color), so that no value can lack its name nor a name be
// misspelt. Up to 16 values; an enum whose names differ from its enumerators writes its table by hand.
#define GTB_NAMED_ENUM(Enum, table, ...)                                                 \
  enum class Enum { __VA_ARGS__ };                                                       \
  inline constexpr ::gtb::NameTable<Enum, GTB_NAMES_COUNT_(__VA_ARGS__)> table = {       \
      {GTB_NAMES_PICK_(__VA_ARGS__, GTB_NAMES_16_, GTB_NAMES_15_, GTB_NAMES_14_, GTB_NAMES_13_, \
                       GTB_NAMES_12_, GTB_NAMES_11_, GTB_NAMES_10_, GTB_NAMES_9_, GTB_NAMES_8_, \
                       GTB_NAMES_7_, GTB_NAMES_6_, GTB_NAMES_5_, GTB_NAMES_4_, GTB_NAMES_3_,    \
                       GTB_NAMES_2_, GTB_NAMES_1_)(Enum, __VA_ARGS__)}};                 \
  inline const char* to_string(Enum value) { return ::gtb::name_of(table, value); }      \
  static_assert(::gtb::names_unique(table), "a value of " #Enum " named twice")

// The expansion: GTB_NAMES_<n>_ writes n entries; PICK_ chooses it by the number of values.
#define GTB_NAMES_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, chosen, ...) chosen
#define GTB_NAMES_COUNT_(...) GTB_NAMES_PICK_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define GTB_NAMES_1_(E, a) {E::a, #a}
#define GTB_NAMES_2_(E, a, ...) {E::a, #a}, GTB_NAMES_1_(E, __VA_ARGS__)
#define GTB_NAMES_3_(E, a, ...) {E::a, #a}, GTB_NAMES_2_(E, __VA_ARGS__)
#define GTB_NAMES_4_(E, a, ...) {E::a, #a}, GTB_NAMES_3_(E, __VA_ARGS__)
#define GTB_NAMES_5_(E, a, ...) {E::a, #a}, GTB_NAMES_4_(E, __VA_ARGS__)
#define GTB_NAMES_6_(E, a, ...) {E::a, #a}, GTB_NAMES_5_(E, __VA_ARGS__)
#define GTB_NAMES_7_(E, a, ...) {E::a, #a}, GTB_NAMES_6_(E, __VA_ARGS__)
#define GTB_NAMES_8_(E, a, ...) {E::a, #a}, GTB_NAMES_7_(E, __VA_ARGS__)
#define GTB_NAMES_9_(E, a, ...) {E::a, #a}, GTB_NAMES_8_(E, __VA_ARGS__)
#define GTB_NAMES_10_(E, a, ...) {E::a, #a}, GTB_NAMES_9_(E, __VA_ARGS__)
#define GTB_NAMES_11_(E, a, ...) {E::a, #a}, GTB_NAMES_10_(E, __VA_ARGS__)
#define GTB_NAMES_12_(E, a, ...) {E::a, #a}, GTB_NAMES_11_(E, __VA_ARGS__)
#define GTB_NAMES_13_(E, a, ...) {E::a, #a}, GTB_NAMES_12_(E, __VA_ARGS__)
#define GTB_NAMES_14_(E, a, ...) {E::a, #a}, GTB_NAMES_13_(E, __VA_ARGS__)
#define GTB_NAMES_15_(E, a, ...) {E::a, #a}, GTB_NAMES_14_(E, __VA_ARGS__)
#define GTB_NAMES_16_(E, a, ...) {E::a, #a}, GTB_NAMES_15_(E, __VA_ARGS__)
