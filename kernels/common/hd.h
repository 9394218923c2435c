// GTB_HD marks math that compiles for both the host and the device (one definition of the math).
#pragma once
#if defined(__CUDACC__)
#define GTB_HD __host__ __device__ __forceinline__
#else
#define GTB_HD inline
#endif
