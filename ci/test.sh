#!/usr/bin/env bash
# Builds gtb and runs every test: the normal build (with CUDA when nvcc is found), the host code again
# under AddressSanitizer + UndefinedBehaviorSanitizer, CLI checks on fixtures, an A/A compare of two
# fresh CPU runs, and a short fuzz of the results loader. Exits non-zero on the first failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup.sh"
source "$here/common.sh"
cd "$gtb_root"
start=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - start )) s)"; }

# The tests are forced on: the main job configures the same build/ without them, and CMake would
# otherwise keep that choice and leave ctest nothing to run. No test found is a failure, never a pass.
step "build (Release, with the tests)"
# Its own log names: the main job's build.log and build.configure.log stay as that job left them.
GTB_BUILD_LOG=build-tests gtb_build build -DGTB_BUILD_TESTS=ON
step "tests"
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" --timeout 600

step "build (host code, AddressSanitizer + UndefinedBehaviorSanitizer)"
gtb_build build-asan -DGTB_SANITIZE=ON -DGTB_BUILD_TESTS=ON
step "CPU tests under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -j "$jobs" -L cpu --timeout 900

for extra in "$here"/test.d/*.sh; do
  [ -e "$extra" ] || continue
  step "$(basename "$extra")"
  bash "$extra" "$gtb_root/build"
done
step "done"
