// The pitfalls family's build-flag variants against float64, CPU or GPU alike: each variant on each
// flag workload at each size passes the check, within the variant's tolerance.
#pragma once

#include <cstddef>
#include <initializer_list>

#include <gtest/gtest.h>

#include "kernels/pitfalls/reference.h"

namespace gtb::test {

// run(variant, data) runs a variant into poisoned outputs and returns pitfalls::check_flag_output's
// check; tolerance(variant) is the largest relative norm error it may have.
template <class Variants, class Run, class Tolerance>
void expect_variants_match_float64(const Variants& variants, std::initializer_list<std::size_t> sizes, Run run,
                                   Tolerance tolerance) {
  namespace pf = gtb::pitfalls;
  for (std::size_t n : sizes)
    for (pf::FlagWork w : pf::kFlagWorks) {
      const pf::FlagData d = pf::make_flag_data(w, n);
      for (const auto& k : variants) {
        const pf::FlagCheck c = run(k, d);
        EXPECT_TRUE(c.ok) << k.name << " " << pf::to_string(w) << " n=" << n << ": " << c.detail;
        EXPECT_LT(c.rel_norm_err, tolerance(k)) << k.name << " " << pf::to_string(w);
      }
    }
}

}  // namespace gtb::test
