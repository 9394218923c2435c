# Tests of the cost terms, the cost model and gtb advise (fixtures: tests/fixtures/cost/, synthetic).
add_executable(test_cost ${PROJECT_SOURCE_DIR}/tests/document/test_cost_terms.cpp
                         ${PROJECT_SOURCE_DIR}/tests/document/test_cost_model.cpp
                         ${PROJECT_SOURCE_DIR}/tests/document/test_savings.cpp
                         ${PROJECT_SOURCE_DIR}/tests/document/test_cost_framework.cpp)
target_link_libraries(test_cost PRIVATE gtb_model GTest::gtest GTest::gtest_main)
target_compile_definitions(test_cost PRIVATE GTB_FIXTURE_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures/cost"
                                             GTB_SOURCE_DIR_FOR_TESTS="${PROJECT_SOURCE_DIR}")
gtb_host_warnings(test_cost)
gtest_add_tests(TARGET test_cost TEST_PREFIX "cost." TEST_LIST _cost_tests)
set_tests_properties(${_cost_tests} PROPERTIES LABELS "cpu;cost" TIMEOUT 120)

set(_cost_fix ${PROJECT_SOURCE_DIR}/tests/fixtures/cost)
gtb_cli_test(gtb_advise_text 0 "Fixes by predicted saving" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 256 --depth 4 --batch 32 --input-bytes 76800 --loss-read-every 1)
# A step slower than a second per sample keeps its rate's digits (not "0 samples/s").
gtb_cli_test(gtb_advise_slow_rate 0 "\\(0\\.00[0-9]+ samples/s\\)" advise ${_cost_fix}/cost_synthetic.json --model generic
             --params 100000000 --flops-per-sample 1e14 --batch 4)
gtb_cli_test(gtb_advise_json 0 "\"schema\": \"gtb-advice\"" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 256 --depth 4 --batch 32 --format json)
gtb_cli_test(gtb_advise_markdown 0 "### GPU" advise ${_cost_fix}/cost_synthetic.json --model transformer --layers 2
             --d-model 256 --heads 4 --seq-len 128 --batch 8 --format markdown)
gtb_cli_test(gtb_advise_missing_key 2 "width: is required" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --depth 4 --batch 32)
gtb_cli_test(gtb_advise_bad_value 2 "precision: must be one of" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 64 --depth 2 --batch 8 --precision fp8)
gtb_cli_test(gtb_advise_not_a_number 2 "--batch: not a number" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 64 --depth 2 --batch many)
gtb_cli_test(gtb_advise_bad_config_key 2 "not_a_key: is not a configuration key" advise ${_cost_fix}/cost_synthetic.json
             --config ${_cost_fix}/advise_bad_key.json)
gtb_cli_test(gtb_advise_config_file 0 "transformer blocks" advise ${_cost_fix}/cost_synthetic.json
             --config ${_cost_fix}/advise_transformer.json)
gtb_cli_test(gtb_advise_old_file 2 "rerun|Rerun" advise ${_cost_fix}/old_no_terms.json --model mlp --width 64 --depth 2
             --batch 8)
gtb_cli_test(gtb_report_verdict 0 "Verdict: where a training step" report ${_cost_fix}/cost_synthetic.json)
gtb_cli_test(gtb_report_validation 0 "the model against the steps" report ${_cost_fix}/cost_synthetic.json)
# Nothing half-written: a refused configuration leaves no --out file.
add_test(NAME gtb_advise_refused_writes_nothing
  COMMAND sh -c "rm -f \"$2\"; \"$1\" advise \"$3\" --model mlp --depth 2 --batch 8 --out \"$2\"; rc=$?; \
[ $rc -eq 2 ] && [ ! -e \"$2\" ] || { echo \"exit $rc or $2 written\"; exit 1; }"
  sh $<TARGET_FILE:gtb> ${CMAKE_CURRENT_BINARY_DIR}/cli/advise_refused.txt ${_cost_fix}/cost_synthetic.json)
set_tests_properties(gtb_advise_refused_writes_nothing PROPERTIES LABELS "cpu;cost" TIMEOUT 60)

# The savings validation: the fixture's A/B pair in the report (after the step validation), in the
# verdict beside the fix's predicted saving, and in gtb advise's JSON.
gtb_cli_test(gtb_report_savings 0 "1 pair: \\*\\*1 scored, 1 within the target" report ${_cost_fix}/cost_synthetic.json)
gtb_cli_test(gtb_report_verdict_measured_ab 0 "measured here: 1 ms \\(50% of its step" report ${_cost_fix}/cost_synthetic.json)
# The fixture's reference step waits on its loader: a fix of the work the loader hides saves nothing,
# and the verdict says why.
gtb_cli_test(gtb_report_verdict_loader_bound 0 "none predicted: the loader bounds the step" report
             ${_cost_fix}/cost_synthetic.json)
gtb_cli_test(gtb_advise_json_savings 0 "\"savings_validation\"" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 1024 --depth 4 --batch 256 --format json)
gtb_cli_test(gtb_advise_json_measured_ab 0 "\"measured_ab\"" advise ${_cost_fix}/cost_synthetic.json --model mlp
             --width 1024 --depth 4 --batch 256 --format json)
# A file written before pairs existed: its findings derived again by this build's family binaries.
gtb_cli_test(gtb_report_derive_findings 0 "Findings derived again from this file.s records by this version.s family binaries"
             report ${PROJECT_SOURCE_DIR}/tests/fixtures/cpu_b.json --derive-findings)
# A pair this version cannot read costs the savings table a sentence, never the report or the advice.
gtb_cli_test(gtb_report_bad_pair 0 "A/B pairs of this file could not be read \\(findings.train.pairs" report
             ${_cost_fix}/cost_bad_pair.json)
gtb_cli_test(gtb_advise_bad_pair 0 "\"cannot_read\": \"findings.train.pairs" advise ${_cost_fix}/cost_bad_pair.json
             --model mlp --width 1024 --depth 4 --batch 256 --format json)
