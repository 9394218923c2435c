// The savings paragraph of the report: its ranking sentence agrees in number with its counts.
#include <gtest/gtest.h>

#include "harness/driver/common/render_savings.h"

namespace {

std::string ranking_of(int ranked_pairs, int discordant, double tau) {
  gtb::cost::SavingsValidation v;
  gtb::cost::SavingRow row;  // one pair inside its noise: the table has a row, the paragraph its counts
  row.pair.fix = "bf16";
  row.status = "in_noise";
  row.why = "the measured saving is inside its own noise";
  v.rows.push_back(row);
  v.scored = 4;
  v.passed = 1;
  v.ranked_pairs = ranked_pairs;
  v.discordant = discordant;
  v.kendall_tau = tau;
  return gtb::verdict::render_savings(gtb::json::object(), v);
}

}  // namespace

TEST(RenderSavings, RankingSentenceAgreesInNumber) {
  const std::string one = ranking_of(1, 1, -1.0);
  EXPECT_NE(one.find("of 1 pair of scored fixes, **1** is in the other order"), std::string::npos) << one;
  const std::string many = ranking_of(6, 2, 0.33);
  EXPECT_NE(many.find("of 6 pairs of scored fixes, **2** are in the other order"), std::string::npos) << many;
  const std::string none = ranking_of(3, 0, 1.0);
  EXPECT_NE(none.find("of 3 pairs of scored fixes, **0** are in the other order"), std::string::npos) << none;
}
