// Tests of typed findings: one JSON form both ways, clear errors on bad input, the value formats;
// the one number formatter (format.h) and the lenient JSON readers (json_read.h) they build on; and
// a family's typed result reaching its sections without a JSON round trip.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/document/findings.h"
#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/results.h"
#include "gtb/gtb.h"
#include "tests/common/error_of.h"

namespace gtb::findings {
namespace {

Family sample() {
  Family f;
  f.title = "Example";
  f.order = 42;
  f.data = {{"raw", 1.5}};
  auto& s = f.section("speed", "Speed");
  s.say("Some prose.");
  s.line("best", "best rate", 12.5, "GB/s", Hint::bandwidth, "at 1 GiB");
  auto& t = s.table("rates", {{"size", "", Hint::bytes}, {"rate", "GB/s", Hint::bandwidth}, {"what"}});
  t.rows.push_back({json(4096), json(1.25), json("copy")});
  t.rows.push_back({json(nullptr), json(2.0), json("not measured")});
  auto& g = s.figure("example_rates", "Rate vs size");
  g.where = {{"workload", {"copy", "triad"}}, {"variant!", "plain"}};
  g.x = {"params.bytes"};
  g.series = {"backend", "variant"};
  g.logx = 2;
  g.hlines = {{1.0, "one"}};
  auto& p = f.section("guess", "Projection");
  p.projected = true;
  p.not_measured = "no input";
  return f;
}

TEST(Findings, RoundTripKeepsEveryField) {
  const json j = to_json(sample());
  EXPECT_TRUE(is_typed(j));
  const Family back = family_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.order, 42);
  ASSERT_EQ(back.sections.size(), 2u);
  EXPECT_EQ(back.sections[0].figures.at(0).logx, 2);
  EXPECT_EQ(back.sections[0].lines.at(0).hint, Hint::bandwidth);
  EXPECT_TRUE(back.sections[1].projected);
}

TEST(Findings, NonFiniteNumbersBecomeNull) {
  Family f;
  auto& s = f.section("s", "S");
  s.line("x", "x", NAN, "", Hint::number);
  s.table("t", {{"v", "", Hint::number}}).rows.push_back({json(INFINITY)});
  const json j = to_json(f);
  EXPECT_TRUE(j["sections"][0]["lines"][0]["value"].is_null());
  EXPECT_TRUE(j["sections"][0]["tables"][0]["rows"][0][0].is_null());
}

TEST(Findings, BadInputNamesTheProblem) {
  auto message = [](const json& j) { return gtb::test::error_of([&] { (void)family_from_json(j); }, "accepted"); };
  const json good = to_json(sample());
  EXPECT_NE(message(json{{"copy_model", 1}}).find("no \"sections\" array"), std::string::npos);
  json bad = good;
  bad["sections"][0]["tables"][0]["rows"][0] = json::array({1});
  EXPECT_NE(message(bad).find("row whose length"), std::string::npos) << message(bad);
  bad = good;
  bad["sections"][0]["lines"][0]["hint"] = "speed";
  EXPECT_NE(message(bad).find("unknown hint 'speed'"), std::string::npos) << message(bad);
  bad = good;
  bad["sections"][0]["figures"][0].erase("x");
  EXPECT_NE(message(bad).find("\"x\" is missing"), std::string::npos);
  bad = good;
  bad["sections"][0]["figures"][0]["kind"] = "pie";
  EXPECT_NE(message(bad).find("unknown kind"), std::string::npos);
  bad = good;
  bad["sections"][0]["lines"][0]["value"] = json::object();
  EXPECT_NE(message(bad).find("not a number or text"), std::string::npos);
  bad = good;
  bad["sections"][1].erase("id");
  EXPECT_NE(message(bad).find("\"id\" is missing"), std::string::npos);
}

TEST(Findings, FormatsByHint) {
  EXPECT_EQ(format(130000, Hint::bytes, ""), "127 KiB");
  EXPECT_EQ(format(256.0 * (1 << 20), Hint::bytes, ""), "256 MiB");
  EXPECT_EQ(format(100, Hint::bytes, ""), "100 bytes");
  EXPECT_EQ(format(2.547, Hint::ratio, ""), "2.55x");
  EXPECT_EQ(format(0.1, Hint::fraction, ""), "10%");
  EXPECT_EQ(format(45.0, Hint::percent, ""), "45%");
  EXPECT_EQ(format(2.5, Hint::duration, "us"), "2.5 us");
  EXPECT_EQ(format(57.53, Hint::bandwidth, "GB/s"), "57.5 GB/s");
  EXPECT_EQ(format(17, Hint::count, ""), "17");
  EXPECT_EQ(format(nullptr, Hint::bandwidth, "GB/s"), "-");
  EXPECT_EQ(format("never", Hint::count, ""), "never");
}

TEST(Findings, HintNamesRoundTrip) {
  for (Hint h : {Hint::text, Hint::number, Hint::count, Hint::bytes, Hint::duration, Hint::bandwidth, Hint::rate,
                 Hint::ratio, Hint::percent, Hint::fraction})
    EXPECT_EQ(hint_from_string(to_string(h)), h);
  EXPECT_THROW(hint_from_string("fast"), std::runtime_error);
}

// The three rules of format.h, on the values the report, the summary tables and the suspect notes
// print. They disagree on purpose (each keeps its reader's output): 1234.5 is "1234.5" in a summary
// table, "1234" in a findings table and "1.23e+03" in a plausibility note.
TEST(Format, EachRuleKeepsItsReadersDigits) {
  EXPECT_EQ(gtb::format::short_number(1234.5), "1234.5");
  EXPECT_EQ(gtb::format::plain_number(1234.5), "1234");
  EXPECT_EQ(gtb::format::sig3(1234.5), "1.23e+03");

  EXPECT_EQ(gtb::format::short_number(0), "0");
  EXPECT_EQ(gtb::format::short_number(12.345), "12.3");
  EXPECT_EQ(gtb::format::short_number(0.0123), "0.0123");
  EXPECT_EQ(gtb::format::short_number(0.000123), "0.000123");
  EXPECT_EQ(gtb::format::short_number(-150.26), "-150.3");
  EXPECT_EQ(gtb::format::short_number(12345678.9), "1.23e+07");

  EXPECT_EQ(gtb::format::plain_number(4096), "4096");
  EXPECT_EQ(gtb::format::plain_number(15000000), "15000000");  // whole: in full
  EXPECT_EQ(gtb::format::plain_number(12345678.9), "1.23e+07");
  EXPECT_EQ(gtb::format::plain_number(123.4), "123");
  EXPECT_EQ(gtb::format::plain_number(12.34), "12.3");
  EXPECT_EQ(gtb::format::plain_number(1.234), "1.23");
  EXPECT_EQ(gtb::format::plain_number(0.000123), "0.000123");
  EXPECT_EQ(gtb::format::plain_number(1e15), "1e+15");  // too large to be sure it is whole

  EXPECT_EQ(gtb::format::printf_number("%+.1f%%", 5.04), "+5.0%");
  EXPECT_EQ(gtb::format::printf_number("%.0f", 2.5e9), "2500000000");
}

TEST(Format, BytesInBinaryUnits) {
  EXPECT_EQ(gtb::format::binary_bytes(0), "0 bytes");
  EXPECT_EQ(gtb::format::binary_bytes(1023), "1023 bytes");
  EXPECT_EQ(gtb::format::binary_bytes(4096), "4 KiB");
  EXPECT_EQ(gtb::format::binary_bytes(1.5 * (1 << 20)), "1.5 MiB");
  EXPECT_EQ(gtb::format::binary_bytes(3.0 * (1ull << 40)), "3 TiB");
  EXPECT_EQ(gtb::format::binary_bytes(5000.5 * (1ull << 40)), "5e+03 TiB");  // no unit past TiB
  EXPECT_EQ(gtb::format::binary_bytes(-1), "n/a");
}

TEST(Format, CountsTakeTheirNounsNumber) {
  EXPECT_EQ(gtb::format::count_of(0, "record"), "0 records");
  EXPECT_EQ(gtb::format::count_of(1, "case"), "1 case");
  EXPECT_EQ(gtb::format::count_of(2, "case"), "2 cases");
}

TEST(JsonRead, FindsAlongAPath) {
  const json j = {{"host", {{"caches", {{"l2_bytes", 1048576}}}, {"cpu_model", "X"}}}, {"list", {1, 2}}};
  ASSERT_NE(gtb::json_read::find(j, {"host", "caches", "l2_bytes"}), nullptr);
  EXPECT_EQ(*gtb::json_read::find(j, {"host", "caches", "l2_bytes"}), 1048576);
  EXPECT_EQ(gtb::json_read::find(j, std::string("host")), &j.at("host"));
  EXPECT_EQ(gtb::json_read::find(j, {}), &j);  // the empty path: the value itself
  EXPECT_EQ(gtb::json_read::number_at(j, {"host", "caches", "l2_bytes"}), 1048576.0);
  EXPECT_EQ(gtb::json_read::string_at(j, {"host", "cpu_model"}), "X");
  EXPECT_EQ(gtb::json_read::array_at(j, {"list"}).size(), 2u);
  EXPECT_EQ(gtb::json_read::object_at(j, {"host"}).size(), 2u);
  EXPECT_EQ(gtb::json_read::value_at(j, {"host", "cpu_model"}), "X");
}

// Bad input never throws: a missing key, a step through a non-object, or another type gives the fallback.
TEST(JsonRead, BadInputGivesTheFallback) {
  const json j = {{"n", "12"}, {"s", 12}, {"b", 1}, {"a", {{"x", 1}}}, {"o", {1, 2}}, {"list", json::array({json{{"x", 1}}})}};
  EXPECT_EQ(gtb::json_read::find(j, {"missing"}), nullptr);
  EXPECT_EQ(gtb::json_read::find(j, {"s", "deeper"}), nullptr);     // 12 is not an object
  EXPECT_EQ(gtb::json_read::find(j, {"list", "x"}), nullptr);       // nor is an array
  EXPECT_TRUE(std::isnan(gtb::json_read::number_at(j, {"n"})));      // a string, not a number
  EXPECT_EQ(gtb::json_read::number_at(j, {"missing"}, 0), 0.0);
  EXPECT_EQ(gtb::json_read::string_at(j, {"s"}), "");                // a number, not a string
  EXPECT_EQ(gtb::json_read::string_at(j, {"missing"}, "?"), "?");
  EXPECT_FALSE(gtb::json_read::bool_at(j, {"b"}));                   // 1 is not a boolean
  EXPECT_TRUE(gtb::json_read::bool_at(j, {"b"}, true));
  EXPECT_TRUE(gtb::json_read::array_at(j, {"a"}).empty());           // an object, not an array
  EXPECT_TRUE(gtb::json_read::array_at(j, {"a"}).is_array());
  EXPECT_TRUE(gtb::json_read::object_at(j, {"o"}).empty());          // an array, not an object
  EXPECT_TRUE(gtb::json_read::object_at(j, {"o"}).is_object());
  EXPECT_TRUE(gtb::json_read::value_at(j, {"a", "missing"}).is_null());
  for (const json& not_object : {json(), json(3), json("text"), json::array({1})}) {
    EXPECT_EQ(gtb::json_read::find(not_object, {"k"}), nullptr);
    EXPECT_EQ(gtb::json_read::string_at(not_object, {"k"}, "none"), "none");
  }
}

}  // namespace
}  // namespace gtb::findings

// ---- add_family_findings: computing, writing and rendering one typed result ----

namespace {

// A result with a field that has no JSON form at all: it reaches the sections only as itself.
struct Opaque {
  std::size_t records = 0;
  std::function<std::string()> words;
};

int g_computed = 0, g_written = 0, g_rendered = 0;

const bool typed_ok = gtb::add_family_findings<Opaque>(
    "typed_ok", "Typed", 7,
    [](const std::vector<gtb::Record>& recs) {
      ++g_computed;
      const std::size_t n = recs.size();
      return Opaque{n, [n] { return "computed from " + std::to_string(n) + " records"; }};
    },
    [](const Opaque& o, gtb::json& data) {
      ++g_written;
      data["records"] = o.records;
    },
    [](const std::vector<gtb::Record>& recs, const Opaque& o, gtb::findings::Family& f) {
      ++g_rendered;
      auto& s = f.section("typed", "Typed");
      s.say(o.words());
      s.line("same_records", "records seen by compute and by sections", o.records == recs.size() ? "same" : "different", "",
             gtb::findings::Hint::text);
    });

const bool typed_throws = gtb::add_family_findings<Opaque>(
    "typed_throws", "Throws", 8,
    [](const std::vector<gtb::Record>&) -> Opaque { throw std::runtime_error("no usable record"); },
    [](const Opaque&, gtb::json& data) {
      ++g_written;
      data["written"] = true;
    },
    [](const std::vector<gtb::Record>&, const Opaque&, gtb::findings::Family& f) { f.section("never", "Never"); });

const bool sections_throw = gtb::add_family_findings<int>(
    "typed_sections_throw", "Sections throw", 9, [](const std::vector<gtb::Record>&) { return 3; },
    [](const int& v, gtb::json& data) { data["kept"] = v; },
    [](const std::vector<gtb::Record>&, const int&, gtb::findings::Family& f) {
      f.section("half", "Half done").say("begun");
      throw std::runtime_error("table too wide");
    });

int run_main(std::vector<std::string> args, std::string* out = nullptr) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (out) testing::internal::CaptureStdout();
  const int rc = gtb::family_main(static_cast<int>(argv.size()), argv.data(), args[0].substr(4));
  if (out) *out = testing::internal::GetCapturedStdout();
  return rc;
}

class FamilyFindings : public ::testing::Test {
 protected:
  // One results file with one record of typed_ok and one of another family.
  static void SetUpTestSuite() {
    path_ = (std::filesystem::temp_directory_path() / ("gtb-typed-" + std::to_string(::getpid()) + ".json")).string();
    std::vector<gtb::Record> recs(2);
    for (auto& r : recs) {
      r.family = "typed_ok", r.workload = "work", r.variant = "loop", r.backend = gtb::Backend::cpu;
      r.id = "typed_ok/work/loop/cpu";
      r.status = gtb::Status::skipped, r.status_detail = "not run in this test";
    }
    recs[1].family = "other", recs[1].id = "other/work/loop/cpu";
    gtb::write_file_atomic(path_, gtb::make_document(gtb::json::object(), "quick", gtb::json::array(), recs,
                                                     gtb::json::object()).dump());
  }
  static void TearDownTestSuite() { std::filesystem::remove(path_); }
  static gtb::json findings_of(const std::string& family) {
    std::string out;
    EXPECT_EQ(run_main({"gtb-" + family, "--gtb_findings_from=" + path_}, &out), 0);
    return gtb::json::parse(out);
  }
  static std::string path_;
};
std::string FamilyFindings::path_;

TEST_F(FamilyFindings, TypedResultReachesTheSectionsWithoutJson) {
  const int computed = g_computed, written = g_written, rendered = g_rendered;
  const gtb::json j = findings_of("typed_ok");
  EXPECT_EQ(j["data"], (gtb::json{{"records", 1}}));  // the family's own record only
  EXPECT_EQ(g_computed, computed + 1);  // computed once, for both data and sections
  EXPECT_EQ(g_written, written + 1);
  EXPECT_EQ(g_rendered, rendered + 1);
  const gtb::findings::Family f = gtb::findings::family_from_json(j);
  EXPECT_EQ(f.title, "Typed");
  EXPECT_EQ(f.order, 7);
  ASSERT_EQ(f.sections.size(), 1u);
  ASSERT_EQ(f.sections[0].text.size(), 1u);
  // The words came from a std::function in the result, which has no JSON form.
  EXPECT_EQ(f.sections[0].text[0], "computed from 1 records");
  ASSERT_EQ(f.sections[0].lines.size(), 1u);
  EXPECT_EQ(f.sections[0].lines[0].value, "same");
}

TEST_F(FamilyFindings, ThrowingComputeLosesOnlyTheSections) {
  const int written = g_written;
  const gtb::json j = findings_of("typed_throws");
  EXPECT_EQ(g_written, written);  // nothing to write
  const gtb::findings::Family f = gtb::findings::family_from_json(j);
  EXPECT_EQ(f.title, "Throws");
  EXPECT_EQ(f.order, 8);
  EXPECT_EQ(f.data, (gtb::json{{"error", "findings could not be computed: no usable record"}}));
  ASSERT_EQ(f.sections.size(), 1u);
  EXPECT_EQ(f.sections[0].id, "error");
  EXPECT_EQ(f.sections[0].not_measured, "the findings could not be computed: no usable record");
}

TEST_F(FamilyFindings, ThrowingSectionsKeepTheData) {
  const gtb::findings::Family f = gtb::findings::family_from_json(findings_of("typed_sections_throw"));
  EXPECT_EQ(f.data, (gtb::json{{"kept", 3}}));
  ASSERT_EQ(f.sections.size(), 1u);  // the half-built section is gone
  EXPECT_EQ(f.sections[0].id, "error");
  EXPECT_EQ(f.sections[0].not_measured, "the findings could not be computed: table too wide");
}

TEST_F(FamilyFindings, UnregisteredFamilyHasNone) { EXPECT_EQ(findings_of("typed_none"), gtb::json::object()); }

TEST_F(FamilyFindings, BadFindingsSourceIsAnError) {
  EXPECT_EQ(run_main({"gtb-typed_ok", "--gtb_findings_from="}), 2);
  EXPECT_EQ(run_main({"gtb-typed_ok", "--gtb_findings_from=" + path_ + ".missing"}), 2);
}

}  // namespace

// GTB_JSON_WRITE with optional members, and lists written only when they have rows (json_write.h).
namespace gtb::json_write_test {
struct Row {
  std::string name;
  std::optional<double> share;
  std::optional<std::int64_t> count;
};
GTB_JSON_WRITE(Row, name, share, count)
}  // namespace gtb::json_write_test

TEST(JsonWrite, AnOptionalIsItsValueOrNullAndAnEmptyListIsLeftOut) {
  using gtb::json_write_test::Row;
  const gtb::json j = Row{"a", 0.5, std::nullopt};
  EXPECT_EQ(j.dump(), R"({"name":"a","share":0.5,"count":null})");
  gtb::json out = gtb::json::object();
  gtb::write_nonempty(out, "rows", std::vector<Row>{});
  EXPECT_EQ(out.dump(), "{}");
  gtb::write_nonempty(out, "rows", std::vector<Row>{{"b", std::nullopt, 3}});
  EXPECT_EQ(out.dump(), R"({"rows":[{"name":"b","share":null,"count":3}]})");
}
