// gtb compare on the committed synthetic fixtures: deterministic verdicts per planted change.
#include <gtest/gtest.h>

#include "harness/driver/common/compare_core.h"
#include <filesystem>
#include <fstream>

#include "harness/document/results.h"

namespace gtb {
namespace {

std::string fixture(const std::string& name) { return std::string(GTB_FIXTURE_DIR) + "/" + name; }

compare::Result run(const std::string& base, const std::string& next, const compare::Config& c = {}) {
  return compare::compare_documents(load_document(fixture(base)), load_document(fixture(next)), c);
}

std::string verdict_of(const compare::Result& r, const std::string& id) {
  for (const auto& row : r.rows)
    if (row.id == id) return compare::to_string(row.d.verdict);
  return "absent";
}

TEST(CompareFixtures, FixturesAreMarkedSynthetic) {
  for (const char* f : {"gpu_base.json", "gpu_aa.json", "gpu_regressed.json", "gpu_improved.json", "gpu_other_model.json",
                        "cpu_a.json", "cpu_b.json", "cpu_other_model.json"}) {
    const json d = load_document(fixture(f));
    EXPECT_TRUE(d.value("synthetic", false)) << f;
    EXPECT_EQ(d["context"]["host"]["hostname"], "synthetic-fixture") << f;
  }
}

TEST(CompareFixtures, AFileComparedWithItselfIsAllSame) {
  // A real run's file (wide samples on a shared 2-core machine) against itself: nothing may read as
  // noisy, slower or faster.
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GTB_SOURCE_DIR_FOR_TESTS) + "/results"))
    if (e.path().extension() == ".json" && (file.empty() || e.path().string() < file)) file = e.path().string();
  ASSERT_FALSE(file.empty()) << "no results file committed under results/";
  const json doc = load_document(file);
  const auto r = compare::compare_documents(doc, doc, {});
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.count(compare::Verdict::noisy), 0u);
  EXPECT_EQ(r.count(compare::Verdict::slower), 0u);
  EXPECT_EQ(r.count(compare::Verdict::faster), 0u);
  EXPECT_GT(r.count(compare::Verdict::same), 10u);
}

TEST(CompareFixtures, AAIsAllSame) {
  const auto r = run("gpu_base.json", "gpu_aa.json");
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.count(compare::Verdict::slower), 0u);
  EXPECT_EQ(r.count(compare::Verdict::faster), 0u);
  EXPECT_EQ(r.count(compare::Verdict::noisy), 0u);
  EXPECT_EQ(r.count(compare::Verdict::unmeasured), 1u);  // the record skipped (out of memory) in both
}

TEST(CompareFixtures, PlantedChangesGetTheirVerdicts) {
  const auto r = run("gpu_base.json", "gpu_regressed.json");
  EXPECT_EQ(verdict_of(r, "gemm/gemm/cublas/cuda/m=4096,n=4096,k=4096,precision=fp16,l2=warm"), "slower");
  EXPECT_EQ(verdict_of(r, "transfer/copy_h2d/cudaMemcpyAsync/cuda/bytes=16777216,memory=pinned,clock=device"), "same");
  EXPECT_EQ(verdict_of(r, "train/batch_sweep/cublas/cuda/batch=4096,width=256,depth=4,data=device"), "faster");
  EXPECT_EQ(verdict_of(r, "train/batch_sweep/cublas/cuda/batch=64,width=256,depth=4,data=device"), "noisy");
  EXPECT_EQ(verdict_of(r, "vectorize/axpy/vec4/cuda/n=16777216"), "broken");
  EXPECT_EQ(verdict_of(r, "gemm/gemm/openblas/cpu/m=256,n=256,k=256,precision=fp32"), "missing");
  EXPECT_EQ(verdict_of(r, "gemm/gemm/cublaslt/cuda/m=4096,n=4096,k=4096,precision=bf16,l2=warm"), "new");
  EXPECT_EQ(r.regressions(), 2u);
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(CompareFixtures, ExampleConfigIgnoresAndRelaxes) {
  std::ifstream in(std::string(GTB_SOURCE_DIR_FOR_TESTS) + "/docs/compare-config.example.json");
  ASSERT_TRUE(in.good());
  const auto cfg = compare::Config::from_json(json::parse(in));
  const auto r = run("gpu_base.json", "gpu_regressed.json", cfg);
  EXPECT_EQ(verdict_of(r, "gemm/gemm/openblas/cpu/m=256,n=256,k=256,precision=fp32"), "ignored");
  EXPECT_EQ(r.exit_code(), 1);  // the config relaxes thresholds; it does not hide the planted regressions
}

TEST(CompareFixtures, ImprovementsOnlyPass) {
  const auto r = run("gpu_base.json", "gpu_improved.json");
  EXPECT_EQ(verdict_of(r, "gemm/gemm/cublas/cuda/m=4096,n=4096,k=4096,precision=bf16,l2=warm"), "faster");
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(CompareFixtures, MachinesMustMatch) {
  EXPECT_EQ(run("gpu_base.json", "gpu_other_model.json").exit_code(), 2);
  EXPECT_EQ(run("gpu_base.json", "cpu_a.json").exit_code(), 2);
  EXPECT_EQ(run("cpu_a.json", "cpu_other_model.json").exit_code(), 2);
  EXPECT_EQ(run("cpu_a.json", "cpu_b.json").exit_code(), 0);
}

TEST(CompareFixtures, BadFilesAreRefusedWithAReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"bad_empty.json", "empty"},           {"bad_truncated.json", "not valid JSON"},
      {"bad_malformed.json", "not valid JSON"}, {"bad_version.json", "version 99"},
      {"bad_string_value.json", "value"},    {"bad_string_sample.json", "samples_s"},
      {"bad_not_results.json", "not a gtb results file"}, {"no_such_file.json", "cannot open"}};
  for (const auto& [file, says] : cases) {
    try {
      (void)load_document(fixture(file));
      ADD_FAILURE() << file << " loaded";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << file << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace gtb
