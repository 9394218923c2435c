// Record ids that were renamed: a results file written before a rename still compares with one
// written after it, because its records are read under the new id.
#pragma once

#include <string>
#include <vector>

#include "harness/document/types.h"

namespace gtb {

// One renamed variant: the records of `family` with this variant on this backend (every workload,
// every parameter) are now called `new_variant`.
struct VariantRename {
  const char* family;
  const char* old_variant;
  Backend backend;
  const char* new_variant;
};

// Every rename the families declare (gtb_add_family(... RENAMED old/backend=new), in their
// <family>.cmake), in the order of their declarations.
const std::vector<VariantRename>& variant_renames();

// Gives a record read from a results file its current variant and id; returns whether it changed.
// A record already under the current name, or under a name never renamed, is left as it is.
bool upgrade_record_id(Record& r);

// The current id for an id string (the same rule on the id alone, e.g. for a --only filter);
// unchanged when no rename applies.
std::string current_record_id(const std::string& id);

}  // namespace gtb
