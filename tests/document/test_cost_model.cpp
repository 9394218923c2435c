// The cost model on a synthetic results file (tests/fixtures/cost/cost_synthetic.json: round numbers, not
// measurements): the step's arithmetic, a planted change in one input term moving the prediction and
// the ranking as it must, validation leaving the step's own publisher out, and bad configurations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>

#include "harness/model/cost_model.h"
#include "harness/model/step_work.h"
#include "harness/document/results.h"

using namespace gtb;
using namespace gtb::cost;

namespace {

json fixture() { return load_document(std::string(GTB_FIXTURE_DIR) + "/cost_synthetic.json"); }

// A small MLP with a large input batch from pageable memory and the loss read every step.
StepConfig small_step() {
  return config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 32},
                           {"input_bytes_per_sample", 76800}, {"loss_read_every", 1}});
}

const Part* part(const Prediction& p, const std::string& name) {
  for (const auto& x : p.parts)
    if (x.name == name) return &x;
  return nullptr;
}

// The seconds the prediction of step c on be gives its part `name`; -1 where it gives none.
double part_seconds(const std::vector<Term>& terms, const StepConfig& c, Backend be, const std::string& name) {
  const Prediction p = predict(terms, c, be);
  const Part* x = part(p, name);
  return x && x->estimate.seconds ? *x->estimate.seconds : -1.0;
}

int rank_of(const std::vector<Fix>& fixes, const std::string& id) {
  for (std::size_t i = 0; i < fixes.size(); ++i)
    if (fixes[i].id == id) return int(i);
  return -1;
}

// Multiplies a field of every term of that name (and memory, when given) in the document.
void plant(json& doc, const std::string& name, const std::string& field, double factor, const std::string& memory = "") {
  for (auto& [fam, entry] : doc["findings"].items()) {
    if (!entry.contains("terms")) continue;
    for (auto& t : entry["terms"])
      if (t["name"] == name && (memory.empty() || t["where"].value("memory", "") == memory))
        t[field] = t[field].get<double>() * factor;
  }
}

}  // namespace

TEST(CostModel, ComposesTheGpuStepFromItsTerms) {
  const auto terms = terms_from_document(fixture());
  const StepConfig c = small_step();
  const Prediction p = predict(terms, c, Backend::cuda);
  ASSERT_TRUE(p.total.seconds) << p.total.cannot_say;
  const Part* copy = part(p, "h2d_copy");
  ASSERT_TRUE(copy && copy->estimate.seconds);
  EXPECT_NEAR(*copy->estimate.seconds, 1e-5 + 76800.0 * 32 / 1e10, 1e-12);
  EXPECT_EQ(copy->estimate.records, std::vector<std::string>{"synthetic/h2d/pageable"});
  const Part* sync = part(p, "host_sync");
  ASSERT_TRUE(sync && sync->estimate.seconds);
  EXPECT_DOUBLE_EQ(*sync->estimate.seconds, 3e-5);
  // The parts add up to the total.
  double sum = 0;
  for (const auto& x : p.parts) sum += x.estimate.seconds.value_or(0);
  EXPECT_NEAR(sum, *p.total.seconds, 1e-15);
  EXPECT_EQ(p.dominant, "h2d_copy");
  // Every record of every part is in the total's.
  for (const auto& x : p.parts)
    for (const auto& r : x.estimate.records)
      EXPECT_NE(std::find(p.total.records.begin(), p.total.records.end(), r), p.total.records.end()) << r;
}

namespace {
// What the model answers for step c on the GPU from a results document: its terms, the predicted
// step and the fixes it ranks.
struct GpuAnswer {
  std::vector<Term> terms;
  Prediction step;
  std::vector<Fix> fixes;
};
GpuAnswer gpu_answer(const json& doc, const StepConfig& c) {
  GpuAnswer a;
  a.terms = terms_from_document(doc);
  a.step = predict(a.terms, c, Backend::cuda);
  a.fixes = rank_fixes(a.terms, c, Backend::cuda, a.step);
  return a;
}
}  // namespace

TEST(CostModel, PlantedHalvedCopyBandwidthMovesThePredictionAndTheSaving) {
  json doc = fixture();
  const StepConfig c = small_step();
  const GpuAnswer base = gpu_answer(doc, c);
  plant(doc, "h2d_copy", "per_second", 0.5, "pageable");
  const GpuAnswer slow = gpu_answer(doc, c);
  const double before = *part(base.step, "h2d_copy")->estimate.seconds;
  const double after = *part(slow.step, "h2d_copy")->estimate.seconds;
  EXPECT_NEAR(after - before, 76800.0 * 32 / 1e10, 1e-12);  // the bytes term doubled, the latency did not
  EXPECT_NEAR(*slow.step.total.seconds - *base.step.total.seconds, after - before, 1e-12);
  const auto pinned_before = base.fixes[std::size_t(rank_of(base.fixes, "pinned_memory"))];
  const auto pinned_after = slow.fixes[std::size_t(rank_of(slow.fixes, "pinned_memory"))];
  EXPECT_NEAR(*pinned_after.saving_s - *pinned_before.saving_s, after - before, 1e-12);
  EXPECT_EQ(rank_of(slow.fixes, "pinned_memory"), 0);
  // The CPU step has no host-to-device copy: it does not move.
  EXPECT_DOUBLE_EQ(*predict(slow.terms, c, Backend::cpu).total.seconds,
                   *predict(base.terms, c, Backend::cpu).total.seconds);
}

TEST(CostModel, PlantedDoubledLaunchCostPutsCudaGraphsFirst) {
  json doc = fixture();
  const StepConfig c = small_step();
  const GpuAnswer base = gpu_answer(doc, c);
  ASSERT_EQ(rank_of(base.fixes, "pinned_memory"), 0);
  ASSERT_GT(rank_of(base.fixes, "cuda_graphs"), 0);
  plant(doc, "launch", "value", 2.0);
  const GpuAnswer slow = gpu_answer(doc, c);
  const double kernels = 6.0 * 4 + 2 + 1;
  const double launch_before = *part(base.step, "launch")->estimate.seconds;
  const double launch_after = *part(slow.step, "launch")->estimate.seconds;
  EXPECT_NEAR(launch_after - launch_before, kernels * 5e-6, 1e-12);
  EXPECT_EQ(rank_of(slow.fixes, "cuda_graphs"), 0);
  EXPECT_GT(*slow.fixes[0].saving_s, *base.fixes[std::size_t(rank_of(base.fixes, "cuda_graphs"))].saving_s);
}

TEST(CostModel, MissingRecordsSayWhyNeverANumber) {
  const auto terms = terms_from_document(fixture());
  StepConfig c = small_step();
  c.precision = "bf16";
  const Prediction cpu = predict(terms, c, Backend::cpu);
  EXPECT_FALSE(cpu.total.seconds);
  EXPECT_NE(cpu.total.cannot_say.find("no BF16 on this CPU"), std::string::npos) << cpu.total.cannot_say;
  EXPECT_TRUE(cpu.dominant.empty());
  // No terms at all: every part cannot say, and so does the crossover.
  const Crossover x = crossover_batch({}, small_step());
  EXPECT_FALSE(x.batch);
  EXPECT_FALSE(x.cannot_say.empty());
}

TEST(CostModel, CrossoverBatchIsWhereTheGpuWinsPerSample) {
  const auto terms = terms_from_document(fixture());
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 1024}, {"depth", 4}, {"batch", 1}});
  const Crossover x = crossover_batch(terms, c);
  ASSERT_TRUE(x.batch) << x.cannot_say << x.note;
  c.batch = *x.batch;
  EXPECT_LT(*predict(terms, c, Backend::cuda).total.seconds, *predict(terms, c, Backend::cpu).total.seconds);
  if (*x.batch > 1) {
    c.batch = *x.batch / 2;
    EXPECT_GE(*predict(terms, c, Backend::cuda).total.seconds, *predict(terms, c, Backend::cpu).total.seconds);
  }
}

TEST(CostModel, ValidationLeavesTheStepsOwnPublisherOut) {
  const json doc = fixture();
  const auto terms = terms_from_document(doc);
  // The CPU step (the fixture's GPU steps are an A/B pair for the savings validation).
  std::vector<Step> steps;
  for (const auto& s : steps_from_document(doc))
    if (s.record == "synthetic/step/cpu/mlp256") steps.push_back(s);
  ASSERT_EQ(steps.size(), 1u);
  const Validation v = validate(terms, steps);
  ASSERT_EQ(v.rows.size(), 1u);
  ASSERT_TRUE(v.rows[0].predicted.seconds);
  for (const auto& r : v.rows[0].predicted.records) EXPECT_EQ(r.find("synthetic/own/"), std::string::npos) << r;
  // With the publisher's own (wildly fast) matmul term the prediction would be far smaller.
  std::vector<Term> own;
  for (const auto& t : terms)
    if (t.family == "train" || t.name != "matmul") own.push_back(t);
  const auto with_own = predict(own, config_from_json(steps[0].config), Backend::cpu);
  EXPECT_LT(*with_own.total.seconds, *v.rows[0].predicted.seconds / 10);
  ASSERT_TRUE(v.median_abs_error && v.worst_abs_error);
  EXPECT_NEAR(*v.median_abs_error, std::fabs(*v.rows[0].error), 1e-12);
}

// A step whose record the file flags suspect (its samples spread too wide for the median to be one
// figure) keeps its row and error, and leaves the median, the worst and the count; in a file of
// several runs, a step's seconds are the median of the runs' own, and each run's validation judges
// that run's spread.
TEST(CostModel, ValidationShowsAnUnsteadyStepWithoutScoringIt) {
  json doc = fixture();
  const std::string rec = "synthetic/step/cpu/mlp256";
  auto cpu_step = [&](const std::vector<Step>& all) {
    std::vector<Step> out;
    for (const auto& s : all)
      if (s.record == rec) out.push_back(s);
    return out;
  };
  const Validation steady = validate(terms_from_document(doc), cpu_step(steps_from_document(doc)));
  ASSERT_EQ(steady.predicted, 1);
  ASSERT_TRUE(steady.rows[0].scored());
  bool flagged = false;
  for (auto& r : doc["records"])
    if (r.value("id", std::string()) == rec) r["suspect"] = "the samples spread over 80% of their median", flagged = true;
  if (!flagged) doc["records"].push_back({{"id", rec}, {"suspect", "the samples spread over 80% of their median"}});
  const Validation v = validate(terms_from_document(doc), cpu_step(steps_from_document(doc)));
  ASSERT_EQ(v.rows.size(), 1u);
  EXPECT_EQ(v.rows[0].step.not_scored, "the samples spread over 80% of their median");
  ASSERT_TRUE(v.rows[0].error);  // still shown with its error
  EXPECT_NEAR(*v.rows[0].error, *steady.rows[0].error, 1e-12);
  EXPECT_FALSE(v.rows[0].scored());
  EXPECT_EQ(v.predicted, 0);
  EXPECT_FALSE(v.median_abs_error);
  EXPECT_FALSE(v.worst_abs_error);
  EXPECT_EQ(to_json(v)["rows"][0].value("not_scored", ""), "the samples spread over 80% of their median");

  // Three runs of the step at 1, 3 and 2 ms (pooled: 5 ms, a figure none of them measured).
  json three = fixture();
  for (auto& [fam, entry] : three["findings"].items())
    if (entry.is_object() && entry.contains("steps"))
      for (auto& st : entry["steps"])
        if (st["record"] == rec) st["seconds"] = 5e-3;
  three["run_findings"] = json::array();
  const double per_run[] = {1e-3, 3e-3, 2e-3}, iqr[] = {0.1e-3, 2.4e-3, 0.2e-3};
  for (int k = 0; k < 3; ++k) {
    json f = three["findings"];
    for (auto& [fam, entry] : f.items())
      if (entry.is_object() && entry.contains("steps"))
        for (auto& st : entry["steps"])
          if (st["record"] == rec) st["seconds"] = per_run[k];
    three["run_findings"].push_back({{"run", k + 1}, {"findings", f}});
  }
  json runs = json::array();
  for (int k = 0; k < 3; ++k)
    runs.push_back({{"run", k + 1}, {"stats", {{"median", per_run[k]}, {"iqr", iqr[k]}}}});
  bool found = false;
  for (auto& r : three["records"])
    if (r.value("id", std::string()) == rec) r["runs"] = runs, found = true;
  if (!found) three["records"].push_back({{"id", rec}, {"runs", runs}});
  const auto merged = cpu_step(steps_from_document(three));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_DOUBLE_EQ(merged[0].seconds, 2e-3);
  EXPECT_TRUE(merged[0].not_scored.empty());
  const auto run1 = cpu_step(steps_of_run(three, 1, 0.5)), run2 = cpu_step(steps_of_run(three, 2, 0.5));
  ASSERT_EQ(run1.size(), 1u);
  ASSERT_EQ(run2.size(), 1u);
  EXPECT_DOUBLE_EQ(run1[0].seconds, 1e-3);
  EXPECT_TRUE(run1[0].not_scored.empty());
  EXPECT_DOUBLE_EQ(run2[0].seconds, 3e-3);
  EXPECT_EQ(run2[0].not_scored,
            "in run 2 the samples spread over 80% of their median (interquartile range): the median is not a steady figure");
  EXPECT_TRUE(steps_of_run(three, 4, 0.5).empty());
  EXPECT_TRUE(steps_of_run(doc, 1, 0.5).empty());
}

TEST(CostModel, DataParallelCommunicationUsesBucketsAndOverlap) {
  const auto terms = terms_from_document(fixture());
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 1024}, {"depth", 4}, {"batch", 64}, {"gpus", 2},
                                   {"bucket_bytes", 1048576}});
  const double grad = parameter_count(c) * 4;
  const Prediction p = predict(terms, c, Backend::cuda);
  const Part* ar = part(p, "allreduce");
  ASSERT_TRUE(ar && ar->estimate.seconds);
  const double full = std::floor(grad / 1048576), rest = grad - full * 1048576;
  EXPECT_NEAR(*ar->estimate.seconds, full * (2e-5 + 1048576 / 1e11) + (rest > 0 ? 2e-5 + rest / 1e11 : 0), 1e-12);
  c.overlap = true;
  const Prediction overlapped = predict(terms, c, Backend::cuda);  // kept: part() points into it
  const Part* hidden = part(overlapped, "allreduce");
  ASSERT_TRUE(hidden && hidden->estimate.seconds);
  EXPECT_NEAR(*hidden->estimate.seconds, 0.2 * *ar->estimate.seconds, 1e-12);
  c.gpus = 3;  // no term at 3 ranks: cannot say
  EXPECT_FALSE(predict(terms, c, Backend::cuda).total.seconds);
}

TEST(CostModel, BadConfigurationsNameTheKey) {
  auto key_of = [](const json& j) {
    try {
      config_from_json(j);
    } catch (const ConfigError& e) {
      return e.key;
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(key_of({{"width", 64}, {"depth", 2}, {"batch", 8}}), "model");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"depth", 2}, {"batch", 8}}), "width");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}}), "batch");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 0}}), "batch");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", "wide"}, {"depth", 2}, {"batch", 8}}), "width");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 8}, {"precision", "fp8"}}), "precision");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 8}, {"btach", 8}}), "btach");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 6}, {"micro_batches", 4}}), "micro_batches");
  EXPECT_EQ(key_of({{"model", "transformer"}, {"layers", 2}, {"d_model", 100}, {"heads", 3}, {"seq_len", 8}, {"batch", 1}}),
            "heads");
  EXPECT_EQ(key_of({{"model", "generic"}, {"params", 1e6}, {"batch", 1}}), "flops_per_sample");
  EXPECT_EQ(key_of({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 8}}), "(accepted)");
  // What the transformer step's records publish: fused or materialised attention, AdamW.
  const json t = {{"model", "transformer"}, {"layers", 2}, {"d_model", 128}, {"heads", 4}, {"seq_len", 64}, {"batch", 2}};
  json fused = t;
  fused["attention"] = "fused", fused["optimizer"] = "adamw";
  EXPECT_EQ(key_of(fused), "(accepted)");
  json bad = t;
  bad["attention"] = "sparse";
  EXPECT_EQ(key_of(bad), "attention");
}

TEST(CostModel, TransformerAndGenericModelsCountTheirWork) {
  const StepConfig t = config_from_json({{"model", "transformer"}, {"layers", 2}, {"d_model", 256}, {"heads", 4},
                                         {"seq_len", 128}, {"batch", 8}});
  EXPECT_DOUBLE_EQ(parameter_count(t), 2 * (12.0 * 256 * 256 + 13.0 * 256));
  // 6 x parameters x tokens for the dense layers, plus the attention matmuls.
  const double dense = 6.0 * 2 * 12 * 256 * 256 * 8 * 128;
  EXPECT_GT(flops_per_step(t), dense);
  EXPECT_LT(flops_per_step(t), 1.5 * dense);
  const StepConfig g = config_from_json({{"model", "generic"}, {"params", 1e6}, {"flops_per_sample", 6e6}, {"batch", 4}});
  EXPECT_DOUBLE_EQ(flops_per_step(g), 2.4e7);
  const auto terms = terms_from_document(fixture());
  // Without kernels_per_step the GPU launch overhead of a generic model cannot be said.
  EXPECT_FALSE(predict(terms, g, Backend::cuda).total.seconds);
  EXPECT_TRUE(predict(terms, g, Backend::cpu).total.seconds);
}

TEST(CostModel, AFixPricedOutsideTheMeasuredShapesSaysItIsRough) {
  // Every GEMM of this step lies inside the measured shapes of both precisions: no matmul caveat (the
  // fixture's streaming sizes are few, so the elementwise part may carry one).
  const StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 256},
                                         {"input", 256}, {"classes", 256}});
  json doc = fixture();
  const auto terms = terms_from_document(doc);
  const Prediction base = predict(terms, c, Backend::cuda);
  auto fixes = rank_fixes(terms, c, Backend::cuda, base);
  ASSERT_GE(rank_of(fixes, "bf16"), 0);
  EXPECT_EQ(fixes[std::size_t(rank_of(fixes, "bf16"))].caveat.find("matmul"), std::string::npos);
  // Planted: the BF16 GEMMs measured at one large shape only; the fix's matmul is then clamped.
  for (auto& t : doc["findings"]["gemm"]["terms"])
    if (t["name"] == "matmul" && t["backend"] == "cuda" && t["where"].value("precision", "") == "bf16") {
      json last = t["points"].back();
      t["points"] = json::array({last});
    }
  const auto planted = terms_from_document(doc);
  fixes = rank_fixes(planted, c, Backend::cuda, predict(planted, c, Backend::cuda));
  ASSERT_GE(rank_of(fixes, "bf16"), 0);
  const Fix& bf16 = fixes[std::size_t(rank_of(fixes, "bf16"))];
  ASSERT_TRUE(bf16.saving_s.has_value());
  EXPECT_NE(bf16.caveat.find("matmul"), std::string::npos) << bf16.caveat;
  EXPECT_TRUE(to_json(bf16).contains("caveat"));
}

namespace {
// A matmul table of one rate over a small grid of shapes (records named after the table).
Term flat_matmul(const std::string& name, Backend be, const std::string& orientation, double rate) {
  Term t;
  t.family = "gemm";
  t.name = name;
  t.backend = be;
  t.where = {{"precision", "fp32"}, {"orientation", orientation}};
  t.form = "table";
  t.axes = {"m", "n", "k"};
  t.y = "flop_per_s";
  for (double m : {16.0, 4096.0})
    for (double n : {16.0, 4096.0})
      for (double k : {16.0, 4096.0}) {
        const std::string rec = name + "/" + orientation + "/" + std::to_string(int(m)) + "," +
                                std::to_string(int(n)) + "," + std::to_string(int(k));
        t.points.push_back({json{{"m", m}, {"n", n}, {"k", k}}, rate, rec});
        t.records.push_back(rec);
      }
  return t;
}
Term flat_stream(Backend be, const std::string& op, double rate) {
  Term t;
  t.family = "vectorize";
  t.name = "stream_bandwidth";
  t.backend = be;
  if (!op.empty()) t.where = {{"op", op}};
  t.form = "table";
  t.axes = {"bytes"};
  t.y = "bytes_per_s";
  for (double b : {1e3, 1e10}) t.points.push_back({json{{"bytes", b}}, rate, "stream/" + op + std::to_string(b)});
  return t;
}
double matmul_part(const std::vector<Term>& terms, const StepConfig& c) {
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part* mm = part(p, "matmul");
  EXPECT_TRUE(mm && mm->estimate.seconds) << (mm ? mm->estimate.cannot_say : "no matmul part");
  return mm && mm->estimate.seconds ? *mm->estimate.seconds : 0;
}
}  // namespace

// A layer's weight gradient runs A^T B ("tn"): with a tn table it is priced there. Halving the tn
// rate adds exactly the tn GEMMs' time once more; without one it falls back to the nn rate and says so.
TEST(CostModel, PlantedHalvedTransposedRateMovesOnlyTheWeightGradients) {
  const StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 3}, {"batch", 64}});
  const double nn_rate = 1e11;
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", nn_rate), flat_stream(Backend::cpu, "", 1e10)};
  const double plain = matmul_part(terms, c);
  // Every GEMM at the nn rate: 2 x FLOPs / rate.
  EXPECT_NEAR(plain, flops_per_step(c) / nn_rate, 1e-12);
  const Prediction fallback = predict(terms, c, Backend::cpu);
  EXPECT_NE(part(fallback, "matmul")->estimate.note.find("plain A B rate"), std::string::npos)
      << part(fallback, "matmul")->estimate.note;
  // The weight gradients: in x out x rows per layer, 256->256, 256->256, 256->16 at 64 rows.
  const double tn_flop = 2.0 * 64 * (256.0 * 256 + 256.0 * 256 + 256.0 * 16);
  terms.push_back(flat_matmul("matmul", Backend::cpu, "tn", nn_rate));
  EXPECT_NEAR(matmul_part(terms, c), plain, 1e-12);
  terms.back() = flat_matmul("matmul", Backend::cpu, "tn", nn_rate / 2);
  EXPECT_NEAR(matmul_part(terms, c) - plain, tn_flop / nn_rate, 1e-12);
  // The records behind the part name the tn table.
  const auto recs = part(predict(terms, c, Backend::cpu), "matmul")->estimate.records;
  EXPECT_TRUE(std::any_of(recs.begin(), recs.end(), [](const std::string& r) { return r.find("/tn/") != std::string::npos; }));
}

namespace {
// A one-layer transformer step small enough to price by hand: d_model 128, 4 heads, 128 tokens, batch 2.
StepConfig small_transformer() {
  return config_from_json(
      {{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4}, {"seq_len", 128}, {"batch", 2}});
}
// Flat CPU terms for a transformer step: GEMMs at 1e11 FLOP/s, streams at 1e10 B/s, GELU's at 1e9.
std::vector<Term> transformer_cpu_terms() {
  return {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
          flat_stream(Backend::cpu, "gelu", 1e9)};
}
}  // namespace

// Attention's per-head products are priced by the batched term where there is one; doubling its
// rate halves their share and nothing else.
TEST(CostModel, PlantedDoubledBatchedRateHalvesTheAttentionProducts) {
  const StepConfig c = small_transformer();
  std::vector<Term> terms = transformer_cpu_terms();
  const double alone = matmul_part(terms, c);
  // Six per-head products of 2 x 128 x 128 x 32 FLOPs, for 2 samples x 4 heads.
  const double attention_flop = 6 * 8 * 2.0 * 128 * 128 * 32;
  terms.push_back(flat_matmul("matmul_batched", Backend::cpu, "nn", 1e11));
  terms.push_back(flat_matmul("matmul_batched", Backend::cpu, "tn", 1e11));
  terms.push_back(flat_matmul("matmul_batched", Backend::cpu, "nt", 1e11));
  EXPECT_NEAR(matmul_part(terms, c), alone, 1e-12);
  for (auto& t : terms)
    if (t.name == "matmul_batched")
      for (auto& p : t.points) p.y *= 2;
  EXPECT_NEAR(alone - matmul_part(terms, c), attention_flop / 1e11 / 2, 1e-12);
}

// Adam's update at the measured rate of an Adam pass; SGD stays at the streaming rate.
TEST(CostModel, PlantedSlowAdamUpdateMovesOnlyTheAdamOptimizer) {
  const StepConfig sgd = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 2}, {"batch", 64}});
  StepConfig adam = sgd;
  adam.optimizer = "adam";
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10)};
  auto opt = [&](const StepConfig& c) {
    const Prediction p = predict(terms, c, Backend::cpu);
    return *part(p, "optimizer")->estimate.seconds;
  };
  const double params = parameter_count(sgd);
  EXPECT_NEAR(opt(adam), params * 28 / 1e10, 1e-12);  // no Adam term: its bytes at the streaming rate
  terms.push_back(flat_stream(Backend::cpu, "adam", 2.5e9));
  EXPECT_NEAR(opt(adam), params * 28 / 2.5e9, 1e-12);
  EXPECT_NEAR(opt(sgd), params * 20 / 1e10, 1e-12);
}

// A step on all cores reads, in its update, what its products' slices wrote on other cores: its update
// takes at least the seconds of the hand-off pass. A one-thread MLP step (below the native step's
// serial FLOPs) and a step on a share of the cores keep the update's own rate; a hand-off faster than
// that rate changes nothing.
TEST(CostModel, PlantedSlowHandoffMovesOnlyTheParallelStepsUpdate) {
  const StepConfig big = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 2}, {"batch", 64}});
  StepConfig small = big, share = big;
  small.batch = 1;
  share.core_share = 0.5;
  ASSERT_TRUE(update_reads_other_cores(big, Backend::cpu));
  ASSERT_FALSE(update_reads_other_cores(small, Backend::cpu));
  ASSERT_FALSE(update_reads_other_cores(share, Backend::cpu));
  ASSERT_FALSE(update_reads_other_cores(big, Backend::cuda));
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10)};
  auto opt = [&](const StepConfig& c) {
    const Prediction p = predict(terms, c, Backend::cpu);
    return *part(p, "optimizer")->estimate.seconds;
  };
  const double bytes = parameter_count(big) * 20;
  EXPECT_NEAR(opt(big), bytes / 1e10, 1e-12);
  terms.push_back(flat_stream(Backend::cpu, "handoff", 2.5e9));
  EXPECT_NEAR(opt(big), bytes / 2.5e9, 1e-12);
  EXPECT_NEAR(opt(small), bytes / 1e10, 1e-12);
  EXPECT_NEAR(opt(share), bytes / 1e10 / 0.5, 1e-12);  // the share's own scaling only
  terms.back().points[0].y = terms.back().points[1].y = 1e11;
  EXPECT_NEAR(opt(big), bytes / 1e10, 1e-12);
}

// Rows mode: with two threads (cpu_threads) and at least 32 rows each, the native FP32 MLP step's update
// first sums the other thread's gradient copy: (threads - 1 + 2) x params x 4 bytes at the hand-off rate
// more. One thread, fewer rows per thread, or no thread count: nothing more.
TEST(CostModel, PlantedThreadCountAddsTheRowsModeGradientSum) {
  const StepConfig rows = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 64}});
  StepConfig split = rows;
  split.batch = 32;
  ASSERT_TRUE(update_reads_other_cores(split, Backend::cpu));
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                             flat_stream(Backend::cpu, "handoff", 5e9)};
  auto opt = [&](const StepConfig& c) { return *part(predict(terms, c, Backend::cpu), "optimizer")->estimate.seconds; };
  const double params = parameter_count(rows), before_rows = opt(rows), before_split = opt(split);
  EXPECT_NEAR(before_rows, params * 20 / 5e9, 1e-12);
  Term threads;
  threads.family = "vectorize", threads.name = "cpu_threads", threads.backend = Backend::cpu;
  threads.form = "constant", threads.unit = "count", threads.value = 2, threads.records = {"vectorize/axpy/openmp"};
  terms.push_back(threads);
  EXPECT_NEAR(opt(rows), before_rows + params * 4 * 3 / 5e9, 1e-12);
  EXPECT_NEAR(opt(split), before_split, 1e-12);  // 16 rows per thread: one region per product
  terms.back().value = 1;
  EXPECT_NEAR(opt(rows), before_rows, 1e-12);
}

// Rows mode: each thread runs its rows of every product alone, so with a one-thread rate measured
// inside a step (matmul_one_thread) each layer GEMM costs half its FLOPs (two threads) at that rate;
// a planted doubled rate halves the part. Fewer rows per thread, one thread, or no such term: the
// products at the all-thread tables, as before.
TEST(CostModel, RowsModeGemmsAreOneThreadSlices) {
  const StepConfig rows = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 64}});
  StepConfig split = rows;
  split.batch = 32;
  Term threads;
  threads.family = "vectorize", threads.name = "cpu_threads", threads.backend = Backend::cpu;
  threads.form = "constant", threads.unit = "count", threads.value = 2, threads.records = {"vectorize/axpy/openmp"};
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                             flat_stream(Backend::cpu, "handoff", 5e9), threads};
  const double all_rows = matmul_part(terms, rows), all_split = matmul_part(terms, split);
  EXPECT_NEAR(all_rows, flops_per_step(rows) / 1e11, 1e-12);
  Term one;
  one.family = "gemm", one.name = "matmul_one_thread", one.backend = Backend::cpu, one.where = {{"precision", "fp32"}};
  one.form = "table", one.axes = {"flop"}, one.y = "flop_per_s";
  for (double f : {1e3, 1e12}) {
    one.points.push_back({json{{"flop", f}}, 2e10, "sequence/one/" + std::to_string(f)});
    one.records.push_back("sequence/one/" + std::to_string(f));
  }
  terms.push_back(one);
  EXPECT_NEAR(matmul_part(terms, rows), flops_per_step(rows) / 2 / 2e10, 1e-12);
  const Prediction p = predict(terms, rows, Backend::cpu);
  const Part* mm = part(p, "matmul");
  ASSERT_TRUE(mm);
  EXPECT_NE(mm->estimate.note.find("rows mode"), std::string::npos) << mm->estimate.note;
  EXPECT_NE(std::find(mm->estimate.records.begin(), mm->estimate.records.end(), "sequence/one/1000.000000"),
            mm->estimate.records.end());
  for (auto& pt : terms.back().points) pt.y = 4e10;
  EXPECT_NEAR(matmul_part(terms, rows), flops_per_step(rows) / 2 / 4e10, 1e-12);
  EXPECT_NEAR(matmul_part(terms, split), all_split, 1e-12);  // 16 rows per thread: one region per product
  terms[3].value = 1;  // one thread: no rows mode
  EXPECT_NEAR(matmul_part(terms, rows), all_rows, 1e-12);
}

namespace {
// A passes_in_step or update_in_step table of one share over a range of bytes, for one precision.
Term pass_share(const std::string& name, const std::string& precision, double fraction,
               const std::string& threads = "all") {
  Term t;
  t.family = "gemm", t.name = name, t.backend = Backend::cpu, t.where = {{"precision", precision}, {"threads", threads}};
  t.form = "table", t.axes = {"bytes"}, t.y = "fraction";
  for (double b : {1e3, 1e10}) {
    const std::string rec = "sequence/" + name + "/" + precision + "/" + std::to_string(b);
    t.points.push_back({json{{"bytes", b}}, fraction, rec});
    t.records.push_back(rec);
  }
  return t;
}
}  // namespace

// A native CPU step's passes and update at the share of their back-to-back rate the sequence records
// measured inside a step: halving the passes' share doubles the elementwise part, halving the
// update's doubles the optimizer's and replaces the hand-off rate (which the share includes); another
// precision's shares, the one-thread shares, the GPU, and a step PyTorch runs do not move; the parts
// name the records. A step on one thread reads the one-thread shares only.
TEST(CostModel, PlantedHalvedPassAndUpdateSharesDoubleThoseParts) {
  const StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 32}});
  ASSERT_TRUE(update_reads_other_cores(c, Backend::cpu));
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                             flat_stream(Backend::cpu, "handoff", 5e9)};
  auto seconds = [&](const StepConfig& s, const char* name, Backend be = Backend::cpu) {
    return part_seconds(terms, s, be, name);
  };
  const double ew = seconds(c, "elementwise"), params = parameter_count(c);
  ASSERT_GT(ew, 0);
  EXPECT_NEAR(seconds(c, "optimizer"), params * 20 / 5e9, 1e-12);  // the hand-off rate
  terms.push_back(pass_share("passes_in_step", "bf16", 0.25));
  terms.push_back(pass_share("update_in_step", "bf16", 0.25));
  terms.push_back(pass_share("passes_in_step", "fp32", 0.25, "one"));
  terms.push_back(pass_share("update_in_step", "fp32", 0.25, "one"));
  EXPECT_NEAR(seconds(c, "elementwise"), ew, 1e-15);
  EXPECT_NEAR(seconds(c, "optimizer"), params * 20 / 5e9, 1e-12);
  terms.push_back(pass_share("passes_in_step", "fp32", 0.5));
  EXPECT_NEAR(seconds(c, "elementwise"), 2 * ew, 1e-15);
  EXPECT_NEAR(seconds(c, "optimizer"), params * 20 / 5e9, 1e-12);
  terms.push_back(pass_share("update_in_step", "fp32", 0.5));
  EXPECT_NEAR(seconds(c, "optimizer"), params * 20 / 1e10 / 0.5, 1e-12);  // its own rate over the share
  const Prediction p = predict(terms, c, Backend::cpu);
  for (const char* name : {"elementwise", "optimizer"}) {
    const Part* x = part(p, name);
    EXPECT_TRUE(std::any_of(x->estimate.records.begin(), x->estimate.records.end(),
                            [](const std::string& r) { return r.rfind("sequence/", 0) == 0; }))
        << name;
  }
  EXPECT_NE(part(p, "elementwise")->what.find("passes_in_step"), std::string::npos) << part(p, "elementwise")->what;
  EXPECT_NE(part(p, "optimizer")->estimate.note.find("update_in_step"), std::string::npos);
  EXPECT_FALSE(pass_in_step_fraction(terms, Backend::cuda, "passes_in_step", "fp32", "all", 1e6).seconds);
  // A step on one thread: the one-thread shares (0.25), not the all-thread ones.
  StepConfig one = c;
  one.batch = 1;
  ASSERT_TRUE(runs_on_one_thread(one, Backend::cpu));
  std::vector<Term> all_only(terms);
  all_only.erase(all_only.begin() + 5, all_only.begin() + 7);
  std::swap(terms, all_only);
  const double one_ew = seconds(one, "elementwise"), one_opt = seconds(one, "optimizer");
  std::swap(terms, all_only);
  EXPECT_NEAR(seconds(one, "elementwise"), one_ew / 0.25, 1e-15);
  EXPECT_NEAR(seconds(one, "optimizer"), one_opt / 0.25, 1e-12);
  StepConfig eager = c;
  eager.framework = Framework::pytorch_eager;
  std::vector<Term> none(terms.begin(), terms.begin() + 3);
  const double eager_ew = [&] {
    std::swap(terms, none);
    const double v = seconds(eager, "elementwise");
    std::swap(terms, none);
    return v;
  }();
  EXPECT_NEAR(seconds(eager, "elementwise"), eager_ew, 1e-15);
}

// A native MLP step below the serial FLOPs runs on one thread: its plain passes and its SGD update
// stream at one thread's measured rate; a step on all cores keeps the all-core rate.
TEST(CostModel, PlantedOneThreadRateMovesOnlyTheSerialStep) {
  const StepConfig small = config_from_json({{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 8}});
  StepConfig big = small;
  big.batch = 4096;
  ASSERT_TRUE(runs_on_one_thread(small, Backend::cpu));
  ASSERT_FALSE(runs_on_one_thread(big, Backend::cpu));
  ASSERT_FALSE(runs_on_one_thread(small, Backend::cuda));
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10)};
  auto seconds = [&](const StepConfig& c, const char* name) {
    const Prediction p = predict(terms, c, Backend::cpu);
    return *part(p, name)->estimate.seconds;
  };
  const double opt_small = seconds(small, "optimizer"), ew_small = seconds(small, "elementwise");
  const double opt_big = seconds(big, "optimizer"), ew_big = seconds(big, "elementwise");
  terms.push_back(flat_stream(Backend::cpu, "one_thread", 2.5e9));
  EXPECT_NEAR(seconds(small, "optimizer"), opt_small * 4, 1e-12);
  EXPECT_NEAR(seconds(small, "elementwise"), ew_small * 4, 1e-12);
  EXPECT_NEAR(seconds(big, "optimizer"), opt_big, 1e-12);
  EXPECT_NEAR(seconds(big, "elementwise"), ew_big, 1e-12);
}

// Two publishers' streaming tables over different sizes: a pass is priced from the one whose
// measured sizes cover it (a cache-sized pass never at the rate of arrays far larger than any cache).
TEST(CostModel, AStreamingPassUsesTheTableThatCoversItsSize) {
  auto table = [](const std::string& family, double lo, double hi, double rate) {
    Term t;
    t.family = family;
    t.name = "stream_bandwidth";
    t.backend = Backend::cpu;
    t.form = "table";
    t.axes = {"bytes"};
    t.y = "bytes_per_s";
    for (double b : {lo, hi}) t.points.push_back({json{{"bytes", b}}, rate, family + std::to_string(b)});
    return t;
  };
  const std::vector<Term> terms = {table("large", 1e8, 1e9, 2e10), table("small", 1e6, 1e7, 1e11)};
  for (const auto& order : {terms, std::vector<Term>{terms[1], terms[0]}}) {
    const Estimate in_cache = stream_seconds(order, Backend::cpu, 2e6);
    ASSERT_TRUE(in_cache.seconds);
    EXPECT_NEAR(*in_cache.seconds, 2e6 / 1e11, 1e-15);
    EXPECT_FALSE(in_cache.outside_measured);
    const Estimate in_memory = stream_seconds(order, Backend::cpu, 5e8);
    EXPECT_NEAR(*in_memory.seconds, 5e8 / 2e10, 1e-15);
    // Between the two tables: the nearer one (3e7 is 0.48 in log from 1e7, 1.2 from 1e8), flagged.
    const Estimate between = stream_seconds(order, Backend::cpu, 3e7);
    EXPECT_NEAR(*between.seconds, 3e7 / 1e11, 1e-15);
    EXPECT_TRUE(between.outside_measured);
  }
}

namespace {
// A BF16 matmul table with points at two large squares only (library shapes), at `rate`.
Term bf16_squares(Backend be, double rate) {
  Term t;
  t.family = "gemm";
  t.name = "matmul";
  t.backend = be;
  t.where = {{"precision", "bf16"}, {"orientation", "nn"}};
  t.form = "table";
  t.axes = {"m", "n", "k"};
  t.y = "flop_per_s";
  for (double s : {1024.0, 4096.0}) t.points.push_back({json{{"m", s}, {"n", s}, {"k", s}}, rate, "bf16/" + std::to_string(int(s))});
  return t;
}
}  // namespace

// A BF16 product outside the BF16 table's shapes is priced at the FP32 seconds of its own shape over the
// speedup measured where both were measured; never slower than FP32 (a step falls back to FP32 on
// rounded operands); and with no BF16 record at all it cannot say.
TEST(CostModel, ReducedPrecisionOutsideItsShapesUsesTheMeasuredSpeedup) {
  const double fp = 1e11;
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", fp), flat_stream(Backend::cpu, "", 1e10)};
  // 64 x 256 x 256: far from the squares. At 2x FP32's rate the BF16 product takes half the FP32 time.
  terms.push_back(bf16_squares(Backend::cpu, 2 * fp));
  const Estimate twice = matmul_seconds(terms, Backend::cpu, "bf16", 64, 256, 256, "nn");
  ASSERT_TRUE(twice.seconds) << twice.cannot_say;
  EXPECT_NEAR(*twice.seconds, 2.0 * 64 * 256 * 256 / fp / 2, 1e-15);
  EXPECT_TRUE(twice.outside_measured);
  EXPECT_NE(twice.note.find("speedup 2"), std::string::npos) << twice.note;
  EXPECT_TRUE(std::any_of(twice.records.begin(), twice.records.end(), [](const std::string& r) { return r.rfind("bf16/", 0) == 0; }));
  // BF16 slower than FP32 where both were measured: the FP32 path, and it says so.
  terms.back() = bf16_squares(Backend::cpu, fp / 2);
  const Estimate slower = matmul_seconds(terms, Backend::cpu, "bf16", 64, 256, 256, "nn");
  ASSERT_TRUE(slower.seconds);
  EXPECT_NEAR(*slower.seconds, 2.0 * 64 * 256 * 256 / fp, 1e-15);
  EXPECT_NE(slower.note.find("run as fp32"), std::string::npos) << slower.note;
  // No BF16 record: cannot say, FP32 does not stand in.
  terms.pop_back();
  EXPECT_FALSE(matmul_seconds(terms, Backend::cpu, "bf16", 64, 256, 256, "nn").seconds);
}

// BF16 adds the casts of every GEMM's two operands (6 bytes per element) to the elementwise part.
TEST(CostModel, Bf16CountsTheOperandCasts) {
  const double stream = 1e10;
  const std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), bf16_squares(Backend::cpu, 1e11),
                                   flat_stream(Backend::cpu, "", stream)};
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 2}, {"batch", 64}, {"input", 256}, {"classes", 16}});
  const double fp32_ew = *part(predict(terms, c, Backend::cpu), "elementwise")->estimate.seconds;
  c.precision = "bf16";
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part* ew = part(p, "elementwise");
  ASSERT_TRUE(ew && ew->estimate.seconds);
  // Layer 1 (256 -> 256): nn 64x256x256, tn 256x256x64; layer 2 (256 -> 16): nn 64x16x256, tn 256x16x64,
  // nt 64x256x16. Each cast moves 6 bytes per element of A (m x k) and B (k x n).
  const double elems = (64.0 * 256 + 256.0 * 256) + (256.0 * 64 + 64.0 * 256) + (64.0 * 256 + 256.0 * 16) +
                       (256.0 * 64 + 64.0 * 16) + (64.0 * 16 + 16.0 * 256);
  EXPECT_NEAR(*ew->estimate.seconds - fp32_ew, 6.0 * elems / stream, 1e-12);
  EXPECT_NE(ew->what.find("5 casts of GEMM operands to bf16"), std::string::npos) << ew->what;
}

// BF16 layer GEMMs priced from the points measured with their operands' rounding (matmul_autocast)
// carry no separate casts; their rate is the autocast table's (a planted doubling halves the part);
// without that term the casts come back.
TEST(CostModel, Bf16FromAutocastPointsDropsTheOperandCasts) {
  const double stream = 1e10, rate = 4e10;
  Term autocast = flat_matmul("matmul_autocast", Backend::cpu, "nn", rate);
  autocast.where["precision"] = "bf16";
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), bf16_squares(Backend::cpu, 1e11),
                             flat_stream(Backend::cpu, "", stream), autocast};
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 2}, {"batch", 64}, {"input", 256}, {"classes", 16}});
  const double fp32_ew = *part(predict(terms, c, Backend::cpu), "elementwise")->estimate.seconds;
  c.precision = "bf16";
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part* ew = part(p, "elementwise");
  const Part* mm = part(p, "matmul");
  ASSERT_TRUE(ew && ew->estimate.seconds && mm && mm->estimate.seconds);
  EXPECT_NEAR(*ew->estimate.seconds, fp32_ew, 1e-15);
  EXPECT_EQ(ew->what.find("casts of GEMM operands"), std::string::npos) << ew->what;
  EXPECT_NEAR(*mm->estimate.seconds, flops_per_step(c) / rate, 1e-12);
  EXPECT_NE(mm->estimate.note.find("matmul_autocast"), std::string::npos) << mm->estimate.note;
  for (auto& t : terms)
    if (t.name == "matmul_autocast")
      for (auto& pt : t.points) pt.y *= 2;
  EXPECT_NEAR(*part(predict(terms, c, Backend::cpu), "matmul")->estimate.seconds, flops_per_step(c) / rate / 2, 1e-12);
  terms.pop_back();
  const Prediction without = predict(terms, c, Backend::cpu);
  EXPECT_GT(*part(without, "elementwise")->estimate.seconds, fp32_ew);
  EXPECT_NE(part(without, "matmul")->estimate.note.find("casts are priced apart"), std::string::npos)
      << part(without, "matmul")->estimate.note;
}

// gtb's CPU transformer step rounds in its passes (rounded activations, a rounded copy of the weights
// after the optimizer): at BF16 it pays one pass over the weights, no operand casts, and never the
// autocast rate (its products do not round); PyTorch's step casts every operand.
TEST(CostModel, Bf16TransformerRoundsInItsPassesNotPerOperand) {
  const double stream = 1e10;
  Term autocast = flat_matmul("matmul_autocast", Backend::cpu, "nn", 1e9);
  autocast.where["precision"] = "bf16";
  const std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), bf16_squares(Backend::cpu, 1e11),
                                   flat_stream(Backend::cpu, "", stream), flat_stream(Backend::cpu, "gelu", 1e9),
                                   autocast};
  StepConfig c = config_from_json({{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4},
                                   {"seq_len", 64}, {"batch", 2}, {"attention", "fused"}});
  const double fp32_ew = *part(predict(terms, c, Backend::cpu), "elementwise")->estimate.seconds;
  const double fp32_mm = *part(predict(terms, c, Backend::cpu), "matmul")->estimate.seconds;
  c.precision = "bf16";
  const Prediction p = predict(terms, c, Backend::cpu);
  EXPECT_NEAR(*part(p, "elementwise")->estimate.seconds - fp32_ew, 8.0 * parameter_count(c) / stream, 1e-12);
  EXPECT_NE(part(p, "elementwise")->what.find("weights' copy rounded"), std::string::npos) << part(p, "elementwise")->what;
  // Its layer GEMMs at the faster of the autocast rate and FP32's: the 1e9 autocast rate loses to FP32;
  // a planted autocast rate above FP32's (and above the BF16 table's) prices them.
  EXPECT_NEAR(*part(p, "matmul")->estimate.seconds, fp32_mm, 1e-12);
  std::vector<Term> fast = terms;
  for (auto& pt : fast.back().points) pt.y = 4e11;
  const double layers = *part(p, "matmul")->estimate.seconds - *part(predict(fast, c, Backend::cpu), "matmul")->estimate.seconds;
  double layer_flop = 0;
  for (const auto& [m, n, k] : std::vector<std::tuple<double, double, double>>{{128, 384, 128}, {128, 128, 128}, {128, 512, 128}, {128, 128, 512}})
    layer_flop += 3 * 2.0 * m * n * k;  // nn, tn, nt: the same FLOPs
  EXPECT_NEAR(layers, layer_flop / 1e11 - layer_flop / 4e11, 1e-12);
}

// Fused attention's products are priced at the shapes of its 64-row query blocks: a planted slower
// rate at the block shapes moves the fused step by exactly its attention FLOPs at that rate, and the
// materialised step (whole S x S products) not at all.
TEST(CostModel, FusedAttentionIsPricedAtItsBlockShapes) {
  const double fast = 2e11, slow = 5e10;
  auto batched = [](const std::string& o, double block_rate, double whole_rate) {
    Term t = flat_matmul("matmul_batched", Backend::cpu, o, whole_rate);
    t.points.clear();
    t.records.clear();
    // S = 128, dh = 32: the whole products, then the blocks (64 rows, keys 64 and 128).
    const std::vector<std::vector<double>> whole = o == "nt" ? std::vector<std::vector<double>>{{128, 128, 32}}
                                                             : std::vector<std::vector<double>>{{128, 32, 128}};
    const std::vector<std::vector<double>> block =
        o == "nt"   ? std::vector<std::vector<double>>{{64, 64, 32}, {64, 128, 32}}
        : o == "nn" ? std::vector<std::vector<double>>{{64, 32, 64}, {64, 32, 128}}
                    : std::vector<std::vector<double>>{{64, 32, 64}, {128, 32, 64}};
    auto add = [&](const std::vector<double>& s, double y) {
      const std::string id = "b/" + o + "/" + std::to_string(int(s[0])) + "," + std::to_string(int(s[1])) + "," +
                             std::to_string(int(s[2]));
      t.points.push_back({json{{"m", s[0]}, {"n", s[1]}, {"k", s[2]}}, y, id});
      t.records.push_back(id);
    };
    for (const auto& s : whole) add(s, whole_rate);
    for (const auto& s : block) add(s, block_rate);
    return t;
  };
  auto attention = [&](const std::string& attn, double block_rate) {
    std::vector<Term> terms = transformer_cpu_terms();
    for (const char* o : {"nn", "tn", "nt"}) terms.push_back(batched(o, block_rate, fast));
    const StepConfig c = config_from_json({{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4},
                                           {"seq_len", 128}, {"batch", 2}, {"attention", attn}});
    return *part(predict(terms, c, Backend::cpu), "matmul")->estimate.seconds;
  };
  // Fused, per head: blocks of 64 x 64 and 64 x 128 keys, seven products each: 7 x 2 x 32 x 64 x 192.
  const double fused_flop = 2 * 4 * 7 * 2.0 * 32 * 64 * (64 + 128);
  EXPECT_NEAR(attention("fused", slow) - attention("fused", fast), fused_flop / slow - fused_flop / fast, 1e-12);
  EXPECT_NEAR(attention("materialised", slow), attention("materialised", fast), 1e-15);
}

// A CPU step on a share of the cores (a rank bound to half of them), or one of N ranks on the CPU,
// takes its compute at the all-core seconds over its share; the GPU is untouched.
TEST(CostModel, ACoreShareScalesTheCpuCompute) {
  const std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                                   flat_matmul("matmul", Backend::cuda, "nn", 1e13), flat_stream(Backend::cuda, "", 1e12)};
  const json base = {{"model", "mlp"}, {"width", 256}, {"depth", 3}, {"batch", 64}};
  const StepConfig all = config_from_json(base);
  json half_j = base;
  half_j["core_share"] = 0.5;
  const StepConfig half = config_from_json(half_j);
  const double t_all = *predict(terms, all, Backend::cpu).total.seconds;
  const Prediction p_half = predict(terms, half, Backend::cpu);
  EXPECT_NEAR(*p_half.total.seconds, 2 * t_all, 1e-12);
  EXPECT_NE(part(p_half, "matmul")->estimate.note.find("compute assumed to scale with cores"), std::string::npos);
  EXPECT_NEAR(*predict(terms, half, Backend::cuda).parts.front().estimate.seconds,
              *predict(terms, all, Backend::cuda).parts.front().estimate.seconds, 1e-15);
  EXPECT_EQ(to_json(half).at("core_share"), 0.5);
  EXPECT_FALSE(to_json(all).contains("core_share"));
  json bad = base;
  for (const double v : {0.0, 1.5, -1.0}) {
    bad["core_share"] = v;
    try {
      config_from_json(bad);
      ADD_FAILURE() << "core_share " << v << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key, "core_share");
    }
  }
}

// Fused attention's backward computes the scores and their exp again: one more Q K^T per head (at the
// batched rate) and one more exp pass over the scores (at the GELU pass's rate), nothing else. The
// softmax's forward pass is priced at the GELU pass's rate too (an exp per score).
// Fused attention pays for its recomputed scores, computes only the causal blocks, and runs its
// softmax passes on one block at a time (at the streaming rate of a block's size).
TEST(CostModel, FusedAttentionPaysForItsRecomputedScores) {
  const double mm = 1e11, plain = 1e10, gelu = 1e9;
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", mm), flat_stream(Backend::cpu, "", plain),
                             flat_stream(Backend::cpu, "gelu", gelu)};
  for (const char* o : {"nn", "tn", "nt"}) terms.push_back(flat_matmul("matmul_batched", Backend::cpu, o, mm));
  json j = {{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4}, {"seq_len", 128}, {"batch", 2}};
  const Prediction mat = predict(terms, config_from_json(j), Backend::cpu);
  j["attention"] = "fused";
  const Prediction fused = predict(terms, config_from_json(j), Backend::cpu);
  // Fused attention computes the causal blocks only, 64 query rows at a time: of 128 x 128 scores,
  // (128 + 64) / 256 = 0.75; its seven products (the scores again in the backward) against six.
  const double heads = 2 * 4, scores = heads * 128.0 * 128, causal = 0.75;
  EXPECT_NEAR(*part(fused, "matmul")->estimate.seconds - *part(mat, "matmul")->estimate.seconds,
              (7 * causal - 6) * heads * 2.0 * 128 * 128 * 32 / mm, 1e-12);
  EXPECT_NEAR(*part(fused, "elementwise")->estimate.seconds - *part(mat, "elementwise")->estimate.seconds,
              causal * (4 * 4.0 * scores / gelu + 3 * 4.0 * scores / plain) -
                  (2 * 4.0 * scores / gelu + 3 * 4.0 * scores / plain),
              1e-12);
  // Halving the GELU pass's rate adds the softmax forward once more, in both variants.
  const double before = *part(mat, "elementwise")->estimate.seconds;
  for (auto& t : terms)
    if (t.where.value("op", "") == "gelu")
      for (auto& p : t.points) p.y /= 2;
  j["attention"] = "materialised";
  const double after = *part(predict(terms, config_from_json(j), Backend::cpu), "elementwise")->estimate.seconds;
  const double gelu_bytes = 2 * 4.0 * 2 * 128 * 4 * 128 + 3 * 4.0 * 2 * 128 * 4 * 128;  // the MLP's GELU fwd + bwd
  EXPECT_NEAR(after - before, (2 * 4.0 * scores + gelu_bytes) / gelu, 1e-12);
}

// ---- the software that runs the step (StepConfig::framework) ----

namespace {

// The synthetic terms and a PyTorch's: 3 us per operator at n = 256 (10 us at a larger n, which the
// dispatch cost must not use), 50 operators per step of depth 4 on both backends.
std::vector<Term> with_pytorch(std::vector<Term> terms) {
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    Term op;
    op.family = "fw", op.name = "framework_op", op.backend = be, op.form = "table", op.y = "seconds";
    op.where = {{"framework", "pytorch-eager"}};
    op.axes = {"n"};
    op.points = {{{{"n", 1 << 20}}, 10e-6, "fw/op/big"}, {{{"n", 256}}, 3e-6, "fw/op/small"}};
    op.records = {"fw/op/big", "fw/op/small"};
    Term ops = op;
    ops.name = "framework_ops", ops.y = "count";
    ops.where = {{"framework", "pytorch-eager"}, {"model", "mlp"}, {"optimizer", "sgd"}};
    ops.axes = {"depth"};
    ops.points = {{{{"depth", 4}}, 50, "fw/step/a"}, {{{"depth", 4}}, 50, "fw/step/b"}};
    ops.records = {"fw/step/a", "fw/step/b"};
    terms.push_back(op), terms.push_back(ops);
  }
  return terms;
}

}  // namespace

// The software is one word from the option to the JSON: each Framework reads from and writes to its
// spelling under the key "framework"; native is the default and is not written; others are refused.
TEST(CostModelSoftware, OneFrameworkFromTheOptionToTheJson) {
  const json base = {{"model", "mlp"}, {"width", 64}, {"depth", 2}, {"batch", 8}};
  for (const Framework f : kFrameworks) {
    EXPECT_EQ(framework_from_string(to_string(f)), f);
    json j = base;
    j[kFrameworkKey] = to_string(f);
    const StepConfig c = config_from_json(j);
    EXPECT_EQ(c.framework, f);
    EXPECT_EQ(to_json(c).value(kFrameworkKey, std::string("native")), to_string(f));
  }
  EXPECT_FALSE(to_json(config_from_json(base)).contains(kFrameworkKey));
  EXPECT_FALSE(framework_from_string("pytorch").has_value());
  json bad = base;
  bad[kFrameworkKey] = "jax";
  EXPECT_THROW(config_from_json(bad), ConfigError);
}

TEST(CostModelSoftware, PyTorchEagerAddsItsOperatorsHostTime) {
  const auto terms = with_pytorch(terms_from_document(fixture()));
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 32}});
  EXPECT_EQ(c.framework, Framework::native);
  const Prediction native = predict(terms, c, Backend::cpu);
  c = config_from_json({{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 32}, {"framework", "pytorch-eager"}});
  const Prediction eager = predict(terms, c, Backend::cpu);
  ASSERT_TRUE(native.total.seconds && eager.total.seconds) << eager.total.cannot_say;
  const Part* d = part(eager, "dispatch");
  ASSERT_TRUE(d && d->estimate.seconds) << (d ? d->estimate.cannot_say : "no dispatch part");
  EXPECT_NEAR(*d->estimate.seconds, 50 * 3e-6, 1e-15) << "the smallest tensor's cost, not the large one's";
  // The rest as the native step's, but for the elementwise passes (at PyTorch's operator cost by size).
  const double ew_eager = *part(eager, "elementwise")->estimate.seconds, ew_native = *part(native, "elementwise")->estimate.seconds;
  EXPECT_NEAR((*eager.total.seconds - ew_eager) - (*native.total.seconds - ew_native), 50 * 3e-6, 1e-12);
  EXPECT_FALSE(part(native, "dispatch"));
  // Its fixes: compile (no compiled term here: cannot say, with the reason).
  const auto fixes = rank_fixes(terms, c, Backend::cpu, eager);
  const int k = rank_of(fixes, "compile");
  ASSERT_GE(k, 0);
  EXPECT_FALSE(fixes[std::size_t(k)].saving_s);
  EXPECT_NE(fixes[std::size_t(k)].cannot_say.find("pytorch-compiled"), std::string::npos) << fixes[std::size_t(k)].cannot_say;
  // On the GPU a CUDA graph replays the step without the dispatcher: a saving.
  const Prediction gpu = predict(terms, c, Backend::cuda);
  ASSERT_TRUE(gpu.total.seconds) << gpu.total.cannot_say;
  EXPECT_FALSE(part(gpu, "launch")) << "PyTorch's dispatch replaces gtb's launch cost";
  const auto gfix = rank_fixes(terms, c, Backend::cuda, gpu);
  ASSERT_GE(rank_of(gfix, "capture_graph"), 0);
  // Without its terms the part cannot be said, and says why.
  const Prediction none = predict(terms_from_document(fixture()), c, Backend::cpu);
  EXPECT_FALSE(none.total.seconds);
  EXPECT_NE(none.total.cannot_say.find("framework_ops"), std::string::npos) << none.total.cannot_say;
  EXPECT_THROW(config_from_json({{"model", "mlp"}, {"width", 8}, {"depth", 2}, {"batch", 1}, {"framework", "jax"}}), ConfigError);
  EXPECT_EQ(measured_framework(terms), "pytorch-eager");
  EXPECT_EQ(measured_framework(terms_from_document(fixture())), "native");
}

TEST(CostModelSoftware, ValidationLeavingOutTheRecordKeepsTheFamilysOtherRecords) {
  const auto terms = with_pytorch(terms_from_document(fixture()));
  Step s;
  s.family = "fw", s.record = "fw/step/a", s.backend = Backend::cpu, s.seconds = 1e-3;
  s.config = {{"model", "mlp"}, {"width", 256}, {"depth", 4}, {"batch", 32}, {"framework", "pytorch-eager"}};
  s.leave_out = "record";
  const Validation v = validate(terms, {s});
  ASSERT_EQ(v.rows.size(), 1u);
  ASSERT_TRUE(v.rows[0].predicted.seconds) << v.rows[0].predicted.cannot_say;
  const auto& recs = v.rows[0].predicted.records;
  EXPECT_EQ(std::find(recs.begin(), recs.end(), "fw/step/a"), recs.end()) << "its own record left out";
  EXPECT_NE(std::find(recs.begin(), recs.end(), "fw/step/b"), recs.end()) << "another record of its family used";
  // Left out by family (the default), the same step cannot be said.
  s.leave_out = "family";
  const Validation f = validate(terms, {s});
  EXPECT_FALSE(f.rows[0].predicted.seconds);
  // The JSON form keeps the choice.
  s.leave_out = "record";
  EXPECT_EQ(step_from_json(to_json(s), "fw").leave_out, "record");
}

namespace {
// A CPU GEMM table of one fraction at two points of `axis`, for one precision, each point named by
// a record of its own (records: `records` + the point).
Term share_table(const std::string& name, const std::string& precision, const std::string& axis, double from,
                 double to, double fraction, const std::string& records) {
  Term t;
  t.family = "gemm";
  t.name = name;
  t.backend = Backend::cpu;
  t.where = {{"precision", precision}};
  t.form = "table";
  t.axes = {axis};
  t.y = "fraction";
  for (double x : {from, to}) {
    const std::string rec = records + std::to_string(x);
    t.points.push_back({json{{axis, x}}, fraction, rec});
    t.records.push_back(rec);
  }
  return t;
}
// A matmul_in_step table of one fraction over a range of working sets, for one precision.
Term in_step_share(const std::string& precision, double fraction) {
  return share_table("matmul_in_step", precision, "bytes", 1e5, 1e10, fraction, "sequence/" + precision + "/");
}
}  // namespace

// A step's layer GEMMs at the share of their back-to-back rate the sequence records measured: halving
// the share doubles their seconds; attention's per-head products (measured as a batch) and another
// precision's share do not move; the part names the sequence records.
TEST(CostModel, PlantedHalvedInStepShareDoublesTheLayersGemms) {
  const StepConfig c = small_transformer();
  std::vector<Term> terms = transformer_cpu_terms();
  for (const char* o : {"nn", "tn", "nt"}) terms.push_back(flat_matmul("matmul_batched", Backend::cpu, o, 1e11));
  const double plain = matmul_part(terms, c);
  const double attention = 6 * 8 * 2.0 * 128 * 128 * 32 / 1e11;
  terms.push_back(in_step_share("bf16", 0.25));
  EXPECT_NEAR(matmul_part(terms, c), plain, 1e-12);
  terms.push_back(in_step_share("fp32", 1.0));
  EXPECT_NEAR(matmul_part(terms, c), plain, 1e-12);
  terms.back() = in_step_share("fp32", 0.5);
  EXPECT_NEAR(matmul_part(terms, c), attention + 2 * (plain - attention), 1e-12);
  const Prediction halved = predict(terms, c, Backend::cpu);
  const Part* mm = part(halved, "matmul");
  EXPECT_NE(mm->estimate.note.find("0.5 of their back-to-back rate"), std::string::npos) << mm->estimate.note;
  EXPECT_TRUE(std::any_of(mm->estimate.records.begin(), mm->estimate.records.end(),
                          [](const std::string& r) { return r.rfind("sequence/fp32/", 0) == 0; }));
  // The GPU has no such term: untouched.
  EXPECT_FALSE(matmul_in_step_fraction(terms, Backend::cuda, "fp32", 1e7, 1e8).seconds);
}

// An older file's share is looked up at the step's working set: a larger batch reads a larger one.
TEST(CostModel, InStepShareIsReadAtTheStepsWorkingSet) {
  Term t = in_step_share("fp32", 1.0);
  t.points[0].y = 1.0, t.points[1].y = 0.5;  // 1e5 bytes: 1.0; 1e10 bytes: 0.5, log-log between
  const std::vector<Term> terms = {t};
  const Estimate small = matmul_in_step_fraction(terms, Backend::cpu, "fp32", 1e5, 1e12);
  const Estimate mid = matmul_in_step_fraction(terms, Backend::cpu, "fp32", std::sqrt(1e5 * 1e10), 1e3);
  ASSERT_TRUE(small.seconds && mid.seconds);
  EXPECT_NEAR(*small.seconds, 1.0, 1e-12);
  EXPECT_NEAR(*mid.seconds, std::sqrt(0.5), 1e-9);
  EXPECT_TRUE(matmul_in_step_fraction(terms, Backend::cpu, "fp32", 1e12, 1e8).outside_measured);
  EXPECT_FALSE(matmul_in_step_fraction(terms, Backend::cpu, "bf16", 1e7, 1e8).seconds);
}

// This gtb's share is looked up at each GEMM's FLOPs: in a step of two GEMM sizes, a planted lower
// share for the small products moves only them, and the note gives the range of shares.
TEST(CostModel, InStepShareIsReadAtEachGemmsSize) {
  const StepConfig c = small_transformer();
  std::vector<Term> terms = transformer_cpu_terms();
  for (const char* o : {"nn", "tn", "nt"}) terms.push_back(flat_matmul("matmul_batched", Backend::cpu, o, 1e11));
  auto by_flop = [](double small_share) {
    Term t = in_step_share("fp32", 1.0);
    t.axes = {"flop"};
    // Two points: 1e3 FLOPs at small_share, 1e7 at 1.0; the step's layer GEMMs (256 rows at width
    // 128: 8.4e6 to 3.4e7 FLOPs) read from their neighbourhood.
    t.points = {{json{{"flop", 1e3}}, small_share, "sequence/small"}, {json{{"flop", 1e7}}, 1.0, "sequence/large"}};
    t.records = {"sequence/small", "sequence/large"};
    return t;
  };
  terms.push_back(by_flop(1.0));
  const double flat = matmul_part(terms, c);
  EXPECT_NEAR(matmul_in_step_fraction(terms, Backend::cpu, "fp32", 1e12, 1e3).seconds.value_or(0), 1.0, 1e-12);
  terms.back() = by_flop(0.5);
  const double planted = matmul_part(terms, c);
  EXPECT_GT(planted, flat);  // the products below 1e7 FLOPs (the 128 x 128 projections) slow down
  EXPECT_NEAR(matmul_in_step_fraction(terms, Backend::cpu, "fp32", 1.0, 1e3).seconds.value_or(0), 0.5, 1e-12);
  EXPECT_NEAR(matmul_in_step_fraction(terms, Backend::cpu, "fp32", 1.0, 1e7).seconds.value_or(0), 1.0, 1e-12);
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part* mm = part(p, "matmul");
  ASSERT_TRUE(mm);
  EXPECT_NE(mm->estimate.note.find(" to 1 of their back-to-back rate"), std::string::npos) << mm->estimate.note;
}

// A BF16 layer GEMM run as FP32 on rounded operands (FP32's rate the faster) keeps FP32's share of
// its back-to-back rate inside a step, not the share measured for the BF16 GEMM calls: with FP32's
// share 0.5 and BF16's 0.25 planted, the BF16 step's layer GEMMs cost exactly the FP32 step's; where
// the autocast rate is the faster, BF16's share applies.
TEST(CostModel, Bf16GemmsRunAsFp32KeepFp32sInStepShare) {
  Term autocast = flat_matmul("matmul_autocast", Backend::cpu, "nn", 1e9);
  autocast.where["precision"] = "bf16";
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), bf16_squares(Backend::cpu, 1e11),
                             flat_stream(Backend::cpu, "", 1e10), flat_stream(Backend::cpu, "gelu", 1e9),
                             autocast, in_step_share("fp32", 0.5), in_step_share("bf16", 0.25)};
  for (const char* o : {"nn", "tn", "nt"}) terms.push_back(flat_matmul("matmul_batched", Backend::cpu, o, 1e11));
  StepConfig c = config_from_json({{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4},
                                   {"seq_len", 64}, {"batch", 2}, {"attention", "fused"}});
  const double fp32_mm = matmul_part(terms, c);
  c.precision = "bf16";
  EXPECT_NEAR(matmul_part(terms, c), fp32_mm, 1e-12);
  // The autocast rate above FP32's prices the layer GEMMs: BF16's share, 0.25, divides that rate.
  for (auto& pt : terms[4].points) pt.y = 4e11;
  double layer_flop = 0;
  for (const auto& [m, n, k] : std::vector<std::tuple<double, double, double>>{{128, 384, 128}, {128, 128, 128}, {128, 512, 128}, {128, 128, 512}})
    layer_flop += 3 * 2.0 * m * n * k;
  EXPECT_NEAR(fp32_mm - matmul_part(terms, c), layer_flop / 1e11 / 0.5 - layer_flop / 4e11 / 0.25, 1e-12);
}

namespace {
// A matmul_from_memory table of one share at every GEMM size, for one precision, applying above a
// working set of `above` bytes (the last-level cache its cold records emptied).
Term from_memory_share(const std::string& precision, double fraction, double above) {
  Term t = share_table("matmul_from_memory", precision, "flop", 1e3, 1e12, fraction, "sequence/cold/" + precision + "/");
  t.x = "working_set_bytes";
  t.x_min = above;
  return t;
}
}  // namespace

// A step whose working set is above the last-level cache the cold records emptied takes their share
// (matmul_from_memory) in place of matmul_in_step: a planted share of 0.5 doubles its layer GEMMs
// exactly, whatever the in-step share; the same term under a larger cache (the step fits) leaves the
// in-step share in force; another precision's, a PyTorch step's and the GPU's GEMMs do not move; the
// term survives its JSON form.
TEST(CostModel, FromMemoryShareReplacesTheInStepOneAboveTheCache) {
  const StepConfig c = small_transformer();
  // The step's working set (weights and gradients 1.6 MB, activations 4 MB) lies between these two.
  const double fits = 1e9, outgrows = 1e5, ws = 1e7;
  std::vector<Term> terms = transformer_cpu_terms();
  for (const char* o : {"nn", "tn", "nt"}) terms.push_back(flat_matmul("matmul_batched", Backend::cpu, o, 1e11));
  const double plain = matmul_part(terms, c);
  const double attention = 6 * 8 * 2.0 * 128 * 128 * 32 / 1e11;
  terms.push_back(in_step_share("fp32", 0.8));
  const double in_step = matmul_part(terms, c);
  EXPECT_NEAR(in_step, attention + (plain - attention) / 0.8, 1e-12);
  terms.push_back(from_memory_share("fp32", 0.5, fits));  // the step fits in the cache: in-step share
  EXPECT_NEAR(matmul_part(terms, c), in_step, 1e-12);
  terms.back() = from_memory_share("bf16", 0.25, outgrows);  // another precision's
  EXPECT_NEAR(matmul_part(terms, c), in_step, 1e-12);
  terms.back() = from_memory_share("fp32", 0.5, outgrows);  // the step outgrows the cache
  EXPECT_NEAR(matmul_part(terms, c), attention + 2 * (plain - attention), 1e-12);
  const Prediction p = predict(terms, c, Backend::cpu);
  const Part* mm = part(p, "matmul");
  ASSERT_TRUE(mm);
  EXPECT_NE(mm->estimate.note.find("matmul_from_memory"), std::string::npos) << mm->estimate.note;
  EXPECT_TRUE(std::any_of(mm->estimate.records.begin(), mm->estimate.records.end(),
                          [](const std::string& r) { return r.rfind("sequence/cold/fp32/", 0) == 0; }));
  const Term back = term_from_json(to_json(terms.back()), "gemm");
  EXPECT_EQ(back.x, "working_set_bytes");
  EXPECT_DOUBLE_EQ(back.x_min, outgrows);
  EXPECT_NEAR(matmul_from_memory_fraction({back}, Backend::cpu, "fp32", ws, 1e8).seconds.value_or(0), 0.5, 1e-12);
  EXPECT_FALSE(matmul_from_memory_fraction({back}, Backend::cpu, "fp32", 0.5 * outgrows, 1e8).seconds);
  EXPECT_FALSE(matmul_from_memory_fraction(terms, Backend::cuda, "fp32", ws, 1e8).seconds);
  // A table without its bound (x_min 0) applies nowhere: where it applies is part of the measurement.
  Term unbounded = from_memory_share("fp32", 0.5, 0.0);
  EXPECT_FALSE(matmul_from_memory_fraction({unbounded}, Backend::cpu, "fp32", ws, 1e8).seconds);
}

// A fused softmax pass is priced at the rate of one block of scores (64 rows x S, in cache), the
// materialised ones at the rate of one head's S x S scores (the forward) or all the step's (the
// backward): a streaming table faster at small sizes makes the fused passes cheaper per byte than the
// materialised ones.
TEST(CostModel, FusedSoftmaxPassesRunAtTheRateOfOneBlock) {
  auto gelu_table = [](double small_rate) {
    Term t = flat_stream(Backend::cpu, "gelu", 1e9);
    t.points[0].y = small_rate;  // 1e3 bytes
    t.points[1].y = 1e9;         // 1e10 bytes
    return t;
  };
  json j = {{"model", "transformer"}, {"layers", 1}, {"d_model", 128}, {"heads", 4}, {"seq_len", 512}, {"batch", 1}};
  auto ew = [&](const std::string& attention, double small_rate) {
    std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                               gelu_table(small_rate)};
    j["attention"] = attention;
    const Prediction p = predict(terms, config_from_json(j), Backend::cpu);
    return *part(p, "elementwise")->estimate.seconds;
  };
  // A faster small-size rate moves the fused passes (blocks of 64 x 512 scores: 128-192 KiB) more
  // than the materialised ones (4 x 512 x 512 scores at once: 8-12 MiB); the other passes are the
  // same in both.
  const double fused_gain = ew("fused", 1e9) - ew("fused", 1e10);
  const double mat_gain = ew("materialised", 1e9) - ew("materialised", 1e10);
  EXPECT_GT(fused_gain, 0);
  EXPECT_GT(fused_gain - mat_gain, 0.1 * fused_gain);
}

// Materialised attention's forward softmax runs in place on one head's S x S scores right after the
// product that wrote them: a planted exp-pass rate that is fast up to one head's 2 MiB (S = 512) and
// ten times slower from 4 MB moves exactly that pass (4 heads' 8 MiB) by the difference of the rates
// (at d_model 256 the GELU passes, 4 MiB and over, stay at the slow rate).
TEST(CostModel, MaterialisedForwardSoftmaxRunsAtTheRateOfOneHeadsScores) {
  const double fast = 1e10, slow = 1e9;
  auto ew = [&](double small_rate) {
    Term gelu = flat_stream(Backend::cpu, "gelu", slow);
    gelu.points = {{json{{"bytes", 1e3}}, small_rate, "gelu/small"},
                   {json{{"bytes", 2.1e6}}, small_rate, "gelu/head"},
                   {json{{"bytes", 4e6}}, slow, "gelu/layer"},
                   {json{{"bytes", 1e10}}, slow, "gelu/large"}};
    const std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                                     gelu};
    const json j = {{"model", "transformer"}, {"layers", 1}, {"d_model", 256}, {"heads", 4}, {"seq_len", 512},
                    {"batch", 1}, {"attention", "materialised"}};
    return *part(predict(terms, config_from_json(j), Backend::cpu), "elementwise")->estimate.seconds;
  };
  const double forward_bytes = 2.0 * 4.0 * 4 * 512.0 * 512.0;  // read and write, 4-byte scores, 4 heads
  EXPECT_NEAR(ew(slow) - ew(fast), forward_bytes * (1 / slow - 1 / fast), 1e-12);
}

namespace {
// A constant CPU term as the pitfalls family publishes one (seconds per step).
Term cpu_constant(const std::string& name, const json& where, double seconds) {
  Term t;
  t.family = "pitfalls";
  t.name = name;
  t.backend = Backend::cpu;
  t.where = where;
  t.form = "constant";
  t.value = seconds;
  t.records = {"pitfalls/" + name};
  return t;
}
}  // namespace

// A CPU step's redundant copy where no copy of its kind was measured: three times what it copies
// (the source read, the destination's lines read, then written) at the streaming rate (one thread's
// where measured); a planted halved streaming rate doubles it, and a copy measured as such wins over
// the fallback.
TEST(CostModel, UnmeasuredCpuCopyIsAStreamingPassOfWhatItCopies) {
  const double rate = 1e10;
  const std::vector<Term> terms{flat_stream(Backend::cpu, "", rate)};
  StepConfig c = config_from_json({{"model", "mlp"}, {"width", 64}, {"depth", 4}, {"batch", 64},
                                   {"redundant_copy", "weights"}});
  const Part* copy = nullptr;
  Prediction p = predict(terms, c, Backend::cpu);
  copy = part(p, "redundant_copy");
  ASSERT_TRUE(copy && copy->estimate.seconds) << (copy ? copy->estimate.cannot_say : "no part");
  EXPECT_NEAR(*copy->estimate.seconds, 3.0 * 4.0 * parameter_count(c) / rate, 1e-15);
  EXPECT_NE(copy->estimate.note.find("no copy of this kind measured"), std::string::npos) << copy->estimate.note;
  const double weights_copy = *copy->estimate.seconds;
  const Prediction slower = predict({flat_stream(Backend::cpu, "", rate / 2)}, c, Backend::cpu);
  EXPECT_NEAR(*part(slower, "redundant_copy")->estimate.seconds, 2 * weights_copy, 1e-15);
  c.redundant_copy = "batch";  // inputs (width 64 here) and an int label per sample
  const Prediction batch = predict(terms, c, Backend::cpu);
  EXPECT_NEAR(*part(batch, "redundant_copy")->estimate.seconds, 3.0 * 64 * (4.0 * 64 + 4.0) / rate, 1e-15);
  std::vector<Term> with_measured = terms;
  with_measured.push_back(cpu_constant("redundant_copy", {{"kind", "batch"}, {"width", 64}, {"batch", 64}}, 7e-6));
  const Prediction measured_copy = predict(with_measured, c, Backend::cpu);
  EXPECT_DOUBLE_EQ(*part(measured_copy, "redundant_copy")->estimate.seconds, 7e-6);
  // On the GPU a copy may cross the bus: without a measured one there it cannot say.
  const Prediction gpu = predict(terms, c, Backend::cuda);
  EXPECT_FALSE(part(gpu, "redundant_copy")->estimate.seconds.has_value());
  // A host copy runs on one thread: where one thread's streaming rate was measured it prices the
  // copy (a planted one-thread rate a quarter of the all-core one makes it four times dearer).
  std::vector<Term> with_one = terms;
  with_one.push_back(flat_stream(Backend::cpu, "one_thread", rate / 4));
  c.redundant_copy = "weights";
  const Prediction on_one = predict(with_one, c, Backend::cpu);
  const Part* one = part(on_one, "redundant_copy");
  ASSERT_TRUE(one && one->estimate.seconds);
  EXPECT_NEAR(*one->estimate.seconds, 4 * weights_copy, 1e-15);
  EXPECT_NE(one->estimate.note.find("on one thread"), std::string::npos) << one->estimate.note;
}

// The copy's rate is read where its bytes are between two steps: at the step's working set plus the
// copy's two buffers, not at the copy's own size. A planted rate that drops from in-cache to memory
// between 1 MB and 4 MB: the 16 KiB activation copy of a 64-wide step (all of it in cache) runs at
// the cache rate; the 256 KiB one of a 1024-wide step, amid its 8 MB of weights and gradients, at the
// memory rate.
TEST(CostModel, UnmeasuredCpuCopyRunsAtTheRateOfTheStepsWorkingSet) {
  const double cache = 1e11, memory = 1e10;
  Term t = flat_stream(Backend::cpu, "one_thread", cache);
  t.points = {{json{{"bytes", 1e3}}, cache, "stream/small"},
              {json{{"bytes", 1e6}}, cache, "stream/cache"},
              {json{{"bytes", 4e6}}, memory, "stream/memory"},
              {json{{"bytes", 1e10}}, memory, "stream/large"}};
  const std::vector<Term> terms{flat_stream(Backend::cpu, "", cache), t};
  StepConfig small = config_from_json({{"model", "mlp"}, {"width", 64}, {"depth", 3}, {"batch", 64},
                                       {"redundant_copy", "activation"}});
  ASSERT_LT(working_set_bytes(small, 64) + 2 * 64 * 64 * 4.0, 1e6);
  const Prediction small_step = predict(terms, small, Backend::cpu);
  const Part* in_cache = part(small_step, "redundant_copy");
  ASSERT_TRUE(in_cache && in_cache->estimate.seconds);
  EXPECT_NEAR(*in_cache->estimate.seconds, 3.0 * 64 * 64 * 4.0 / cache, 1e-15);
  StepConfig big = small;
  big.width = 1024;
  big.input = 64;
  ASSERT_GT(working_set_bytes(big, 64), 4e6);
  const Prediction big_step = predict(terms, big, Backend::cpu);
  const Part* from_memory = part(big_step, "redundant_copy");
  ASSERT_TRUE(from_memory && from_memory->estimate.seconds);
  EXPECT_NEAR(*from_memory->estimate.seconds, 3.0 * 64 * 1024 * 4.0 / memory, 1e-15);
  EXPECT_NE(from_memory->estimate.note.find("the step's working set"), std::string::npos) << from_memory->estimate.note;
}

// A CPU step reading its loss waits for no device: without a measured read it is priced at zero and
// says why; a measured read is used as it is; on the GPU nothing stands in for a missing one.
TEST(CostModel, UnmeasuredCpuLossReadCostsNothing) {
  const std::vector<Term> terms{flat_stream(Backend::cpu, "", 1e10)};
  const StepConfig c = config_from_json({{"model", "mlp"}, {"width", 64}, {"depth", 4}, {"batch", 64},
                                         {"loss_read_every", 1}});
  const Prediction cpu = predict(terms, c, Backend::cpu);
  const Part* sync = part(cpu, "host_sync");
  ASSERT_TRUE(sync && sync->estimate.seconds);
  EXPECT_EQ(*sync->estimate.seconds, 0.0);
  EXPECT_NE(sync->estimate.note.find("waits for no device"), std::string::npos);
  std::vector<Term> with_read = terms;
  with_read.push_back(cpu_constant("host_sync", json::object(), 2e-6));
  const Prediction with_measured_read = predict(with_read, c, Backend::cpu);
  EXPECT_DOUBLE_EQ(*part(with_measured_read, "host_sync")->estimate.seconds, 2e-6);
  const Prediction gpu = predict(terms, c, Backend::cuda);
  EXPECT_FALSE(part(gpu, "host_sync")->estimate.seconds.has_value());
}

namespace {
// A softmax_xent table (the CPU MLP step's loss, vectorize/softmax_xent) of one rate, on `threads`.
Term xent_table(const std::string& threads, double logits_per_s) {
  Term t;
  t.family = "vectorize", t.name = "softmax_xent", t.backend = Backend::cpu, t.where = {{"threads", threads}};
  t.form = "table", t.axes = {"logits"}, t.y = "logits_per_s";
  for (double n : {1e3, 1e6}) {
    const std::string rec = "vectorize/softmax_xent/" + threads + "/" + std::to_string(n);
    t.points.push_back({json{{"logits", n}}, logits_per_s, rec});
    t.records.push_back(rec);
  }
  return t;
}
}  // namespace

// The native CPU MLP step's loss (two exponentials per logit) at the measured seconds of the step's own
// loss code instead of a plain pass over its bytes: on one thread for a step run on one thread or
// below the parallel-work size (rows x classes x 8), on all cores in rows mode and above it. A planted
// slower rate moves exactly that part, by the logits over the rate; the other threads' rate, the GPU
// and a step PyTorch runs do not move; the part names the record.
// SGD with momentum at the measured rate of the step's own update (stream_bandwidth op sgd on all
// cores, sgd_one_thread on one), on the threads the step runs it on; Adam and the GPU keep theirs; a
// planted halved rate doubles exactly the part it prices.
TEST(CostModel, TheSgdUpdateIsPricedAtItsOwnMeasuredRate) {
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10),
                             flat_stream(Backend::cpu, "one_thread", 5e9), flat_stream(Backend::cuda, "", 1e12),
                             flat_matmul("matmul", Backend::cuda, "nn", 1e13)};
  auto opt = [&](const StepConfig& c, Backend be = Backend::cpu) { return part_seconds(terms, c, be, "optimizer"); };
  auto mlp = [](int width, int batch, const char* optimizer = "sgd") {
    return config_from_json({{"model", "mlp"}, {"width", width}, {"depth", 4}, {"batch", batch}, {"optimizer", optimizer}});
  };
  const StepConfig serial = mlp(64, 64), all = mlp(512, 512), adam = mlp(512, 512, "adam");
  ASSERT_TRUE(runs_on_one_thread(serial, Backend::cpu));
  ASSERT_FALSE(runs_on_one_thread(all, Backend::cpu));
  const double bytes_serial = 20.0 * parameter_count(serial), bytes_all = 20.0 * parameter_count(all);
  EXPECT_NEAR(opt(serial), bytes_serial / 5e9, 1e-12);  // a plain pass on one thread
  EXPECT_NEAR(opt(all), bytes_all / 1e10, 1e-12);
  const double adam_before = opt(adam), gpu_before = opt(all, Backend::cuda);
  terms.push_back(flat_stream(Backend::cpu, "sgd", 2e10));
  terms.push_back(flat_stream(Backend::cpu, "sgd_one_thread", 8e9));
  EXPECT_NEAR(opt(serial), bytes_serial / 8e9, 1e-12);
  EXPECT_NEAR(opt(all), bytes_all / 2e10, 1e-12);
  const Prediction p = predict(terms, all, Backend::cpu);
  EXPECT_NE(part(p, "optimizer")->estimate.note.find("the step's own update"), std::string::npos)
      << part(p, "optimizer")->estimate.note;
  EXPECT_TRUE(std::any_of(part(p, "optimizer")->estimate.records.begin(), part(p, "optimizer")->estimate.records.end(),
                          [](const std::string& r) { return r.rfind("stream/sgd", 0) == 0; }));
  terms.back() = flat_stream(Backend::cpu, "sgd_one_thread", 4e9);  // planted: the one-thread rate halved
  EXPECT_NEAR(opt(serial), bytes_serial / 4e9, 1e-12);
  EXPECT_NEAR(opt(all), bytes_all / 2e10, 1e-12);
  EXPECT_NEAR(opt(adam), adam_before, 1e-15);
  EXPECT_NEAR(opt(all, Backend::cuda), gpu_before, 1e-15);
}

// update_in_step over the bytes and the step's rows: a step at a measured rows reads that row's share,
// a step between them one between the two, and a table over bytes alone (older files) still applies.
TEST(CostModel, TheUpdatesInStepShareFollowsTheStepsRows) {
  Term t;
  t.family = "gemm", t.name = "update_in_step", t.backend = Backend::cpu;
  t.where = {{"precision", "fp32"}, {"threads", "one"}};
  t.form = "table", t.axes = {"bytes", "rows"}, t.y = "fraction";
  t.points = {{json{{"bytes", 4e6}, {"rows", 32}}, 0.95, "seq/rows=32"}, {json{{"bytes", 4e6}, {"rows", 512}}, 0.6, "seq/rows=512"}};
  t.records = {"seq/rows=32", "seq/rows=512"};
  const std::vector<Term> terms = {t};
  EXPECT_NEAR(*pass_in_step_fraction(terms, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 32).seconds, 0.95, 1e-12);
  EXPECT_NEAR(*pass_in_step_fraction(terms, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 512).seconds, 0.6, 1e-12);
  const double mid = *pass_in_step_fraction(terms, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 128).seconds;
  EXPECT_GT(mid, 0.6);
  EXPECT_LT(mid, 0.95);
  const Estimate below = pass_in_step_fraction(terms, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 1);
  EXPECT_NEAR(*below.seconds, 0.95, 1e-12);  // clamped to the smallest rows measured
  EXPECT_TRUE(below.outside_measured);
  EXPECT_FALSE(pass_in_step_fraction(terms, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 0).seconds)
      << "a table over rows needs the step's rows";
  Term old = t;
  old.axes = {"bytes"};
  old.points = {{json{{"bytes", 4e6}}, 0.7, "seq/old"}};
  EXPECT_NEAR(*pass_in_step_fraction({old}, Backend::cpu, "update_in_step", "fp32", "one", 4e6, 32).seconds, 0.7, 1e-12);
}

TEST(CostModel, PlantedSlowLossMovesTheNativeMlpsElementwise) {
  std::vector<Term> terms = {flat_matmul("matmul", Backend::cpu, "nn", 1e11), flat_stream(Backend::cpu, "", 1e10)};
  auto ew = [&](const StepConfig& c, Backend be = Backend::cpu) { return part_seconds(terms, c, be, "elementwise"); };
  auto mlp = [](int width, int batch, const char* precision = "fp32") {
    return config_from_json({{"model", "mlp"}, {"width", width}, {"depth", 4}, {"batch", batch}, {"precision", precision}});
  };
  const StepConfig serial = mlp(64, 64);                // under the serial FLOPs: one thread
  const StepConfig small = mlp(256, 32);                // all cores, 512 logits x 8 under the parallel work
  const StepConfig large = mlp(256, 512, "bf16");       // 8192 logits x 8 over it (no rows mode in BF16)
  ASSERT_TRUE(runs_on_one_thread(serial, Backend::cpu));
  ASSERT_FALSE(runs_on_one_thread(small, Backend::cpu));
  StepConfig eager = serial;
  eager.framework = Framework::pytorch_eager;
  const double plain_serial = ew(serial), plain_small = ew(small), plain_large = ew(large), plain_eager = ew(eager);
  ASSERT_GT(plain_serial, 0);
  // The plain pass the loss was: 12 bytes per logit at the streaming rate.
  const double pass = [](double logits) { return 12.0 * logits / 1e10; }(64 * 16);
  terms.push_back(xent_table("one", 1e8));
  terms.push_back(xent_table("all", 2e8));
  EXPECT_NEAR(ew(serial), plain_serial - pass + 64 * 16 / 1e8, 1e-12);
  EXPECT_NEAR(ew(small), plain_small - 12.0 * 32 * 16 / 1e10 + 32 * 16 / 1e8, 1e-12);
  EXPECT_NEAR(ew(large), plain_large - 12.0 * 512 * 16 / 1e10 + 512 * 16 / 2e8, 1e-12);
  const Prediction with = predict(terms, serial, Backend::cpu);
  const Part* x = part(with, "elementwise");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(std::any_of(x->estimate.records.begin(), x->estimate.records.end(),
                          [](const std::string& r) { return r.rfind("vectorize/softmax_xent/one/", 0) == 0; }));
  EXPECT_NE(x->what.find("softmax_xent"), std::string::npos) << x->what;
  // Planted: the one-thread rate halved moves the one-thread steps by the loss's seconds, not the other.
  const double before_serial = ew(serial), before_large = ew(large);
  terms[2] = xent_table("one", 5e7);
  EXPECT_NEAR(ew(serial), before_serial + 64 * 16 / 1e8, 1e-12);
  EXPECT_NEAR(ew(large), before_large, 1e-15);
  // Rows mode (FP32, two threads, 32 rows each or more): each thread runs its rows' loss.
  Term threads;
  threads.family = "vectorize", threads.name = "cpu_threads", threads.backend = Backend::cpu;
  threads.form = "constant", threads.unit = "count", threads.value = 2, threads.records = {"vectorize/axpy/openmp"};
  const StepConfig rows = mlp(256, 64);
  const double one_rows = ew(rows);
  terms.push_back(threads);
  EXPECT_NEAR(ew(rows), one_rows - 64 * 16 / 5e7 + 64 * 16 / 2e8, 1e-12);
  // Neither PyTorch's step nor the GPU reads it.
  EXPECT_NEAR(ew(eager), plain_eager, 1e-15);
  EXPECT_FALSE(softmax_xent_seconds(terms, Backend::cuda, "one", 1e4).seconds);
}
