# Yardsticks for the CPU ceilings: small independent programs run by hand to compare against; CI
# builds them and checks that they compute right, never their speed. Where one cannot be built its
# test is still registered and reports Skipped with the reason.
function(gtb_skipped_test name reason)
  add_test(NAME ${name} COMMAND sh -c "echo 'Skipped: ${reason}'; exit 77")
  set_tests_properties(${name} PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endfunction()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_executable(triad_nt tools/triad_nt.cpp)
  target_link_libraries(triad_nt PRIVATE OpenMP::OpenMP_CXX)
  gtb_host_warnings(triad_nt)
  add_test(NAME tools.triad_nt_computes COMMAND triad_nt 4 1)
  set_tests_properties(tools.triad_nt_computes PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
else()
  gtb_skipped_test(tools.triad_nt_computes "triad_nt uses x86-64 intrinsics; this is ${CMAKE_SYSTEM_PROCESSOR}")
endif()
if(GTB_DNNL_INCLUDE_DIR AND GTB_DNNL_LIBRARY)
  add_executable(sgemm_direct tools/sgemm_direct.cpp)
  target_include_directories(sgemm_direct SYSTEM PRIVATE ${GTB_DNNL_INCLUDE_DIR})
  target_link_libraries(sgemm_direct PRIVATE gtb_openblas ${GTB_DNNL_LIBRARY})
  gtb_host_warnings(sgemm_direct)
  add_test(NAME tools.sgemm_direct_computes COMMAND sgemm_direct 96 1 both)
  set_tests_properties(tools.sgemm_direct_computes PROPERTIES LABELS cpu)
else()
  gtb_skipped_test(tools.sgemm_direct_computes "sgemm_direct needs oneDNN, which was not found at configure time")
endif()

# The cost model's answers byte for byte on the committed results files and traces (gtb advise,
# report, diagnose and the verdict's headline), against the sums in tests/fixtures/model_outputs.sha256.
add_executable(model_headline tools/model_headline.cpp)
target_link_libraries(model_headline PRIVATE gtb_driver)
gtb_host_warnings(model_headline)
add_test(NAME tools.model_outputs
  COMMAND sh ${PROJECT_SOURCE_DIR}/tests/tools/model_outputs.sh $<TARGET_FILE:gtb> $<TARGET_FILE:model_headline>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/model_outputs ${PROJECT_SOURCE_DIR}/tests/fixtures/model_outputs.sha256)
# Labelled identity, not cpu: the answers are the same under the sanitizers, where the run takes minutes.
set_tests_properties(tools.model_outputs PROPERTIES LABELS "identity;cost" TIMEOUT 600)

# Every gtb command's output byte for byte (each command, its formats, --out, --help and its errors),
# against the sums in tests/fixtures/command_outputs.sha256; gtb list asks the self-test family.
add_test(NAME tools.command_outputs
  COMMAND sh ${PROJECT_SOURCE_DIR}/tests/tools/command_outputs.sh $<TARGET_FILE:gtb> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/command_outputs ${PROJECT_SOURCE_DIR}/tests/fixtures/command_outputs.sha256)
set_tests_properties(tools.command_outputs PROPERTIES LABELS "identity;cost" TIMEOUT 600)
