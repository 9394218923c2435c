// The one kernel-launch hook: a kernel launched through GTB_LAUNCH can also run its body on CPU
// threads under the host stand-in of tests/cpu/cuda_emu, which defines the hook first. Kernels so
// launched keep warp-uniform control flow around every shuffle, as CUDA requires anyway.
#pragma once

#include <cuda_runtime_api.h>  // first: the stand-in's own GTB_LAUNCH is defined there

#ifndef GTB_LAUNCH
#define GTB_LAUNCH(kernel, grid, block, smem, stream) kernel<<<grid, block, smem, stream>>>
#endif
