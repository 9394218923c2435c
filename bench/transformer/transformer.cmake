gtb_add_family(NAME transformer RUN_ORDER 55
  BENCH bench/transformer/transformer.cpp bench/transformer/findings.cpp bench/transformer/sections.cpp
  CPU_SOURCES kernels/transformer/reference.cpp kernels/transformer/cpu/gemm_plan.cpp kernels/transformer/cpu/blocks.cpp
  CPU_TESTS tests/cpu/test_transformer.cpp bench/transformer/findings.cpp
  # HostAllocator and the GELU/Adam math come from the MLP step's kernels.
  NEEDS train
  OPENBLAS)
