# Finds Intel oneMKL as PyPI's mkl and mkl-include wheels lay it out (ci/setup.sh installs them into a
# private prefix on x86-64), or any prefix with include/mkl_cblas.h and lib/libmkl_rt.so.
#
# Always defines the imported target gtb::mkl, for the one source that loads the library. Found: its
# headers, GTB_HAVE_MKL=1 and the library's path in GTB_MKL_LIBRARY, and GTB_HAVE_MKL set here.
# Absent, or GTB_WITH_MKL=OFF: GTB_HAVE_MKL off and GTB_MKL_REASON (also a definition of the target)
# says why; the MKL records are skipped with that reason.
#
# The library is not linked: code loads it at run time and calls it through its handle, because
# MKL and OpenBLAS both export the CBLAS names and one process uses both; linked, whichever came
# first would answer every cblas_sgemm call.
include(${CMAKE_CURRENT_LIST_DIR}/GtbPrivateDeps.cmake)
# The sanitizer build leaves MKL out: its prebuilt gigabyte is not instrumented, and its
# process-lifetime buffers would only add noise to the leak report. An Intel installation's prefix
# is searched last.
gtb_private_dep(MKL mkl "Intel oneMKL" "oneMKL is built for x86-64 only" $ENV{MKLROOT})
if(NOT GTB_MKL_REASON)
  # local/: where Debian's pip puts a --prefix install's data files.
  find_path(GTB_MKL_INCLUDE_DIR mkl_cblas.h HINTS ${GTB_MKL_HINTS} PATH_SUFFIXES include local/include
            DOC "oneMKL headers (PyPI: mkl-include)")
  find_library(GTB_MKL_LIBRARY NAMES libmkl_rt.so.3 libmkl_rt.so.2 mkl_rt HINTS ${GTB_MKL_HINTS}
               PATH_SUFFIXES lib local/lib DOC "oneMKL's single dynamic library (PyPI: mkl)")
  if(GTB_MKL_INCLUDE_DIR AND GTB_MKL_LIBRARY)
    # Resolve the unversioned name to the file the loader will open.
    get_filename_component(_gtb_mkl_real "${GTB_MKL_LIBRARY}" REALPATH)
    get_filename_component(_gtb_mkl_dir "${_gtb_mkl_real}" DIRECTORY)
    # The GNU OpenMP threading layer keeps MKL on the process's libgomp; without it MKL would bring
    # libiomp5, a second OpenMP runtime beside the project's.
    file(GLOB _gtb_mkl_gnu "${_gtb_mkl_dir}/libmkl_gnu_thread.so*")
    if(NOT _gtb_mkl_gnu)
      set(GTB_MKL_REASON "oneMKL at ${_gtb_mkl_dir} has no GNU OpenMP threading layer (libmkl_gnu_thread)")
    else()
      set(GTB_HAVE_MKL ON)
      add_library(gtb::mkl INTERFACE IMPORTED)
      target_include_directories(gtb::mkl SYSTEM INTERFACE "${GTB_MKL_INCLUDE_DIR}")
      target_compile_definitions(gtb::mkl INTERFACE GTB_HAVE_MKL=1 GTB_MKL_LIBRARY="${_gtb_mkl_real}")
      target_link_libraries(gtb::mkl INTERFACE ${CMAKE_DL_LIBS})
      message(STATUS "gtb: oneMKL found (${_gtb_mkl_real}; GNU OpenMP threading layer)")
    endif()
  else()
    set(GTB_MKL_REASON "oneMKL not found (mkl_cblas.h and libmkl_rt): run ci/setup.sh, or set GTB_MKL_ROOT")
  endif()
endif()
if(NOT GTB_HAVE_MKL)
  add_library(gtb::mkl INTERFACE IMPORTED)
  target_compile_definitions(gtb::mkl INTERFACE GTB_MKL_REASON="${GTB_MKL_REASON}")
  message(STATUS "gtb: ${GTB_MKL_REASON}; the MKL records will be skipped")
endif()
