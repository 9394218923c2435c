#!/bin/bash
# No timing or calibration loop of its own in bench/: a case hands its work to the harness (st.exec,
# gtb::cuda::exec, or the self-timed batch with the harness's helpers), which warms up, calibrates and
# samples. Fails (exit 1) on any clock read or timing loop of the old kind in bench/*/*.{cpp,h,cu}:
# host_seconds(), std::chrono, other host clocks, CUDA event times, time_host(), time_events(),
# measure(), run_samples(). Comments are not read.
# usage: check_bench_timing.sh ROOT            checks ROOT/bench
#        check_bench_timing.sh ROOT --plant DIR  checks a copy of ROOT/bench in DIR with a hand-written
#                                                timing loop added (its planted twin: must fail)
set -u
[ $# -eq 1 ] || { [ $# -eq 3 ] && [ "$2" = "--plant" ]; } || {
  echo "usage: check_bench_timing.sh ROOT [--plant DIR]"
  exit 2
}
root=$1
[ -d "$root/bench" ] || { echo "no bench/ folder under $root"; exit 2; }
if [ $# -eq 3 ]; then
  dir=$3
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$root/bench" "$dir/" || exit 2
  cat >"$dir/bench/planted.cpp" <<'PLANT'
// A case that times itself (the planted twin of check_bench_timing.sh).
#include "gtb/gtb.h"
void planted(gtb::State& st) {
  st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t reps) {
    const double t0 = gtb::host_seconds();  // time_host( in this comment is not read
    for (std::int64_t r = 0; r < reps; ++r) work();
    return gtb::host_seconds() - t0;
  });
}
PLANT
  root=$dir
fi

forbidden='\b(host_seconds|time_host|time_events|measure|run_samples|elapsed_seconds|cudaEventElapsedTime|clock_gettime|gettimeofday|omp_get_wtime|MPI_Wtime)[[:space:]]*\(|std::chrono|steady_clock|high_resolution_clock|system_clock'
found=0
files=$(cd "$root" && find bench -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[ -n "$files" ] || { echo "no sources under $root/bench"; exit 2; }
for f in $files; do
  # Line comments removed (a // inside a string literal is rare in bench/ and only hides text after it).
  hits=$(sed 's://.*$::' "$root/$f" | grep -nE -- "$forbidden")
  [ -z "$hits" ] && continue
  found=1
  printf '%s\n' "$hits" | while IFS= read -r h; do
    echo "FAIL: $f:${h%%:*}: a timing loop or clock read of its own:${h#*:}"
  done
done
if [ $found -ne 0 ]; then
  echo "bench/ must hand its work to the harness's timing (State::exec, gtb::cuda::exec, exec_batch_self_timed"
  echo "with batch_seconds or cuda::TimedRegion): docs/harness.md, timing."
  exit 1
fi
echo "ok: no timing loop of its own in $(printf '%s\n' $files | wc -l) bench sources"
