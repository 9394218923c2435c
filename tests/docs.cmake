# The docs' measured figures against the committed results files (ci/doc-figures.py): the real docs
# must pass, and planted twins (a changed figure, an unmarked claim, a block naming a dirty or an
# uncommitted file) must fail with the check's message, so the check cannot silently stop failing.
# Run in the source tree with explicit paths; outside a git checkout the check reports Skipped (77).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(_src ${PROJECT_SOURCE_DIR})
  add_test(NAME docs.figures
           COMMAND ${Python3_EXECUTABLE} ${_src}/ci/doc-figures.py --check --root ${_src}
                   ${_src}/README.md ${_src}/results/README.md ${_src}/docs)
  set(_planted_value   "vectorize.md:[0-9]+: 14.2 GB/s not in results/gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json")
  set(_planted_unmarked "vectorize.md:[0-9]+: unmarked measured figure: The quick suite took 42.5 s")
  set(_planted_dirty   "doc.md:3: results/r.json says context.build.git_dirty: true")
  set(_planted_uncommitted "doc.md:3: results/r.json is not committed")
  foreach(mode value unmarked dirty uncommitted)
    add_test(NAME docs.figures_planted_${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "${_planted_${mode}}"
                     ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/doc_figures_planted.py ${mode} ${_src}
                     ${CMAKE_CURRENT_BINARY_DIR}/docs-planted-${mode})
    list(APPEND _docs_tests docs.figures_planted_${mode})
  endforeach()
  # Results files are committed from a clean tree only (or declared in results/README.md).
  add_test(NAME results.clean COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_results_clean.py ${_src})
  add_test(NAME results.clean_planted
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "FAIL: results/gtb-planted.json: context.build.git_dirty is true"
                   bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/results_clean_planted.sh ${Python3_EXECUTABLE} ${_src}
                   ${CMAKE_CURRENT_BINARY_DIR}/results-clean-planted)
  list(APPEND _docs_tests results.clean results.clean_planted)
  # The working tree travels: at most 40 MiB of files (tracked, and untracked ones not ignored), so a
  # lent GPU machine receives it (it takes 64 MiB, a build's carried files included). Planted: an
  # untracked 41 MiB file fails, named; the same file in an ignored folder does not travel and passes.
  add_test(NAME tree.size COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_tree_size.py ${_src})
  add_test(NAME tree.size_planted_over
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/expect_fail.sh "41\\.00 MiB  results/gtb-planted-big\\.json"
                   bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/tree_size_planted.sh over ${Python3_EXECUTABLE} ${_src}
                   ${CMAKE_CURRENT_BINARY_DIR}/tree-size-planted-over)
  add_test(NAME tree.size_planted_ignored
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/tree_size_planted.sh ignored ${Python3_EXECUTABLE} ${_src}
                   ${CMAKE_CURRENT_BINARY_DIR}/tree-size-planted-ignored)
  list(APPEND _docs_tests tree.size tree.size_planted_over tree.size_planted_ignored)
  set_tests_properties(docs.figures ${_docs_tests} PROPERTIES
                       LABELS cpu TIMEOUT 60 SKIP_RETURN_CODE 77 WORKING_DIRECTORY ${_src})
else()
  add_test(NAME docs.figures COMMAND sh -c "echo 'Skipped: no Python 3 interpreter found'; exit 77")
  set_tests_properties(docs.figures PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endif()
