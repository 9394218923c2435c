# Tests of measurement health and suspect records: unit tests on synthetic readings, and the driver
# end to end (line-buffered output, --wait-idle, health in the results file).
add_executable(test_health ${PROJECT_SOURCE_DIR}/tests/cpu/test_health.cpp)
target_link_libraries(test_health PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
gtb_host_warnings(test_health)
gtest_add_tests(TARGET test_health TEST_PREFIX "health." TEST_LIST _health_tests)
set_tests_properties(${_health_tests} PROPERTIES LABELS cpu TIMEOUT 120 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

find_package(Python3 COMPONENTS Interpreter)
foreach(case IN ITEMS line_buffered wait_idle wait_idle_bad)
  add_test(NAME health.driver_${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/health_e2e.sh ${case} $<TARGET_FILE:gtb> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_BINARY_DIR}/e2e-health-${case})
  set_tests_properties(health.driver_${case} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()
