# GEMM family: precisions through cuBLAS/cuBLASLt vs OpenBLAS SGEMM and (when found) oneDNN BF16.
gtb_add_family(NAME gemm
  BENCH bench/gemm.cpp
  CPU_SOURCES kernels/cpu/gemm.cpp kernels/cpu/gemm_dnnl.cpp kernels/cpu/gemm_findings.cpp
  CUDA_SOURCES kernels/cuda/gemm.cpp kernels/cuda/gemm_lt.cpp
  CPU_TESTS tests/cpu/test_gemm.cpp
  GPU_TESTS tests/gpu/test_gemm.cpp)

# oneDNN (Debian: libdnnl-dev) gives the CPU a real BF16 matmul; optional. Found by header and
# library rather than its CMake package, whose config insists on OpenCL even for CPU-only use.
find_path(GTB_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(GTB_DNNL_LIBRARY NAMES dnnl)
if(GTB_DNNL_INCLUDE_DIR AND GTB_DNNL_LIBRARY)
  message(STATUS "gtb: gemm uses oneDNN (${GTB_DNNL_LIBRARY}) for CPU BF16")
  target_include_directories(gtb_gemm_kernels SYSTEM PUBLIC ${GTB_DNNL_INCLUDE_DIR})
  target_link_libraries(gtb_gemm_kernels PUBLIC ${GTB_DNNL_LIBRARY})
  target_compile_definitions(gtb_gemm_kernels PUBLIC GTB_HAVE_DNNL=1)
else()
  message(STATUS "gtb: oneDNN not found; gemm's CPU BF16/FP16 records will be skipped")
endif()
