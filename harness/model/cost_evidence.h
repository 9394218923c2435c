// What a family's findings hand the cost model beside their own numbers: the terms it measured, the
// whole steps it measured, and the A/B pairs among those steps (cost_terms.h, savings.h). A family's
// findings struct derives from it and says in a comment which terms, steps and pairs it fills.
#pragma once

#include <utility>
#include <vector>

#include "harness/model/cost_terms.h"
#include "harness/model/savings.h"

namespace gtb::cost {

struct Evidence {
  std::vector<Term> terms;
  std::vector<Step> measured_steps;
  std::vector<Pair> pairs;

  // Appends pairs (pairs_differing_in's answer for one key).
  void add_pairs(std::vector<Pair> more) {
    pairs.insert(pairs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
};

// Writes all three into the family's findings data, where the registry publishes them: the terms and
// steps, then the pairs.
inline void write_evidence(json& data, const Evidence& e) {
  write_evidence(data, e.terms, e.measured_steps);
  write_pairs(data, e.pairs);
}

}  // namespace gtb::cost
