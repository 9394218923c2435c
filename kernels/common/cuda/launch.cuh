// The one kernel-launch hook: a kernel launched through GTB_LAUNCH can also run its body on CPU
// threads under the host stand-in of tests/cpu/cuda_emu, which defines the hook first. A kernel
// declares its dynamic shared memory (the launch's smem bytes) with GTB_DYNAMIC_SHARED, which the
// stand-in defines as the buffer it sized for the launch. Kernels so launched keep warp-uniform
// control flow around every shuffle, as CUDA requires anyway.
#pragma once

#include <cuda_runtime_api.h>  // first: the stand-in's own GTB_LAUNCH is defined there

#ifndef GTB_LAUNCH
#define GTB_LAUNCH(kernel, grid, block, smem, stream) kernel<<<grid, block, smem, stream>>>
#endif
#ifndef GTB_DYNAMIC_SHARED
#define GTB_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif
