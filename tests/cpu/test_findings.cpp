// Tests of typed findings: one JSON form both ways, clear errors on bad input, the value formats.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/document/findings.h"

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
  auto message = [](const json& j) {
    try {
      (void)family_from_json(j);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
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

}  // namespace
}  // namespace gtb::findings
