// Suites as one table of default stopping rules, registrations that change only what they state,
// and zipped axes (several params that vary together).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gtb/gtb.h"

namespace {

using I = std::vector<std::int64_t>;
using S = std::vector<std::string>;

void unused(gtb::State&) { throw std::logic_error("these cases are listed, never run"); }

auto& zipped = gtb::add("ziptest", "gemm", "z", gtb::Backend::cpu, unused)
                   .zip({"m", "n", "k"}, {{256, 256, 256}, {2048, 4096, 1024}, {1, 4096, 4096}},
                        {{256, 256, 256}, {1, 4096, 4096}})
                   .option("precision", S{"fp32", "bf16"})
                   .filter([](const gtb::json& p, const gtb::json& o, gtb::Suite s) {
                     return s == gtb::Suite::full || o.at("precision") == "fp32" || p.at("m") == 1;
                   });

auto& changed = gtb::add("ruletest", "w", "changed", gtb::Backend::cpu, unused)
                    .axis("n", I{1})
                    .rule(gtb::RuleChange().min_samples(5).warmup_seconds(0))
                    .rule(gtb::Suite::quick, gtb::RuleChange().budget_seconds(0.12))
                    .rule(gtb::Suite::full, gtb::RuleChange().budget_seconds(1.0).min_samples(9));
auto& plain = gtb::add("ruletest", "w", "plain", gtb::Backend::cpu, unused).axis("n", I{1});
auto& full_only = gtb::add("ruletest", "w", "full_only", gtb::Backend::cpu, unused).axis("n", I{1}).only(gtb::Suite::full);

auto fields(const gtb::StopRule& r) {
  return std::make_tuple(r.warmup_samples, r.warmup_seconds, r.min_samples, r.max_samples, r.noise_target,
                         r.budget_seconds, r.hard_min_samples, r.min_sample_seconds, r.max_reps);
}

std::vector<std::string> ids(const std::string& family, gtb::Suite s) {
  std::vector<std::string> out;
  for (const gtb::Record& r : gtb::planned_records(family, s)) out.push_back(r.id);
  return out;
}

}  // namespace

TEST(Zip, ParamsVaryTogetherAndReadAsAxesInIds) {
  const auto recs = gtb::planned_records("ziptest", gtb::Suite::full);
  // Three shapes (not 3 x 3 x 3) times two precisions, the zip varying fastest.
  EXPECT_EQ(ids("ziptest", gtb::Suite::full),
            (S{"ziptest/gemm/z/cpu/m=256,n=256,k=256,precision=fp32", "ziptest/gemm/z/cpu/m=2048,n=4096,k=1024,precision=fp32",
               "ziptest/gemm/z/cpu/m=1,n=4096,k=4096,precision=fp32", "ziptest/gemm/z/cpu/m=256,n=256,k=256,precision=bf16",
               "ziptest/gemm/z/cpu/m=2048,n=4096,k=1024,precision=bf16", "ziptest/gemm/z/cpu/m=1,n=4096,k=4096,precision=bf16"}));
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[1].params, (gtb::json{{"m", 2048}, {"n", 4096}, {"k", 1024}}));
  EXPECT_TRUE(recs[1].params["m"].is_number_integer());
  EXPECT_EQ(recs[1].params.begin().key(), "m");  // declaration order
  EXPECT_EQ(recs[1].options, (gtb::json{{"precision", "fp32"}}));
}

TEST(Zip, TheQuickSuiteTakesTheQuickTuplesAndTheFilterSeesTheSuite) {
  // Quick tuples {256^3, 1x4096x4096} x {fp32, bf16}, bf16 kept only for m = 1 in the quick suite.
  EXPECT_EQ(ids("ziptest", gtb::Suite::quick),
            (S{"ziptest/gemm/z/cpu/m=256,n=256,k=256,precision=fp32", "ziptest/gemm/z/cpu/m=1,n=4096,k=4096,precision=fp32",
               "ziptest/gemm/z/cpu/m=1,n=4096,k=4096,precision=bf16"}));
}

TEST(Zip, BadDeclarationsAreRejected) {
  auto bench = [] { return gtb::Bench("t", "w", "v", gtb::Backend::cpu, unused); };
  EXPECT_THROW(bench().zip({"m", "n"}, {{1, 2, 3}}), std::invalid_argument);           // a tuple of the wrong size
  EXPECT_THROW(bench().zip({"m", "n"}, {{1, 2}}, {{1}}), std::invalid_argument);        // ...in the quick list too
  EXPECT_THROW(bench().zip({"m", "n"}, {}), std::invalid_argument);                     // no values
  EXPECT_THROW(bench().zip({}, {{}}), std::invalid_argument);                           // no names
  EXPECT_THROW(bench().zip({"m", "m"}, {{1, 2}}), std::invalid_argument);               // a name twice
  EXPECT_THROW(bench().axis("k", I{1}).zip({"m", "k"}, {{1, 2}}), std::invalid_argument);  // a name of another axis
  EXPECT_THROW(bench().zip({"m", "k"}, {{1, 2}}).option("k", I{1}), std::invalid_argument);
  EXPECT_NO_THROW(bench().zip({"m", "n"}, {{1, 2}, {3, 4}}).axis("k", I{1}));
}

TEST(Suites, TheTableHoldsEachSuitesDefaultRule) {
  // The defaults every record's sampling depends on; a change here changes every stored result.
  EXPECT_EQ(fields(gtb::suite_rule(gtb::Suite::quick)),
            std::make_tuple(1, 0.01, 7, 200, 0.02, 0.25, 3, 50e-6, std::int64_t(1) << 20));
  EXPECT_EQ(fields(gtb::suite_rule(gtb::Suite::full)),
            std::make_tuple(3, 0.1, 20, 2000, 0.005, 3.0, 5, 50e-6, std::int64_t(1) << 20));
}

TEST(Suites, ARegistrationChangesOnlyTheFieldsItStates) {
  for (gtb::Suite s : {gtb::Suite::quick, gtb::Suite::full}) {
    EXPECT_EQ(fields(plain.rule_for(s)), fields(gtb::suite_rule(s)));
    gtb::StopRule want = gtb::suite_rule(s);
    want.min_samples = s == gtb::Suite::quick ? 5 : 9;  // the later, per-suite change wins
    want.warmup_seconds = 0;
    want.budget_seconds = s == gtb::Suite::quick ? 0.12 : 1.0;
    EXPECT_EQ(fields(changed.rule_for(s)), fields(want)) << gtb::to_string(s);
  }
  gtb::StopRule base;
  base.max_reps = 17;
  const gtb::StopRule r = gtb::RuleChange().noise_target(0.5).applied_to(base);
  EXPECT_EQ(r.noise_target, 0.5);
  EXPECT_EQ(r.max_reps, 17);
}

TEST(Suites, OnlyKeepsARegistrationInOneSuite) {
  auto variants = [](gtb::Suite s) {
    S v;
    for (const gtb::Record& r : gtb::planned_records("ruletest", s)) v.push_back(r.variant);
    return v;
  };
  EXPECT_EQ(variants(gtb::Suite::quick), (S{"changed", "plain"}));
  EXPECT_EQ(variants(gtb::Suite::full), (S{"changed", "plain", "full_only"}));
  EXPECT_FALSE(full_only.in_suite(gtb::Suite::quick));
  EXPECT_TRUE(full_only.in_suite(gtb::Suite::full));
  EXPECT_TRUE(zipped.in_suite(gtb::Suite::quick));
}
