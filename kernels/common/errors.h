// The errors a kernel may throw that the harness turns into a record status (kernels and harness share them).
#pragma once

#include <stdexcept>

namespace gtb {

// Thrown from a case to end it with status `skipped` (e.g. no GPU, unsupported on this CPU).
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown when host or device memory runs out: recorded as `skipped` with "out of memory: ...".
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gtb
