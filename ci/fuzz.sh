#!/bin/sh
# Fuzzes the results loader (and compare/report on what it accepts) with libFuzzer for a short while.
# usage: ci/fuzz.sh [seconds]      env: GTB_FUZZ_BUILD (build folder), CXX (default clang++)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${GTB_FUZZ_BUILD:-$root/build-fuzz}
cxx=${CXX:-clang++}
case "$("$cxx" --version 2>/dev/null | head -n1)" in
  *clang*) ;;
  *) echo "ci/fuzz.sh: libFuzzer needs clang (CXX=$cxx)" >&2; exit 2 ;;
esac
# Coverage instrumentation everywhere the target links; -fsanitize=fuzzer itself only on the target.
# -O1 and line tables only: a crash's stack needs no more, and the instrumented build is most of
# this step's time.
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER="$cxx" -DGTB_FUZZ=ON -DGTB_ENABLE_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
echo "ci/fuzz.sh: building fuzz_results_loader in $build"
cmake --build "$build" --target fuzz_results_loader
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"
cp "$root"/tests/fixtures/*.json "$corpus"/
echo "ci/fuzz.sh: fuzzing the results loader for $seconds s (corpus: $corpus)"
# New inputs that raise coverage land in the corpus folder; crashes in $build/fuzz-artifacts/.
mkdir -p "$build/fuzz-artifacts"
"$build/bin/fuzz_results_loader" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1 "$corpus"
