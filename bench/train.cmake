gtb_add_family(NAME train
  BENCH bench/train.cpp bench/train/sections.cpp
  CPU_SOURCES kernels/cpu/mlp.cpp kernels/cpu/mlp_reference.cpp kernels/cpu/mlp_findings.cpp
  CUDA_SOURCES kernels/cuda/mlp_model.cpp kernels/cuda/mlp_fwd.cu kernels/cuda/mlp_bwd.cu kernels/cuda/mlp_opt.cu
  CPU_TESTS tests/cpu/test_train.cpp
  GPU_TESTS tests/gpu/test_train.cpp)
