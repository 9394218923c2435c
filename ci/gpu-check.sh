#!/usr/bin/env bash
# The one check for a machine with an NVIDIA GPU, GPU work first: builds what the check needs, runs a
# first pass of every family's GPU quick records, the GPU tests, the families' phases declared to
# follow them (the rest of a family's first GPU records), the rest of the GPU records, the families'
# other GPU phases, PyTorch's figures for the same work (gtb vs PyTorch) and compute-sanitizer memcheck;
# then the CPU quick records, the rest of the build and the CPU tests. Logs and results in OUTDIR. The
# phases, their order and their budgets: gc_plan (ci/gpu-check-lib.sh), which this script runs line by
# line; docs/gpu-check.md.
#
# usage: ci/gpu-check.sh OUTDIR [--build DIR] [--arch LIST] [--smoke] [--deadline SECONDS] [--export DIR]
#   --build DIR      use an existing build folder instead of configuring build-gpu/
#   --arch LIST      CUDA architectures to build (default 90: H100/H200; e.g. "80;90")
#   --smoke          build, a short GPU subset of the quick suite and the GPU tests only (about 4 minutes)
#   --deadline S     the whole check ends within S seconds (default 480, smoke 240; 0: no limit): a
#                    phase that would start with too little time left is reported "not run"
#   --export DIR     after every phase, refresh DIR/gpu-check.tar.gz (OUTDIR packed) and copy the
#                    results files there, so that a check cut short still leaves them
# Each phase has its own budget, counted from its own start (GTB_<PHASE>_SECONDS overrides it), its
# kill grace inside it (gc_timeout); a phase that runs out is reported "timeout", never FAIL, and its
# seconds are printed. The check ends before --deadline: the summary and the archive fit in the
# GC_RESERVE seconds the phases leave. Exit status:
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
start=$(gc_now)
jobs=$(nproc)
: >"$out/gpu-check.log"
log() { echo "[gpu-check $(( $(gc_now) - start ))s] $*" | tee -a "$out/gpu-check.log"; }
declare -A verdict secs
order=()

# Phase budgets: the phase's own cap, cut only by the overall deadline minus the reserve for the
# summary and the archive.
left_s() { echo $(( start + deadline - GC_RESERVE - $(gc_now) )); }
budget() {  # budget CAP -> seconds, or 0 when less than 20 s are left
  local cap=$1 left
  [ "$deadline" -gt 0 ] || { echo "$cap"; return; }
  left=$(left_s)
  [ "$left" -lt 20 ] && { echo 0; return; }
  [ "$left" -lt "$cap" ] && echo "$left" || echo "$cap"
}
# phase_budget NAME: budget() of GTB_<NAME>_SECONDS (NAME upper-cased, - as _) or the plan's default.
phase_budget() {
  local var="GTB_$(echo "$1" | tr 'a-z-' 'A-Z_')_SECONDS"
  budget "${!var:-$(gc_default_budget "$root" "$1")}"
}
# between_phases SECONDS CMD...: a step outside the phases (the table, the report), bounded by
# SECONDS and by what the deadline leaves; skipped when nothing is left.
between_phases() {
  local cap=$1 b; shift
  b=$(budget "$cap")
  [ "$b" -gt 0 ] || { log "skipped (out of time): $*"; return 0; }
  gc_timeout "$b" "$@"
}
phase_begin() { order+=("$1"); phase_t0=$(gc_now); log "$1 (budget $2 s)"; }
phase_end() {  # phase_end NAME VERDICT
  secs[$1]=$(( $(gc_now) - phase_t0 ))
  verdict[$1]=$2
  log "$1: $2 (${secs[$1]} s)"
  export_now "$(export_bound)"
}
not_run() { order+=("$1"); verdict[$1]="not run: $2"; secs[$1]=0; log "$1: not run: $2"; }
# phase_open NAME, for a phase the smoke check leaves out: not run (status 1) in the smoke check or
# when the deadline leaves nothing; otherwise begun, with its budget in the caller's b and its end
# in the caller's t_end.
phase_open() {
  b=$(phase_budget "$1")
  if [ $smoke = 1 ]; then not_run "$1" "smoke check"; return 1; fi
  if [ "$b" -eq 0 ]; then not_run "$1" "out of time (overall deadline)"; return 1; fi
  phase_begin "$1" "$b"
  t_end=$(( $(gc_now) + b ))
}
# phase_left MIN: the seconds to the caller's t_end, at least MIN.
phase_left() {
  local l=$(( t_end - $(gc_now) ))
  [ "$l" -ge "$1" ] && echo "$l" || echo "$1"
}
# Between phases the archive may take what the deadline leaves the phases (20 s at most, 2 s at least).
export_bound() {
  local l=20
  [ "$deadline" -eq 0 ] || l=$(left_s)
  [ "$l" -gt 20 ] && l=20
  [ "$l" -lt 2 ] && l=2
  echo "$l"
}
export_now() {  # export_now [SECONDS]: the archive, bounded (default 20 s: it is a few MB of logs)
  [ -n "$export_dir" ] || return 0
  cp -f "$out"/gtb-*.json "$export_dir/" 2>/dev/null
  gc_timeout "${1:-20}" tar -czf "$export_dir/.gpu-check.tar.gz.tmp" -C "$(dirname "$out")" "$(basename "$out")" \
    2>/dev/null && mv -f "$export_dir/.gpu-check.tar.gz.tmp" "$export_dir/gpu-check.tar.gz"
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

# The phases, in the plan's order (gc_plan): one function per kind, each given the phase's name.
# GTB_BUILT_WITH_CUDA is written by CMakeLists.txt: the one reliable sign of a CUDA build.
has_cuda() { grep -q '^GTB_BUILT_WITH_CUDA:INTERNAL=ON$' "$build/CMakeCache.txt" 2>/dev/null; }
configure=0
if [ -z "$build" ]; then build=$root/build-gpu configure=1; else build=$(cd "$build" && pwd) || exit 2; fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//')
[ -n "$gpu" ] || gpu=no-gpu
day=$(date -u +%Y%m%d)
first="$out/gtb-${gpu}-first-${day}.json"   # every family's first GPU records
second="$out/gtb-${gpu}-second-${day}.json"  # their next few
results="$out/gtb-${gpu}-${day}.json"        # the rest of the GPU records
cpu_results="$out/gtb-${gpu}-cpu-${day}.json"
# A results file counts only when this check wrote it (a family's phase reads what the passes held).
rm -f "$first" "$second" "$results" "$cpu_results"
suite_file() { case $1 in gpu-first) echo "$first" ;; gpu-second) echo "$second" ;; gpu-rest) echo "$results" ;;
  cpu-suite) echo "$cpu_results" ;; *) echo "$out/gtb-${gpu}-$1-${day}.json" ;; esac; }
gpu_files=()       # the GPU passes' results files, in the order they ran
extra_results=()   # results files of the families' phases for the gtb vs PyTorch table
# gpu_records_held FAMILY FROM: FROM, or how many of FAMILY's GPU records the GPU passes so far hold
# when that is more (a pass holds the first of a family's records, or none of them).
gpu_records_held() {
  local n=0 f
  for f in "${gpu_files[@]}"; do n=$(( n + $(gc_count_records "$f" "$1" cuda) )); done
  [ "$n" -gt "$2" ] && echo "$n" || echo "$2"
}

# Build only what the GPU tests and the suite need (the rest is built before the CPU tests).
# Ninja keeps going past a failed target, so one broken test does not cost the results file.
keep_going() { grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/CMakeCache.txt" 2>/dev/null && echo "-k 0"; }
build_phase() {
  local name=$1 b t_end rc=0 what
  b=$(phase_budget "$name")
  phase_begin "$name" "$b"
  t_end=$(( $(gc_now) + b ))
  if [ $configure = 1 ]; then
    gc_timeout "$b" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="$arch" "${prefix_args[@]}" >"$out/configure.log" 2>&1 || rc=$?
    [ $rc = 0 ] || tail -30 "$out/configure.log"
    what="configure (configure.log)"
  fi
  if [ $rc = 0 ]; then
    gc_timeout "$(phase_left 1)" cmake --build "$build" -j "$jobs" --target gpu_check_targets -- $(keep_going) >"$out/build.log" 2>&1 || rc=$?
    [ $rc = 0 ] || grep -m20 -E "error|Error" "$out/build.log"
    what="build (build.log)"
  fi
  case $rc in
    0) phase_end "$name" pass ;;
    124|137) phase_end "$name" "timeout: $what" ;;
    *) phase_end "$name" "FAIL: $what" ;;
  esac
  has_cuda || [ ! -f "$build/CMakeCache.txt" ] ||
    log "WARNING: $build has no CUDA backend: the GPU records will be skipped and no GPU test exists"
}

# suite_phase NAME FILE ARGS...: one `gtb run --quick` phase into FILE. SIGTERM before the budget's
# end (gc_timeout): gtb then writes the families that completed.
suite_phase() {
  local name=$1 file=$2 b; shift 2
  b=$(phase_budget "$name")
  if [ ! -x "$build/bin/gtb" ]; then not_run "$name" "no gtb binary in $build/bin"
  elif [ "$b" -eq 0 ]; then not_run "$name" "out of time (overall deadline)"
  else
    phase_begin "$name" "$b"
    rm -f "$file"
    gc_timeout "$b" "$build/bin/gtb" run --quick --out "$file" --logs "$out/suite-logs/$name" "$@" >"$out/$name.txt" 2>&1
    phase_end "$name" "$(gc_suite_verdict $? "$file")"
  fi
}

# A pass over every family's GPU quick records (the smoke check: its first pass is the smoke
# families' GPU records with short budgets, and there is no other).
smoke_pass_done=0
gpu_suite_phase() {
  local name=$1 cases=$2 file
  file=$(suite_file "$name")
  if [ $smoke = 1 ]; then
    if [ $smoke_pass_done = 1 ]; then not_run "$name" "smoke check"; return; fi
    smoke_pass_done=1
    suite_phase "$name" "$file" --backend cuda --family "${GTB_SMOKE_FAMILIES:-$(ci_families "$root" gpu-smoke)}" --budget 0.05
  else
    suite_phase "$name" "$file" --backend cuda --cases "$cases"
  fi
  [ -f "$file" ] && gpu_files+=("$file")
}

# The GPU tests: each binary directly (one CUDA context each), one at a time (they share the device).
gpu_bins=()
gpu_usable=0
gpu_tests_phase() {
  local name=$1 b v
  mapfile -t gpu_bins < <(gc_test_binaries "$build" gpu | grep .)
  b=$(phase_budget "$name")
  if [ ! -f "$build/CMakeCache.txt" ]; then not_run "$name" "no configured build"
  elif ! has_cuda; then not_run "$name" "the build has no CUDA backend"
  elif [ ${#gpu_bins[@]} -eq 0 ]; then not_run "$name" "no GPU test binaries in $build"
  elif [ "$b" -eq 0 ]; then not_run "$name" "out of time (overall deadline)"
  else
    phase_begin "$name" "$b"
    gc_run_binaries "$out/$name" "$b" -- "${gpu_bins[@]}" >"$out/$name.txt"
    v=$(gc_verdict "GPU test binaries" <"$out/$name.txt")
    # Nothing ran: say why (no usable GPU and the CUDA error, or every test skipped).
    case $v in skipped*) v="$v: $(gc_skip_reason "$out/$name")" ;; esac
    phase_end "$name" "$v"
    cat "$out/$name.txt"
  fi
  case ${verdict[$name]} in skipped*|"not run"*) gpu_usable=0 ;; *) gpu_usable=1 ;; esac
  gpu_tests_verdict=${verdict[$name]}
}

# A family's own phase: gpu_check_step of the bench/<family>/ci.sh that declares it (ci/families.sh).
# The step runs in this shell with its helpers and variables (phase_budget, budget, phase_begin,
# phase_end, not_run, gc_timeout, gc_suite_verdict, gc_plan_cases, gpu_records_held; $root, $build,
# $out, $gpu, $smoke) and adds any results file it writes for the gtb vs PyTorch table to extra_results.
family_phase() {
  local name=$1 step_file
  for step_file in "$root"/bench/*/ci.sh; do
    unset -f gpu_check_step
    gpu_check_phase=""
    source "$step_file"
    if [ "${gpu_check_phase%% *}" = "$name" ] && declare -F gpu_check_step >/dev/null; then
      gpu_check_step
      unset -f gpu_check_step
      return
    fi
  done
  unset -f gpu_check_step
  not_run "$name" "no bench/*/ci.sh has its gpu_check_step"
}

# PyTorch's figures for the same work on the same GPU (its probe, PyTorch's cold import, inside the
# phase: at most half of it), then the table and the report.
torch_reference=$root/tests/torch/torch-reference.py
torch_json="$out/torch-reference.json"
torch_phase() {
  local name=$1 b t_end rc
  if phase_open "$name"; then
    gc_timeout $(( b / 2 )) python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
      >"$out/torch-probe.log" 2>&1
    rc=$?
    case $rc in
      0)
        gc_timeout "$(phase_left 1)" python3 "$torch_reference" "$torch_json" >"$out/torch-reference.log" 2>&1
        rc=$?
        phase_end "$name" "$(case $rc in 0) echo done ;; 124|137) echo timeout ;; *) echo "FAIL (exit $rc)" ;; esac)" ;;
      124|137) phase_end "$name" "timeout: python3 took over $(( b / 2 )) s to import torch (torch-probe.log)" ;;
      *) phase_end "$name" "not run: PyTorch with a usable CUDA device not found (torch-probe.log)" ;;
    esac
  fi
  # The table reads every GPU results file (a gtb figure is the best of its variants over them).
  local gtb_files=() f
  for f in "${gpu_files[@]}" "${extra_results[@]}"; do gtb_files+=(--gtb "$f"); done
  if command -v python3 >/dev/null; then
    between_phases 30 python3 "$torch_reference" --table "${gtb_files[@]}" --torch "$torch_json" \
      >"$out/gtb-vs-torch.md" 2>>"$out/gpu-check.log"
  fi
  for ((f = ${#gpu_files[@]} - 1; f >= 0; f--)); do
    between_phases 30 "$build/bin/gtb" report "${gpu_files[$f]}" >"$out/report.md" 2>/dev/null
    break
  done
  export_now "$(export_bound)"
}

# compute-sanitizer memcheck on the GPU test binaries, all at once (the GPU has room; the
# sanitizer's cost is mostly on the host), each with the phase's budget.
memcheck_phase() {
  local name=$1 b d
  for d in /usr/local/cuda/compute-sanitizer /usr/local/cuda/bin; do
    command -v compute-sanitizer >/dev/null || { [ -x "$d/compute-sanitizer" ] && export PATH="$d:$PATH"; }
  done
  b=$(phase_budget "$name")
  if [ $smoke = 1 ]; then not_run "$name" "smoke check"
  elif [ $gpu_usable = 0 ]; then not_run "$name" "no GPU tests ran (${gpu_tests_verdict:-})"
  elif ! command -v compute-sanitizer >/dev/null; then not_run "$name" "compute-sanitizer not found"
  elif [ "$b" -eq 0 ]; then not_run "$name" "out of time (overall deadline)"
  else
    phase_begin "$name" "$b"
    GC_PARALLEL=1 GC_WRAP="compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full" \
      gc_run_binaries "$out/$name" "$b" GTB_NO_TIMING_ASSERTS=1 -- "${gpu_bins[@]}" >"$out/$name.txt"
    phase_end "$name" "$(gc_verdict "memcheck runs" <"$out/$name.txt")"
  fi
}

# The CPU quick records: the same machine's CPU side, after every GPU phase.
cpu_suite_phase() {
  if [ $smoke = 1 ]; then not_run "$1" "smoke check"
  else suite_phase "$1" "$(suite_file "$1")" --backend cpu
  fi
}

# The rest of the build, then the CPU tests, several at once.
cpu_tests_phase() {
  local name=$1 b t_end
  if phase_open "$name"; then
    if ! gc_timeout "$b" cmake --build "$build" -j "$jobs" >>"$out/build.log" 2>&1; then
      phase_end "$name" "$([ $(gc_now) -ge $(( t_end - GC_KILL_GRACE )) ] && echo "timeout (building the CPU tests)" || echo "FAIL: build (build.log)")"
    else
      gc_timeout "$(phase_left 3)" ctest --test-dir "$build" -L '^cpu$' -j "$jobs" --timeout 120 --output-on-failure \
        >"$out/ctest-$name.log" 2>&1
      phase_end "$name" "$(gc_ctest_verdict $?): $(grep -hE 'tests passed|tests failed' "$out/ctest-$name.log" | tail -1)"
    fi
  fi
}

# 2. The plan, phase by phase (its lines read before any phase runs: no phase reads them from stdin).
mapfile -t plan < <(gc_plan "$root")
for line in "${plan[@]}"; do
  read -r name _ kind cases _ <<<"$line"
  case $kind in
    build) build_phase "$name" ;;
    gpu-suite) gpu_suite_phase "$name" "$cases" ;;
    gpu-tests) gpu_tests_phase "$name" ;;
    family|family-gpu) family_phase "$name" ;;
    torch) torch_phase "$name" ;;
    memcheck) memcheck_phase "$name" ;;
    cpu-suite) cpu_suite_phase "$name" ;;
    cpu-tests) cpu_tests_phase "$name" ;;
    *) not_run "$name" "unknown kind of phase '$kind' in the plan" ;;
  esac
done

# 3. The summary: verdicts, seconds per phase, and gtb vs PyTorch (within the reserve).
{
  echo
  echo "gpu-check summary ($(( $(gc_now) - start )) s; GPU: $(sed -n 2p "$out/nvidia-smi.csv" 2>/dev/null | grep . || echo none))"
  for k in "${order[@]}"; do printf '  %-16s %5s s  %s\n' "$k" "${secs[$k]}" "${verdict[$k]}"; done
  n=0
  while read -r f; do echo "  results file: $f"; n=$((n + 1)); done < <(find "$out" -maxdepth 1 -name 'gtb-*.json' -newermt "@$start" | sort)
  [ $n -gt 0 ] || echo "  results file: none"
  echo
  [ -f "$out/gtb-vs-torch.md" ] && cat "$out/gtb-vs-torch.md"
  echo
  echo "logs and results in $out"
} | tee "$out/summary.txt"
# The archive in what the reserve leaves (at least 2 s; with no deadline, 60 s).
if [ "$deadline" -gt 0 ]; then
  left=$(( start + deadline - $(gc_now) - 1 )); [ "$left" -ge 2 ] || left=2
else
  left=60
fi
export_now "$left"
for k in "${order[@]}"; do case ${verdict[$k]} in FAIL*) exit 1 ;; esac; done
exit 0
