# Harness and driver tests (CPU).
add_executable(test_harness cpu/test_stats.cpp cpu/test_results.cpp cpu/test_registry.cpp cpu/test_device_timing.cpp cpu/test_findings.cpp
  cpu/test_blas_core.cpp cpu/test_timing.cpp cpu/test_names.cpp cpu/test_suites.cpp cpu/test_process.cpp cpu/test_state_params.cpp
  cpu/test_denormals.cpp cpu/test_pairs.cpp)
target_link_libraries(test_harness PRIVATE gtb_runtime gtb_runtime_openblas GTest::gtest GTest::gtest_main)
gtb_host_warnings(test_harness)
# The OpenBLAS flavour configure linked ("openmp", or "any" without the OpenMP flavour).
target_compile_definitions(test_harness PRIVATE GTB_OPENBLAS_THREADING="${GTB_OPENBLAS_THREADING}")
gtest_discover_tests(test_harness DISCOVERY_TIMEOUT 60 TEST_PREFIX "harness." PROPERTIES LABELS cpu)

find_package(Python3 COMPONENTS Interpreter)
set(_validate ${CMAKE_CURRENT_SOURCE_DIR}/tools/validate_schema.py)
set(_e2e ${CMAKE_CURRENT_SOURCE_DIR}/driver/e2e.sh)
foreach(case IN ITEMS run_valid large_cache no_host_ceiling unknown_family bad_flags unwritable crash_isolated interrupt_before_any interrupt_int
                     interrupt_term interrupt_runs interrupt_stubborn timeout_hang timeout_stubborn timeout_grandchild
                     timeout_flags fail_exit3 fail_no_results fail_garbage fail_missing logs summary report_sections runs repetitions ab
                     planted list every_family version)
  add_test(NAME driver.${case}
           COMMAND bash ${_e2e} ${case} $<TARGET_FILE:gtb> ${Python3_EXECUTABLE} ${_validate}
                   ${CMAKE_CURRENT_BINARY_DIR}/e2e-${case})
  set_tests_properties(driver.${case} PROPERTIES LABELS cpu TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
# A timing verdict: alone on the machine, not beside another test's load.
set_tests_properties(driver.planted PROPERTIES RUN_SERIAL TRUE)
# The longest cases (a whole family end to end, seconds of waiting for a child to be killed) start
# first, beside the short tests, rather than last on their own (CTest starts higher costs first; a
# fresh build folder has no timings of its own yet).
set_tests_properties(driver.run_valid driver.large_cache PROPERTIES COST 1000)
# It reports every committed results file: a few seconds here, near two minutes in the sanitizer build
# (the driver at -O0 there), where started last it was the whole tail of the run.
set_tests_properties(driver.report_sections PROPERTIES COST 1000)
set_tests_properties(driver.no_host_ceiling driver.timeout_stubborn driver.timeout_grandchild driver.interrupt_stubborn
                     driver.timeout_hang PROPERTIES COST 500)
# The OpenBLAS core type of a family process (user's choice respected, detection measured in a child).
if(TARGET gtb-gemm)  # not built with -DGTB_ONLY_FAMILIES without gemm
  add_test(NAME driver.blas_coretype
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/blas_core.sh $<TARGET_FILE:gtb-gemm> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_BINARY_DIR}/blas-coretype)
  set_tests_properties(driver.blas_coretype PROPERTIES LABELS cpu TIMEOUT 300)
endif()
# Every family folder under bench/ must build its family; a missing one fails driver.every_family (a
# dependency that went missing must not drop a family silently).
file(GLOB _gtb_family_cmakes RELATIVE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/bench/*/*.cmake)
set(_gtb_expect "")
foreach(f IN LISTS _gtb_family_cmakes)
  get_filename_component(_dir ${f} DIRECTORY)
  get_filename_component(_name ${f} NAME_WE)
  if(_dir STREQUAL _name AND (NOT GTB_ONLY_FAMILIES OR _name IN_LIST GTB_ONLY_FAMILIES))
    list(APPEND _gtb_expect ${_name})
  endif()
endforeach()
list(JOIN _gtb_expect "," _gtb_expect)
set_tests_properties(driver.every_family PROPERTIES ENVIRONMENT "GTB_EXPECT_FAMILIES=${_gtb_expect}")

# The self-test family: like a real family binary, but not in GTB_FAMILIES, so `gtb run` runs it only
# when a test names it (GTB_FAMILIES=selftest). Its planted-slowdown knob cannot reach real records.
add_executable(gtb-selftest selftest/selftest.cpp ${PROJECT_SOURCE_DIR}/harness/runtime/family_main.cpp)
target_link_libraries(gtb-selftest PRIVATE gtb_runtime)
target_compile_definitions(gtb-selftest PRIVATE GTB_FAMILY_NAME="selftest")
gtb_host_warnings(gtb-selftest)
set_target_properties(gtb-selftest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# bench/ holds no timing or calibration loop of its own (the harness runs warm-up, calibration and
# sampling); its planted twin, a copy of bench/ with a case that reads the clock itself, must fail.
add_test(NAME harness.bench_timing_through_harness
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_bench_timing.sh ${PROJECT_SOURCE_DIR})
add_test(NAME harness.bench_timing_planted
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh
                 "FAIL: bench/planted.cpp:5: a timing loop or clock read of its own"
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_bench_timing.sh ${PROJECT_SOURCE_DIR}
                 --plant ${CMAKE_CURRENT_BINARY_DIR}/bench-timing-planted)
set_tests_properties(harness.bench_timing_through_harness harness.bench_timing_planted PROPERTIES LABELS cpu TIMEOUT 60)

# Google Benchmark is the family binaries' command line and reporter, gtb's sampler their only clock:
# the JSON keeps the shape google/benchmark's tools/compare.py reads, and its times are gtb's
# medians. The planted twin drops a field compare.py needs and must fail.
if(Python3_Interpreter_FOUND)
  add_test(NAME harness.gbench_json_for_compare
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_gbench_json.py $<TARGET_FILE:gtb-selftest>
                   ${CMAKE_CURRENT_BINARY_DIR}/gbench-json)
  add_test(NAME harness.gbench_json_planted
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL: benchmarks\\[0\\] .* has no real_time"
                   ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_gbench_json.py $<TARGET_FILE:gtb-selftest>
                   ${CMAKE_CURRENT_BINARY_DIR}/gbench-json-planted --plant)
  set_tests_properties(harness.gbench_json_for_compare harness.gbench_json_planted PROPERTIES LABELS cpu TIMEOUT 120)
endif()
