# Parallel family: MPI collectives and a data-parallel step on the CPU, NCCL collectives and the step on GPUs.
# The data-parallel step uses the train family's model, data and float64 reference (NEEDS train).
gtb_add_family(NAME parallel
  BENCH bench/parallel/parallel.cpp bench/parallel/findings.cpp bench/parallel/sections.cpp
  CPU_SOURCES kernels/parallel/buckets.cpp kernels/parallel/comm.cpp kernels/parallel/cpu/dp_step.cpp
  CUDA_SOURCES kernels/parallel/cuda/nccl.cpp kernels/parallel/cuda/nccl_fill.cu kernels/parallel/cuda/dp_step.cpp
  CPU_TESTS tests/cpu/test_parallel.cpp
  GPU_TESTS tests/gpu/test_parallel.cpp
  NEEDS train
  OPENBLAS
  RANKS)

if(TARGET gtb_parallel_kernels)
  # Open MPI (Debian: openmpi-bin, libopenmpi-dev) is optional: without it the family builds and its
  # CPU records are skipped with the reason.
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    message(STATUS "gtb: parallel uses MPI ${MPI_CXX_VERSION} (${MPIEXEC_EXECUTABLE})")
    target_link_libraries(gtb_parallel_kernels PUBLIC MPI::MPI_CXX)
    target_compile_definitions(gtb_parallel_kernels PUBLIC GTB_HAVE_MPI=1)
  else()
    message(STATUS "gtb: MPI not found; parallel's CPU records will be skipped")
  endif()
  if(GTB_HAVE_CUDA)
    # NCCL ships with some CUDA toolkits and as NVIDIA's own package; look beside the toolkit first.
    find_path(GTB_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
    find_library(GTB_NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
    gtb_use_optional_library(gtb_parallel_kernels "${GTB_NCCL_INCLUDE_DIR}" "${GTB_NCCL_LIBRARY}" GTB_HAVE_NCCL
      "gtb: parallel uses NCCL (${GTB_NCCL_LIBRARY})" "gtb: NCCL not found; parallel's GPU records will be skipped")
  endif()
endif()
