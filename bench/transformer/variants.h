// What the transformer's CPU and GPU records share: the configuration their axes name, and a workload
// registered once per attention variant, so the two backends' records keep the same names.
#pragma once

#include <functional>
#include <string>

#include "gtb/gtb.h"
#include "kernels/transformer/block.h"

namespace gtb::xfmr {

// The block stack a record's axes name (validated).
inline Config config_of(gtb::State& st) {
  Config c;
  c.layers = st.get_int("layers", 1);
  c.d_model = st.get_int("d_model", 1);
  c.heads = st.get_int("heads", 1);
  c.seq_len = st.get_int("seq_len", 1);
  c.batch = st.get_int("batch", 1);
  c.validate();
  return c;
}

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
