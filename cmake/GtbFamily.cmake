# gtb_add_family: one benchmark family = its kernels library, its gtb-<name> binary and its tests.
#
# gtb_add_family(NAME myfam
#   BENCH       bench/myfam/myfam.cpp                  # registrations (host C++, compiled by the C++ compiler)
#   CPU_SOURCES kernels/myfam/cpu/myfam.cpp            # CPU backend (OpenMP, OpenBLAS)
#   CUDA_SOURCES kernels/myfam/cuda/myfam.cu           # CUDA backend: .cu kernels and .cpp runtime/cuBLAS code
#   CPU_TESTS   tests/cpu/test_transfer.cpp            # GoogleTest, run everywhere (also under sanitizers)
#   GPU_TESTS   tests/gpu/test_transfer.cpp            # GoogleTest, CTest shows them Skipped without a GPU
#   RUN_ORDER   30                                     # optional: where `gtb run` runs it (lower first; default 1000,
#                                                      #   then by name): a family others divide by runs first
#   RENAMED     old/cpu=new                            # optional: variant `old` on backend cpu is now `new`;
#                                                      #   results files read its old ids under the new ones
#   NEEDS       otherfam                               # optional: families whose kernels this one links
#   OPENBLAS                                           # optional: its kernels use OpenBLAS (the binary links the
#                                                      #   core-type selection its <family>.cpp installs)
#   PRECHECK                                           # optional: its binary judges input only a run can see
#                                                      #   (gtb::set_precheck): gtb run and gtb ab ask it first
#   RANKS)                                             # optional: the binary runs as MPI ranks (gtb run --ranks)
# Paths are relative to the project root.

# What GoogleTest prints for a skipped test (CTest's SKIP_REGULAR_EXPRESSION).
set(GTB_GTEST_SKIPPED "\\[  SKIPPED \\]")

# gtb_unity_tests(target): the target's test files (those under tests/) compile as one unit per
# batch (a unity build): they all include GoogleTest, nlohmann/json and the harness headers, which
# would otherwise be parsed and their templates compiled once per file. The family's own sources a
# test binary also lists stay units of their own. File-local helpers of two test files of one binary
# need names of their own (or the file SKIP_UNITY_BUILD_INCLUSION).
# The floating-point options of every measured CPU loop. GCC keeps a loop scalar when a conditional
# (a clamp) feeds a division under the default -ftrapping-math: the GELU passes ran unvectorized on
# AVX2. And it keeps a loop with a square root scalar under the default -fmath-errno (sqrtf must set
# errno for a negative input): every Adam update ran one element at a time. No code of gtb reads
# floating-point exception flags or a math function's errno, and neither option changes a value.
function(gtb_loop_flags target)
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-fno-trapping-math -fno-math-errno>)
endfunction()

function(gtb_unity_tests target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
  gtb_document_code(${target})
  # GCC warns about a test fixture from an anonymous namespace once its file is #included.
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  get_target_property(_srcs ${target} SOURCES)
  foreach(s IN LISTS _srcs)
    if(NOT s MATCHES "^${PROJECT_SOURCE_DIR}/tests/")
      set_source_files_properties(${s} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()

function(gtb_add_family)
  cmake_parse_arguments(F "RANKS;OPENBLAS;PRECHECK" "NAME;RUN_ORDER" "BENCH;CPU_SOURCES;CUDA_SOURCES;CPU_TESTS;GPU_TESTS;RENAMED;NEEDS" ${ARGN})
  if(NOT F_NAME)
    message(FATAL_ERROR "gtb_add_family: NAME is required")
  endif()
  set(root ${PROJECT_SOURCE_DIR})
  foreach(n IN LISTS F_NEEDS)
    if(GTB_ONLY_FAMILIES AND NOT n IN_LIST GTB_ONLY_FAMILIES)
      message(WARNING "gtb: family '${F_NAME}' left out: it needs the ${n} family (add ${n} to GTB_ONLY_FAMILIES)")
      return()
    endif()
  endforeach()
  list(TRANSFORM F_BENCH PREPEND ${root}/)
  list(TRANSFORM F_CPU_SOURCES PREPEND ${root}/)
  list(TRANSFORM F_CUDA_SOURCES PREPEND ${root}/)
  list(TRANSFORM F_CPU_TESTS PREPEND ${root}/)
  list(TRANSFORM F_GPU_TESTS PREPEND ${root}/)
  # A family whose files are not all there yet is left out with a warning instead of breaking the
  # whole configure; the driver's tests check that every expected family was built.
  foreach(f IN LISTS F_BENCH F_CPU_SOURCES F_CUDA_SOURCES F_CPU_TESTS F_GPU_TESTS)
    if(NOT EXISTS ${f})
      message(WARNING "gtb: family '${F_NAME}' left out: ${f} does not exist")
      return()
    endif()
  endforeach()

  set(klib gtb_${F_NAME}_kernels)
  set(ksrc ${F_CPU_SOURCES})
  if(GTB_HAVE_CUDA)
    list(APPEND ksrc ${F_CUDA_SOURCES})
  endif()
  if(ksrc)
    add_library(${klib} STATIC ${ksrc})
  else()
    add_library(${klib} INTERFACE)
  endif()
  if(ksrc)
    target_link_libraries(${klib} PUBLIC gtb_kernels_common)
    gtb_host_warnings(${klib})
    gtb_loop_flags(${klib})
    if(GTB_HAVE_CUDA)
      gtb_cuda_flags(${klib})
      set_target_properties(${klib} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF POSITION_INDEPENDENT_CODE ON)
    endif()
  else()
    target_link_libraries(${klib} INTERFACE gtb_kernels_common)
  endif()

  # A needed family's kernels, by name: its target may be defined later.
  foreach(n IN LISTS F_NEEDS)
    if(ksrc)
      target_link_libraries(${klib} PUBLIC gtb_${n}_kernels)
    else()
      target_link_libraries(${klib} INTERFACE gtb_${n}_kernels)
    endif()
  endforeach()

  # A family's findings and sections (by the layout's file names) are document code.
  foreach(s IN LISTS F_BENCH)
    if(s MATCHES "/(findings|sections)\\.cpp$")
      set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "${GTB_DOCUMENT_OPT}")
    endif()
  endforeach()
  # Sources both the binary and its CPU tests list (findings, checks) compile once, into an object
  # library both link, instead of once for each.
  set(shared "")
  foreach(s IN LISTS F_BENCH)
    if(s IN_LIST F_CPU_TESTS)
      list(APPEND shared ${s})
    endif()
  endforeach()
  set(own_bench ${F_BENCH})
  if(shared)
    add_library(gtb_${F_NAME}_shared OBJECT ${shared})
    target_link_libraries(gtb_${F_NAME}_shared PUBLIC ${klib} gtb_runtime)
    gtb_host_warnings(gtb_${F_NAME}_shared)
    list(REMOVE_ITEM own_bench ${shared})
    list(REMOVE_ITEM F_CPU_TESTS ${shared})
  endif()

  add_executable(gtb-${F_NAME} ${own_bench} ${root}/harness/runtime/family_main.cpp)
  gtb_loop_flags(gtb-${F_NAME})  # a family's own measured loops (an update pass written in its bench code)
  target_link_libraries(gtb-${F_NAME} PRIVATE ${klib} gtb_runtime)
  if(shared)
    target_link_libraries(gtb-${F_NAME} PRIVATE gtb_${F_NAME}_shared)
  endif()
  if(F_OPENBLAS)
    target_link_libraries(gtb-${F_NAME} PRIVATE gtb_runtime_openblas)
  endif()
  target_compile_definitions(gtb-${F_NAME} PRIVATE GTB_FAMILY_NAME="${F_NAME}")
  gtb_host_warnings(gtb-${F_NAME})
  set_target_properties(gtb-${F_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

  set(GTB_FAMILIES ${GTB_FAMILIES} ${F_NAME} CACHE INTERNAL "")
  foreach(r IN LISTS F_RENAMED)
    if(NOT r MATCHES "^([a-z0-9_]+)/([a-z0-9_]+)=([a-z0-9_]+)$")
      message(FATAL_ERROR "gtb_add_family(${F_NAME}): RENAMED wants old_variant/backend=new_variant, not '${r}'")
    endif()
    set(GTB_VARIANT_RENAMES ${GTB_VARIANT_RENAMES} "${F_NAME}|${CMAKE_MATCH_1}|${CMAKE_MATCH_2}|${CMAKE_MATCH_3}" CACHE INTERNAL "")
  endforeach()
  if(NOT DEFINED F_RUN_ORDER)
    set(F_RUN_ORDER 1000)
  endif()
  if(NOT F_RUN_ORDER MATCHES "^[0-9]+$" OR F_RUN_ORDER GREATER 9999)
    message(FATAL_ERROR "gtb_add_family(${F_NAME}): RUN_ORDER must be a whole number from 0 to 9999, not '${F_RUN_ORDER}'")
  endif()
  # "0030:name" sorts as (order, name); bench/CMakeLists.txt orders GTB_FAMILIES by it.
  string(LENGTH "${F_RUN_ORDER}" _len)
  math(EXPR _pad "4 - ${_len}")
  string(REPEAT "0" ${_pad} _zeros)
  set(GTB_FAMILY_RUN_KEYS ${GTB_FAMILY_RUN_KEYS} "${_zeros}${F_RUN_ORDER}:${F_NAME}" CACHE INTERNAL "")
  if(F_RANKS)
    set(GTB_RANK_FAMILIES ${GTB_RANK_FAMILIES} ${F_NAME} CACHE INTERNAL "")
  endif()
  if(F_PRECHECK)
    set(GTB_PRECHECK_FAMILIES ${GTB_PRECHECK_FAMILIES} ${F_NAME} CACHE INTERNAL "")
  endif()
  set_property(GLOBAL APPEND PROPERTY GTB_GPU_CHECK_TARGETS gtb-${F_NAME})

  if(GTB_BUILD_TESTS AND F_CPU_TESTS)
    add_executable(test_${F_NAME}_cpu ${F_CPU_TESTS})
    gtb_unity_tests(test_${F_NAME}_cpu)
    target_link_libraries(test_${F_NAME}_cpu PRIVATE ${klib} gtb_runtime GTest::gtest GTest::gtest_main)
    if(shared)
      target_link_libraries(test_${F_NAME}_cpu PRIVATE gtb_${F_NAME}_shared)
    endif()
    gtb_host_warnings(test_${F_NAME}_cpu)
    # gtest_discover_tests flattens list-valued properties: one label each; the family is in the
    # test name prefix instead (ctest -R '^myfam\.').
    # GTEST_SKIP exits 0: without the pattern (which only newer CMake versions add by themselves) a
    # skipped test would be reported passed.
    gtest_discover_tests(test_${F_NAME}_cpu DISCOVERY_TIMEOUT 60 TEST_PREFIX "${F_NAME}."
      PROPERTIES LABELS cpu SKIP_REGULAR_EXPRESSION "${GTB_GTEST_SKIPPED}")
  endif()
  if(GTB_BUILD_TESTS AND GTB_HAVE_CUDA AND F_GPU_TESTS)
    add_executable(test_${F_NAME}_gpu ${F_GPU_TESTS})
    gtb_unity_tests(test_${F_NAME}_gpu)
    set_property(GLOBAL APPEND PROPERTY GTB_GPU_CHECK_TARGETS test_${F_NAME}_gpu)
    target_link_libraries(test_${F_NAME}_gpu PRIVATE ${klib} gtb_runtime gtb_gpu_test_main GTest::gtest)
    gtb_host_warnings(test_${F_NAME}_gpu)
    # One GPU test at a time, and none beside the CPU tests: they share the device, and their timing
    # assertions (overlap, loader idle time, blocking-kernel timeouts) fail when other tests load the
    # host. gtb_gpu_test_main exits 77 without a usable GPU and when every test it ran skipped.
    gtest_discover_tests(test_${F_NAME}_gpu DISCOVERY_TIMEOUT 60 TEST_PREFIX "${F_NAME}."
      PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${GTB_GTEST_SKIPPED}"
                 RESOURCE_LOCK gpu RUN_SERIAL TRUE)
  elseif(GTB_BUILD_TESTS AND F_GPU_TESTS)
    # Without CUDA the GPU tests are not built; this stands for them so that CTest shows them Skipped
    # (with the reason) rather than not at all.
    add_test(NAME ${F_NAME}.gpu_tests
             COMMAND sh -c [[echo "SKIPPED: $1"; exit 77]] gtb-gpu-tests
                     "built without CUDA: the ${F_NAME} GPU tests were not built")
    set_tests_properties(${F_NAME}.gpu_tests PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endif()
endfunction()

# gtb_add_emu_test(<target> PREFIX <test prefix> SOURCES <files> [LIBS <libraries>]): a CPU test binary
# of device kernels' CUDA code run on CPU threads (tests/cpu/cuda_emu stands in for the CUDA headers),
# so that their indexing, grid-stride loops and tiling are tested without a GPU. Paths are relative
# to the project root; LIBS come before the common kernels library.
function(gtb_add_emu_test target)
  cmake_parse_arguments(E "" "PREFIX" "SOURCES;LIBS" ${ARGN})
  list(TRANSFORM E_SOURCES PREPEND "${PROJECT_SOURCE_DIR}/")
  add_executable(${target} ${E_SOURCES})
  target_include_directories(${target} BEFORE PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu/cuda_emu)
  target_link_libraries(${target} PRIVATE ${E_LIBS} gtb_kernels_common GTest::gtest GTest::gtest_main Threads::Threads)
  gtb_host_warnings(${target})
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${E_PREFIX}"
    PROPERTIES LABELS cpu SKIP_REGULAR_EXPRESSION "${GTB_GTEST_SKIPPED}")
endfunction()
