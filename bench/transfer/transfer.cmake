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
  gtb_add_emu_test(test_transfer_emu PREFIX "transfer." SOURCES tests/cpu/test_transfer_emu.cpp
    LIBS gtb_transfer_kernels)
endif()
