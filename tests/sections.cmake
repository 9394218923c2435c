# What families' report sections say, from synthetic records through --gtb_findings_from.
if(TARGET gtb-train AND TARGET gtb-transformer AND TARGET gtb-pitfalls AND TARGET gtb-gemm)
  find_package(Python3 COMPONENTS Interpreter)
  add_test(NAME driver.family_sections
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/family_sections.sh $<TARGET_FILE:gtb-train>
                   $<TARGET_FILE:gtb-transformer> $<TARGET_FILE:gtb-pitfalls> $<TARGET_FILE:gtb-gemm> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cpu_b.json ${CMAKE_CURRENT_BINARY_DIR}/family-sections)
  set_tests_properties(driver.family_sections PROPERTIES LABELS cpu TIMEOUT 60)
endif()

