// What a call that must fail says: the message of the exception it throws, for the bad-input tests
// that check the message names the problem.
#pragma once

#include <exception>
#include <string>

namespace gtb::test {

// The message of the E that f() throws, or `none` when it returns (the test's own word for "no error").
template <class E = std::exception, class F>
std::string error_of(F&& f, const std::string& none = "no error") {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return none;
}

}  // namespace gtb::test
