// Tests of gtb report: findings in Markdown from results files, absent families said to be absent.
#include <gtest/gtest.h>

#include "harness/driver/report_core.h"
#include "harness/results.h"

namespace gtb {
namespace {

std::string fixture(const std::string& name) { return std::string(GTB_FIXTURE_DIR) + "/" + name; }

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(Report, GpuFixtureHasEveryFindingWithItsNumbers) {
  const std::string md = report::render_markdown(load_document(fixture("gpu_base.json")), "gpu_base.json");
  EXPECT_TRUE(has(md, "# gtb report: NVIDIA H200 (synthetic) on synthetic-fixture"));
  EXPECT_TRUE(has(md, "Synthetic data"));
  // Pinned vs pageable at the largest common size: 52/20 and 51/14 GB/s by construction, moved a
  // little by the fixture's run-to-run drift.
  EXPECT_TRUE(has(md, "| copy_h2d | device | 256 MiB |")) << md;
  EXPECT_TRUE(has(md, "GB/s | 2.5") || has(md, "GB/s | 2.6")) << md;
  // Half-peak size = latency x bandwidth = 2.5 us x 52 GB/s = 130 kB.
  EXPECT_TRUE(has(md, "127 KiB")) << md;
  EXPECT_TRUE(has(md, "| 4 | 10% |")) << md;  // loader: 4 workers keep the consumer fed
  EXPECT_TRUE(has(md, "n <= 65536")) << md;   // launch-bound threshold
  EXPECT_TRUE(has(md, "CUDA Graph over eager launches")) << md;
  EXPECT_TRUE(has(md, "batch >= 512")) << md;  // crossover batch
  EXPECT_TRUE(has(md, "width <= 128 (65536 parameters)")) << md;
  EXPECT_TRUE(has(md, "| cuda | fp16 |")) << md;
  EXPECT_TRUE(has(md, "of datasheet peak")) << md;
  EXPECT_TRUE(has(md, "% of device_copy_gbps")) << md;
  EXPECT_FALSE(has(md, "not in this file")) << md;
}

TEST(Report, CpuOnlyFileSaysWhatIsMissing) {
  const std::string md = report::render_markdown(load_document(fixture("cpu_a.json")), "cpu_a.json");
  EXPECT_TRUE(has(md, "no GPU"));
  EXPECT_TRUE(has(md, "synthetic fixture without a GPU"));  // why GPU records have no number
  EXPECT_TRUE(has(md, "Not measured"));
  EXPECT_FALSE(has(md, "pinned speedup |")) << md;  // no pinned/pageable table without GPU copies
}

TEST(Report, AbsentFamiliesAreSaidToBeAbsent) {
  json doc = load_document(fixture("cpu_a.json"));
  json kept = json::array();
  for (const auto& r : doc["records"])
    if (r["family"] == "gemm") kept.push_back(r);
  doc["records"] = kept;
  doc["families"] = json::array({json{{"name", "gemm"}, {"status", "ok"}}});
  doc["findings"] = json::object();
  doc["comparisons"] = json::array();
  const std::string md = report::render_markdown(doc, "x.json");
  for (const char* f : {"transfer", "vectorize", "train"})
    EXPECT_TRUE(has(md, std::string("*The `") + f + "` family is not in this file")) << f << "\n" << md;
  EXPECT_TRUE(has(md, "| cpu | fp32 |"));
}

TEST(Report, ToleratesOddFindings) {
  json doc = load_document(fixture("gpu_base.json"));
  // Findings of another shape (a future version, a hand edit) must not crash the report.
  doc["findings"]["transfer"] = {{"copy_model", 3}, {"loader", json::array()}, {"pinning_break_even", {{"x", 1}}}};
  doc["findings"]["train"] = {{"crossover_batch", json::array({1, "a", nullptr, json::object()})}};
  doc["findings"]["vectorize"] = "text";
  doc["comparisons"] = json::object();
  doc["findings"]["newfamily"] = {{"k", 1}};
  std::string md;
  EXPECT_NO_THROW(md = report::render_markdown(doc, "odd.json"));
  EXPECT_TRUE(has(md, "Training steps"));
}

TEST(Report, OneCaseIsSingular) {
  json doc = load_document(fixture("gpu_base.json"));
  json one = json::array();
  one.push_back(doc["findings"]["vectorize"]["openmp_over_scalar"][0]);
  doc["findings"]["vectorize"]["openmp_over_scalar"] = one;
  const std::string md = report::render_markdown(doc, "x.json");
  EXPECT_TRUE(has(md, "1 case)")) << md;
  EXPECT_FALSE(has(md, "1 cases")) << md;
}

TEST(Report, ClampedCopyFitIsNoFitWithTheReason) {
  json doc = load_document(fixture("gpu_base.json"));
  doc["findings"]["transfer"]["copy_model"]["copy_h2d/cpu/memcpy_1thread"] = {
      {"points", 3}, {"ok", true}, {"note", "latency clamped to 0"}, {"latency_us", 0.0}, {"bandwidth_gbps", 34.2},
      {"half_peak_bytes", 0.0}, {"max_rel_residual", 0.84}, {"good_fit", false}};
  const std::string md = report::render_markdown(doc, "x.json");
  EXPECT_TRUE(has(md, "| copy_h2d/cpu/memcpy_1thread | - | - | - | no fit (latency clamped to 0: the times do not "
                      "follow latency + bytes / bandwidth (max residual 84%)) |"))
      << md;
  EXPECT_FALSE(has(md, "| 0 us |")) << md;
  EXPECT_FALSE(has(md, "0 bytes")) << md;
  EXPECT_TRUE(has(md, "| 2.5 us |")) << md;  // a real fit keeps its numbers
}

TEST(Report, LoaderLabelIsTextNotJson) {
  const std::string md = report::render_markdown(load_document(fixture("gpu_base.json")), "x.json");
  EXPECT_TRUE(has(md, "| cpu/cpu_consumer/depth=4, batch_samples=256, sample_bytes=4096, sample_us=10, "
                      "consume_us=1000/preprocess=sleep |"))
      << md;
  EXPECT_FALSE(has(md, "{\"depth\"")) << md;
}

TEST(Report, SizeText) {
  EXPECT_EQ(report::size_text(4096), "4 KiB");
  EXPECT_EQ(report::size_text(256.0 * (1 << 20)), "256 MiB");
  EXPECT_EQ(report::size_text(130000), "127 KiB");
  EXPECT_EQ(report::size_text(100), "100 bytes");
}

}  // namespace
}  // namespace gtb
