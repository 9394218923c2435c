// Numbers as text (see format.h for each rule).
#include "harness/document/format.h"

#include <cmath>
#include <cstdio>

namespace gtb::format {

std::string printf_number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string sig3(double v) { return printf_number("%.3g", v); }

std::string short_number(double v) {
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) return printf_number("%.3g", v);
  if (a >= 100) return printf_number("%.1f", v);
  return printf_number("%.3g", v);
}

std::string plain_number(double x) {
  const double a = std::fabs(x);
  if (a < 1e15 && std::floor(x) == x) return printf_number("%.0f", x);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) return printf_number("%.3g", x);
  if (a >= 100) return printf_number("%.0f", x);
  if (a >= 10) return printf_number("%.1f", x);
  return printf_number("%.3g", x);
}

std::string binary_bytes(double x) {
  if (x < 0) return "n/a";
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  double b = x;
  while (b >= 1024 && i < 4) b /= 1024, ++i;
  if (i == 0) return printf_number("%.0f", b) + " bytes";
  return (std::fabs(b - std::round(b)) < 1e-9 ? printf_number("%.0f", b) : printf_number("%.3g", b)) + " " + units[i];
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace gtb::format
