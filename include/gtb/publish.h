// A family's declaration of what it publishes for the other families (the concepts are in
// harness/document/published.h): each concept maps to a key of the family's findings data. The
// family binary writes the declaration into its entry of the results' families array.
//
//   const bool kPublished = gtb::publish("myfam", gtb::published::kCeilings, "measured");
#pragma once

#include <string>

#include "harness/document/published.h"

namespace gtb {

// Declares that `family` publishes `what` as findings.<family>.data.<data_key>. Returns true (for a
// static initialiser). Throws std::invalid_argument for an unknown concept, an empty key, or a
// concept declared twice with different keys.
bool publish(const std::string& family, const std::string& what, const std::string& data_key);
// The declarations of `family`, {concept: data_key}; an empty object when it publishes nothing.
json publications(const std::string& family);

}  // namespace gtb
