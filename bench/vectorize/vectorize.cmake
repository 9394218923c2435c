# Vectorize family: loops vs vectorized elementwise kernels on the CPU and the GPU.
gtb_add_family(NAME vectorize RUN_ORDER 30
  BENCH bench/vectorize/vectorize.cpp bench/vectorize/findings.cpp bench/vectorize/sections.cpp
  CPU_SOURCES kernels/vectorize/cpu/vectorize.cpp kernels/vectorize/cpu/vectorize_scalar.cpp
  CUDA_SOURCES kernels/vectorize/cuda/vectorize.cu kernels/vectorize/cuda/vectorize_thrust.cu
  CPU_TESTS tests/cpu/test_vectorize.cpp
  GPU_TESTS tests/gpu/test_vectorize.cpp
  # Its softmax_xent records run the CPU MLP step's own loss function (NEEDS train).
  NEEDS train)

# The scalar loops stay scalar: no loop or straight-line vectorization in their translation unit
# (ci/static-checks.sh verifies it in the object code).
set_source_files_properties(${PROJECT_SOURCE_DIR}/kernels/vectorize/cpu/vectorize_scalar.cpp PROPERTIES COMPILE_OPTIONS
  "$<$<CXX_COMPILER_ID:GNU>:-fno-tree-vectorize;-fno-tree-slp-vectorize>;$<$<CXX_COMPILER_ID:Clang>:-fno-vectorize;-fno-slp-vectorize>")

# The CUDA kernels' code run on CPU threads (tests/cpu/cuda_emu stands in for the CUDA headers), so
# that their indexing, grid-stride loop and tail are tested without a GPU.
if(GTB_BUILD_TESTS AND TARGET gtb_vectorize_kernels)
  gtb_add_emu_test(test_vectorize_emu PREFIX "vectorize."
    SOURCES tests/cpu/test_vectorize_emu.cpp kernels/vectorize/cpu/vectorize.cpp kernels/vectorize/cpu/vectorize_scalar.cpp)
endif()
