// The savings validation on the synthetic cost fixture (tests/fixtures/cost/cost_synthetic.json: round
// numbers, not measurements): pairs declared from step configurations, each side predicted without
// the pair's own family, the measured saving's noise from the records' samples, the scoring rule at
// its edges, the ranking agreement, and bad pair declarations.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/document/results.h"
#include "harness/model/savings.h"

using namespace gtb;
using namespace gtb::cost;

namespace {

json synthetic_document() { return load_document(std::string(GTB_FIXTURE_DIR) + "/cost_synthetic.json"); }

json mlp(const std::string& precision, int width = 256) {
  return {{"model", "mlp"}, {"width", width}, {"depth", 4},          {"batch", 256},
          {"precision", precision}, {"optimizer", "sgd"}, {"activation", "relu"}, {"input_bytes_per_sample", 0}};
}

// A record of `n` samples spread +-`spread` (relative) around `median` seconds.
Record record(const std::string& id, double median, double spread, int n = 40) {
  Record r;
  r.id = id;
  r.status = Status::ok;
  r.value = 1.0 / median;
  for (int i = 0; i < n; ++i) r.samples.push_back(median * (1.0 + spread * (2.0 * (i + 0.5) / n - 1.0)));
  return r;
}

// The fixture prices BF16 on its GPU (its CPU has no BF16 GEMM term): the pairs are GPU steps.
Step step(const std::string& id, double seconds, const json& config, const std::string& family = "train") {
  return {family, id, Backend::cuda, seconds, config};
}

// The fixture's terms, and a BF16 GEMM term of the pairs' own family a thousand times faster than the
// GEMM family's: a prediction that used it would show.
std::vector<Term> terms_with_own() {
  std::vector<Term> t = terms_from_document(synthetic_document());
  for (const Term& x : std::vector<Term>(t))
    if (x.name == "matmul" && x.backend == Backend::cuda && x.where.value("precision", "") == "bf16") {
      Term own = x;
      own.family = "train";
      for (auto& p : own.points) p.y *= 1000;
      t.insert(t.begin(), own);  // first: where several terms match, the first one found prices
    }
  return t;
}

struct Case {
  std::vector<Term> terms = terms_with_own();
  std::vector<Step> steps;
  std::vector<Record> records;
  std::vector<Pair> pairs;
  // An fp32 -> bf16 pair of width `w` measured at a and b seconds with samples `spread` apart.
  void add(int w, double a, double b, double spread = 0.01, int n = 40) {
    const std::string ida = "train/precision/x/cuda/w" + std::to_string(w) + "/fp32",
                      idb = "train/precision/x/cuda/w" + std::to_string(w) + "/bf16";
    steps.push_back(step(ida, a, mlp("fp32", w)));
    steps.push_back(step(idb, b, mlp("bf16", w)));
    records.push_back(record(ida, a, spread, n));
    records.push_back(record(idb, b, spread, n));
    auto p = pairs_differing_in({steps[steps.size() - 2], steps.back()}, "precision", {json("fp32")}, json("bf16"), "bf16");
    for (auto& x : p) x.family = "train";
    pairs.insert(pairs.end(), p.begin(), p.end());
  }
  // The model's own A and B at width w, from the terms of every family but train.
  std::pair<double, double> sides(int w) const {
    std::vector<Term> others;
    for (const auto& t : terms)
      if (t.family != "train") others.push_back(t);
    const auto a = predict(others, config_from_json(mlp("fp32", w)), Backend::cuda).total.seconds,
               b = predict(others, config_from_json(mlp("bf16", w)), Backend::cuda).total.seconds;
    EXPECT_TRUE(a && b);
    return {a ? *a : 0.0, b ? *b : 0.0};
  }
  // The model's saving, A - B (a scale for the measured steps).
  double predicted(int w) const { return sides(w).first - sides(w).second; }
  // The share of the step it saves, (A - B) / A: the predicted saving is that share of the measured A.
  double share(int w) const { return predicted(w) / sides(w).first; }
};

}  // namespace

TEST(Savings, PairsAreTheStepsThatDifferInOneKeyOfOneWorkload) {
  const std::vector<Step> s = {step("f/w/a/cpu/1", 1, mlp("fp32")), step("f/w/b/cpu/1", 1, mlp("bf16")),
                               step("f/w/c/cpu/1", 1, mlp("bf16", 512)),  // differs in width too
                               step("f/other/a/cpu/1", 1, mlp("bf16"))};   // another workload
  const auto p = pairs_differing_in(s, "precision", {json("fp32")}, json("bf16"), "bf16");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].a, "f/w/a/cpu/1");
  EXPECT_EQ(p[0].b, "f/w/b/cpu/1");
  EXPECT_EQ(p[0].change, "precision fp32 -> bf16");
  // A key absent on one side is its default: micro-batches against the whole batch.
  json m = mlp("fp32");
  m["micro_batches"] = 4;
  const auto q = pairs_differing_in({step("f/g/x/cpu/4", 2, m), step("f/g/x/cpu/1", 1, mlp("fp32"))}, "micro_batches",
                                    {4}, nullptr, "larger_batch", "1");
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].change, "micro_batches 4 -> 1");
}

TEST(Savings, PublishedPairsRoundTripAndBadOnesAreRefusedByName) {
  json data = json::object();
  write_pairs(data, {{"", "bf16", "precision fp32 -> bf16", "a/1", "b/1"}});
  json doc = {{"findings", {{"fam", {{"pairs", data["cost_pairs"]}}}}}};
  const auto p = pairs_from_document(doc);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].family, "fam");
  EXPECT_EQ(p[0].b, "b/1");
  EXPECT_THROW(pair_from_json({{"a", "x"}, {"b", "y"}}, "fam"), std::runtime_error);  // no fix
  try {
    pair_from_json({{"fix", "bf16"}, {"a", "x"}, {"b", "x"}}, "fam");
    ADD_FAILURE() << "a pair of one record accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("findings.fam.pairs"), std::string::npos) << e.what();
  }
  doc["findings"]["fam"]["pairs"] = "not a list";
  EXPECT_THROW(pairs_from_document(doc), std::runtime_error);
  EXPECT_TRUE(pairs_from_document({{"findings", json::object()}}).empty());  // an older file: none
}

TEST(Savings, PredictsEachSideWithoutThePairsOwnFamilyAndScoresAtTheEdges) {
  Case c;
  // The predicted saving is the model's share of the step (here 49 %), at the measured A's time: an
  // A measured at twice the model's own (a host at another speed) doubles it.
  const double share = c.share(1024), step_a = 2 * c.sides(1024).first, want = share * step_a;
  ASSERT_GT(share, 0.2);
  // Measured 1.3 x the predicted saving: 0.3 x want off, 23 % of the measured saving.
  c.add(1024, step_a, step_a - 1.3 * want);
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_EQ(v.rows.size(), 1u);
  const SavingRow& r = v.rows[0];
  EXPECT_EQ(r.status, "scored") << r.why << r.predicted_a.cannot_say;
  ASSERT_TRUE(r.predicted_s && r.predicted_share);
  EXPECT_NEAR(*r.predicted_share, share, 1e-12);  // the train family's planted matmul term was left out
  EXPECT_NEAR(*r.predicted_s, want, 1e-12 * step_a);
  EXPECT_TRUE(r.sign_ok);
  EXPECT_TRUE(r.within);
  EXPECT_NEAR(r.allowed_s, 0.25 * 1.3 * want, 1e-12 * step_a);
  // Measured 1.4 x: 0.4 x want off, 29 % of it and over 3 % of the step.
  c = Case();
  c.add(1024, step_a, step_a - 1.4 * want);
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "scored");
  EXPECT_FALSE(v.rows[0].within);
  EXPECT_EQ(v.passed, 0);
  // A small measured saving (10 % of the step): 3 % of the step is the larger tolerance.
  c = Case();
  c.add(1024, step_a, 0.9 * step_a);
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_NEAR(v.rows[0].allowed_s, 0.03 * step_a, 1e-12 * step_a);
  EXPECT_FALSE(v.rows[0].within);  // 49 % predicted
  // The measured step got slower: the wrong sign fails whatever the size.
  c = Case();
  c.add(1024, step_a, step_a + 0.5 * want);
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_FALSE(v.rows[0].sign_ok);
  EXPECT_FALSE(v.rows[0].within);
}

TEST(Savings, ASavingInsideItsOwnNoiseIsNotScored) {
  Case c;
  const double want = c.predicted(1024), step_a = 20 * want;
  // Samples spread +-20 % around each median: a 1 % saving is inside the medians' intervals.
  c.add(1024, step_a, step_a * 0.99, 0.2);
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "in_noise");
  EXPECT_EQ(v.scored, 0);
  ASSERT_TRUE(v.rows[0].measured);
  EXPECT_GT(v.rows[0].measured->noise_s, 0.01 * step_a);
  // Too few samples to say how noisy a median is: not scored either, and said why.
  c = Case();
  c.add(1024, step_a, step_a * 0.5, 0.01, 4);
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "cannot_say");  // not estimable is not "inside its noise"
  EXPECT_NE(v.rows[0].why.find("too few samples"), std::string::npos) << v.rows[0].why;
  EXPECT_FALSE(std::isfinite(v.rows[0].measured->noise_s));
  // A pair whose record is not in the file says which.
  c = Case();
  c.add(1024, step_a, step_a * 0.5);
  c.records.pop_back();
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "cannot_say");
  EXPECT_NE(v.rows[0].why.find(c.pairs[0].b), std::string::npos) << v.rows[0].why;
}

namespace {
// Gives a record of a file of several runs its merged median and each run's median.
void with_runs(Record& r, double median, const std::vector<double>& medians) {
  r.stats = Stats{};
  r.stats->median = median;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    RunStat x;
    x.run = int(i) + 1;
    x.stats = Stats{};
    x.stats->median = medians[i];
    r.runs.push_back(x);
  }
}
}  // namespace

// A file of several runs: a saving the records' own samples call clear, but whose runs measured it
// with opposite signs, is inside its noise (half the range of the runs' savings); runs that agree
// leave it scored. A record whose runs are missing keeps the samples' noise.
TEST(Savings, RunsThatDisagreeMakeASavingNoise) {
  Case c;
  const double want = c.predicted(1024), step_a = 20 * want;
  c.add(1024, step_a, step_a * 0.95);  // a 5 % saving, samples +-1 %: clear on its own
  auto runs = [](Record& r, const std::vector<double>& medians) { with_runs(r, r.samples[r.samples.size() / 2], medians); };
  const double b = step_a * 0.95;
  runs(c.records[0], {step_a, step_a * 0.88, step_a});
  runs(c.records[1], {b, b, b * 1.02});  // the runs' savings: +5 %, -7 %, +3.1 % of A
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_TRUE(v.rows[0].measured);
  EXPECT_EQ(v.rows[0].status, "in_noise") << v.rows[0].measured->noise_s;
  EXPECT_NEAR(v.rows[0].measured->run_spread_s, (0.05 + 0.07) / 2 * step_a, 1e-3 * step_a);
  // Runs that agree: scored as before.
  c.records[0].runs.clear(), c.records[1].runs.clear();
  runs(c.records[0], {step_a, step_a * 1.001, step_a});
  runs(c.records[1], {b, b, b * 1.001});
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "scored");
  EXPECT_LT(v.rows[0].measured->run_spread_s, 0.01 * step_a);
  // One record without runs: the samples' noise alone.
  c.records[1].runs.clear();
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "scored");
  EXPECT_EQ(v.rows[0].measured->run_spread_s, 0.0);
}

// One run of several repetitions (gtb run --repetitions R): each repetition's samples tight, but the
// repetitions of A met the machine at two speeds. Pooled, the samples call a 5 % saving clear; the
// repetitions' medians put it inside A's noise. Repetitions that agree leave it scored.
TEST(Savings, RepetitionsThatDisagreeMakeASavingNoise) {
  Case c;
  const double want = c.predicted(1024), step_a = 20 * want, b = step_a * 0.95;
  c.add(1024, step_a, b, 0.01, 60);
  auto regroup = [](Record& r, const std::vector<double>& levels) {
    const std::vector<double> one = r.samples;  // 60 samples +-1 % around the median
    r.samples.clear();
    r.sample_groups.clear();
    for (std::size_t g = 0; g < levels.size(); ++g) {
      std::vector<double> part;
      for (std::size_t i = g; i < one.size(); i += levels.size()) part.push_back(one[i] * levels[g]);
      add_sample_group(r, part);
    }
  };
  regroup(c.records[0], {1.0, 1.0, 1.0});
  regroup(c.records[1], {1.0, 1.0, 1.0});
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_TRUE(v.rows[0].measured);
  EXPECT_EQ(v.rows[0].status, "scored") << v.rows[0].measured->noise_s;
  const double calm = v.rows[0].measured->noise_s;
  // A's third repetition ran 1.3 times slower (its medians' half range: 15 % of A).
  regroup(c.records[0], {1.0, 1.0, 1.3});
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.rows[0].status, "in_noise") << v.rows[0].measured->noise_s;
  EXPECT_GT(v.rows[0].measured->noise_s, 0.1 * step_a);
  EXPECT_GT(v.rows[0].measured->noise_s, 5 * calm);
}

// A file of several runs: the measured saving is the median of the savings the runs measured, A and
// B paired by run. A machine that ran A slow in one run and fast in the others (B alike) gives the
// runs' saving, not the difference of the two records' pooled medians; with one run, the medians'.
TEST(Savings, TheMeasuredSavingPairsTheRuns) {
  Case c;
  const double s = 20 * c.predicted(1024);
  // The steps' seconds are the median of their runs' own (each run's median at the steps' scale).
  // The runs: A at s, 2 s, 3 s; B at 0.5 s, 2.5 s, 2.9 s: the runs' savings 0.5, -0.5, 0.1 s.
  c.add(1024, 2 * s, 2.5 * s);
  with_runs(c.records[0], 2 * s, {s, 2 * s, 3 * s});
  with_runs(c.records[1], 2.5 * s, {0.5 * s, 2.5 * s, 2.9 * s});
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_TRUE(v.rows[0].measured);
  EXPECT_NEAR(v.rows[0].measured->seconds, 0.1 * s, 1e-9 * s);  // not A - B (-0.5 s)
  EXPECT_EQ(v.rows[0].measured->paired_runs, 3);
  EXPECT_NEAR(v.rows[0].measured->run_spread_s, 0.5 * s, 1e-9 * s);
  // One record without runs: the two medians' difference, as before.
  c.records[1].runs.clear();
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_NEAR(v.rows[0].measured->seconds, -0.5 * s, 1e-9 * s);
  EXPECT_EQ(v.rows[0].measured->paired_runs, 0);
}

TEST(Savings, RepeatedWithinRunsTheSavingIsTheDifferenceOfTheMedians) {
  Case c;
  const double x = 20 * c.predicted(1024);
  // Steps at the median of their runs' medians: A 1.3 x, B 0.95 x.
  c.add(1024, 1.3 * x, 0.95 * x);
  with_runs(c.records[0], 1.2 * x, {1.0 * x, 1.3 * x, 1.3 * x});  // all samples: median 1.2 x
  with_runs(c.records[1], 1.0 * x, {0.95 * x, 0.95 * x, 1.25 * x});  // 1.0 x; runs' savings .05, .35, .05 x
  auto groups = [&](std::vector<std::int64_t> g) {
    for (Record& r : c.records) r.sample_groups = g;
  };
  groups({14, 13, 13});  // one group a run
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_TRUE(v.rows[0].measured);
  EXPECT_NEAR(v.rows[0].measured->seconds, 0.05 * x, 1e-9 * x);
  EXPECT_EQ(v.rows[0].measured->paired_runs, 3);
  groups({7, 7, 7, 7, 6, 6});  // two repetitions a run
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_NEAR(v.rows[0].measured->seconds, 0.2 * x, 1e-9 * x);
  EXPECT_EQ(v.rows[0].measured->paired_runs, 0);
  EXPECT_NEAR(v.rows[0].measured->run_spread_s, 0.15 * x, 1e-9 * x);  // still bounds the noise
  EXPECT_GE(v.rows[0].measured->noise_s, v.rows[0].measured->run_spread_s);
  // The noise at the scale of the medians the saving compares (1.2 x and 1.0 x), not the steps' seconds.
  const double na = median_noise(c.records[0]) * 1.2 * x, nb = median_noise(c.records[1]) * 1.0 * x;
  EXPECT_NEAR(v.rows[0].measured->noise_s, std::max(std::sqrt(na * na + nb * nb), 0.15 * x), 1e-9 * x);
}

TEST(Savings, RankingAgreementCountsTheFixesTheTwoOrdersSwap) {
  Case c;
  const double p256 = c.predicted(256), p1024 = c.predicted(1024);
  ASSERT_GT(p256, 0);
  // Each measured saving as the model has it, as a fraction of its step: the same order.
  c.add(256, 10 * p256, 9 * p256);      // predicted 10 % of the step
  c.add(1024, 4 * p1024, 3 * p1024);    // predicted 25 %
  SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_EQ(v.scored, 2);
  EXPECT_EQ(v.ranked_pairs, 1);
  EXPECT_EQ(v.discordant, 0);
  EXPECT_DOUBLE_EQ(*v.kendall_tau, 1.0);
  // The wider step measured to save a smaller share than the narrow one: the orders swap.
  c = Case();
  c.add(256, 10 * p256, 9 * p256);
  c.add(1024, 4 * p1024, 3.9 * p1024);
  v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(v.discordant, 1);
  EXPECT_DOUBLE_EQ(*v.kendall_tau, -1.0);
  const json j = to_json(v);
  EXPECT_EQ(j["discordant_pairs"], 1);
  EXPECT_EQ(j["rows"].size(), 2u);
  EXPECT_TRUE(j["rows"][0].contains("measured_noise_s"));
}

namespace {
// Rounds of a pair measured as a pair: A at `a` seconds, B at `b`, both slowed by `slow` (relative)
// in the rounds from `step_at` on, as a host whose speed stepped while the pair ran.
void with_rounds(Record& ra, const Record& rb, double a, double b, int rounds, int step_at, double slow) {
  PairedRounds p;
  p.with = rb.id;
  for (int i = 0; i < rounds; ++i) {
    const double k = i >= step_at ? 1.0 + slow : 1.0, wobble = 1.0 + 0.002 * ((i * 7) % 5 - 2);
    p.a_s.push_back(a * k * wobble);
    p.b_s.push_back(b * k * wobble);
  }
  ra.paired = {p};
}
}  // namespace

// Measured as a pair: the saving is the median of the rounds' differences with its interval, and holds
// where the two records' medians, measured apart (B during a slower stretch of the host), do not. Too
// few rounds for an interval: said, never "± 0", and not scored.
TEST(Savings, APairMeasuredAsAPairReadsItsRoundsDifferences) {
  Case c;
  const double want = c.predicted(1024), step_a = 20 * want;
  const double saving = 0.05 * step_a;
  // Apart, B's median came out 1.3 x slower than A's: "a negative saving" far outside both medians' noise.
  c.add(1024, step_a, (step_a - saving) * 1.3, 0.01);
  for (Record& r : c.records) r.stats = compute_stats(r.samples);
  SavingsValidation apart = validate_savings(c.terms, c.steps, c.pairs, c.records);
  ASSERT_TRUE(apart.rows[0].measured);
  EXPECT_LT(apart.rows[0].measured->seconds, 0);  // what the medians measured apart say
  EXPECT_EQ(apart.rows[0].measured->paired_rounds, 0);
  // The same records with their rounds: every round saw the saving, half of them after a 1.5 x step.
  with_rounds(c.records[0], c.records[1], step_a, step_a - saving, 40, 20, 0.5);
  const SavingsValidation v = validate_savings(c.terms, c.steps, c.pairs, c.records);
  const MeasuredSaving& m = *v.rows[0].measured;
  EXPECT_EQ(m.paired_rounds, 40);
  EXPECT_GT(m.seconds, 0.9 * saving);
  EXPECT_LT(m.seconds, 1.6 * saving);  // at most the slower stretch's scale
  EXPECT_TRUE(std::isfinite(m.noise_s));
  EXPECT_GT(m.noise_s, 0);
  EXPECT_LT(m.noise_s, m.seconds);  // clear of zero: the comparison holds
  EXPECT_NE(v.rows[0].status, "in_noise");
  const json j = to_json(v);
  EXPECT_EQ(j["rows"][0]["measured_paired_rounds"], 40);
  // Either record may hold the rounds (B as the side that kept them): the same saving.
  Record a = c.records[0], b = c.records[1];
  PairedRounds back{a.id, a.paired[0].b_s, a.paired[0].a_s};
  a.paired.clear();
  b.paired = {back};
  const auto e = paired_estimate(a, 1.0, b, 1.0);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->difference, m.seconds, 1e-12 * step_a);
  // Four rounds: no interval, said so, not scored.
  with_rounds(c.records[0], c.records[1], step_a, step_a - saving, 4, 2, 0.5);
  const SavingsValidation few = validate_savings(c.terms, c.steps, c.pairs, c.records);
  EXPECT_EQ(few.rows[0].status, "cannot_say");
  EXPECT_NE(few.rows[0].why.find("4 paired rounds"), std::string::npos) << few.rows[0].why;
  EXPECT_EQ(few.scored, 0);
  EXPECT_TRUE(to_json(few)["rows"][0]["measured_noise_s"].is_null());
}
