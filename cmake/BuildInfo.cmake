# Run at build time: records the git commit and whether the tree had uncommitted changes.
cmake_minimum_required(VERSION 3.22)
# configure_file only rewrites OUT when its content changes, so unchanged trees rebuild nothing.
set(commit "unknown")
set(dirty "false")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} -C "${SRC}" rev-parse HEAD
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(commit "${out}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} -C "${SRC}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND NOT out STREQUAL "")
    set(dirty "true")
  endif()
endif()
file(WRITE "${OUT}.in" "// Generated at build time.\nnamespace gtb {\nconst char* build_git_commit() { return \"@commit@\"; }\nbool build_git_dirty() { return @dirty@; }\n}  // namespace gtb\n")
configure_file("${OUT}.in" "${OUT}" @ONLY)
