# Its Dev is test_transformer.cpp's too: a unit of its own, outside the test binary's unity build.
set_source_files_properties(${PROJECT_SOURCE_DIR}/tests/gpu/test_transformer_attention.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
gtb_add_family(NAME transformer RUN_ORDER 55
  BENCH bench/transformer/transformer.cpp bench/transformer/findings.cpp bench/transformer/sections.cpp
        bench/transformer/gpu.cpp
  CPU_SOURCES kernels/transformer/reference.cpp kernels/transformer/cpu/blocks.cpp
  CUDA_SOURCES kernels/transformer/cuda/elementwise.cu kernels/transformer/cuda/attention_fwd.cu kernels/transformer/cuda/attention_bwd.cu
               kernels/transformer/cuda/step.cpp kernels/transformer/cuda/step_kernels.cu
  CPU_TESTS tests/cpu/test_transformer.cpp tests/cpu/test_transformer_attention_f64.cpp bench/transformer/findings.cpp
            tests/cpu/test_transformer_gpu_host.cpp bench/transformer/gpu.cpp
  GPU_TESTS tests/gpu/test_transformer.cpp tests/gpu/test_transformer_attention.cpp tests/gpu/test_transformer_step.cpp
  # HostAllocator and the GELU/Adam math come from the MLP step's kernels.
  NEEDS train
  OPENBLAS)

# The PyTorch yardstick computes the same workload (causal, the stated loss, both attentions, right
# gradients): correctness only, never timed here; skipped where torch is not installed.
if(GTB_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    add_test(NAME transformer.torch_yardstick_check
             COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/transformer/torch-cpu-step.py --check)
    set_tests_properties(transformer.torch_yardstick_check PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
  endif()
endif()

# The fused attention kernels' and the step's elementwise kernels' CUDA code run on CPU threads
# (tests/cpu/cuda_emu stands in for the CUDA headers), so that their indexing, tiling and masks are
# tested without a GPU.
if(GTB_BUILD_TESTS AND TARGET gtb_transformer_kernels)
  gtb_add_emu_test(test_transformer_attention_emu PREFIX "transformer."
    SOURCES tests/cpu/test_transformer_attention_emu.cpp tests/cpu/test_transformer_step_kernels_emu.cpp
            tests/cpu/test_transformer_elementwise_emu.cpp tests/cpu/test_graph_emu.cpp)
  target_compile_options(test_transformer_attention_emu PRIVATE -Wno-unknown-pragmas)  # nvcc's #pragma unroll
endif()
