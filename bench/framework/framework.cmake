# Framework family: PyTorch, found at run time (GTB_PYTHON), measured beside gtb's own kernels. Its
# Python worker (kernels/framework/*.py) is copied beside the family binary.
gtb_add_family(NAME framework
  BENCH bench/framework/framework.cpp bench/framework/worker.cpp bench/framework/findings.cpp bench/framework/sections.cpp
  CPU_TESTS tests/cpu/test_framework.cpp tests/cpu/test_framework_terms.cpp bench/framework/worker.cpp bench/framework/findings.cpp
  NEEDS train vectorize
  PRECHECK)

if(TARGET gtb-framework)
  set(_fw_files)
  foreach(py worker.py models.py)
    set(_out ${CMAKE_BINARY_DIR}/bin/framework-worker/${py})
    add_custom_command(OUTPUT ${_out}
      COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/kernels/framework/${py} ${_out}
      DEPENDS ${PROJECT_SOURCE_DIR}/kernels/framework/${py}
      COMMENT "Copying the framework worker's ${py}")
    list(APPEND _fw_files ${_out})
  endforeach()
  add_custom_target(gtb_framework_worker ALL DEPENDS ${_fw_files})
  add_dependencies(gtb-framework gtb_framework_worker)
  if(TARGET test_framework_cpu)
    add_dependencies(test_framework_cpu gtb_framework_worker)
  endif()
endif()

# End to end: without torch (skipped with the reason), a GTB_PYTHON that is not Python (exit 2,
# nothing written), with torch (Debian's python3-torch in CI) and a planted error the checks catch;
# with torch but no numpy (as pip installs it), under NVIDIA's TF32 override variables, and with a
# compiler that fails at the compiled step's first call.
if(TARGET gtb-framework AND GTB_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter)
  foreach(case IN ITEMS without_torch bad_python with_torch planted sections without_numpy tf32_override compile_fails)
    add_test(NAME framework.e2e_${case}
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/framework/e2e.sh ${case} $<TARGET_FILE:gtb> $<TARGET_FILE:gtb-framework>
                     ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tools/validate_schema.py
                     ${CMAKE_CURRENT_BINARY_DIR}/framework-e2e-${case})
    # The interpreter with PyTorch: Debian's, which need not be the python3 first on PATH.
    set_tests_properties(framework.e2e_${case} PROPERTIES LABELS cpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "GTB_PYTHON=/usr/bin/python3")
  endforeach()
endif()
