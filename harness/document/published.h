// What a family publishes for the others to divide by, and where the merge puts it. A family declares
// it (include/gtb/publish.h) and its binary writes the declaration into its entry of the results'
// families array: "publishes": {concept: key of its findings data}. `gtb run` merges by that
// (make_merged_document in results.h). The concepts below are results-format keys: each names a
// kind of number (measured ceilings, peak rates), never the family that measures it.
#pragma once

#include "harness/document/types.h"

namespace gtb::published {

// {ceiling name: measured value} (GB/s; TFLOP/s for a name ending in _tflops). Merged into the
// context under the same key, context.ceilings; records naming a ceiling get pct_of_ceiling.
inline constexpr const char* kCeilings = "ceilings";
// {ceiling name: why it was not measured}. Merged into context.ceilings_missing.
inline constexpr const char* kCeilingsMissing = "ceilings_missing";
// {backend: {precision: {"tflops": x}, or x}}: the best measured matrix-multiply rates. Records with a
// "tflops" counter and info "gemm_precision" of that backend and precision get pct_of_gemm_peak.
inline constexpr const char* kPeaks = "peaks";

// Whether `what` is one of the concepts above.
bool known(const std::string& what);

// The declaration every family of a document is read with when none of its families entries
// declares anything (files written before the declarations): the data keys of that time,
// {"ceilings": "ceilings", "ceilings_missing": "ceilings_missing", "peaks": "best_rate"}.
json legacy_declaration();

}  // namespace gtb::published
