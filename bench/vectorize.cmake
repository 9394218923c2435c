# Vectorize family: loops vs vectorized elementwise kernels on the CPU and the GPU.
gtb_add_family(NAME vectorize
  BENCH bench/vectorize.cpp bench/vectorize/sections.cpp
  CPU_SOURCES kernels/cpu/vectorize.cpp kernels/cpu/vectorize_scalar.cpp
  CUDA_SOURCES kernels/cuda/vectorize.cu kernels/cuda/vectorize_thrust.cu kernels/cuda/vectorize_graph.cpp
  CPU_TESTS tests/cpu/test_vectorize.cpp
  GPU_TESTS tests/gpu/test_vectorize.cpp)

# The scalar loops stay scalar: no loop or straight-line vectorization in their translation unit
# (ci/static-checks.sh verifies it in the object code).
set_source_files_properties(${PROJECT_SOURCE_DIR}/kernels/cpu/vectorize_scalar.cpp PROPERTIES COMPILE_OPTIONS
  "$<$<CXX_COMPILER_ID:GNU>:-fno-tree-vectorize;-fno-tree-slp-vectorize>;$<$<CXX_COMPILER_ID:Clang>:-fno-vectorize;-fno-slp-vectorize>")
