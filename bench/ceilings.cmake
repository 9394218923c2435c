gtb_add_family(NAME ceilings
  BENCH bench/ceilings.cpp bench/ceilings/sections.cpp
  CPU_SOURCES kernels/cpu/stream.cpp kernels/cpu/fma_peak.cpp
  CUDA_SOURCES kernels/cuda/ceilings.cu
  CPU_TESTS tests/cpu/test_ceilings.cpp
  GPU_TESTS tests/gpu/test_ceilings.cpp)
