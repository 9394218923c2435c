// Denormal floats on the CPU. On x86 an operation whose input or result is a denormal (below
// 2^-126 in FP32) takes a microcode assist, tens to hundreds of times the cost of a normal one, and a
// training step produces them as it trains (GELU's exp far from zero, a gradient squared, a
// momentum under a zero gradient): a CPU step that measured a few milliseconds can slow down more
// than tenfold after some steps. Frameworks offer the switch gtb sets for every process that
// measures: flush-to-zero and denormals-are-zero (MXCSR FTZ and DAZ), what
// `torch.set_flush_denormal(True)` sets. GPUs compute denormals at full speed.
#pragma once

#include <string>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define GTB_HAVE_MXCSR 1
#else
#define GTB_HAVE_MXCSR 0
#endif

#include <omp.h>

namespace gtb {

inline constexpr unsigned kMxcsrFlushBits = 0x8040u;  // FTZ (bit 15) | DAZ (bit 6)

// Whether the calling thread flushes denormals (inputs and results) to zero.
inline bool denormals_flushed_here() {
#if GTB_HAVE_MXCSR
  return (_mm_getcsr() & kMxcsrFlushBits) == kMxcsrFlushBits;
#else
  return false;
#endif
}

// Sets FTZ and DAZ on the calling thread and on every thread of the OpenMP pool (a thread started
// later inherits the setting of the thread that starts it). Returns whether every one of them now
// flushes; false where the CPU has no such switch (not x86-64).
inline bool flush_denormals_on_every_thread() {
#if GTB_HAVE_MXCSR
  _mm_setcsr(_mm_getcsr() | kMxcsrFlushBits);
  int ok = 1;
#pragma omp parallel reduction(& : ok)
  {
    _mm_setcsr(_mm_getcsr() | kMxcsrFlushBits);
    ok &= denormals_flushed_here() ? 1 : 0;
  }
  return ok == 1 && denormals_flushed_here();
#else
  return false;
#endif
}

// What a results file says of it (context.host.denormals).
inline std::string denormals_mode() {
  return denormals_flushed_here() ? "flushed to zero (FTZ and DAZ on every thread, as torch.set_flush_denormal(True))"
                                  : "computed (x86 microcode assists: no FTZ/DAZ)";
}

}  // namespace gtb
