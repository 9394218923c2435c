// The price of each symptom's fix, from the cost terms a gtb run measured (docs/diagnose.md, "Pricing").
#pragma once

#include "harness/document/types.h"
#include <string>

namespace gtb::diagnose {

// Adds "pricing" to a diagnosis: the fixes ranked by saving per step with the records behind each,
// or why each cannot be priced (another GPU, no GPU records, a shape the trace did not record).
void price_diagnosis(json& diagnosis, const json& results_document, const std::string& results_label);
// Without results: what to run to price the symptoms.
void explain_unpriced(json& diagnosis);

}  // namespace gtb::diagnose
