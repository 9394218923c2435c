#!/usr/bin/env bash
# The one check for a machine with an NVIDIA GPU: builds what the check needs, runs the GPU tests, the
# quick suite (the results file) and PyTorch's figures for the same work, prints gtb vs PyTorch, then
# builds the rest and runs the CPU tests and compute-sanitizer memcheck. Logs and results in OUTDIR.
#
# usage: ci/gpu-check.sh OUTDIR [--build DIR] [--arch LIST] [--smoke] [--deadline SECONDS] [--export DIR]
#   --build DIR      use an existing build folder instead of configuring build-gpu/
#   --arch LIST      CUDA architectures to build (default 90: H100/H200; e.g. "80;90")
#   --smoke          build, GPU tests and a short GPU subset of the quick suite only (about 4 minutes)
#   --deadline S     the whole check ends within S seconds (default 480, smoke 240; 0: no limit): a
#                    phase that would start with too little time left is reported "not run"
#   --export DIR     after every phase, refresh DIR/gpu-check.tar.gz (OUTDIR packed) and copy the
#                    results files there, so that a check cut short still leaves them
# Each phase has its own budget, counted from its own start (GTB_<PHASE>_SECONDS overrides it); a
# phase that runs out is reported "timeout", never FAIL, and its seconds are printed. Exit status:
# 1 when something failed, 0 otherwise (timeouts and phases not run are in the summary).
# Without gtb's -dev packages on the machine, bring the bundle of ci/prepare-gpu-bundle.sh
# (docs/gpu-check.md).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/gpu-check-lib.sh"
source "$here/families.sh"
usage() { echo "usage: $0 OUTDIR [--build DIR] [--arch LIST] [--smoke] [--deadline SECONDS] [--export DIR]" >&2; exit 2; }
out=${1:-}
[ -n "$out" ] && [ "${out#-}" = "$out" ] || usage
shift
build="" arch="90" smoke=0 deadline="" export_dir=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --arch) [ $# -ge 2 ] || usage; arch=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --deadline) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || usage; deadline=$2; shift 2 ;;
    --export) [ $# -ge 2 ] || usage; export_dir=$2; shift 2 ;;
    *) echo "gpu-check: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$deadline" ] || deadline=$([ $smoke = 1 ] && echo 240 || echo 480)
[ "$deadline" -eq 0 ] || [ "$deadline" -ge 60 ] || { echo "gpu-check: --deadline is 0 (none) or at least 60" >&2; exit 2; }
[ -z "$build" ] || [ -d "$build" ] || { echo "gpu-check: --build $build: no such folder" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
if [ -n "$export_dir" ]; then mkdir -p "$export_dir" && export_dir=$(cd "$export_dir" && pwd) || exit 2; fi
start=$(date +%s)
jobs=$(nproc)
: >"$out/gpu-check.log"
log() { echo "[gpu-check $(( $(date +%s) - start ))s] $*" | tee -a "$out/gpu-check.log"; }
declare -A verdict secs
order=()

# Phase budgets: the phase's own cap, cut only by the overall deadline (minus what the summary needs).
budget() {  # budget CAP -> seconds, or 0 when less than 20 s are left
  local cap=$1 left
  [ "$deadline" -gt 0 ] || { echo "$cap"; return; }
  left=$(( start + deadline - 10 - $(date +%s) ))
  [ "$left" -lt 20 ] && { echo 0; return; }
  [ "$left" -lt "$cap" ] && echo "$left" || echo "$cap"
}
phase_begin() { order+=("$1"); phase_t0=$(date +%s); log "$1 (budget $2 s)"; }
phase_end() {  # phase_end NAME VERDICT
  secs[$1]=$(( $(date +%s) - phase_t0 ))
  verdict[$1]=$2
  log "$1: $2 (${secs[$1]} s)"
  export_now
}
not_run() { order+=("$1"); verdict[$1]="not run: $2"; secs[$1]=0; log "$1: not run: $2"; }
export_now() {
  [ -n "$export_dir" ] || return 0
  cp -f "$out"/gtb-*.json "$export_dir/" 2>/dev/null
  tar -czf "$export_dir/.gpu-check.tar.gz.tmp" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null &&
    mv -f "$export_dir/.gpu-check.tar.gz.tmp" "$export_dir/gpu-check.tar.gz"
}

# 1. Dependencies: the machine's own, or the bundle unpacked into a private prefix.
prefix_args=()
bundle=$root/.gpu-bundle
if [ -d "$bundle/debs" ]; then
  dep=$bundle/root
  if [ ! -f "$dep/.unpacked" ]; then
    log "unpacking $(ls "$bundle/debs" | wc -l) bundled packages"
    rm -rf "$dep.tmp" && mkdir -p "$dep.tmp"
    ok=1
    for d in "$bundle"/debs/*.deb; do
      gc_unpack_deb "$d" "$dep.tmp" 2>>"$out/gpu-check.log" || { log "cannot unpack $(basename "$d")"; ok=0; }
    done
    if [ $ok = 1 ]; then
      # pkg-config files name /usr; point them at the private prefix (used where pkg-config exists).
      find "$dep.tmp" -name '*.pc' -exec sed -i "s|=/usr/|=$dep/usr/|g; s|^prefix=/usr\$|prefix=$dep/usr|" {} +
      rm -rf "$dep" && mv "$dep.tmp" "$dep" && touch "$dep/.unpacked"
    else
      log "the bundle is incomplete; building against the machine's own packages"
      rm -rf "$dep.tmp"
    fi
  fi
  if [ -f "$dep/.unpacked" ]; then
    lib=$dep/usr/lib/x86_64-linux-gnu
    export PKG_CONFIG_PATH="$lib/openblas-openmp/pkgconfig:$lib/pkgconfig:$dep/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export LD_LIBRARY_PATH="$lib/openblas-openmp:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    prefix_args=(-DCMAKE_PREFIX_PATH="$dep/usr" -DCMAKE_LIBRARY_PATH="$lib/openblas-openmp;$lib")
  fi
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current \
  --format=csv >"$out/nvidia-smi.csv" 2>&1 || echo "nvidia-smi: not available" >"$out/nvidia-smi.csv"

# 2. Build only what the GPU tests and the suite need (the rest is built before the CPU tests).
# Ninja keeps going past a failed target, so one broken test does not cost the results file.
keep_going() { grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/CMakeCache.txt" 2>/dev/null && echo "-k 0"; }
b=$(budget "${GTB_BUILD_SECONDS:-300}")
phase_begin build "$b"
t_end=$(( $(date +%s) + b ))
rc=0
if [ -z "$build" ]; then
  build=$root/build-gpu
  timeout "$b" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" "${prefix_args[@]}" >"$out/configure.log" 2>&1 || rc=$?
  [ $rc = 0 ] || tail -30 "$out/configure.log"
  what="configure (configure.log)"
else
  build=$(cd "$build" && pwd) || exit 2
fi
if [ $rc = 0 ]; then
  left=$(( t_end - $(date +%s) )); [ $left -lt 1 ] && left=1
  timeout "$left" cmake --build "$build" -j "$jobs" --target gpu_check_targets -- $(keep_going) >"$out/build.log" 2>&1 || rc=$?
  [ $rc = 0 ] || grep -m20 -E "error|Error" "$out/build.log"
  what="build (build.log)"
fi
case $rc in
  0) phase_end build pass ;;
  124|137) phase_end build "timeout: $what" ;;
  *) phase_end build "FAIL: $what" ;;
esac
# GTB_BUILT_WITH_CUDA is written by CMakeLists.txt: the one reliable sign of a CUDA build.
has_cuda=0
grep -q '^GTB_BUILT_WITH_CUDA:INTERNAL=ON$' "$build/CMakeCache.txt" 2>/dev/null && has_cuda=1
[ $has_cuda = 1 ] || [ ! -f "$build/CMakeCache.txt" ] ||
  log "WARNING: $build has no CUDA backend: the GPU records will be skipped and no GPU test exists"

# 3. GPU tests: each binary directly (one CUDA context each), one at a time (they share the device).
mapfile -t gpu_bins < <(gc_test_binaries "$build" gpu | grep .)
b=$(budget "${GTB_GPU_TESTS_SECONDS:-180}")
if [ ! -f "$build/CMakeCache.txt" ]; then not_run gpu-tests "no configured build"
elif [ $has_cuda = 0 ]; then not_run gpu-tests "the build has no CUDA backend"
elif [ ${#gpu_bins[@]} -eq 0 ]; then not_run gpu-tests "no GPU test binaries in $build"
elif [ "$b" -eq 0 ]; then not_run gpu-tests "out of time (overall deadline)"
else
  phase_begin gpu-tests "$b"
  gc_run_binaries "$out/gpu-tests" "$b" -- "${gpu_bins[@]}" >"$out/gpu-tests.txt"
  v=$(gc_verdict "GPU test binaries" <"$out/gpu-tests.txt")
  # Nothing ran: say why (no usable GPU and the CUDA error, or every test skipped).
  case $v in skipped*) v="$v: $(gc_skip_reason "$out/gpu-tests")" ;; esac
  phase_end gpu-tests "$v"
  cat "$out/gpu-tests.txt"
fi
gpu_usable=1
case ${verdict[gpu-tests]:-} in skipped*|"not run"*) gpu_usable=0 ;; esac

# 4. The quick suite: the results file. Written before the slower phases start.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//')
[ -n "$gpu" ] || gpu=no-gpu
results="$out/gtb-${gpu}-$(date -u +%Y%m%d).json"
b=$(budget "${GTB_SUITE_SECONDS:-240}")
if [ ! -x "$build/bin/gtb" ]; then not_run quick-suite "no gtb binary in $build/bin"
elif [ "$b" -eq 0 ]; then not_run quick-suite "out of time (overall deadline)"
else
  suite_args=(run --quick --out "$results" --logs "$out/suite-logs")
  # The smoke subset: the families whose GPU side the first runs need most, with short budgets.
  [ $smoke = 1 ] && suite_args+=(--family "${GTB_SMOKE_FAMILIES:-$(ci_families "$root" gpu-smoke)}" --budget 0.05)
  phase_begin quick-suite "$b"
  # SIGTERM at the budget: gtb then writes the families that completed.
  timeout -k 15 "$b" "$build/bin/gtb" "${suite_args[@]}" >"$out/suite.txt" 2>&1
  phase_end quick-suite "$(gc_suite_verdict $? "$results")"
fi

# 5. The families' own phases: gpu_check_step of each bench/<family>/ci.sh (ci/families.sh), in
# bench/ order. A step runs in this shell with its helpers and variables (budget, phase_begin,
# phase_end, not_run, gc_suite_verdict; $build, $out, $gpu, $smoke) and adds any results file it
# writes for the gtb vs PyTorch table to extra_results.
extra_results=()
for step_file in "$root"/bench/*/ci.sh; do
  unset -f gpu_check_step
  source "$step_file"
  if declare -F gpu_check_step >/dev/null; then gpu_check_step; fi
done
unset -f gpu_check_step

# 6. PyTorch's figures for the same work on the same GPU, then the table.
torch_reference=$root/tests/torch/torch-reference.py
b=$(budget "${GTB_TORCH_SECONDS:-120}")
torch_json="$out/torch-reference.json"
if [ $smoke = 1 ]; then not_run torch-reference "smoke check"
elif ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >"$out/torch-probe.log" 2>&1; then
  not_run torch-reference "PyTorch with a usable CUDA device not found"
elif [ "$b" -eq 0 ]; then not_run torch-reference "out of time (overall deadline)"
else
  phase_begin torch-reference "$b"
  timeout -k 10 "$b" python3 "$torch_reference" "$torch_json" >"$out/torch-reference.log" 2>&1
  rc=$?
  phase_end torch-reference "$(case $rc in 0) echo done ;; 124|137) echo timeout ;; *) echo "FAIL (exit $rc)" ;; esac)"
fi
if command -v python3 >/dev/null; then
  gtb_files=(--gtb "$results")
  for f in "${extra_results[@]}"; do gtb_files+=(--gtb "$f"); done
  python3 "$torch_reference" --table "${gtb_files[@]}" --torch "$torch_json" \
    >"$out/gtb-vs-torch.md" 2>>"$out/gpu-check.log"
fi
[ -f "$results" ] && "$build/bin/gtb" report "$results" >"$out/report.md" 2>/dev/null
export_now

# 7. The rest of the build, then the CPU tests, several at once.
b=$(budget "${GTB_CPU_TESTS_SECONDS:-240}")
if [ $smoke = 1 ]; then not_run cpu-tests "smoke check"
elif [ "$b" -eq 0 ]; then not_run cpu-tests "out of time (overall deadline)"
else
  phase_begin cpu-tests "$b"
  t_end=$(( $(date +%s) + b ))
  if ! timeout "$b" cmake --build "$build" -j "$jobs" >>"$out/build.log" 2>&1; then
    phase_end cpu-tests "$([ $(date +%s) -ge $t_end ] && echo "timeout (building the CPU tests)" || echo "FAIL: build (build.log)")"
  else
    timeout -k 10 $(( t_end - $(date +%s) > 10 ? t_end - $(date +%s) : 10 )) \
      ctest --test-dir "$build" -L '^cpu$' -j "$jobs" --timeout 120 --output-on-failure >"$out/ctest-cpu.log" 2>&1
    phase_end cpu-tests "$(gc_ctest_verdict $?): $(grep -hE 'tests passed|tests failed' "$out/ctest-cpu.log" | tail -1)"
  fi
fi

# 8. compute-sanitizer memcheck on the GPU test binaries, all at once (the GPU has room; the
# sanitizer's cost is mostly on the host), each with the phase's budget.
for d in /usr/local/cuda/compute-sanitizer /usr/local/cuda/bin; do
  command -v compute-sanitizer >/dev/null || { [ -x "$d/compute-sanitizer" ] && export PATH="$d:$PATH"; }
done
b=$(budget "${GTB_MEMCHECK_SECONDS:-180}")
if [ $smoke = 1 ]; then not_run memcheck "smoke check"
elif [ $gpu_usable = 0 ]; then not_run memcheck "no GPU tests ran (${verdict[gpu-tests]:-})"
elif ! command -v compute-sanitizer >/dev/null; then not_run memcheck "compute-sanitizer not found"
elif [ "$b" -eq 0 ]; then not_run memcheck "out of time (overall deadline)"
else
  phase_begin memcheck "$b"
  GC_PARALLEL=1 GC_WRAP="compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full" \
    gc_run_binaries "$out/memcheck" "$b" GTB_NO_TIMING_ASSERTS=1 -- "${gpu_bins[@]}" >"$out/memcheck.txt"
  phase_end memcheck "$(gc_verdict "memcheck runs" <"$out/memcheck.txt")"
fi

# 9. The summary: verdicts, seconds per phase, and gtb vs PyTorch.
{
  echo
  echo "gpu-check summary ($(( $(date +%s) - start )) s; GPU: $(sed -n 2p "$out/nvidia-smi.csv" 2>/dev/null | grep . || echo none))"
  for k in "${order[@]}"; do printf '  %-16s %5s s  %s\n' "$k" "${secs[$k]}" "${verdict[$k]}"; done
  [ -f "$results" ] && echo "  results file: $results" || echo "  results file: none"
  echo
  [ -f "$out/gtb-vs-torch.md" ] && cat "$out/gtb-vs-torch.md"
  echo
  echo "logs and results in $out"
} | tee "$out/summary.txt"
export_now
for k in "${order[@]}"; do case ${verdict[$k]} in FAIL*) exit 1 ;; esac; done
exit 0
