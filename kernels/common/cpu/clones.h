// The measured CPU loops are compiled for AVX-512 and AVX2 as well as the baseline and picked at run
// time, as a framework's CPU kernels are (the project builds for the generic x86-64 target). The AVX2
// clone is x86-64-v3 (AVX2 + FMA), chosen by the CPU's features: an arch= CPU name such as haswell is
// chosen only on that model, so AMD's AVX2 CPUs ran the SSE2 baseline. One clone only under
// AddressSanitizer and outside GCC on x86-64.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define GTB_CPU_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define GTB_CPU_CLONES
#endif
