# Static checks (ci/static-checks.sh): 128-bit accesses in the vec4 kernels (PTX, and SASS where
# cuobjdump is installed), no register spills in kernels/*/cuda/*.cu, scalar CPU loops that really
# are scalar, and the layout rules (kernels/ includes no harness/, cuda/ includes no cpu/). Each
# check also runs once on a planted failure, so a check that can no longer fail is caught too.
# A part that cannot run here exits 77: its test reports Skipped with the reason, never passes.
set(_layout bash ${PROJECT_SOURCE_DIR}/ci/static-checks.sh --root ${PROJECT_SOURCE_DIR} --only layout)
add_test(NAME static_checks_layout COMMAND ${_layout})
add_test(NAME static_checks_planted_layout COMMAND ${_layout} --plant layout)
set_tests_properties(static_checks_layout static_checks_planted_layout PROPERTIES LABELS "static" TIMEOUT 60
                     SKIP_RETURN_CODE 77)
# Both planted defects must be reported (exit status ignored).
set_tests_properties(static_checks_planted_layout PROPERTIES PASS_REGULAR_EXPRESSION
  "FAIL: layout: kernels/planted/cpu/uses_harness\\.cpp:1:[^\n]*includes harness/.*FAIL: layout: kernels/planted/cuda/uses_cpu\\.cu:2:[^\n]*includes a cpu/ folder|FAIL: layout: kernels/planted/cuda/uses_cpu\\.cu:2:[^\n]*includes a cpu/ folder.*FAIL: layout: kernels/planted/cpu/uses_harness\\.cpp:1:[^\n]*includes harness/")

if(GTB_HAVE_CUDA AND TARGET gtb_vectorize_kernels)
  set(_sc bash ${PROJECT_SOURCE_DIR}/ci/static-checks.sh --root ${PROJECT_SOURCE_DIR}
      --nvcc ${CMAKE_CUDA_COMPILER} --cpu-lib $<TARGET_FILE:gtb_vectorize_kernels>)
  # SASS needs cuobjdump, which a toolkit may lack, and the CPU patterns are x86-64's: each is its
  # own test, so a part that cannot run skips alone and the others still pass or fail on their own.
  add_test(NAME static_checks COMMAND ${_sc} --only ptx --only spills)
  add_test(NAME static_checks_sass COMMAND ${_sc} --only sass)
  add_test(NAME static_checks_cpu COMMAND ${_sc} --only cpu)
  add_test(NAME static_checks_planted_vec4 COMMAND ${_sc} --only ptx --plant vec4)
  add_test(NAME static_checks_planted_sass COMMAND ${_sc} --only sass --plant vec4)
  add_test(NAME static_checks_planted_spill COMMAND ${_sc} --only spills --plant spill)
  add_test(NAME static_checks_planted_cpu COMMAND ${_sc} --only cpu --plant cpu)
  set_tests_properties(static_checks static_checks_sass static_checks_cpu static_checks_planted_vec4
                       static_checks_planted_sass static_checks_planted_spill static_checks_planted_cpu PROPERTIES LABELS "static;vectorize" TIMEOUT 300 SKIP_RETURN_CODE 77)
  # The longest of them (nvcc compiles the kernels again) starts first, beside the short tests.
  set_tests_properties(static_checks PROPERTIES COST 1000)
  # A planted run passes only when the check reports the planted defect (exit status ignored).
  set_tests_properties(static_checks_planted_vec4 PROPERTIES
                       PASS_REGULAR_EXPRESSION "FAIL: PTX \\(sm_90\\): [^ ]*scalar_kernel[^ ]* has no ld\\.global")
  set_tests_properties(static_checks_planted_sass PROPERTIES
                       PASS_REGULAR_EXPRESSION "FAIL: SASS \\(sm_90\\): [^ ]*scalar_kernel[^ ]* has no LDG\\.E\\.128")
  set_tests_properties(static_checks_planted_spill PROPERTIES
                       PASS_REGULAR_EXPRESSION "FAIL: spills: planted_spill\\.cu \\(sm_90\\) spills registers")
  set_tests_properties(static_checks_planted_cpu PROPERTIES
                       PASS_REGULAR_EXPRESSION "FAIL: CPU: gtb::cpu::chain_autovec should be scalar")
endif()

# The updates the cost model prices at the vectorize family's Adam rate are vector loops too: a
# square root under -fmath-errno once kept every Adam update scalar (ci/vector-loops.sh). The planted
# run checks the vectorize family's scalar axpy for packed instructions, and must fail.
if(TARGET gtb_train_kernels AND TARGET gtb_transformer_kernels AND TARGET gtb-vectorize AND TARGET gtb_vectorize_kernels)
  set(_vl bash ${PROJECT_SOURCE_DIR}/ci/vector-loops.sh)
  add_test(NAME static_checks_updates COMMAND ${_vl}
           $<TARGET_FILE:gtb_train_kernels> "gtb::mlp::(anonymous namespace)::adam_range" sqrtps sqrtf --
           $<TARGET_FILE:gtb_train_kernels> "gtb::mlp::(anonymous namespace)::sgd_range" "mulps|fmadd[0-9]*ps|subps" --
           $<TARGET_FILE:gtb_transformer_kernels> "gtb::xfmr::(anonymous namespace)::adamw_range" sqrtps sqrtf --
           $<TARGET_FILE:gtb-vectorize> "(anonymous namespace)::adam_range" sqrtps sqrtf --
           $<TARGET_FILE:gtb-vectorize> "(anonymous namespace)::handoff_range" "mulps|fmadd[0-9]*ps|addps")
  add_test(NAME static_checks_planted_updates COMMAND ${_vl}
           $<TARGET_FILE:gtb_vectorize_kernels> gtb::cpu::axpy_scalar "[a-z]+ps[[:space:]]")
  set_tests_properties(static_checks_updates static_checks_planted_updates PROPERTIES LABELS "static" TIMEOUT 120
                       SKIP_RETURN_CODE 77)
  set_tests_properties(static_checks_planted_updates PROPERTIES PASS_REGULAR_EXPRESSION
                       "FAIL: gtb::cpu::axpy_scalar in [^ ]+ has no instruction matching")
endif()
