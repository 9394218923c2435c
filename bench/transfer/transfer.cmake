# The transfer family: host<->device copies, pinning, batching, overlap and the data loader.
gtb_add_family(NAME transfer RUN_ORDER 20
  BENCH bench/transfer/transfer.cpp bench/transfer/findings.cpp bench/transfer/sections.cpp
  CPU_SOURCES kernels/transfer/cpu/transfer.cpp kernels/transfer/cpu/transfer_model.cpp kernels/transfer/loader.cpp kernels/transfer/host_memory.cpp
  CUDA_SOURCES kernels/transfer/cuda/transfer.cpp kernels/transfer/cuda/loader.cpp kernels/transfer/cuda/transfer_kernels.cu
  CPU_TESTS tests/cpu/test_transfer.cpp
  GPU_TESTS tests/gpu/test_transfer.cpp)

# The kernels' CUDA code run on CPU threads (tests/cpu/cuda_emu stands in for the CUDA headers), so
# that their indexing, shuffles and grid-stride loops are tested without a GPU.
if(GTB_BUILD_TESTS AND TARGET gtb_transfer_kernels)
  add_executable(test_transfer_emu ${PROJECT_SOURCE_DIR}/tests/cpu/test_transfer_emu.cpp)
  target_include_directories(test_transfer_emu BEFORE PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu/cuda_emu)
  target_link_libraries(test_transfer_emu PRIVATE gtb_transfer_kernels gtb_kernels_common GTest::gtest GTest::gtest_main
                        Threads::Threads)
  gtb_host_warnings(test_transfer_emu)
  gtest_discover_tests(test_transfer_emu DISCOVERY_TIMEOUT 60 TEST_PREFIX "transfer."
    PROPERTIES LABELS cpu SKIP_REGULAR_EXPRESSION "${GTB_GTEST_SKIPPED}")
endif()
