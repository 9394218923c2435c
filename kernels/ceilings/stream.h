// The STREAM-like ceiling kernels' math, shared by the CPU and the GPU.
#pragma once
#include "kernels/common/hd.h"

namespace gtb {
// Bytes counted as STREAM does: every array element read plus every element written.
inline constexpr int kStreamCopyArrays = 2;   // read b, write a
inline constexpr int kStreamTriadArrays = 3;  // read b and c, write a
GTB_HD float triad(float b, float c, float scalar) { return b + scalar * c; }
}  // namespace gtb
