// Planted twins of the test helpers: each helper must report a failure on the input it guards
// against, or the tests that lean on it could pass while checking nothing.
#include <omp.h>

#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/common/non_empty.h"
#include "tests/common/openmp_threads.h"

TEST(TestHelpers, NonEmptyFailsOnAnEmptyList) {
  EXPECT_NONFATAL_FAILURE(EXPECT_TRUE(gtb_test::non_empty(std::vector<int>{}, "the planted list")),
                          "the planted list is empty");
  EXPECT_FATAL_FAILURE(ASSERT_TRUE(gtb_test::non_empty(std::vector<int>{}, "the planted list")),
                       "the planted list is empty");
}

TEST(TestHelpers, NonEmptyPassesOnAList) { EXPECT_TRUE(gtb_test::non_empty(std::vector<int>{7}, "a list")); }

TEST(TestHelpers, OpenMPThreadsCheckFailsOnACountReadOnce) {
  // The planted defect: the count read once and kept, blind to omp_set_num_threads.
  EXPECT_NONFATAL_FAILURE(EXPECT_TRUE(gtb_test::follows_openmp_threads([] {
                            static const int at_first_call = omp_get_max_threads();
                            return at_first_call;
                          })),
                          "after omp_set_num_threads");
}

TEST(TestHelpers, OpenMPThreadsCheckFailsOnAConstant) {
  EXPECT_NONFATAL_FAILURE(
      EXPECT_TRUE(gtb_test::follows_openmp_threads([] { return omp_get_max_threads() + 100; })),
      "with omp_get_max_threads() = ");
}

TEST(TestHelpers, OpenMPThreadsCheckPassesOnTheTeamSize) {
  EXPECT_TRUE(gtb_test::follows_openmp_threads([] { return omp_get_max_threads(); }));
}
