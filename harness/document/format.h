// Numbers as text: the one place the report, the summary tables, gtb compare, the findings and the
// plausibility notes format a number. Each reader has its own rule (below), kept apart on purpose:
// a summary line, a findings table and a suspect note print the same value with different digits.
#pragma once

#include <cstddef>
#include <string>

namespace gtb::format {

// One number through a printf format ("%.3g", "%+.1f%%", ...).
std::string printf_number(const char* format, double v);
// Three significant digits ("%.3g"): the numbers in plausibility notes.
std::string sig3(double v);
// The summary tables' rule: "%.3g", except "%.1f" from 100 up to a million (1234.5, 0.0123, 1.23e+07).
std::string short_number(double v);
// The findings' rule (Hint::number): a whole number below 1e15 in full, else "%.3g" below 1e-3 and
// from a million up, "%.0f" from 100, "%.1f" from 10, "%.3g" below (4096, 123, 12.3, 1.23, 1.2e+07).
std::string plain_number(double v);
// Bytes in binary units: "512 bytes", "4 KiB", "1.5 MiB" (whole multiples in full, others "%.3g").
// Negative sizes are "n/a".
std::string binary_bytes(double v);
// "1 case", "3 cases": a count with its noun in the right number (nouns taking a plain "s").
std::string count_of(std::size_t n, const std::string& noun);

}  // namespace gtb::format
