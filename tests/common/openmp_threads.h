// A kernel's reported thread count is what its records say ran, so it must be the OpenMP team it
// runs with: omp_get_max_threads() now, and the new count after omp_set_num_threads. A constant,
// or a count read once at start, fails here (a ">= 1" check passes both).
#pragma once

#include <omp.h>

#include <string>

#include <gtest/gtest.h>

namespace gtb_test {

template <class Reported>
::testing::AssertionResult follows_openmp_threads(Reported reported) {
  const int saved = omp_get_max_threads();
  std::string wrong;
  if (const int got = reported(); got != saved)
    wrong += " reports " + std::to_string(got) + " with omp_get_max_threads() = " + std::to_string(saved) + ";";
  // saved + 1 always differs from saved; 1 differs too unless the machine has one thread.
  for (int want : {saved + 1, 1}) {
    omp_set_num_threads(want);
    if (const int got = reported(); got != want)
      wrong += " reports " + std::to_string(got) + " after omp_set_num_threads(" + std::to_string(want) + ");";
  }
  omp_set_num_threads(saved);
  if (!wrong.empty()) return ::testing::AssertionFailure() << "the thread count" << wrong;
  return ::testing::AssertionSuccess();
}

}  // namespace gtb_test
