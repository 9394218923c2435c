// A loop of checks over an empty list checks nothing and passes: tests assert the list holds
// something first, with this, so that an empty list is a failure that names the list.
#pragma once

#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace gtb_test {

template <class Container>
::testing::AssertionResult non_empty(const Container& c, const std::string& what) {
  if (std::empty(c)) return ::testing::AssertionFailure() << what << " is empty: the checks over it would check nothing";
  return ::testing::AssertionSuccess() << what << " holds " << std::size(c);
}

}  // namespace gtb_test
