// Renamed record ids: a record read from a file written before a rename takes its current id, and a
// baseline with the old ids compares record for record against records with the new ones.
#include <gtest/gtest.h>

#include <string>

#include "harness/document/record_ids.h"
#include "harness/document/results.h"
#include "harness/driver/common/compare_core.h"

namespace gtb {
namespace {

// A real run's results file of schema version 1, from before the train CPU variant was renamed: the
// ceilings, gemm and train families of the oldest committed run, cut unchanged by
// tests/fixtures/real/cut_schema1.py (evidence: its records never edited).
const std::string kOldFile = std::string(GTB_FIXTURE_DIR) + "/real/results_schema1_amd.json";

Record train_cpu(const std::string& variant) {
  Record r;
  r.family = "train";
  r.workload = "batch_sweep";
  r.variant = variant;
  r.backend = Backend::cpu;
  r.id = "train/batch_sweep/" + variant + "/cpu/batch=32,width=256,depth=4";
  return r;
}

TEST(RecordIds, TheOldTrainCpuVariantTakesItsNewName) {
  Record r = train_cpu("openblas");
  EXPECT_TRUE(upgrade_record_id(r));
  EXPECT_EQ(r.variant, "fastest_blas");
  EXPECT_EQ(r.id, "train/batch_sweep/fastest_blas/cpu/batch=32,width=256,depth=4");
  EXPECT_FALSE(upgrade_record_id(r)) << "a current id stays as it is";
  EXPECT_EQ(r.id, "train/batch_sweep/fastest_blas/cpu/batch=32,width=256,depth=4");
}

TEST(RecordIds, OtherRecordsAreLeftAlone) {
  Record gemm = train_cpu("openblas");
  gemm.family = "gemm";
  gemm.workload = "gemm";
  gemm.id = "gemm/gemm/openblas/cpu/m=256,n=256,k=256,precision=fp32";
  EXPECT_FALSE(upgrade_record_id(gemm));
  EXPECT_EQ(gemm.id, "gemm/gemm/openblas/cpu/m=256,n=256,k=256,precision=fp32");
  Record gpu = train_cpu("openblas");
  gpu.backend = Backend::cuda;
  gpu.id = "train/batch_sweep/openblas/cuda/batch=32";
  EXPECT_FALSE(upgrade_record_id(gpu)) << "only the CPU variant was renamed";
  EXPECT_EQ(current_record_id("train/batch_sweep/cublas/cuda/batch=32"), "train/batch_sweep/cublas/cuda/batch=32");
  EXPECT_EQ(current_record_id("gemm/gemm/openblas/cpu/m=1"), "gemm/gemm/openblas/cpu/m=1");
}

TEST(RecordIds, IdsAloneAndMalformedIds) {
  EXPECT_EQ(current_record_id("train/precision/openblas/cpu/batch=512,optimizer=adam"),
            "train/precision/fastest_blas/cpu/batch=512,optimizer=adam");
  EXPECT_EQ(current_record_id("train/batch_sweep/openblas/cpu"), "train/batch_sweep/fastest_blas/cpu");
  EXPECT_EQ(current_record_id("train/openblas"), "train/openblas");
  EXPECT_EQ(current_record_id(""), "");
  EXPECT_EQ(current_record_id("train/x/openblas/cpux/batch=1"), "train/x/openblas/cpux/batch=1");
}

TEST(RecordIds, LoadedRecordsCarryTheCurrentIds) {
  const json doc = load_document(kOldFile);
  int old_in_file = 0;
  for (const json& r : doc.at("records"))
    if (r.at("family") == "train" && r.at("variant") == "openblas") ++old_in_file;
  ASSERT_GT(old_in_file, 0) << kOldFile << " has no record under the old name";
  int renamed = 0;
  for (const Record& r : records_of(doc)) {
    EXPECT_NE(r.id.find("/openblas/cpu/") != std::string::npos && r.family == "train", true) << r.id;
    if (r.family == "train" && r.variant == "fastest_blas") {
      ++renamed;
      EXPECT_EQ(r.id, make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options));
    }
  }
  EXPECT_EQ(renamed, old_in_file);
}

TEST(RecordIds, AnOldBaselineComparesWithNewRecordsAsTheSameRecords) {
  const json old_doc = load_document(kOldFile);
  // The same measurements written under the new name, as a run of this build would write them.
  json new_doc = old_doc;
  for (json& r : new_doc["records"])
    if (r["family"] == "train" && r["variant"] == "openblas" && r["backend"] == "cpu") {
      r["variant"] = "fastest_blas";
      r["id"] = current_record_id(r["id"].get<std::string>());
    }
  const compare::Result res = compare::compare_documents(old_doc, new_doc, {});
  int train_cpu_rows = 0;
  for (const auto& row : res.rows) {
    EXPECT_EQ(row.id.find("train/") == 0 && row.id.find("/openblas/cpu/") != std::string::npos, false) << row.id;
    if (row.id.find("/fastest_blas/cpu/") == std::string::npos) continue;
    ++train_cpu_rows;
    EXPECT_NE(row.d.verdict, compare::Verdict::missing) << row.id;
    EXPECT_NE(row.d.verdict, compare::Verdict::added) << row.id;
  }
  EXPECT_GT(train_cpu_rows, 0);
  EXPECT_EQ(res.count(compare::Verdict::missing), 0u);
  EXPECT_EQ(res.count(compare::Verdict::added), 0u);
  EXPECT_EQ(res.exit_code(), 0);
}

}  // namespace
}  // namespace gtb
