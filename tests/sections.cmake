# What families' report sections say, from synthetic records through --gtb_findings_from.
if(TARGET gtb-train AND TARGET gtb-transformer AND TARGET gtb-pitfalls)
  find_package(Python3 COMPONENTS Interpreter)
  add_test(NAME driver.family_sections
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/family_sections.sh $<TARGET_FILE:gtb-train>
                   $<TARGET_FILE:gtb-transformer> $<TARGET_FILE:gtb-pitfalls> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cpu_b.json ${CMAKE_CURRENT_BINARY_DIR}/family-sections)
  set_tests_properties(driver.family_sections PROPERTIES LABELS cpu TIMEOUT 60)
endif()

# The gemm family's section on a step's parts (the sequence's paired and cold records).
if(TARGET gtb-gemm)
  find_package(Python3 COMPONENTS Interpreter)
  add_test(NAME driver.gemm_sections
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/gemm_sections.sh $<TARGET_FILE:gtb-gemm> ${Python3_EXECUTABLE}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cpu_b.json ${CMAKE_CURRENT_BINARY_DIR}/gemm-sections)
  set_tests_properties(driver.gemm_sections PROPERTIES LABELS cpu TIMEOUT 60)
endif()
