# Tests of gtb diagnose: the reader and symptom rules, agreement with HTA's figures (fixtures), the CLI.
# Its kTraces is test_diagnose.cpp's too: a unit of its own, outside the unity build.
set_source_files_properties(${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose_hta.cpp
                            ${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose_json.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
add_executable(test_diagnose ${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose.cpp
                             ${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose_job.cpp
                             ${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose_hta.cpp
                             ${PROJECT_SOURCE_DIR}/tests/driver/test_diagnose_json.cpp)
target_link_libraries(test_diagnose PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
target_compile_definitions(test_diagnose PRIVATE GTB_FIXTURE_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures")
gtb_host_warnings(test_diagnose)
gtest_add_tests(TARGET test_diagnose TEST_PREFIX "diagnose." TEST_LIST _diagnose_tests)
set_tests_properties(${_diagnose_tests} PROPERTIES LABELS cpu TIMEOUT 120)
add_test(NAME diagnose.e2e COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/diagnose_e2e.sh $<TARGET_FILE:gtb>
                                   ${PROJECT_SOURCE_DIR}/tests/fixtures/traces ${CMAKE_CURRENT_BINARY_DIR}/diagnose-e2e)
set_tests_properties(diagnose.e2e PROPERTIES LABELS cpu TIMEOUT 120)
# The diagnosis of every shared trace, text and JSON, pinned byte for byte (the reader may change, the
# diagnosis may not).
add_test(NAME diagnose.identity COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/diagnose_identity.sh $<TARGET_FILE:gtb>
                                        ${PROJECT_SOURCE_DIR}/tests/fixtures/traces
                                        ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/diagnose-identity
                                        ${CMAKE_CURRENT_BINARY_DIR}/diagnose-identity)
set_tests_properties(diagnose.identity PROPERTIES LABELS cpu TIMEOUT 120)
