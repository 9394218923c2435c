# GEMM family: precisions through cuBLAS/cuBLASLt vs the CPU SGEMM candidates and (when found) oneDNN BF16.
# oneDNN is found in kernels/CMakeLists.txt (the training step uses it too).
gtb_add_family(NAME gemm RUN_ORDER 40
  BENCH bench/gemm/gemm.cpp bench/gemm/check.cpp bench/gemm/findings.cpp bench/gemm/sections.cpp
  CPU_SOURCES kernels/gemm/cpu/gemm.cpp kernels/gemm/cpu/gemm_dnnl.cpp
  CUDA_SOURCES kernels/gemm/cuda/gemm.cpp kernels/gemm/cuda/gemm_lt.cpp
  CPU_TESTS tests/cpu/test_gemm.cpp tests/cpu/test_gemm_mkl.cpp tests/cpu/test_gemm_dnnl3.cpp bench/gemm/check.cpp bench/gemm/findings.cpp
  GPU_TESTS tests/gpu/test_gemm.cpp
  OPENBLAS)

# Every CPU BF16 library is a quick-suite record at 2048^3, where the best BF16 rate is taken.
if(GTB_BUILD_TESTS)
  add_test(NAME gemm.quick_bf16_libraries
           COMMAND sh ${PROJECT_SOURCE_DIR}/bench/gemm/quick-bf16-libraries.sh $<TARGET_FILE:gtb-gemm>)
  set_tests_properties(gemm.quick_bf16_libraries PROPERTIES LABELS cpu)
endif()
