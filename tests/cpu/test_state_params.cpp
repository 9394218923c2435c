// A case's bounded integer parameters and whether it has a parameter or option.
#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "gtb/gtb.h"

namespace {

gtb::Record record_with(const gtb::json& params, const gtb::json& options) {
  gtb::Record r;
  r.family = "train";
  r.params = params;
  r.options = options;
  return r;
}

}  // namespace

TEST(StateParams, BoundedIntegersAreReturnedOrRefusedWithTheFamilyInTheMessage) {
  gtb::Record r = record_with({{"batch", 32}, {"huge", 1LL << 40}, {"zero", 0}}, {{"micro_batches", 4}});
  gtb::State st(r, gtb::Suite::quick, gtb::StopRule{});
  EXPECT_EQ(st.get_int("batch", 1), 32);
  EXPECT_EQ(st.get_int("micro_batches", 1), 4) << "options are looked up too";
  EXPECT_EQ(st.get_int("zero", 0), 0);
  try {
    (void)st.get_int("zero", 1);
    ADD_FAILURE() << "0 accepted as >= 1";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "train: zero must be >= 1");
  }
  EXPECT_THROW((void)st.get_int("huge", 1), std::invalid_argument) << "beyond INT_MAX";
  EXPECT_THROW((void)st.get_int("absent", 1), std::invalid_argument);
}

TEST(StateParams, HasLooksAtParamsAndOptions) {
  gtb::Record r = record_with({{"width", 64}}, {{"optimizer", "adam"}});
  gtb::State st(r, gtb::Suite::quick, gtb::StopRule{});
  EXPECT_TRUE(st.has("width"));
  EXPECT_TRUE(st.has("optimizer"));
  EXPECT_FALSE(st.has("activation"));
}
