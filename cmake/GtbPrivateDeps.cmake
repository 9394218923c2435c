# What the optional libraries that ci/setup.sh installs from PyPI into a private prefix (oneMKL,
# oneDNN 3) share: their switch and prefix, why one is not looked for, and where it is looked for.
include_guard(GLOBAL)

# gtb_private_dep(NAME SUBDIR WHAT ARCH_WHY [MORE_HINTS...]) declares the switch GTB_WITH_<NAME> and
# the prefix GTB_<NAME>_ROOT (WHAT names the library in their help), sets GTB_HAVE_<NAME> OFF, and
# sets GTB_<NAME>_REASON to why the library is not looked for: the switch off, the sanitizer build
# (it checks gtb's own code, not prebuilt libraries), or not x86-64 (ARCH_WHY says what is built for
# it); or to "" where it is, with the prefixes to search in GTB_<NAME>_HINTS: GTB_<NAME>_ROOT when
# set, the set-up's prefix (ci/setup.sh: $GTB_DEPS_DIR/SUBDIR, default ~/.cache/gtb/SUBDIR), then
# MORE_HINTS.
function(gtb_private_dep name subdir what arch_why)
  option(GTB_WITH_${name} "Use ${what} where it is found (x86-64; ci/setup.sh installs it)" ON)
  set(GTB_${name}_ROOT "" CACHE PATH
      "Prefix of an installation of ${what} (include/ and lib/); default: the one ci/setup.sh makes")
  set(why "")
  set(hints "")
  if(NOT GTB_WITH_${name})
    set(why "configured with GTB_WITH_${name}=OFF")
  elseif(GTB_SANITIZE)
    set(why "not used in the sanitizer build (GTB_SANITIZE=ON)")
  elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(why "${arch_why}; this is ${CMAKE_SYSTEM_PROCESSOR}")
  else()
    if(GTB_${name}_ROOT)
      list(APPEND hints "${GTB_${name}_ROOT}")
    endif()
    if(DEFINED ENV{GTB_DEPS_DIR})
      list(APPEND hints "$ENV{GTB_DEPS_DIR}/${subdir}")
    endif()
    if(DEFINED ENV{HOME})
      list(APPEND hints "$ENV{HOME}/.cache/gtb/${subdir}")
    endif()
    list(APPEND hints ${ARGN})
  endif()
  set(GTB_HAVE_${name} OFF PARENT_SCOPE)
  set(GTB_${name}_REASON "${why}" PARENT_SCOPE)
  set(GTB_${name}_HINTS "${hints}" PARENT_SCOPE)
endfunction()
