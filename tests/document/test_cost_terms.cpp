// Cost terms: the JSON form (and its refusals, naming the key), the lookups and the interpolation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "harness/model/cost_terms.h"
#include "tests/common/error_of.h"

using namespace gtb;
using namespace gtb::cost;

namespace {

json lb_json(double latency, double per_second) {
  return {{"name", "h2d_copy"}, {"backend", "cuda"}, {"where", {{"memory", "pinned"}}}, {"form", "latency_bandwidth"},
          {"x", "bytes"}, {"latency_s", latency}, {"per_second", per_second}, {"x_min", 4096}, {"x_max", 1 << 26},
          {"records", {"r/1", "r/2"}}};
}

Term table_1d(std::vector<std::pair<double, double>> pts) {
  Term t;
  t.name = "stream_bandwidth";
  t.form = "table";
  t.axes = {"bytes"};
  t.y = "bytes_per_s";
  for (const auto& [x, y] : pts) t.points.push_back({json{{"bytes", x}}, y, "rec/" + std::to_string(int(x))});
  return t;
}

// A file of the source tree (the docs and schema the terms must agree with), whole.
std::string source_text(const std::string& rel) {
  std::ifstream in(std::string(GTB_SOURCE_DIR_FOR_TESTS) + "/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string expect_throw(const json& j) {
  return gtb::test::error_of<std::runtime_error>([&] { term_from_json(j, "fam"); }, "");
}

}  // namespace

TEST(CostTerms, RoundTripsEveryForm) {
  const Term a = term_from_json(lb_json(1e-5, 2e10), "fam");
  EXPECT_EQ(a.family, "fam");
  EXPECT_EQ(a.backend, Backend::cuda);
  EXPECT_DOUBLE_EQ(a.per_second, 2e10);
  const Term b = term_from_json(to_json(a), "fam");
  EXPECT_EQ(to_json(b), to_json(a));
  json c = {{"name", "launch"}, {"backend", "cuda"}, {"form", "constant"}, {"value", 4e-6}, {"unit", "s"}, {"records", {"x"}}};
  EXPECT_DOUBLE_EQ(term_from_json(c, "f").value, 4e-6);
  json s = {{"name", "launch"}, {"backend", "cuda"}, {"form", "constant"}, {"cannot_say", "skipped: no GPU"}};
  const Term u = term_from_json(s, "f");
  EXPECT_FALSE(u.usable());
  EXPECT_TRUE(std::isnan(u.value));
}

TEST(CostTerms, RefusesMalformedTermsNamingTheKey) {
  json j = lb_json(1e-5, 2e10);
  j.erase("per_second");
  EXPECT_NE(expect_throw(j).find("per_second"), std::string::npos);
  j = lb_json(1e-5, -1);
  EXPECT_NE(expect_throw(j).find("per_second"), std::string::npos);
  j = lb_json(1e-5, 2e10);
  j["backend"] = "tpu";
  EXPECT_NE(expect_throw(j).find("backend"), std::string::npos);
  j = lb_json(1e-5, 2e10);
  j["form"] = "spline";
  EXPECT_NE(expect_throw(j).find("form"), std::string::npos);
  json t = {{"name", "matmul"}, {"backend", "cpu"}, {"form", "table"}, {"axes", {"m"}}, {"y", "flop_per_s"},
            {"points", {{{"at", {{"n", 1}}}, {"y", 1.0}}}}};
  EXPECT_NE(expect_throw(t).find("points[0]"), std::string::npos);
  t["y"] = "parsecs";
  EXPECT_NE(expect_throw(t).find("\"y\""), std::string::npos);
  json c = {{"name", "cpu_threads"}, {"backend", "cpu"}, {"form", "constant"}, {"value", 2}, {"unit", "count"}};
  EXPECT_EQ(expect_throw(c), "");
  c["unit"] = "parsecs";
  EXPECT_NE(expect_throw(c).find("\"unit\""), std::string::npos);
}

// The units a term may carry are defined once (kTableUnits, kConstantUnits); the published schema
// and docs/results-format.md name exactly those.
TEST(CostTerms, TheSchemaAndTheFormatNameEveryUnitATermMayCarry) {
  const json schema = json::parse(source_text("docs/gtb-results.schema.json"));
  const json& props = schema.at("$defs").at("cost_term").at("properties");
  // The format's row of `terms`.
  const std::string doc = source_text("docs/results-format.md");
  const auto row = doc.find("\n| `terms` |");
  ASSERT_NE(row, std::string::npos) << "docs/results-format.md has no row of `terms`";
  const std::string format = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
  auto check = [&](const char* key, const auto& units) {
    std::vector<std::string> code(std::begin(units), std::end(units));
    EXPECT_EQ(props.at(key).at("enum").get<std::vector<std::string>>(), code) << "cost_term." << key << " in the schema";
    for (const auto& u : code)
      EXPECT_NE(format.find("`" + u + "`"), std::string::npos) << u << " in docs/results-format.md's row of `terms`";
  };
  check("y", kTableUnits);
  check("unit", kConstantUnits);
}

TEST(CostTerms, CopyIsLatencyPlusBytesOverBandwidthAndFlagsOutsideRange) {
  const std::vector<Term> terms = {term_from_json(lb_json(1e-5, 2e10), "fam")};
  const auto e = copy_seconds(terms, "h2d_copy", Backend::cuda, "pinned", 2e6);
  ASSERT_TRUE(e.seconds);
  EXPECT_DOUBLE_EQ(*e.seconds, 1e-5 + 2e6 / 2e10);
  EXPECT_FALSE(e.outside_measured);
  EXPECT_EQ(e.records.size(), 2u);
  const auto far = copy_seconds(terms, "h2d_copy", Backend::cuda, "pinned", 1e9);
  EXPECT_TRUE(far.outside_measured);
  EXPECT_FALSE(far.note.empty());
  const auto none = copy_seconds(terms, "h2d_copy", Backend::cuda, "pageable", 2e6);
  EXPECT_FALSE(none.seconds);
  EXPECT_NE(none.cannot_say.find("pageable"), std::string::npos);
}

TEST(CostTerms, CannotSayCarriesThePublishersReason) {
  std::vector<Term> terms = {cannot_say_term("launch", Backend::cuda, {{"mode", "eager"}}, "constant",
                                             "skipped: no usable GPU: driver too old")};
  const auto e = launch_seconds(terms, "eager");
  EXPECT_FALSE(e.seconds);
  EXPECT_NE(e.cannot_say.find("driver too old"), std::string::npos);
}

TEST(CostTerms, InterpolatesLogLogBetweenNeighboursAndClampsOutside) {
  const Term t = table_1d({{1e3, 1e9}, {1e5, 1e11}});
  // log-log: halfway in log x is the geometric mean in y.
  const auto mid = interpolate(t, json{{"bytes", 1e4}});
  ASSERT_TRUE(mid);
  EXPECT_NEAR(mid->y, 1e10, 1e10 * 1e-9);
  EXPECT_FALSE(mid->outside_measured);
  EXPECT_EQ(mid->records.size(), 2u);
  const auto hit = interpolate(t, json{{"bytes", 1e5}});
  EXPECT_NEAR(hit->y, 1e11, 1);
  const auto above = interpolate(t, json{{"bytes", 1e8}});
  EXPECT_TRUE(above->outside_measured);
  EXPECT_NEAR(above->y, 1e11, 1);  // clamped to the last measured point, never extrapolated
  EXPECT_FALSE(interpolate(t, json{{"bytes", -1}}));
}

TEST(CostTerms, MatmulUsesTheMeasuredShapesRate) {
  Term t;
  t.name = "matmul";
  t.form = "table";
  t.y = "flop_per_s";
  t.axes = {"m", "n", "k"};
  t.where = {{"precision", "fp32"}};
  for (double s : {256.0, 1024.0}) t.points.push_back({json{{"m", s}, {"n", s}, {"k", s}}, s * 1e8, "g/" + std::to_string(int(s))});
  const std::vector<Term> terms = {t};
  const auto e = matmul_seconds(terms, Backend::cpu, "fp32", 1024, 1024, 1024);
  ASSERT_TRUE(e.seconds);
  EXPECT_NEAR(*e.seconds, 2.0 * 1024 * 1024 * 1024 / 1.024e11, 1e-12);
  EXPECT_FALSE(e.outside_measured);
  const auto small = matmul_seconds(terms, Backend::cpu, "fp32", 16, 16, 16);
  EXPECT_TRUE(small.outside_measured);
  EXPECT_FALSE(matmul_seconds(terms, Backend::cpu, "bf16", 256, 256, 256).seconds);
}

TEST(CostTerms, TableTermKeepsTheBestRecordPerPointAndSaysWhyWhenNone) {
  std::vector<Record> recs(3);
  for (int i = 0; i < 3; ++i) {
    recs[i].id = "f/w/v/cpu/" + std::to_string(i);
    recs[i].workload = "w";
    recs[i].value = 10.0 * (i + 1);
    recs[i].params = {{"bytes", i < 2 ? 100 : 200}};
    recs[i].stats = Stats{};
    recs[i].stats->median = 1e-3;
  }
  recs[2].status = Status::skipped;
  recs[2].status_detail = "no room";
  recs[2].value.reset();
  auto pick = [](const Record& r) { return r.workload == "w"; };
  const Term t = table_term("stream_bandwidth", Backend::cpu, json::object(), {"bytes"}, "bytes_per_s", recs, pick,
                            [](const Record& r) { return json{{"bytes", r.params["bytes"]}}; },
                            [](const Record& r) { return *r.value; }, "stream");
  ASSERT_EQ(t.points.size(), 1u);
  EXPECT_DOUBLE_EQ(t.points[0].y, 20.0);
  EXPECT_EQ(t.points[0].record, "f/w/v/cpu/1");
  const Term none = table_term("stream_bandwidth", Backend::cuda, json::object(), {"bytes"}, "bytes_per_s", recs, pick,
                               [](const Record&) { return json::object(); }, [](const Record&) { return 1.0; }, "stream");
  EXPECT_FALSE(none.usable());
  EXPECT_NE(none.cannot_say.find("no stream record on cuda"), std::string::npos);
  recs[0].backend = recs[1].backend = recs[2].backend = Backend::cuda;
  recs[0].status = recs[1].status = Status::invalid;
  recs[0].status_detail = recs[1].status_detail = "check failed";
  const Term bad = table_term("stream_bandwidth", Backend::cuda, json::object(), {"bytes"}, "bytes_per_s", recs, pick,
                              [](const Record&) { return json::object(); }, [](const Record&) { return 1.0; }, "stream");
  EXPECT_NE(bad.cannot_say.find("invalid: check failed"), std::string::npos);
}

TEST(CostTerms, DocumentsWithoutTermsAreTold) {
  json doc = {{"findings", {{"a", {{"sections", json::array()}}}}}};
  EXPECT_FALSE(has_terms(doc));
  EXPECT_TRUE(terms_from_document(doc).empty());
  doc["findings"]["a"]["terms"] = json::array({lb_json(1e-5, 1e10)});
  EXPECT_TRUE(has_terms(doc));
  ASSERT_EQ(terms_from_document(doc).size(), 1u);
  EXPECT_EQ(terms_from_document(doc)[0].family, "a");
  doc["findings"]["a"]["terms"] = "nope";
  EXPECT_THROW(terms_from_document(doc), std::runtime_error);
}

// A file written before matmul_autocast was its own term: the BF16 table's points from the plan
// records (FP32 operands rounded inside the timed product) are read as matmul_autocast, the library
// shapes stay matmul; an FP32 table is left whole.
TEST(CostTerms, OldBf16TablesGiveTheirPlanPointsToMatmulAutocast) {
  const std::string plan = "gemm/step_shapes/plan/cpu/m=512,n=128,k=128", lib = "gemm/gemm/onednn/cpu/m=1024,n=1024,k=1024";
  auto table = [&](const std::string& precision) {
    return json{{"name", "matmul"}, {"backend", "cpu"}, {"where", {{"precision", precision}, {"orientation", "nn"}}},
                {"form", "table"}, {"axes", {"m", "n", "k"}}, {"y", "flop_per_s"},
                {"points", {{{"at", {{"m", 512}, {"n", 128}, {"k", 128}}}, {"y", 5e10}, {"record", plan}},
                            {{"at", {{"m", 1024}, {"n", 1024}, {"k", 1024}}}, {"y", 2e11}, {"record", lib}}}},
                {"records", {plan, lib}}};
  };
  const json doc = {{"findings", {{"gemm", {{"terms", {table("bf16"), table("fp32")}}}}}}};
  const std::vector<Term> read = terms_from_document(doc);
  ASSERT_EQ(read.size(), 3u);
  const Term& bf16 = read[0];
  EXPECT_EQ(bf16.name, "matmul");
  ASSERT_EQ(bf16.points.size(), 1u);
  EXPECT_EQ(bf16.points[0].record, lib);
  EXPECT_EQ(bf16.records, std::vector<std::string>{lib});
  EXPECT_EQ(read[1].points.size(), 2u);  // fp32: untouched
  EXPECT_EQ(read[2].name, "matmul_autocast");
  EXPECT_EQ(read[2].where.value("precision", ""), "bf16");
  ASSERT_EQ(read[2].points.size(), 1u);
  EXPECT_EQ(read[2].records, std::vector<std::string>{plan});
  const Estimate e = matmul_autocast_seconds(read, Backend::cpu, "bf16", 512, 128, 128, "tn");
  ASSERT_TRUE(e.seconds) << e.cannot_say;
  EXPECT_NEAR(*e.seconds, 2.0 * 512 * 128 * 128 / 5e10, 1e-15);
  EXPECT_NE(e.note.find("no tn matmul_autocast records"), std::string::npos) << e.note;
  EXPECT_FALSE(matmul_autocast_seconds(read, Backend::cpu, "fp16", 512, 128, 128).seconds);
}

namespace {
// A findings object of one family "g" with a matmul_in_step table of one point (bytes 1e6: y) and a
// constant of `value` seconds.
json runs_findings(double y, double value) {
  const json table = {{"name", "matmul_in_step"}, {"backend", "cpu"}, {"where", {{"precision", "bf16"}}},
                      {"form", "table"}, {"axes", {"bytes"}}, {"y", "fraction"},
                      {"points", {{{"at", {{"bytes", 1e6}}}, {"y", y}, {"record", "seq/chain"}}}},
                      {"records", {"seq/chain"}}};
  const json constant = {{"name", "host_sync"}, {"backend", "cpu"}, {"form", "constant"}, {"value", value},
                         {"unit", "s"}, {"records", {"sync"}}};
  return {{"g", {{"terms", {table, constant}}}}};
}
}  // namespace

// A file of several runs: each term's figure is the median over the runs of each run's own figure,
// not the merged (pooled) one; a point only one run holds, or a file of one run, keeps the merged one.
TEST(CostTerms, SeveralRunsGiveTheMedianOfEachRunsFigure) {
  json doc = {{"findings", runs_findings(0.67, 9e-6)}};
  auto fraction = [&] { return terms_from_document(doc)[0].points[0].y; };
  EXPECT_DOUBLE_EQ(fraction(), 0.67);
  doc["run_findings"] = {{{"run", 1}, {"findings", runs_findings(0.97, 1e-6)}},
                         {{"run", 2}, {"findings", runs_findings(0.66, 2e-6)}},
                         {{"run", 3}, {"findings", runs_findings(0.96, 3e-6)}}};
  EXPECT_DOUBLE_EQ(fraction(), 0.96);
  EXPECT_DOUBLE_EQ(terms_from_document(doc)[1].value, 2e-6);
  // What the model reads: the share a step's GEMMs keep, and the host read-back it prices.
  const std::vector<Term> read = terms_from_document(doc);
  EXPECT_DOUBLE_EQ(matmul_in_step_fraction(read, Backend::cpu, "bf16", 1e6, 1e8).seconds.value_or(0), 0.96);
  EXPECT_DOUBLE_EQ(host_sync_seconds(read, Backend::cpu).seconds.value_or(0), 2e-6);
  // The matching is by family, name and selector: another precision in the runs leaves it merged.
  for (auto& r : doc["run_findings"]) r["findings"]["g"]["terms"][0]["where"]["precision"] = "fp32";
  EXPECT_DOUBLE_EQ(fraction(), 0.67);
  for (auto& r : doc["run_findings"]) r["findings"]["g"]["terms"][0]["where"]["precision"] = "bf16";
  // A point measured at another size in the runs: the merged figure.
  for (auto& r : doc["run_findings"]) r["findings"]["g"]["terms"][0]["points"][0]["at"]["bytes"] = 2e6;
  EXPECT_DOUBLE_EQ(fraction(), 0.67);
  // One run only: the merged figure; an unreadable run counts as absent.
  doc["run_findings"] = {{{"run", 1}, {"findings", runs_findings(0.97, 1e-6)}}};
  EXPECT_DOUBLE_EQ(fraction(), 0.67);
  doc["run_findings"] = {{{"run", 1}, {"findings", runs_findings(0.97, 1e-6)}},
                         {{"run", 2}, {"findings", runs_findings(0.5, 1e-6)}},
                         {{"run", 3}, {"findings", {{"g", {{"terms", "nope"}}}}}}};
  EXPECT_DOUBLE_EQ(fraction(), 0.735);
}

// Term names are defined once (term_names.h): every one is described in docs/advise.md's table of
// terms, and every term the committed results files hold is one of them.
TEST(CostTerms, EveryTermNameIsDefinedOnceAndDocumented) {
  const std::vector<std::string> names(std::begin(term::kAll), std::end(term::kAll));
  const std::string advise = source_text("docs/advise.md");
  for (const auto& n : names) {
    EXPECT_TRUE(advise.find("| `" + n + "`") != std::string::npos || advise.find(", `" + n + "` |") != std::string::npos)
        << n << " is not in docs/advise.md's table of terms";
  }
  for (const char* rel : {"tests/fixtures/cost/cost_synthetic.json", "results/gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json",
                          "results/gtb-cpu-Intel-Xeon-2vcpu-20261202-8.json"})
    for (const Term& t : terms_from_document(json::parse(source_text(rel))))
      EXPECT_NE(std::find(names.begin(), names.end(), t.name), names.end()) << rel << ": term " << t.name << " not in term_names.h";
}

// A family's terms or steps that are not a list are an error that names them; a family without
// them has none; an unreadable run of a file of several runs counts as absent.
TEST(CostTerms, TermsAndStepsThatAreNotAListAreNamed) {
  json doc = {{"findings", {{"fam", {{"terms", "x"}}}, {"other", {{"note", 1}}}}}};
  const auto error_of = [&](auto read) { return gtb::test::error_of<std::runtime_error>([&] { read(doc); }); };
  EXPECT_NE(error_of(terms_from_document).find("findings.fam.terms: not a list"), std::string::npos);
  doc["findings"]["fam"] = {{"steps", 3}};
  EXPECT_NE(error_of(steps_from_document).find("findings.fam.steps: not a list"), std::string::npos);
  doc["findings"]["fam"] = json::object();
  EXPECT_TRUE(terms_from_document(doc).empty());
  EXPECT_TRUE(steps_from_document(doc).empty());
  doc["run_findings"] = {{{"run", 1}, {"findings", {{"fam", {{"terms", "x"}}}}}},
                         {{"run", 2}, {"findings", {{"fam", {{"steps", "x"}}}}}}};
  EXPECT_TRUE(terms_from_document(doc).empty());
  EXPECT_TRUE(steps_from_document(doc).empty());
}
