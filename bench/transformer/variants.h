// A transformer workload registered once per attention variant: one definition for the CPU and the
// GPU records, so the two backends' records keep the same names and quick-suite rule.
#pragma once

#include <functional>
#include <string>

#include "harness/runtime/gtb.h"
#include "kernels/transformer/block.h"

namespace gtb::xfmr {

using Axes = std::function<gtb::Bench&(gtb::Bench&)>;
using AttentionCase = void (*)(gtb::State&, Attention);

// `axes` gives the record's axes (and whatever else its backend sets: rules, ceilings); the rate is
// tokens/s. A variant the quick suite does not run (quick_materialised, quick_fused) is full-only.
inline void add_both_attentions(const char* workload, gtb::Backend backend, AttentionCase run, const Axes& axes,
                                const std::string& doc, bool quick_materialised, bool quick_fused) {
  for (Attention a : {Attention::materialised, Attention::fused}) {
    const bool quick = a == Attention::materialised ? quick_materialised : quick_fused;
    gtb::Bench& b = gtb::add("transformer", workload, to_string(a), backend, [run, a](gtb::State& st) { run(st, a); });
    axes(b).rate("throughput", "tokens/s", 1.0);
    b.describe(doc);
    if (!quick) b.only(gtb::Suite::full);
  }
}

}  // namespace gtb::xfmr
