// The readable tables printed after a run.
#pragma once

#include <ostream>

#include "harness/document/types.h"

namespace gtb::driver {

// The measurement-health lines: a warning naming each family measured on a busy machine, or one line
// saying all was well; nothing for files without health readings.
void print_health(std::ostream& os, const json& doc);
// Families, then every record (value and spread, or why it has none), then the CPU vs GPU pairs.
void print_summary(std::ostream& os, const json& doc);
// A short "k=v,k=v" text of a params/options object.
std::string short_params(const json& params, const json& options);

}  // namespace gtb::driver
