// The one reading of a hand-parsed flag (gtb compare, ab, diagnose): "--flag VALUE" or "--flag=VALUE".
#pragma once

#include <stdexcept>
#include <string>

namespace gtb::driver {

// argv[i] of a command line read by hand.
class FlagArg {
 public:
  FlagArg(int argc, char** argv, int& i) : argc_(argc), argv_(argv), i_(i), a_(argv[i]) {}
  const std::string& text() const { return a_; }
  // Whether the argument is `flag`, alone or as "flag=VALUE".
  bool is(const std::string& flag) const { return a_ == flag || a_.rfind(flag + "=", 0) == 0; }
  // The value of `flag` (for an argument that is(flag)): after the '=', else the next argument, which
  // this steps over; throws std::runtime_error("FLAG needs a value") when the line ends first.
  std::string value(const std::string& flag) {
    if (a_.size() > flag.size() && a_.compare(0, flag.size() + 1, flag + "=") == 0) return a_.substr(flag.size() + 1);
    if (i_ + 1 >= argc_) throw std::runtime_error(flag + " needs a value");
    return argv_[++i_];
  }

 private:
  int argc_;
  char** argv_;
  int& i_;
  std::string a_;
};

}  // namespace gtb::driver
