// The name tables: both directions from one table, unknown names rejected with a clear message.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/runtime/stopping.h"
#include "harness/document/types.h"
#include "kernels/common/names.h"
#include "kernels/common/precision.h"
#include "tests/common/named_record.h"

namespace {

enum class Color { red, green, blue };
constexpr gtb::NameTable<Color, 3> kColors = {{{Color::red, "red"}, {Color::green, "green"}, {Color::blue, "blue"}}};
static_assert(gtb::names_unique(kColors));
static_assert(std::string_view(gtb::name_of(kColors, Color::green)) == "green", "name_of works at compile time");

template <class E, std::size_t N>
void expect_round_trip(const gtb::NameTable<E, N>& table) {
  for (const auto& [value, name] : table) {
    EXPECT_STREQ(gtb::name_of(table, value), name);
    EXPECT_EQ(gtb::parse_name(table, name, "thing"), value) << name;
  }
}

// Declared with their tables: the fewest values and the most the macro takes.
GTB_NAMED_ENUM(Shade, kShades, light, dark);
GTB_NAMED_ENUM(Hex, kHex, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15);

}  // namespace

TEST(NameTable, EveryValueRoundTrips) { expect_round_trip(kColors); }

// GTB_NAMED_ENUM: every value once, in declaration order, named by its own enumerator.
TEST(NamedEnum, TheTableNamesEachValueByItsEnumeratorInOrder) {
  static_assert(kShades.size() == 2 && kHex.size() == 16);
  EXPECT_EQ(gtb::names_of(kShades), (std::vector<std::string>{"light", "dark"}));
  EXPECT_EQ(kShades[1].first, Shade::dark);
  EXPECT_STREQ(to_string(Shade::dark), "dark");
  for (std::size_t i = 0; i < kHex.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kHex[i].first), i);
    EXPECT_EQ(std::string(kHex[i].second), "h" + std::to_string(i));
  }
  expect_round_trip(kHex);
  EXPECT_STREQ(to_string(Hex::h15), "h15");
  EXPECT_THROW(gtb::parse_name(kShades, "Light", "shade"), std::invalid_argument);
}

TEST(NameTable, AnUnknownNameSaysWhatWasParsedAndListsTheNames) {
  try {
    gtb::parse_name(kColors, "teal", "color");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown color 'teal' (expected red, green or blue)");
  }
  EXPECT_THROW(gtb::parse_name(kColors, "", "color"), std::invalid_argument);
  EXPECT_THROW(gtb::parse_name(kColors, "Red", "color"), std::invalid_argument);  // names are exact
}

TEST(NameTable, AValueOutsideTheEnumHasNoName) {
  EXPECT_STREQ(gtb::name_of(kColors, static_cast<Color>(7)), "?");
}

TEST(NameTable, NamesInTableOrderOrInTheCallersOrder) {
  EXPECT_EQ(gtb::names_of(kColors), (std::vector<std::string>{"red", "green", "blue"}));
  EXPECT_EQ(gtb::names_of(kColors, std::array<Color, 2>{Color::blue, Color::red}),
            (std::vector<std::string>{"blue", "red"}));
}

TEST(NameTable, ADuplicateNameOrValueIsCaught) {
  constexpr gtb::NameTable<Color, 2> same_name = {{{Color::red, "red"}, {Color::green, "red"}}};
  constexpr gtb::NameTable<Color, 2> same_value = {{{Color::red, "red"}, {Color::red, "green"}}};
  static_assert(!gtb::names_unique(same_name));
  static_assert(!gtb::names_unique(same_value));
  EXPECT_FALSE(gtb::names_unique(same_name));
}

// The names records and command lines carry: changing one breaks every stored results file.
TEST(NameTables, HarnessEnumsKeepTheirRecordNames) {
  static_assert(gtb::names_unique(gtb::kBackendNames) && gtb::names_unique(gtb::kClockNames) &&
                gtb::names_unique(gtb::kBetterNames) && gtb::names_unique(gtb::kStatusNames) &&
                gtb::names_unique(gtb::kMetricKindNames) && gtb::names_unique(gtb::kSuiteNames));
  expect_round_trip(gtb::kBackendNames);
  expect_round_trip(gtb::kClockNames);
  expect_round_trip(gtb::kBetterNames);
  expect_round_trip(gtb::kStatusNames);
  expect_round_trip(gtb::kSuiteNames);
  EXPECT_EQ(gtb::names_of(gtb::kBackendNames), (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(gtb::names_of(gtb::kClockNames), (std::vector<std::string>{"host_wall", "cuda_event"}));
  EXPECT_EQ(gtb::names_of(gtb::kStatusNames), (std::vector<std::string>{"ok", "skipped", "failed", "invalid"}));
  EXPECT_EQ(gtb::names_of(gtb::kSuiteNames), (std::vector<std::string>{"quick", "full"}));
  EXPECT_EQ(gtb::status_from_string("invalid"), gtb::Status::invalid);
  EXPECT_THROW(gtb::backend_from_string("rocm"), std::invalid_argument);
  EXPECT_THROW(gtb::suite_from_string("medium"), std::invalid_argument);
}

TEST(NameTables, AnUnknownNameInAFileIsAClearRecordError) {
  gtb::Record r = gtb::test::named_record("t", "w", "v", gtb::Backend::cpu, {{"n", 1}});
  r.status = gtb::Status::skipped;
  gtb::json j = gtb::to_json(r);
  j["status"] = "meh";
  try {
    gtb::record_from_json(j);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("record 't/w/v/cpu/n=1': unknown status 'meh'"), std::string::npos) << e.what();
  }
}

TEST(Precision, OneTypeForGemmAndTrainWithTheirRecordNames) {
  static_assert(gtb::names_unique(gtb::kPrecisionNames));
  expect_round_trip(gtb::kPrecisionNames);
  EXPECT_EQ(gtb::names_of(gtb::kPrecisionNames, gtb::kGemmPrecisions),
            (std::vector<std::string>{"fp32", "tf32", "fp16_fp32acc", "fp16_fp16acc", "bf16_fp32acc"}));
  EXPECT_EQ(gtb::names_of(gtb::kPrecisionNames, gtb::kTrainPrecisions),
            (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16"}));
  // A mixed-precision step's GEMMs accumulate in FP32.
  EXPECT_EQ(gtb::gemm_precision(gtb::Precision::fp16), gtb::Precision::fp16_fp32acc);
  EXPECT_EQ(gtb::gemm_precision(gtb::Precision::bf16), gtb::Precision::bf16_fp32acc);
  for (gtb::Precision p : gtb::kGemmPrecisions) EXPECT_EQ(gtb::gemm_precision(p), p);
  EXPECT_THROW(gtb::precision_from_string("fp8"), std::invalid_argument);
}
