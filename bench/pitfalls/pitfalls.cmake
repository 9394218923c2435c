# Pitfalls family: code-level causes of slow training as measured A/Bs (a loss read every step,
# debug and unoptimised builds, fast-math, redundant copies). It reuses the train family's step.
gtb_add_family(NAME pitfalls
  BENCH bench/pitfalls/pitfalls.cpp bench/pitfalls/findings.cpp bench/pitfalls/sections.cpp
  CPU_SOURCES kernels/pitfalls/reference.cpp kernels/pitfalls/cpu/flag_variants.cpp kernels/pitfalls/cpu/step_loop.cpp
  CUDA_SOURCES kernels/pitfalls/cuda/flag_variants.cpp kernels/pitfalls/cuda/flag_run.cpp kernels/pitfalls/cuda/step_loop.cpp
  CPU_TESTS tests/cpu/test_pitfalls.cpp bench/pitfalls/findings.cpp
  GPU_TESTS tests/gpu/test_pitfalls.cpp
  NEEDS train
  OPENBLAS)

if(TARGET gtb_pitfalls_kernels)
  add_subdirectory(${PROJECT_SOURCE_DIR}/kernels/pitfalls ${CMAKE_CURRENT_BINARY_DIR}/pitfalls_variants)
  # The variants got their own flags and nothing else, and -O0 really is unoptimised (a planted
  # run proves the check can fail). The disassembly check reads x86-64 code.
  if(GTB_BUILD_TESTS AND NOT GTB_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang"
     AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    find_package(Python3 COMPONENTS Interpreter)
    if(Python3_FOUND)
      set(_pf ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tools/check_pitfall_flags.py
          --compile-commands ${CMAKE_BINARY_DIR}/compile_commands.json)
      foreach(v IN LISTS GTB_PITFALLS_HOST_VARIANTS)
        list(APPEND _pf --object ${v}=$<TARGET_OBJECTS:gtb_pitfalls_host_${v}>)
      endforeach()
      add_test(NAME pitfalls.build_flags COMMAND ${_pf})
      add_test(NAME pitfalls.build_flags_planted COMMAND ${_pf} --plant)
      set_tests_properties(pitfalls.build_flags pitfalls.build_flags_planted PROPERTIES LABELS "static;pitfalls" TIMEOUT 60)
      set_tests_properties(pitfalls.build_flags_planted PROPERTIES
                           PASS_REGULAR_EXPRESSION "FAIL: O0 object [^\n]* has packed SIMD")
    endif()
  endif()
endif()

# The device kernels' code run on CPU threads (tests/cpu/cuda_emu stands in for the CUDA headers),
# so that their indexing and grid-stride loops are tested without a GPU.
if(GTB_BUILD_TESTS AND TARGET gtb_pitfalls_kernels)
  gtb_add_emu_test(test_pitfalls_emu PREFIX "pitfalls."
    SOURCES tests/cpu/test_pitfalls_emu.cpp kernels/pitfalls/reference.cpp)
endif()
