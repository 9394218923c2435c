# Planted twins of the test helpers and shell checks: each runs a check on the defect it guards
# against and passes only when the check fails, so a check that can no longer fail is caught.
add_executable(test_checks common/test_checks.cpp)
target_include_directories(test_checks PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(test_checks PRIVATE GTest::gtest GTest::gtest_main OpenMP::OpenMP_CXX)
gtb_host_warnings(test_checks)
gtest_discover_tests(test_checks DISCOVERY_TIMEOUT 60 TEST_PREFIX "checks." PROPERTIES LABELS cpu)

find_package(Python3 COMPONENTS Interpreter)
add_test(NAME checks.planted_json_check_under_optimize
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL \\[planted_json_check\\]"
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/planted_checks.sh ${Python3_EXECUTABLE}
                 ${CMAKE_CURRENT_BINARY_DIR}/checks/planted_json_check)
set_tests_properties(checks.planted_json_check_under_optimize PROPERTIES LABELS cpu TIMEOUT 60 SKIP_RETURN_CODE 77)

# The committed fixtures are what make_fixtures.py writes with this build's binaries (their typed
# findings come from the family binaries), and the comparison can fail: a planted change in a copy
# of the committed files must be caught.
if(Python3_Interpreter_FOUND AND NOT GTB_ONLY_FAMILIES)
  add_test(NAME fixtures_current
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_fixtures.sh ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/bin
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures ${CMAKE_CURRENT_BINARY_DIR}/fixtures-current)
  add_test(NAME fixtures_current_planted
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL: tests/fixtures/cpu_b.json differs"
                   bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_fixtures.sh ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/bin
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures ${CMAKE_CURRENT_BINARY_DIR}/fixtures-planted --plant)
  set_tests_properties(fixtures_current fixtures_current_planted PROPERTIES LABELS cpu TIMEOUT 120)
endif()
