gtb_add_family(NAME ceilings RUN_ORDER 10
  BENCH bench/ceilings/ceilings.cpp bench/ceilings/findings.cpp bench/ceilings/sections.cpp
  CPU_SOURCES kernels/ceilings/cpu/stream.cpp kernels/ceilings/cpu/fma_peak.cpp
  CUDA_SOURCES kernels/ceilings/cuda/ceilings.cu
  CPU_TESTS tests/cpu/test_ceilings.cpp
  GPU_TESTS tests/gpu/test_ceilings.cpp)
