# The parallel family's launcher: the mpirun command it builds, and `gtb run --ranks` end to end.
add_executable(test_launch cpu/test_launch.cpp)
target_link_libraries(test_launch PRIVATE gtb_driver GTest::gtest GTest::gtest_main)
gtb_host_warnings(test_launch)
gtest_discover_tests(test_launch DISCOVERY_TIMEOUT 60 TEST_PREFIX "driver." PROPERTIES LABELS cpu)

if(TARGET gtb-parallel)
  find_package(Python3 COMPONENTS Interpreter)
  foreach(case IN ITEMS two_ranks ranks_zero missing_hostfile mpirun_fails no_mpirun)
    add_test(NAME driver.parallel_${case}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/parallel.sh ${case} $<TARGET_FILE:gtb>
                     ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/validate_schema.py
                     ${CMAKE_CURRENT_BINARY_DIR}/parallel-${case})
    # Under the sanitizers, Open MPI's own allocations past MPI_Finalize are not gtb's leaks.
    # Full unwinding lets the suppressions see Open MPI's frames; CI's own ASAN_OPTIONS are kept.
    set_tests_properties(driver.parallel_${case} PROPERTIES LABELS cpu TIMEOUT 120 SKIP_RETURN_CODE 77
      ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan-openmpi.supp;OMPI_MCA_mca_base_component_disable_dlclose=1"
      ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::fast_unwind_on_malloc=0")
  endforeach()
  # The projections of the N-rank and N-GPU step, from synthetic one-rank records (no MPI or GPU).
  add_test(NAME driver.parallel_projection
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/parallel_projection.sh $<TARGET_FILE:gtb-parallel>
                   ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cpu_b.json
                   ${CMAKE_CURRENT_BINARY_DIR}/parallel-projection)
  set_tests_properties(driver.parallel_projection PROPERTIES LABELS cpu TIMEOUT 60)
  # The multi-process NCCL path needs a GPU per rank: Skipped (77) on machines with fewer than two.
  # Like every GPU test it holds the GPUs alone (it runs the family on them, two ranks).
  add_test(NAME driver.parallel_nccl_two_ranks
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/driver/parallel.sh nccl_two_ranks $<TARGET_FILE:gtb>
                   ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/validate_schema.py
                   ${CMAKE_CURRENT_BINARY_DIR}/parallel-nccl_two_ranks)
  set_tests_properties(driver.parallel_nccl_two_ranks PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                       RESOURCE_LOCK gpu RUN_SERIAL TRUE)
endif()
