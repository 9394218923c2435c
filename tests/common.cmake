# Tests of the pieces every family shares: random inputs and output checks (CPU).
add_executable(test_common cpu/test_common.cpp cpu/test_buffers.cpp)
target_link_libraries(test_common PRIVATE gtb_kernels_common GTest::gtest GTest::gtest_main)
gtb_host_warnings(test_common)
gtest_discover_tests(test_common DISCOVERY_TIMEOUT 60 TEST_PREFIX "common." PROPERTIES LABELS cpu)
