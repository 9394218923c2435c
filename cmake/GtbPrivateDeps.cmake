# What the optional libraries that ci/setup.sh installs from PyPI into a private prefix (oneMKL,
# oneDNN 3) share: why one is not looked for, and where it is looked for.
include_guard(GLOBAL)

# gtb_private_dep_gate(NAME REASON_VAR ARCH_WHY): sets REASON_VAR to why the library whose switch is
# GTB_WITH_<NAME> is not looked for, or to "" where it is: the switch off, the sanitizer build (it
# checks gtb's own code, not prebuilt libraries), or not x86-64 (ARCH_WHY says what is built for it).
function(gtb_private_dep_gate name reason_var arch_why)
  if(NOT GTB_WITH_${name})
    set(why "configured with GTB_WITH_${name}=OFF")
  elseif(GTB_SANITIZE)
    set(why "not used in the sanitizer build (GTB_SANITIZE=ON)")
  elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(why "${arch_why}; this is ${CMAKE_SYSTEM_PROCESSOR}")
  else()
    set(why "")
  endif()
  set(${reason_var} "${why}" PARENT_SCOPE)
endfunction()

# gtb_private_dep_hints(OUT_VAR ROOT SUBDIR [MORE...]): the prefixes to search, in order: ROOT (the
# library's cache variable, when set), the set-up's prefix (ci/setup.sh: $GTB_DEPS_DIR/SUBDIR,
# default ~/.cache/gtb/SUBDIR), then MORE.
function(gtb_private_dep_hints out_var root subdir)
  set(hints "")
  if(root)
    list(APPEND hints "${root}")
  endif()
  if(DEFINED ENV{GTB_DEPS_DIR})
    list(APPEND hints "$ENV{GTB_DEPS_DIR}/${subdir}")
  endif()
  if(DEFINED ENV{HOME})
    list(APPEND hints "$ENV{HOME}/.cache/gtb/${subdir}")
  endif()
  list(APPEND hints ${ARGN})
  set(${out_var} "${hints}" PARENT_SCOPE)
endfunction()
