# GEMM family: precisions through cuBLAS/cuBLASLt vs the CPU SGEMM candidates and (when found) oneDNN BF16.
# oneDNN is found in kernels/CMakeLists.txt (the training step uses it too).
gtb_add_family(NAME gemm
  BENCH bench/gemm.cpp bench/gemm/sections.cpp
  CPU_SOURCES kernels/cpu/gemm.cpp kernels/cpu/gemm_dnnl.cpp kernels/cpu/gemm_findings.cpp
  CUDA_SOURCES kernels/cuda/gemm.cpp kernels/cuda/gemm_lt.cpp
  CPU_TESTS tests/cpu/test_gemm.cpp
  GPU_TESTS tests/gpu/test_gemm.cpp)
