# The transfer family: host<->device copies, pinning, batching, overlap and the data loader.
gtb_add_family(NAME transfer
  BENCH bench/transfer.cpp bench/transfer/sections.cpp
  CPU_SOURCES kernels/cpu/transfer.cpp kernels/cpu/transfer_model.cpp kernels/cpu/loader.cpp
  CUDA_SOURCES kernels/cuda/transfer.cpp kernels/cuda/loader.cpp kernels/cuda/transfer_kernels.cu
  CPU_TESTS tests/cpu/test_transfer.cpp
  GPU_TESTS tests/gpu/test_transfer.cpp)
