#!/usr/bin/env bash
# Builds gtb and runs every test: the normal build (with CUDA when nvcc is found), the host code again
# under AddressSanitizer + UndefinedBehaviorSanitizer, CLI checks on fixtures, an A/A compare of two
# fresh CPU runs, and a short fuzz of the results loader. Exits non-zero on the first failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
# Each step's seconds, printed as a table at the end (also when a step fails: the table then ends
# with the step that failed). Beside the wall-clock seconds, the CPU seconds (user + system) of the
# step's processes: on a machine that others load too, those say what the step itself cost.
step_names=() step_starts=() step_cpu=()
cpu_seconds() {  # user + system seconds of this shell's finished (waited-for) children so far
  awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat" 2>/dev/null || echo 0
}
step() {
  echo; echo "== $* ($(( $(date +%s) - start )) s)"
  step_names+=("$*"); step_starts+=("$(date +%s)"); step_cpu+=("$(cpu_seconds)")
}
step_table() {
  local rc=$? now cpu i n=${#step_names[@]}
  now=$(date +%s) cpu=$(cpu_seconds)
  [ "$n" -gt 0 ] || return "$rc"
  echo
  echo "| step of ci/test.sh | seconds | CPU seconds |"
  echo "| --- | ---: | ---: |"
  for ((i = 0; i < n; i++)); do
    local end=$now cend=$cpu
    [ $((i + 1)) -lt "$n" ] && end=${step_starts[$((i + 1))]} cend=${step_cpu[$((i + 1))]}
    echo "| ${step_names[$i]} | $((end - step_starts[i])) | $((cend - step_cpu[i])) |"
  done
  echo "| total$([ "$rc" -eq 0 ] || echo " (FAILED, exit $rc)") | $((now - start)) | $((cpu - step_cpu[0])) |"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  return "$rc"
}
trap step_table EXIT

step "set-up (ci/setup.sh)"
bash "$here/setup.sh" --tests
source "$here/common.sh"
cd "$gtb_root"

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

# The steps of ci/test.d/ in order, except that those with the line "# test.d: beside" (they measure
# nothing and leave a core idle: the fuzzer is one process, the GPU check's test mostly waits on its
# stand-in phases) run first, side by side, each into its own log, shown whole when all have ended;
# the others (the A/A compare measures) run after them, alone.
beside=() alone=()
for extra in "$here"/test.d/*.sh; do
  [ -e "$extra" ] || continue
  if grep -qx '# test.d: beside' "$extra"; then beside+=("$extra"); else alone+=("$extra"); fi
done
if [ ${#beside[@]} -gt 0 ]; then
  names=$(for extra in "${beside[@]}"; do basename "$extra"; done | paste -sd+ | sed 's/+/ + /g')
  step "$names (side by side)"
  side_logs=$(mktemp -d)
  pids=()
  for extra in "${beside[@]}"; do
    bash "$extra" "$gtb_root/build" >"$side_logs/$(basename "$extra").log" 2>&1 &
    pids+=($!)
  done
  failed=()
  for i in "${!beside[@]}"; do
    wait "${pids[$i]}" || failed+=("$(basename "${beside[$i]}")")
  done
  for extra in "${beside[@]}"; do
    echo "-- $(basename "$extra"):"
    cat "$side_logs/$(basename "$extra").log"
  done
  rm -rf "$side_logs"
  [ ${#failed[@]} -eq 0 ] || { echo "FAILED: ${failed[*]}" >&2; exit 1; }
fi
for extra in "${alone[@]}"; do
  step "$(basename "$extra")"
  bash "$extra" "$gtb_root/build"
done
