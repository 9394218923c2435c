# Tests of the CI scripts themselves: every program the test command runs is installed by
# ci/setup.sh or is in Debian's required set (a minbase root lacked xz for the GPU check's dry run).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(_programs ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_test_programs.py ${PROJECT_SOURCE_DIR})
  add_test(NAME ci.setup_installs_programs COMMAND ${_programs})
  add_test(NAME ci.setup_installs_programs_planted
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh
                   "FAIL: ci/gpu-check-lib.sh:[0-9]+ runs xz, from Debian's xz-utils, which ci/setup.sh does not install"
                   ${_programs} --plant)
  add_test(NAME ci.setup_installs_programs_usage
           COMMAND sh -c "for a in '' /nonexistent-root \"$2 --bogus\"; do $0 $1 \$a >/dev/null 2>&1; rc=\$?; [ \$rc -eq 2 ] || { echo \"'\$a': exit \$rc, not 2\"; exit 1; }; done; echo ok"
                   ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_test_programs.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(ci.setup_installs_programs ci.setup_installs_programs_planted ci.setup_installs_programs_usage
                       PROPERTIES LABELS cpu TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()
