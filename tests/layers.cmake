# The harness's rooms and layers (tests/tools/check_layers.py): document <- model <- runtime <- driver,
# no include running back up, no source outside the four rooms. Planted twins (a copy of harness/ with
# one back-up include, or a stray file) must fail with the check's message.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(_src ${PROJECT_SOURCE_DIR})
  add_test(NAME harness.layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_layers.py ${_src})
  set(_layers_document "FAIL: harness/document/stats.h:[0-9]+ includes harness/driver/common/render_summary.h")
  set(_layers_model "FAIL: harness/model/cost_terms.h:[0-9]+ includes harness/runtime/stopping.h")
  set(_layers_driver "FAIL: harness/driver/list/list.cpp:[0-9]+ includes harness/runtime/startup.h")
  set(_layers_command "FAIL: harness/driver/list/list.cpp:[0-9]+ includes harness/driver/diagnose/diagnose_trace.h \\(a driver command folder")
  set(_layers_common "FAIL: harness/driver/common/families.h:[0-9]+ includes harness/driver/diagnose/diagnose_trace.h \\(a driver command folder")
  set(_layers_outside "FAIL: harness/stray.cpp is outside the four rooms")
  set(_layer_tests harness.layers)
  foreach(mode document model driver command common outside)
    add_test(NAME harness.layers_planted_${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "${_layers_${mode}}"
                     bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/layers_planted.sh ${mode} ${Python3_EXECUTABLE} ${_src}
                     ${CMAKE_CURRENT_BINARY_DIR}/layers-planted-${mode})
    list(APPEND _layer_tests harness.layers_planted_${mode})
  endforeach()
  set_tests_properties(${_layer_tests} PROPERTIES LABELS cpu TIMEOUT 60)
else()
  add_test(NAME harness.layers COMMAND sh -c "echo 'Skipped: no Python 3 interpreter found'; exit 77")
  set_tests_properties(harness.layers PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endif()
