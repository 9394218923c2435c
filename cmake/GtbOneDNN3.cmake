# Finds the current oneDNN (3.x) as PyPI's onednn-cpu-gomp and onednn-devel-cpu-gomp wheels lay it out
# (ci/setup.sh installs them into a private prefix on x86-64), or any prefix with
# include/oneapi/dnnl/dnnl.h of version 3 or later and lib/libdnnl.so.3.
#
# Sets GTB_HAVE_DNNL3 and, found, GTB_DNNL3_INCLUDE_DIR and GTB_DNNL3_LIBRARY (the file the loader
# opens); absent, GTB_DNNL3_REASON says why (the oneDNN 3 records are skipped with it).
#
# Not linked: Debian's oneDNN 2.6 (libdnnl.so.2) is linked into the same programs and both export the
# same C and C++ names. kernels/common/cpu/dnnl3.cpp loads libdnnl.so.3 at run time into a scope of
# its own (RTLD_LOCAL | RTLD_DEEPBIND) and calls its C API through the handle; its headers are given
# to that one source only, so that no other source sees oneDNN 3's declarations in place of 2.6's.
include(${CMAKE_CURRENT_LIST_DIR}/GtbPrivateDeps.cmake)
# The sanitizer build leaves oneDNN 3 out: RTLD_DEEPBIND and AddressSanitizer exclude each other.
gtb_private_dep(DNNL3 onednn "the current oneDNN (3.x)" "oneDNN 3's PyPI wheels are built for x86-64 only")
if(NOT GTB_DNNL3_REASON)
  # NO_DEFAULT_PATH: the system's include/oneapi/dnnl is Debian's 2.6, never this one.
  find_path(GTB_DNNL3_INCLUDE_DIR oneapi/dnnl/dnnl_version.h HINTS ${GTB_DNNL3_HINTS}
            PATH_SUFFIXES include local/include NO_DEFAULT_PATH DOC "oneDNN 3 headers (PyPI: onednn-devel-cpu-gomp)")
  find_library(GTB_DNNL3_LIBRARY NAMES libdnnl.so.3 HINTS ${GTB_DNNL3_HINTS} PATH_SUFFIXES lib local/lib
               NO_DEFAULT_PATH DOC "oneDNN 3's library (PyPI: onednn-cpu-gomp)")
  if(GTB_DNNL3_INCLUDE_DIR AND GTB_DNNL3_LIBRARY)
    file(STRINGS "${GTB_DNNL3_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" _gtb_dnnl3_major
         REGEX "^#define DNNL_VERSION_MAJOR [0-9]+")
    string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _gtb_dnnl3_major "${_gtb_dnnl3_major}")
    get_filename_component(_gtb_dnnl3_real "${GTB_DNNL3_LIBRARY}" REALPATH)
    if(NOT _gtb_dnnl3_major OR _gtb_dnnl3_major LESS 3)
      set(GTB_DNNL3_REASON "the oneDNN headers at ${GTB_DNNL3_INCLUDE_DIR} are not version 3 or later")
    elseif(NOT EXISTS "${GTB_DNNL3_INCLUDE_DIR}/oneapi/dnnl/dnnl.h")
      set(GTB_DNNL3_REASON "oneDNN 3 at ${GTB_DNNL3_INCLUDE_DIR} has no oneapi/dnnl/dnnl.h")
    else()
      set(GTB_HAVE_DNNL3 ON)
      message(STATUS "gtb: oneDNN 3 found (${_gtb_dnnl3_real}; loaded at run time)")
    endif()
  else()
    set(GTB_DNNL3_REASON "oneDNN 3 not found (oneapi/dnnl/dnnl.h and libdnnl.so.3): run ci/setup.sh, or set GTB_DNNL3_ROOT")
  endif()
endif()

# The one source that loads it gets its headers and path; the others only the switch.
function(gtb_use_dnnl3 target source)
  if(GTB_HAVE_DNNL3)
    get_filename_component(_real "${GTB_DNNL3_LIBRARY}" REALPATH)
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_OPTIONS "-isystem;${GTB_DNNL3_INCLUDE_DIR}"
      COMPILE_DEFINITIONS "GTB_HAVE_DNNL3=1;GTB_DNNL3_LIBRARY=\"${_real}\"")
    target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  else()
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "GTB_DNNL3_REASON=\"${GTB_DNNL3_REASON}\"")
    message(STATUS "gtb: ${GTB_DNNL3_REASON}; the oneDNN 3 records will be skipped")
  endif()
endfunction()
