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
  # Shell read as shell: a `print` inside python3 -c "..." is no program, with a `print` on PATH (as
  # Debian's mailcap installs it); one run as a command is found.
  add_test(NAME ci.setup_installs_programs_shell
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_programs_shell.sh ${_programs}
                   ${CMAKE_CURRENT_BINARY_DIR}/programs-shell)
  set_tests_properties(ci.setup_installs_programs ci.setup_installs_programs_planted ci.setup_installs_programs_usage
                       ci.setup_installs_programs_shell PROPERTIES LABELS cpu TIMEOUT 60 SKIP_RETURN_CODE 77)

  # The GPU check's dry run (ci/gpu-check-plan.py) on the real plan and this build's listing: eight
  # minutes with a 180 s build (a GPU machine with 16 cores), 3 s a GPU record and 20 s for the
  # framework family's cold `import torch` run the GPU tests and keep at least two GPU records of every
  # family and one case of each of PyTorch's GPU workloads the framework family measures. The block of
  # docs/gpu-check.md and the budgets of its table of phases are that dry run's. Planted twins: the plan
  # without the framework's phase, a changed count in the block, a changed budget in the table.
  set(_gpu_plan_scenario --deadline 480 --build 180 --gpu-record 3 --start framework=20
      --require-phase gpu-tests --require-records 2)
  foreach(_case "mlp_step/pytorch/cuda/*mode=eager" "mlp_step/pytorch/cuda/*mode=graph"
                "mixed_precision/pytorch/cuda/*precision=bf16" "mixed_precision/pytorch/cuda/*precision=fp16"
                "transformer_step/pytorch/cuda/*" "matmul/pytorch/cuda/*"
                "to_device/pytorch/cuda/*memory=pageable" "to_device/pytorch/cuda/*memory=pinned")
    list(APPEND _gpu_plan_scenario --require-case "framework:${_case}")
  endforeach()
  set(_gpu_plan ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/ci/gpu-check-plan.py --gtb $<TARGET_FILE:gtb>)
  set(_gpu_plan_planted bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/gpu_check_plan_planted.sh)
  set(_gpu_plan_planted_args ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR} $<TARGET_FILE:gtb>)
  add_test(NAME ci.gpu_check_plan COMMAND ${_gpu_plan} ${_gpu_plan_scenario})
  add_test(NAME ci.gpu_check_plan_doc COMMAND ${_gpu_plan} --doc ${PROJECT_SOURCE_DIR}/docs/gpu-check.md --check)
  add_test(NAME ci.gpu_check_plan_planted_no_slot
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL: framework keeps a GPU record mixed_precision"
                   ${_gpu_plan_planted} no-slot ${_gpu_plan_planted_args} ${CMAKE_CURRENT_BINARY_DIR}/gpu-plan-no-slot
                   ${_gpu_plan_scenario})
  foreach(_mode doc budget)
    add_test(NAME ci.gpu_check_plan_planted_${_mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL: .*gpu-check.md:[0-9]+: differs from the dry run"
                     ${_gpu_plan_planted} ${_mode} ${_gpu_plan_planted_args} ${CMAKE_CURRENT_BINARY_DIR}/gpu-plan-${_mode})
  endforeach()
  set_tests_properties(ci.gpu_check_plan ci.gpu_check_plan_doc ci.gpu_check_plan_planted_no_slot
                       ci.gpu_check_plan_planted_doc ci.gpu_check_plan_planted_budget
                       PROPERTIES LABELS cpu TIMEOUT 120)
endif()
