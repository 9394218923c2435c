# The families' front door (tests/tools/check_front_door.py): bench/ includes the harness only through
# include/gtb/; no harness header forwards to it; only the runtime, the families and the tests include
# it. Planted twins (a copy of the sources with one include around the door) must fail with the
# check's message; bad usage is exit 2.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(_door ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_front_door.py)
  add_test(NAME checks.front_door COMMAND ${Python3_EXECUTABLE} ${_door} ${PROJECT_SOURCE_DIR})
  set(_door_bench "FAIL: bench/gemm/findings.h:[0-9]+ includes harness/document/types.h")
  set(_door_shim "FAIL: harness/runtime/gtb.h:[0-9]+ includes gtb/gtb.h")
  set(_door_driver "FAIL: harness/driver/list/list.cpp:[0-9]+ includes gtb/gtb.h")
  set(_door_door "FAIL: include/gtb/record.h:[0-9]+ includes harness/driver/commands.h")
  set(_door_kernels "FAIL: kernels/common/errors.h:[0-9]+ includes gtb/record.h")
  set(_door_missing "FAIL: bench/gemm/findings.h:[0-9]+ includes gtb/nothing.h, which the front door does not hold")
  set(_door_tests checks.front_door checks.front_door_usage)
  foreach(mode bench shim driver door kernels missing)
    add_test(NAME checks.front_door_planted_${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "${_door_${mode}}"
                     bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/front_door_planted.sh ${mode} ${Python3_EXECUTABLE}
                     ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/front-door-planted-${mode})
    list(APPEND _door_tests checks.front_door_planted_${mode})
  endforeach()
  # No root, or a root without bench/ and include/gtb/: exit 2, not a pass and not a failed check.
  add_test(NAME checks.front_door_usage
           COMMAND sh -c "for args in '' /nonexistent-root; do $0 $1 \$args >/dev/null 2>&1; rc=\$?; [ \$rc -eq 2 ] || { echo \"'\$args': exit \$rc, not 2\"; exit 1; }; done; echo ok"
                   ${Python3_EXECUTABLE} ${_door})
  set_tests_properties(${_door_tests} PROPERTIES LABELS cpu TIMEOUT 60)
endif()
