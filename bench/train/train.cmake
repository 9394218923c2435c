gtb_add_family(NAME train RUN_ORDER 50
  BENCH bench/train/train.cpp bench/train/findings.cpp bench/train/sections.cpp
  CPU_SOURCES kernels/train/cpu/mlp.cpp kernels/train/reference.cpp kernels/train/step_check.cpp kernels/train/mlp_step_check.cpp
  CUDA_SOURCES kernels/train/cuda/mlp_model.cpp kernels/train/cuda/mlp_fwd.cu kernels/train/cuda/mlp_bwd.cu kernels/train/cuda/mlp_opt.cu
  CPU_TESTS tests/cpu/test_train.cpp tests/cpu/test_train_bf16.cpp bench/train/findings.cpp
  GPU_TESTS tests/gpu/test_train.cpp
  # The CPU step runs the faster verified of OpenBLAS's and oneDNN's SGEMM (the library is in
  # info.gemm_path); it was called openblas before.
  RENAMED openblas/cpu=fastest_blas
  OPENBLAS)

# The elementwise, backward and optimizer kernels' CUDA code run on CPU threads (tests/cpu/cuda_emu
# stands in for the CUDA headers), so that their indexing, grid-stride loops, 2-D blocks and shared
# memory are tested without a GPU.
if(GTB_BUILD_TESTS AND TARGET gtb_train_kernels)
  add_executable(test_train_emu ${PROJECT_SOURCE_DIR}/tests/cpu/test_train_kernels_emu.cpp
                 ${PROJECT_SOURCE_DIR}/tests/cpu/test_train_bwd_emu.cpp ${PROJECT_SOURCE_DIR}/tests/cpu/test_train_opt_emu.cpp)
  target_include_directories(test_train_emu BEFORE PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu/cuda_emu)
  target_link_libraries(test_train_emu PRIVATE gtb_kernels_common GTest::gtest GTest::gtest_main Threads::Threads)
  gtb_host_warnings(test_train_emu)
  gtest_discover_tests(test_train_emu DISCOVERY_TIMEOUT 60 TEST_PREFIX "train."
    PROPERTIES LABELS cpu SKIP_REGULAR_EXPRESSION "${GTB_GTEST_SKIPPED}")
endif()
