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
  gtb_add_emu_test(test_train_emu PREFIX "train."
    SOURCES tests/cpu/test_train_kernels_emu.cpp tests/cpu/test_train_bwd_emu.cpp tests/cpu/test_train_opt_emu.cpp)
endif()
