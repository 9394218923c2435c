# What families' report sections say, from synthetic records through --gtb_findings_from.
if(TARGET gtb-train AND TARGET gtb-transformer AND TARGET gtb-pitfalls AND TARGET gtb-gemm)
  find_package(Python3 COMPONENTS Interpreter)
  add_test(NAME driver.family_sections
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/family_sections.sh $<TARGET_FILE:gtb-train>
                   $<TARGET_FILE:gtb-transformer> $<TARGET_FILE:gtb-pitfalls> $<TARGET_FILE:gtb-gemm> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cpu_b.json ${CMAKE_CURRENT_BINARY_DIR}/family-sections)
  set_tests_properties(driver.family_sections PROPERTIES LABELS cpu TIMEOUT 60)
endif()


# The report's own paragraphs (the savings validation's wording).
add_executable(test_render_savings ${PROJECT_SOURCE_DIR}/tests/driver/test_render_savings.cpp)
target_link_libraries(test_render_savings PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
gtb_host_warnings(test_render_savings)
gtest_add_tests(TARGET test_render_savings TEST_PREFIX "driver." TEST_LIST _render_savings_tests)
set_tests_properties(${_render_savings_tests} PROPERTIES LABELS cpu TIMEOUT 60)
