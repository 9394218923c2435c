// Records and documents: JSON round trip, comparisons, ceilings, validation, atomic writes.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "harness/document/plausibility.h"
#include "harness/document/results.h"
#include "gtb/context.h"
#include "gtb/publish.h"
#include "tests/common/error_of.h"

using namespace gtb;

namespace {
Record make(const std::string& variant, Backend be, double value, double work = 1e9, long long bytes = 1024) {
  Record r;
  r.family = "fam";
  r.workload = "copy";
  r.variant = variant;
  r.backend = be;
  r.params = {{"bytes", bytes}};
  r.options = {{"memory", "pinned"}};
  r.id = make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  r.metric = {"bandwidth", "GB/s", 1e9, MetricKind::rate};
  r.work_per_rep = work;
  r.samples = {work / value / 1e9, work / value / 1e9};
  r.stats = compute_stats(r.samples);
  r.value = value;
  r.check = {{"passed", true}, {"detail", "ok"}};
  r.reps_per_sample = 1;
  r.stop_reason = "noise_target";
  return r;
}
std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
}
}  // namespace

TEST(RecordJson, RoundTripKeepsTypedParamsAndStats) {
  Record r = make("openmp", Backend::cpu, 20.0);
  r.params["dtype"] = "fp32";
  r.params["scale"] = 0.5;
  r.counters["pct_of_ceiling"] = {95.0, "%"};
  const Record back = record_from_json(to_json(r));
  EXPECT_EQ(back.id, r.id);
  EXPECT_EQ(back.params, r.params);
  EXPECT_TRUE(back.params["bytes"].is_number_integer());
  EXPECT_TRUE(back.params["scale"].is_number_float());
  EXPECT_EQ(back.options, r.options);
  EXPECT_EQ(back.backend, Backend::cpu);
  EXPECT_EQ(back.metric.better(), Better::higher);
  ASSERT_TRUE(back.value);
  EXPECT_DOUBLE_EQ(*back.value, 20.0);
  EXPECT_DOUBLE_EQ(back.stats->median, r.stats->median);
  EXPECT_EQ(back.samples, r.samples);
  EXPECT_DOUBLE_EQ(back.counters.at("pct_of_ceiling").value, 95.0);
  EXPECT_DOUBLE_EQ(back.metric_of_seconds(back.stats->median), 20.0);
}

// The groups the samples came in (repetitions, runs) travel with them, and are said only when there
// are two or more; a record that joins another's samples keeps both groups.
TEST(RecordJson, SampleGroupsRoundTripAndJoin) {
  Record r = make("openmp", Backend::cpu, 20.0);
  const std::size_t n = r.samples.size();
  ASSERT_GE(n, 2u);
  EXPECT_FALSE(to_json(r).contains("sample_groups"));
  const std::vector<double> more(r.samples.begin(), r.samples.begin() + 2);
  add_sample_group(r, more);
  ASSERT_EQ(r.sample_groups, (std::vector<std::int64_t>{std::int64_t(n), 2}));
  const Record back = record_from_json(to_json(r));
  EXPECT_EQ(back.sample_groups, r.sample_groups);
  ASSERT_EQ(sample_groups_of(back).size(), 2u);
  EXPECT_EQ(sample_groups_of(back)[1], more);
  // A run's own groups join as they were.
  Record m = make("openmp", Backend::cpu, 20.0);
  m.samples.clear();
  add_sample_group(m, r.samples, r.sample_groups);
  EXPECT_EQ(m.sample_groups, r.sample_groups);  // the first run's groups as they were
  EXPECT_EQ(m.samples.size(), n + 2);
  Record k;
  add_sample_group(k, {1.0});
  add_sample_group(k, r.samples, r.sample_groups);
  EXPECT_EQ(k.sample_groups, (std::vector<std::int64_t>{1, std::int64_t(n), 2}));
}

// A pair's rounds (on A's record) travel with it; an older record has none; rounds of two lengths or
// without the B record's id are refused by name.
TEST(RecordJson, PairedRoundsRoundTripAndBadOnesAreRefused) {
  Record r = make("openmp", Backend::cpu, 20.0);
  EXPECT_FALSE(to_json(r).contains("paired"));
  r.paired = {{"fam/w/b/cpu/n=1", {1e-3, 2e-3}, {0.5e-3, 1e-3}}};
  json j = to_json(r);
  const Record back = record_from_json(j);
  ASSERT_EQ(back.paired.size(), 1u);
  EXPECT_EQ(back.paired[0].with, "fam/w/b/cpu/n=1");
  EXPECT_EQ(back.paired[0].a_s, r.paired[0].a_s);
  EXPECT_EQ(back.paired[0].b_s, r.paired[0].b_s);
  json bad = to_json(r);
  bad["paired"][0]["b_s"].push_back(1e-3);
  try {
    record_from_json(bad);
    ADD_FAILURE() << "rounds of two lengths accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("differ in length"), std::string::npos) << e.what();
  }
  bad = to_json(r);
  bad["paired"][0].erase("with");
  EXPECT_THROW(record_from_json(bad), std::runtime_error);
  bad = to_json(r);
  bad["paired"][0]["a_s"][0] = -1.0;
  EXPECT_THROW(record_from_json(bad), std::runtime_error);
}

TEST(RecordJson, NonOkRecordsCarryNoValue) {
  Record r = make("pinned", Backend::cuda, 1.0);
  r.status = Status::skipped;
  r.status_detail = "no usable GPU";
  const json j = to_json(r);
  EXPECT_FALSE(j.contains("value"));
  EXPECT_EQ(j["status"], "skipped");
}

TEST(RecordJson, NonFiniteCountersAreNeverWritten) {
  Record r = make("openmp", Backend::cpu, 2.0);
  r.counters["bad"] = {std::numeric_limits<double>::infinity(), "x"};
  EXPECT_FALSE(to_json(r)["counters"].contains("bad"));
}

TEST(RecordJson, ClearErrorsOnBadInput) {
  json j = to_json(make("openmp", Backend::cpu, 2.0));
  json missing = j;
  missing.erase("family");
  EXPECT_THROW(record_from_json(missing), std::runtime_error);
  json str_value = j;
  str_value["value"] = "2.0";
  try {
    record_from_json(str_value);
    FAIL() << "a string value was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'value' is not a number"), std::string::npos) << e.what();
  }
  json bad_backend = j;
  bad_backend["backend"] = "tpu";
  EXPECT_THROW(record_from_json(bad_backend), std::runtime_error);
  json neg = j;
  neg["samples_s"] = json::array({1.0, -1.0});
  EXPECT_THROW(record_from_json(neg), std::runtime_error);
  json huge = j;
  huge["stats"]["count"] = 1e300;  // must be rejected before any integer conversion
  EXPECT_THROW(record_from_json(huge), std::runtime_error);
  json frac = j;
  frac["reps_per_sample"] = 2.5;
  EXPECT_THROW(record_from_json(frac), std::runtime_error);
  // Groups that do not count the samples, or a group of none, are refused with what they say.
  const std::int64_t n = std::int64_t(j["samples_s"].size());
  json groups = j;
  groups["sample_groups"] = json::array({n - 1, 2});
  try {
    record_from_json(groups);
    FAIL() << "groups of the wrong count were accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("samples_s holds " + std::to_string(n)), std::string::npos) << e.what();
  }
  groups["sample_groups"] = json::array({n, 0});
  EXPECT_THROW(record_from_json(groups), std::runtime_error);
  groups["sample_groups"] = json::array({1.5, double(n) - 1.5});
  EXPECT_THROW(record_from_json(groups), std::runtime_error);
  groups["sample_groups"] = json::array({n - 1, 1});
  EXPECT_EQ(record_from_json(groups).sample_groups.size(), 2u);
}

TEST(RecordId, ListsParamsThenOptions) {
  EXPECT_EQ(make_record_id("f", "w", "v", Backend::cuda, {{"n", 3}}, {{"mode", "x"}}), "f/w/v/cuda/n=3,mode=x");
  EXPECT_EQ(make_record_id("f", "w", "v", Backend::cpu, json::object(), json::object()), "f/w/v/cpu");
}

TEST(Comparisons, PairEachGpuRecordWithTheBestCpuRecord) {
  std::vector<Record> recs = {make("scalar", Backend::cpu, 5.0), make("openmp", Backend::cpu, 20.0),
                              make("pinned", Backend::cuda, 50.0), make("pinned", Backend::cuda, 9.0, 1e9, 2048)};
  const json c = make_comparisons(recs);
  ASSERT_EQ(c.size(), 1u);  // the 2048-byte GPU record has no CPU partner
  EXPECT_EQ(c[0]["cpu"]["variant"], "openmp");
  EXPECT_DOUBLE_EQ(c[0]["gpu_over_cpu"].get<double>(), 2.5);
  EXPECT_EQ(c[0]["winner"], "cuda");
}

TEST(Comparisons, SharedOptionsMustAgree) {
  // The CPU's faster bf16 record must not stand in for the fp32 one; an option only one side has
  // (the GPU's library) does not prevent the pair.
  Record cpu32 = make("openblas", Backend::cpu, 0.2), cpu16 = make("onednn", Backend::cpu, 0.4);
  Record gpu32 = make("cublas", Backend::cuda, 40.0);
  cpu32.options = {{"precision", "fp32"}};
  cpu16.options = {{"precision", "bf16_fp32acc"}};
  gpu32.options = {{"precision", "fp32"}, {"library", "cublaslt"}};
  const json c = make_comparisons({cpu32, cpu16, gpu32});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["cpu"]["variant"], "openblas");
  EXPECT_DOUBLE_EQ(c[0]["gpu_over_cpu"].get<double>(), 200.0);
  Record gpu8 = gpu32;
  gpu8.options["precision"] = "fp8";
  EXPECT_TRUE(make_comparisons({cpu32, cpu16, gpu8}).empty());
}

TEST(Comparisons, LowerIsBetterInvertsTheRatio) {
  Record cpu = make("x", Backend::cpu, 2.0), gpu = make("y", Backend::cuda, 8.0);
  for (Record* r : {&cpu, &gpu}) r->metric = {"latency", "us", 1e-6, MetricKind::time};
  const json c = make_comparisons({cpu, gpu});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_DOUBLE_EQ(c[0]["gpu_over_cpu"].get<double>(), 0.25);
  EXPECT_EQ(c[0]["winner"], "cpu");
}

TEST(Comparisons, SkipsNonOkAndCallsNearEqualATie) {
  Record cpu = make("x", Backend::cpu, 10.0), gpu = make("y", Backend::cuda, 10.05), bad = make("z", Backend::cuda, 99);
  bad.status = Status::invalid;
  const json c = make_comparisons({cpu, gpu, bad});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["winner"], "tie");
}

TEST(Ceilings, PercentOfTheNamedCeiling) {
  std::vector<Record> recs = {make("v", Backend::cuda, 45.0), make("w", Backend::cuda, 45.0)};
  recs[0].ceiling = "device_copy_gbps";
  recs[1].ceiling = "missing_ceiling";
  apply_ceilings(recs, {{"ceilings", {{"device_copy_gbps", 50.0}}}});
  ASSERT_TRUE(recs[0].counters.count("pct_of_ceiling"));
  EXPECT_DOUBLE_EQ(recs[0].counters["pct_of_ceiling"].value, 90.0);
  EXPECT_FALSE(recs[1].counters.count("pct_of_ceiling"));
}

TEST(Ceilings, ComputeCeilingDividesTflopsMetricOrCounter) {
  std::vector<Record> recs = {make("gemm", Backend::cpu, 0.15), make("step", Backend::cpu, 900.0),
                              make("bw", Backend::cpu, 10.0)};
  recs[0].metric.unit = "TFLOP/s";
  recs[1].metric.unit = "samples/s";
  recs[1].counters["tflops"] = {0.05, "TFLOP/s"};
  for (auto& r : recs) r.ceiling = "host_fma_fp32_tflops";
  apply_ceilings(recs, {{"ceilings", {{"host_fma_fp32_tflops", 0.2}}}});
  EXPECT_DOUBLE_EQ(recs[0].counters.at("pct_of_ceiling").value, 75.0);
  EXPECT_DOUBLE_EQ(recs[1].counters.at("pct_of_ceiling").value, 25.0);
  // A GB/s record never becomes a percent of a FLOP ceiling.
  EXPECT_FALSE(recs[2].counters.count("pct_of_ceiling"));
  EXPECT_EQ(ceiling_unit("host_fma_fp32_tflops"), "TFLOP/s");
  EXPECT_EQ(ceiling_unit("host_copy_gbps"), "GB/s");
  EXPECT_EQ(ceiling_unit("_tflops"), "GB/s");
}

TEST(GemmPeaks, PercentOfTheSamePrecisionsBestRate) {
  std::vector<Record> recs = {make("eager", Backend::cuda, 1.0), make("eager", Backend::cuda, 1.0),
                              make("eager", Backend::cpu, 1.0)};
  for (auto& r : recs) r.counters["tflops"] = {300.0, "TFLOP/s"};
  recs[0].info["gemm_precision"] = "fp16_fp32acc";
  recs[1].info["gemm_precision"] = "bf16_fp32acc";  // no GEMM figure for it: no counter
  recs[2].info["gemm_precision"] = "fp16_fp32acc";  // CPU: the CPU's own best rate would be needed
  const json peaks = {{"cuda", {{"fp16_fp32acc", {{"tflops", 600.0}}}}}};
  apply_peaks(recs, peaks);
  ASSERT_TRUE(recs[0].counters.count("pct_of_gemm_peak"));
  EXPECT_DOUBLE_EQ(recs[0].counters["pct_of_gemm_peak"].value, 50.0);
  EXPECT_FALSE(recs[1].counters.count("pct_of_gemm_peak"));
  EXPECT_FALSE(recs[2].counters.count("pct_of_gemm_peak"));
}

TEST(SameWork, TheFirstMeasuredCounterpartGivesTheTimeRatio) {
  // value 10 GB/s: 0.1 s per repetition; 40 GB/s: 0.025 s.
  std::vector<Record> recs = {make("slow", Backend::cpu, 10.0), make("fast", Backend::cpu, 40.0, 1e9, 1),
                              make("absent", Backend::cpu, 40.0, 1e9, 2), make("skipped", Backend::cpu, 5.0, 1e9, 3)};
  recs[3].status = Status::skipped;
  recs[0].info["same_work_as"] = {"no/such/record", recs[3].id, recs[1].id};
  recs[2].info["same_work_as"] = {"no/such/record"};
  const std::vector<Record> fresh = recs;
  apply_same_work(recs);
  ASSERT_TRUE(recs[0].counters.count("time_vs_same_work"));
  EXPECT_NEAR(recs[0].counters["time_vs_same_work"].value, 4.0, 1e-12);
  EXPECT_EQ(recs[0].info["same_work_record"], recs[1].id) << "a skipped counterpart is passed over";
  EXPECT_FALSE(recs[2].counters.count("time_vs_same_work")) << "no counterpart ran: nothing added";
  EXPECT_FALSE(recs[1].counters.count("time_vs_same_work"));
  // The merged document adds it; a family's own file does not.
  const json doc = make_merged_document({{"host", json::object()}}, "quick", json::array(), fresh, json::object());
  EXPECT_TRUE(doc["records"][0]["counters"].contains("time_vs_same_work"));
  const json own = make_document({{"host", json::object()}}, "quick", json::array(), fresh, json::object());
  EXPECT_FALSE(own["records"][0]["counters"].contains("time_vs_same_work"));
}

TEST(Document, MergeCarriesCeilingsFromFindingsAndValidates) {
  // Typed findings (schema 3) keep the raw numbers under "data"; older files hold them directly.
  json raw = json::object();
  raw["ceilings"]["ceilings"]["host_copy_gbps"] = 40.0;
  json typed = json::object();
  typed["ceilings"] = {{"title", "Ceilings"}, {"sections", json::array()}, {"data", raw["ceilings"]}};
  for (const json& findings : {typed, raw}) {
    std::vector<Record> recs = {make("v", Backend::cpu, 20.0)};
    recs[0].ceiling = "host_copy_gbps";
    const json doc = make_merged_document({{"host", json::object()}}, "quick", json::array(), recs, findings);
    EXPECT_NO_THROW(validate_document(doc));
    EXPECT_DOUBLE_EQ(doc["context"]["ceilings"]["host_copy_gbps"].get<double>(), 40.0);
    EXPECT_DOUBLE_EQ(doc["records"][0]["counters"]["pct_of_ceiling"]["value"].get<double>(), 50.0);
    // A family's own file is not where families meet: no ceiling, no percent of it.
    const json own = make_document({{"host", json::object()}}, "quick", json::array(), recs, findings);
    EXPECT_FALSE(own["context"].contains("ceilings"));
    EXPECT_FALSE(own["records"][0]["counters"].contains("pct_of_ceiling"));
  }
}

// What a family publishes is read by its declaration (families[].publishes), whatever the family
// or the data key is called; a family that declares nothing contributes nothing.
TEST(Document, MergeReadsWhatFamiliesDeclare) {
  json findings = json::object();
  findings["meter"] = {{"title", "Meter"}, {"sections", json::array()},
                       {"data", {{"measured", {{"host_copy_gbps", 40.0}}}, {"why_not", {{"device_copy_gbps", "skipped"}}}}}};
  findings["mm"] = {{"title", "MM"}, {"sections", json::array()},
                    {"data", {{"best", {{"cpu", {{"fp32", {{"tflops", 2.0}}}}}}}}}};
  // Undeclared: its "ceilings" key is the legacy one, but declarations exist in this document.
  findings["other"] = {{"title", "Other"}, {"sections", json::array()},
                       {"data", {{"ceilings", {{"host_copy_gbps", 1.0}}}, {"best_rate", json::object()}}}};
  const json families = {
      {{"name", "meter"}, {"publishes", {{"ceilings", "measured"}, {"ceilings_missing", "why_not"}}}},
      {{"name", "mm"}, {"publishes", {{"peaks", "best"}}}},
      {{"name", "other"}}};
  std::vector<Record> recs = {make("v", Backend::cpu, 20.0), make("w", Backend::cpu, 1.0)};
  recs[0].ceiling = "host_copy_gbps";
  recs[1].counters["tflops"] = {0.5, "TFLOP/s"};
  recs[1].info["gemm_precision"] = "fp32";
  const json doc = make_merged_document({{"host", json::object()}}, "quick", families, recs, findings);
  EXPECT_NO_THROW(validate_document(doc));
  EXPECT_EQ(doc["context"]["ceilings"], json({{"host_copy_gbps", 40.0}}));
  EXPECT_EQ(doc["context"]["ceilings_missing"], json({{"device_copy_gbps", "skipped"}}));
  EXPECT_DOUBLE_EQ(doc["records"][0]["counters"]["pct_of_ceiling"]["value"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(doc["records"][1]["counters"]["pct_of_gemm_peak"]["value"].get<double>(), 25.0);
  // A declaration naming a key the data lacks, or a non-object entry, adds nothing.
  const json broken = {{{"name", "meter"}, {"publishes", {{"ceilings", "absent"}}}}, json("not an entry"),
                       {{"name", "mm"}, {"publishes", "best"}}};
  const json none = make_merged_document({{"host", json::object()}}, "quick", broken, recs, findings);
  EXPECT_FALSE(none["context"].contains("ceilings"));
  EXPECT_FALSE(none["records"][0]["counters"].contains("pct_of_ceiling"));
  EXPECT_FALSE(none["records"][1]["counters"].contains("pct_of_gemm_peak"));
}

// Without any declaration (files written before them) every family is read with the data keys of
// that time, so an old file merges as it did.
TEST(Document, MergeWithoutDeclarationsUsesTheLegacyKeys) {
  EXPECT_EQ(published::legacy_declaration(),
            json({{"ceilings", "ceilings"}, {"ceilings_missing", "ceilings_missing"}, {"peaks", "best_rate"}}));
  json findings = json::object();
  findings["a"] = {{"title", "A"}, {"sections", json::array()}, {"data", {{"ceilings", {{"host_copy_gbps", 40.0}}}}}};
  findings["b"] = {{"title", "B"}, {"sections", json::array()},
                   {"data", {{"best_rate", {{"cpu", {{"fp32", 2.0}}}}}}}};  // a bare number is a peak too
  std::vector<Record> recs = {make("v", Backend::cpu, 20.0), make("w", Backend::cpu, 1.0)};
  recs[0].ceiling = "host_copy_gbps";
  recs[1].counters["tflops"] = {0.5, "TFLOP/s"};
  recs[1].info["gemm_precision"] = "fp32";
  const json families = {{{"name", "a"}}, {{"name", "b"}}};
  const json doc = make_merged_document({{"host", json::object()}}, "quick", families, recs, findings);
  EXPECT_DOUBLE_EQ(doc["records"][0]["counters"]["pct_of_ceiling"]["value"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(doc["records"][1]["counters"]["pct_of_gemm_peak"]["value"].get<double>(), 25.0);
}

TEST(Publish, DeclarationsAndBadInput) {
  EXPECT_TRUE(publish("pubtest", published::kCeilings, "measured"));
  EXPECT_TRUE(publish("pubtest", published::kCeilings, "measured"));  // the same again: fine
  EXPECT_TRUE(publish("pubtest", published::kPeaks, "best"));
  EXPECT_EQ(publications("pubtest"), json({{"ceilings", "measured"}, {"peaks", "best"}}));
  EXPECT_EQ(publications("pubtest-none"), json::object());
  EXPECT_THROW(publish("pubtest", "speed", "x"), std::invalid_argument);              // unknown concept
  EXPECT_THROW(publish("pubtest", published::kCeilingsMissing, ""), std::invalid_argument);  // no key
  EXPECT_THROW(publish("pubtest", published::kCeilings, "other"), std::invalid_argument);    // twice, differing
  EXPECT_EQ(publications("pubtest"), json({{"ceilings", "measured"}, {"peaks", "best"}}));
}

TEST(Document, ValidationNamesTheProblem) {
  json doc = make_document(json::object(), "quick", json::array(), {make("v", Backend::cpu, 1.0)}, json::object());
  auto message = [](const json& d) { return gtb::test::error_of([&] { validate_document(d); }, "valid"); };
  json other = doc;
  other["schema_version"] = 99;
  EXPECT_NE(message(other).find("schema version 99 is not supported"), std::string::npos);
  json not_ours = doc;
  not_ours["schema"] = "something-else";
  EXPECT_NE(message(not_ours).find("not a gtb results file"), std::string::npos);
  json no_records = doc;
  no_records.erase("records");
  EXPECT_NE(message(no_records).find("\"records\" is missing"), std::string::npos);
  json nan = doc;
  nan["records"][0]["value"] = std::nan("");
  EXPECT_NE(message(nan).find("records[0]"), std::string::npos);
  EXPECT_EQ(message(doc), "valid");
}

TEST(AtomicWrite, ReplacesWholeFileAndLeavesNoTemp) {
  const std::string p = tmp_path("gtb-atomic");
  write_file_atomic(p, "old\n");
  write_file_atomic(p, "new\n");
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "new");
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(p).parent_path()))
    EXPECT_EQ(e.path().string().find(p + ".tmp"), std::string::npos) << e.path();
  std::filesystem::remove(p);
}

TEST(AtomicWrite, FailsCleanlyInAMissingFolder) {
  EXPECT_THROW(write_file_atomic("/nonexistent-gtb-dir/x.json", "x"), std::runtime_error);
  EXPECT_THROW(check_writable("/nonexistent-gtb-dir/x.json"), std::runtime_error);
  EXPECT_THROW(check_writable("/etc/hostname/x.json"), std::runtime_error);  // a file, not a folder
  EXPECT_THROW(check_writable(""), std::runtime_error);
}

TEST(LoadDocument, ClearMessagesForBadFiles) {
  const std::string p = tmp_path("gtb-load");
  auto msg = [&](const std::string& text) {
    { std::ofstream(p) << text; }
    return gtb::test::error_of([&] { load_document(p); }, "loaded");
  };
  EXPECT_NE(msg("").find("empty file"), std::string::npos);
  EXPECT_NE(msg("{\"schema\": \"gtb-res").find("not valid JSON"), std::string::npos);
  EXPECT_NE(msg("[1,2]").find("not a JSON object"), std::string::npos);
  std::filesystem::remove(p);
  try {
    load_document(p);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

namespace gtb {
namespace {

// The merged file's context: the first family's, plus each family's own section, and the OpenBLAS
// core type of a family that examined it over one that did not (whatever order they ran in).
TEST(MergeFamilyContext, OwnSectionsAndTheExaminedCoreType) {
  const json unexamined = {{"host", {{"cpu", "x"}, {"blas", {{"coretype", {{"corename", "Zen"}, {"source", "detected"},
                                                                         {"examined", false}}}}}}}};
  const json examined = {{"host", {{"cpu", "y"}, {"blas", {{"coretype", {{"corename", "Zen"}, {"source", "detected"},
                                                                       {"reason", "kernel set matches"}}}}}}},
                         {"fam_b", {{"ranks", 2}}}};
  json m;
  merge_family_context(m, unexamined, "fam_a");
  merge_family_context(m, examined, "fam_b");
  EXPECT_EQ(m["host"]["cpu"], "x");  // the base stays the first family's
  EXPECT_EQ(m["host"]["blas"]["coretype"], examined["host"]["blas"]["coretype"]);
  EXPECT_EQ(m["fam_b"]["ranks"], 2);
  json r;
  merge_family_context(r, examined, "fam_b");
  merge_family_context(r, unexamined, "fam_a");
  EXPECT_EQ(r["host"]["blas"]["coretype"], examined["host"]["blas"]["coretype"]);
  // Nobody examined it: the first family's stays; a context without host.blas is no error.
  json n;
  merge_family_context(n, unexamined, "fam_a");
  merge_family_context(n, json{{"host", json::object()}}, "fam_c");
  EXPECT_EQ(n["host"]["blas"]["coretype"]["examined"], false);
}

// NVIDIA_TF32_OVERRIDE, read by cuBLAS itself: the context reports it as found (the environment is
// injected here), and a results document names it beside the GPU records it concerns: every
// precision tf32 record and the fp32 cuBLAS GEMMs; 0 makes a tf32 figure FP32's (suspect).
TEST(Tf32Override, TheContextReportsItAsFound) {
  unsetenv("NVIDIA_TF32_OVERRIDE");
  EXPECT_EQ(environment_context(), json::object());
  EXPECT_EQ(full_context()["environment"], json::object());
  ASSERT_EQ(setenv("NVIDIA_TF32_OVERRIDE", "0", 1), 0);
  EXPECT_EQ(environment_context(), (json{{"NVIDIA_TF32_OVERRIDE", "0"}}));
  EXPECT_EQ(full_context()["environment"]["NVIDIA_TF32_OVERRIDE"], "0");
  ASSERT_EQ(setenv("NVIDIA_TF32_OVERRIDE", "", 1), 0);  // set, if empty: as found
  EXPECT_EQ(environment_context()["NVIDIA_TF32_OVERRIDE"], "");
  unsetenv("NVIDIA_TF32_OVERRIDE");
}

TEST(Tf32Override, NamedBesideTheGemmRecordsItConcerns) {
  auto rec = [](const std::string& family, Backend be, const std::string& prec, const std::string& compute_type) {
    Record r = make("v", be, 100);
    r.family = family;
    r.options = {{"precision", prec}};
    if (!compute_type.empty()) r.info["compute_type"] = compute_type;
    r.id = make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
    return r;
  };
  const std::vector<Record> recs = {
      rec("gemm", Backend::cuda, "tf32", "CUBLAS_COMPUTE_32F_FAST_TF32"),  // 0: tf32 GEMM
      rec("gemm", Backend::cuda, "fp32", "CUBLAS_COMPUTE_32F"),            // 1: fp32 GEMM
      rec("gemm", Backend::cuda, "bf16_fp32acc", "CUBLAS_COMPUTE_32F"),    // 2: 16-bit operands: no TF32 to turn off
      rec("train", Backend::cuda, "tf32", ""),                             // 3: another family's tf32 step
      rec("train", Backend::cuda, "fp32", ""),                             // 4: no compute type said: not named
      rec("gemm", Backend::cpu, "fp32", ""),                               // 5: the CPU's GEMM
      rec("gemm", Backend::cuda, "fp16_fp32acc", "CUBLAS_COMPUTE_32F_FAST_16F")};  // 6
  auto doc_with = [&](const json& ctx) { return records_of(make_document(ctx, "quick", json::array(), recs, json::object())); };
  const std::vector<bool> named = {true, true, false, true, false, false, false};
  const auto off = doc_with(json{{"environment", {{"NVIDIA_TF32_OVERRIDE", "0"}}}});
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(off[i].info.contains("nvidia_tf32_override"), named[i]) << i;
    if (named[i]) {
      EXPECT_EQ(off[i].info["nvidia_tf32_override"], "0") << i;
    }
    // 0: a tf32 record's GEMMs ran FP32, its figure is FP32's.
    const bool tf32 = recs[i].options["precision"] == "tf32" && recs[i].backend == Backend::cuda;
    EXPECT_EQ(off[i].suspect.find("NVIDIA_TF32_OVERRIDE=0") != std::string::npos, tf32) << i << ": " << off[i].suspect;
  }
  // Another value: named, no documented effect, nothing suspect.
  const auto one = doc_with(json{{"environment", {{"NVIDIA_TF32_OVERRIDE", "1"}}}});
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(one[i].info.contains("nvidia_tf32_override"), named[i]) << i;
    EXPECT_TRUE(one[i].suspect.empty()) << i << ": " << one[i].suspect;
  }
  // Not set, or a file older than context.environment: nothing named, nothing suspect.
  for (const json& ctx : {json{{"environment", json::object()}}, json::object()})
    for (const Record& r : doc_with(ctx)) {
      EXPECT_FALSE(r.info.contains("nvidia_tf32_override")) << r.id;
      EXPECT_TRUE(r.suspect.empty()) << r.id;
    }
  // A record that did not run (skipped) is not named.
  std::vector<Record> skipped = {recs[0]};
  skipped[0].status = Status::skipped;
  skipped[0].value.reset();
  skipped[0].stats.reset();
  skipped[0].samples.clear();
  skipped[0].status_detail = "no GPU";
  note_tf32_override(skipped, json{{"environment", {{"NVIDIA_TF32_OVERRIDE", "0"}}}});
  EXPECT_FALSE(skipped[0].info.contains("nvidia_tf32_override"));
}

}  // namespace
}  // namespace gtb
