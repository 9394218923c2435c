# Yardsticks for the CPU ceilings: small independent programs run by hand to compare against; CI
# builds them and checks that they compute right, never their speed.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_executable(triad_nt tools/triad_nt.cpp)
  target_link_libraries(triad_nt PRIVATE OpenMP::OpenMP_CXX)
  gtb_host_warnings(triad_nt)
  add_test(NAME tools.triad_nt_computes COMMAND triad_nt 4 1)
  set_tests_properties(tools.triad_nt_computes PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endif()
