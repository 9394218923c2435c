// The readable tables printed after a run.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "harness/document/types.h"

namespace gtb::driver {

// The measurement-health lines: a warning naming each family measured on a busy machine, or one line
// saying all was well; nothing for files without health readings.
void print_health(std::ostream& os, const json& doc);
// The whole table: families, then every record (value and spread, or why it has none), then the CPU
// vs GPU pairs. What gtb run writes into summary_path(out), and prints with --summary full.
void print_summary(std::ostream& os, const json& doc);

// The screen the end of a run must fit: kScreenLines lines of kScreenColumns, a longer line wrapping.
// print_short_summary keeps to kSummaryRows of them: the rest is for the paths printed after it (the
// results file, and the main job's findings report and figures).
constexpr std::size_t kScreenLines = 50, kScreenColumns = 100, kSummaryRows = kScreenLines - 6;
// The end of a run on one screen: the families (a family of several runs in one line), the warnings
// (health::warnings, grouped as the report groups them; past the rows left, how many more and where),
// how many records ended how, the CPU vs GPU pairs counted, the verdict's headline (verdict::render_headline) and `table`, the file that holds the
// whole table (print_summary; empty: none written). A line that would wrap is cut to one row, except
// a warning's and the table's name.
void print_short_summary(std::ostream& os, const json& doc, const std::string& table);
// Where gtb run writes the whole table beside its results file: OUT without ".json", "-summary.txt".
std::string summary_path(const std::string& out);
// A short "k=v,k=v" text of a params/options object.
std::string short_params(const json& params, const json& options);

}  // namespace gtb::driver
