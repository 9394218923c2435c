# Tests of gtb compare / report / plot: unit tests, the gtb binary on fixtures, and the loader fuzzer.
set(_gtb_fix ${PROJECT_SOURCE_DIR}/tests/fixtures)

add_executable(test_compare ${PROJECT_SOURCE_DIR}/tests/cpu/test_compare.cpp
                            ${PROJECT_SOURCE_DIR}/tests/cpu/test_compare_calibration.cpp
                            ${PROJECT_SOURCE_DIR}/tests/cpu/test_compare_fixtures.cpp
                            ${PROJECT_SOURCE_DIR}/tests/cpu/test_compare_runs.cpp
                            ${PROJECT_SOURCE_DIR}/tests/cpu/test_record_ids.cpp)
target_link_libraries(test_compare PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
target_compile_definitions(test_compare PRIVATE GTB_FIXTURE_DIR="${_gtb_fix}" GTB_SOURCE_DIR_FOR_TESTS="${PROJECT_SOURCE_DIR}")
gtb_host_warnings(test_compare)
# gtest_add_tests (not gtest_discover_tests): its test list can take a two-label LABELS property.
gtest_add_tests(TARGET test_compare TEST_PREFIX "compare." TEST_LIST _compare_tests)
set_tests_properties(${_compare_tests} PROPERTIES LABELS "cpu;compare" TIMEOUT 300)

add_executable(test_report ${PROJECT_SOURCE_DIR}/tests/cpu/test_report.cpp
                           ${PROJECT_SOURCE_DIR}/tests/driver/test_report_formats.cpp)
target_link_libraries(test_report PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
target_compile_definitions(test_report PRIVATE GTB_FIXTURE_DIR="${_gtb_fix}" GTB_RESULTS_DIR="${PROJECT_SOURCE_DIR}/results")
gtb_host_warnings(test_report)
gtest_add_tests(TARGET test_report TEST_PREFIX "report." TEST_LIST _report_tests)
set_tests_properties(${_report_tests} PROPERTIES LABELS "cpu;compare" TIMEOUT 300)

# The gtb binary on fixture files: exit codes and what the output must say. Runs through sh so one
# test can check both the exit status and the text.
function(gtb_cli_test name expected_rc pattern)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/cli/${name}.out)
  string(REPLACE ";" " " args "${ARGN}")
  add_test(NAME ${name}
    COMMAND sh -c "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/cli' && \"$1\" ${args} > '${out}' 2>&1; rc=$?; cat '${out}'; \
[ $rc -eq ${expected_rc} ] || { echo \"exit $rc, expected ${expected_rc}\"; exit 1; }; \
grep -Eq -- '${pattern}' '${out}' || { echo 'output lacks: ${pattern}'; exit 1; }"
      sh $<TARGET_FILE:gtb>)
  set_tests_properties(${name} PROPERTIES LABELS "cpu;compare" TIMEOUT 120)
endfunction()

# The exit status printed (text summary, Markdown heading, JSON summary, --out's line) is the one
# returned, for each status: gtb compare 0, 1, 2, 3 on fixtures and a planted busy file; gtb ab 0, 1,
# 2 on the self-test family (a planted crash in one round of NEW, then of BASE).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(cmd IN ITEMS compare ab)
    add_test(NAME gtb_${cmd}_exit_status
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/driver/exit_status.sh ${cmd} $<TARGET_FILE:gtb> ${Python3_EXECUTABLE}
                     ${_gtb_fix} ${CMAKE_CURRENT_BINARY_DIR}/exit-status-${cmd})
  endforeach()
  set_tests_properties(gtb_compare_exit_status PROPERTIES LABELS "cpu;compare" TIMEOUT 120)
  set_tests_properties(gtb_ab_exit_status PROPERTIES LABELS "cpu;compare" TIMEOUT 300)
endif()

gtb_cli_test(gtb_compare_aa 0 "no regression" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_aa.json)
gtb_cli_test(gtb_compare_regression 1 "REGRESSION" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_regressed.json)
gtb_cli_test(gtb_compare_improvements_pass 0 "faster" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_improved.json)
gtb_cli_test(gtb_compare_other_gpu 2 "different GPUs" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_other_model.json)
gtb_cli_test(gtb_compare_other_gpu_allowed 0 "machines differ" compare ${_gtb_fix}/gpu_base.json
             ${_gtb_fix}/gpu_other_model.json --allow-different-machines)
gtb_cli_test(gtb_compare_gpu_vs_cpu_only 2 "has none" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/cpu_a.json)
gtb_cli_test(gtb_compare_cpu_aa 0 "no regression" compare ${_gtb_fix}/cpu_a.json ${_gtb_fix}/cpu_b.json)
gtb_cli_test(gtb_compare_other_cpu 2 "different CPUs" compare ${_gtb_fix}/cpu_a.json ${_gtb_fix}/cpu_other_model.json)
gtb_cli_test(gtb_compare_markdown 1 "written" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_regressed.json
             --format markdown --out ${CMAKE_CURRENT_BINARY_DIR}/cli/compare.md)
gtb_cli_test(gtb_compare_json 1 "\"schema\": \"gtb-compare\"" compare ${_gtb_fix}/gpu_base.json
             ${_gtb_fix}/gpu_regressed.json --format json)
gtb_cli_test(gtb_compare_calibrate 0 "A/A calibration" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_aa.json
             --calibrate=50)
gtb_cli_test(gtb_compare_config 1 "ignored" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_regressed.json
             --config ${PROJECT_SOURCE_DIR}/docs/compare-config.example.json)
gtb_cli_test(gtb_compare_bad_config 2 "unknown key" compare ${_gtb_fix}/gpu_base.json ${_gtb_fix}/gpu_aa.json
             --config ${_gtb_fix}/bad_not_results.json)
gtb_cli_test(gtb_compare_usage 2 "usage" compare ${_gtb_fix}/gpu_base.json)
gtb_cli_test(gtb_compare_missing_file 2 "cannot open" compare ${_gtb_fix}/does_not_exist.json ${_gtb_fix}/gpu_aa.json)
foreach(bad empty:empty truncated:not.valid.JSON malformed:not.valid.JSON version:version.99 string_value:value
            string_sample:samples_s not_results:not.a.gtb.results huge_count:count)
  string(REPLACE ":" ";" parts ${bad})
  list(GET parts 0 what)
  list(GET parts 1 says)
  gtb_cli_test(gtb_compare_bad_${what} 2 "${says}" compare ${_gtb_fix}/bad_${what}.json ${_gtb_fix}/gpu_aa.json)
  gtb_cli_test(gtb_report_bad_${what} 2 "${says}" report ${_gtb_fix}/bad_${what}.json)
  gtb_cli_test(gtb_plot_bad_${what} 2 "${says}" plot ${_gtb_fix}/bad_${what}.json --out ${CMAKE_CURRENT_BINARY_DIR}/cli/plots_bad)
endforeach()

# A file from before typed findings holds no figure spec: no figure, exit 1, the reason and the way out
# (checked before Python starts, so it holds without matplotlib too).
gtb_cli_test(gtb_plot_schema1_no_figure 1 "no figure: .*schema version 1.*--gtb_findings_from" plot ${_gtb_fix}/cpu_a.json
             --out ${CMAKE_CURRENT_BINARY_DIR}/cli/plots_schema1)
# The version and the commit the build was made from (40 hex digits, or "unknown" outside git).
gtb_cli_test(gtb_version 0 "^gtb ${PROJECT_VERSION} [(]commit ([0-9a-f]{40}|unknown)" --version)

gtb_cli_test(gtb_report_gpu 0 "Pinned vs pageable" report ${_gtb_fix}/gpu_base.json)
gtb_cli_test(gtb_report_cpu_only 0 "no GPU" report ${_gtb_fix}/cpu_b.json)
gtb_cli_test(gtb_report_out 0 "written" report ${_gtb_fix}/gpu_base.json --out ${CMAKE_CURRENT_BINARY_DIR}/cli/report.md)

# The plot tests are always registered: without a Python that has matplotlib (GTB_PYTHON, python3,
# the system python) each one reports Skipped (77) with the reason, found when the test runs.
set(_plot_check sh ${PROJECT_SOURCE_DIR}/tests/tools/plot_check.sh)
set(_expect_fail sh ${PROJECT_SOURCE_DIR}/tests/tools/expect_fail.sh)
set(_plots ${CMAKE_CURRENT_BINARY_DIR}/cli/plots)
# Matched against the "wrote" line only: a skipped figure is named too ("skipped NAME: reason").
set(_wrote_heatmap "^wrote .*/speedup_heatmap\\.png$")
add_test(NAME gtb_plot_gpu COMMAND ${_plot_check} run $<TARGET_FILE:gtb> ${_gtb_fix}/gpu_base.json ${_plots}/gpu
         ${_wrote_heatmap})
add_test(NAME gtb_plot_cpu_only COMMAND ${_plot_check} run $<TARGET_FILE:gtb> ${_gtb_fix}/cpu_b.json ${_plots}/cpu
         "^skipped speedup_heatmap: no CPU/GPU comparison")
# gtb_plot_gpu empties its folder first, so these are that run's files, not an earlier run's.
add_test(NAME gtb_plot_gpu_files COMMAND ${_plot_check} files ${_plots}/gpu transfer_bandwidth.png gemm_tflops.png
         train_throughput_batch.png speedup_heatmap.png)
set_tests_properties(gtb_plot_gpu PROPERTIES FIXTURES_SETUP gtb_plots)
set_tests_properties(gtb_plot_gpu_files PROPERTIES FIXTURES_REQUIRED gtb_plots)
# A figure gtb plot skips leaves no file of an earlier run behind (the user's own files stay).
add_test(NAME gtb_plot_removes_stale_figure COMMAND ${_plot_check} stale $<TARGET_FILE:gtb> ${_gtb_fix}/cpu_b.json
         ${_plots}/stale speedup_heatmap)
# Planted twin of gtb_plot_gpu: the same check on a file whose heatmap is skipped must fail.
add_test(NAME gtb_plot_planted_skipped_figure
         COMMAND ${_expect_fail} "output lacks a line matching" ${_plot_check} run $<TARGET_FILE:gtb>
                 ${_gtb_fix}/cpu_b.json ${_plots}/planted_skipped ${_wrote_heatmap})
# No legend may cover a bar or a plotted point (the vectorize legend once hid the tallest bar).
set(_layout ${_plot_check} layout ${PROJECT_SOURCE_DIR}/tests/tools/test_plot_layout.py ${_gtb_fix}/gpu_base.json)
add_test(NAME gtb_plot_legends_clear COMMAND ${_layout})
# Its planted twin: every legend moved onto a plotted point must be reported.
add_test(NAME gtb_plot_planted_legend_over_point COMMAND ${_expect_fail} "the legend covers a plotted point" ${_layout} --plant)
# How a spec is drawn: bars for one x value, unjoined sparse lines, axes from zero, the caption's
# machine, commit and load, the missing side named with its reason, where-lists, schema-1 files.
add_test(NAME gtb_plot_specs COMMAND ${_plot_check} layout ${PROJECT_SOURCE_DIR}/tests/tools/test_plot_specs.py --self-contained)
set(_plot_tests gtb_plot_gpu gtb_plot_cpu_only gtb_plot_gpu_files gtb_plot_removes_stale_figure
    gtb_plot_planted_skipped_figure gtb_plot_legends_clear gtb_plot_planted_legend_over_point gtb_plot_specs)
set_tests_properties(${_plot_tests} PROPERTIES LABELS "cpu;compare" TIMEOUT 120 SKIP_RETURN_CODE 77)
# The legend check draws every figure of the file twice: slow on a small, busy machine.
set_tests_properties(gtb_plot_legends_clear gtb_plot_planted_legend_over_point PROPERTIES TIMEOUT 300)

# libFuzzer target for the results loader (clang only): ci/fuzz.sh builds and runs it.
if(GTB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GTB_FUZZ needs clang (CMAKE_CXX_COMPILER=clang++)")
  endif()
  add_executable(fuzz_results_loader ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_results_loader.cpp)
  target_link_libraries(fuzz_results_loader PRIVATE gtb_driver)
  target_compile_options(fuzz_results_loader PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_results_loader PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(fuzz_results_loader PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
endif()
