# Every family's quick CPU output, findings and cost terms included, validates against the published
# schema (docs/gtb-results.schema.json), as `gtb run` writes it: one test per family built.
# Labelled `schema`, not `cpu`: each runs a whole family (the quick suite's CPU cases at a small
# sampling budget), which the sanitizer build would run many times slower for no other check (the
# JSON it writes is the same), and the GPU check's CPU phase has no minutes for.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  file(GLOB _schema_family_cmakes RELATIVE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/bench/*/*.cmake)
  foreach(f IN LISTS _schema_family_cmakes)
    get_filename_component(_dir ${f} DIRECTORY)
    get_filename_component(_name ${f} NAME_WE)
    if(_dir STREQUAL _name AND (NOT GTB_ONLY_FAMILIES OR _name IN_LIST GTB_ONLY_FAMILIES))
      add_test(NAME schema.family.${_name}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/family_schema.sh ${_name} $<TARGET_FILE:gtb>
                       ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/validate_schema.py
                       ${CMAKE_CURRENT_BINARY_DIR}/schema-${_name})
      # The longest (gemm's hundreds of cases, the framework's PyTorch steps) start first, beside the
      # short tests (CTest starts higher costs first).
      set_tests_properties(schema.family.${_name} PROPERTIES LABELS schema TIMEOUT 600 SKIP_RETURN_CODE 77 COST 800)
      if(_name STREQUAL framework)
        # PyTorch as the framework family's own tests find it (Debian's python3-torch in CI).
        set_tests_properties(schema.family.${_name} PROPERTIES ENVIRONMENT "GTB_PYTHON=/usr/bin/python3")
      endif()
    endif()
  endforeach()
endif()
