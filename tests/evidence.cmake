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

# Shared code (harness/, ci/, plots/, cmake/, CMakeLists.txt) names no family: it reads what a family
# declares. The planted twin checks a copy of a shared file with `family == "gemm"` added.
if(Python3_Interpreter_FOUND)
  set(_family_names ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_family_names.py ${PROJECT_SOURCE_DIR})
  add_test(NAME checks.family_names COMMAND ${_family_names})
  add_test(NAME checks.family_names_planted
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "families\\.cpp:[0-9]+: names gemm: .*family == \"gemm\""
                   ${_family_names} --planted ${CMAKE_CURRENT_BINARY_DIR}/checks/family_names_planted)
  set_tests_properties(checks.family_names checks.family_names_planted PROPERTIES LABELS cpu TIMEOUT 60)
endif()
# Bad usage is exit 2 (not a pass, not a failed check): no root, a root without bench/, --planted without DIR.
add_test(NAME checks.family_names_usage
         COMMAND sh -c "for args in '' /nonexistent-root \"$2 --planted\"; do $1 $0 \$args >/dev/null 2>&1; rc=\$?; [ \$rc -eq 2 ] || { echo \"'\$args': exit \$rc, not 2\"; exit 1; }; done; echo ok"
                 ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_family_names.py ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR})
set_tests_properties(checks.family_names_usage PROPERTIES LABELS cpu TIMEOUT 60)
