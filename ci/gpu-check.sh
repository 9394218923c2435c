#!/usr/bin/env bash
# The one check for a machine with an NVIDIA GPU: builds gtb (or uses a given build), runs every test
# including the GPU ones, runs compute-sanitizer memcheck on the GPU test binaries, runs the quick
# suite on the GPU, and leaves logs and the results file in OUTDIR. Ends with a short table.
# Made to finish within 8 minutes on a 16-core H200 machine.
#
# usage: ci/gpu-check.sh OUTDIR [--build DIR] [--arch LIST]
#   --build DIR   use an existing build folder (configured with CUDA) instead of building
#   --arch LIST   CUDA architectures to build (default: 90, the H100/H200; e.g. "80;90")
# Without gtb's -dev packages on the machine, run ci/prepare-gpu-bundle.sh beforehand on a Debian 12
# machine and copy .gpu-bundle/ along with the repository (docs/gpu-check.md).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-}
[ -n "$out" ] || { echo "usage: $0 OUTDIR [--build DIR] [--arch LIST]" >&2; exit 2; }
shift
build="" arch="90"
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    *) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" && out=$(cd "$out" && pwd)
start=$(date +%s)
jobs=$(nproc)
log() { echo "[gpu-check $(( $(date +%s) - start ))s] $*" | tee -a "$out/gpu-check.log"; }
declare -A verdict

# 1. Dependencies: the machine's own, or the bundle unpacked into a private prefix.
prefix_args=()
if [ -d "$root/.gpu-bundle/debs" ]; then
  dep=$root/.gpu-bundle/root
  if [ ! -f "$dep/.unpacked" ]; then
    log "unpacking $(ls "$root/.gpu-bundle/debs" | wc -l) bundled packages"
    mkdir -p "$dep"
    for d in "$root"/.gpu-bundle/debs/*.deb; do dpkg-deb -x "$d" "$dep" 2>>"$out/gpu-check.log" || dpkg -x "$d" "$dep"; done
    # pkg-config files name /usr; point them at the private prefix.
    find "$dep" -name '*.pc' -exec sed -i "s|=/usr/|=$dep/usr/|g; s|^prefix=/usr$|prefix=$dep/usr|" {} +
    touch "$dep/.unpacked"
  fi
  lib=$dep/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_PATH="$lib/openblas-pthread/pkgconfig:$lib/pkgconfig:$dep/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CPATH="$dep/usr/include${CPATH:+:$CPATH}"
  prefix_args=(-DCMAKE_PREFIX_PATH="$dep/usr" -DCMAKE_LIBRARY_PATH="$lib/openblas-pthread;$lib")
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current \
  --format=csv >"$out/nvidia-smi.csv" 2>&1 || true

# 2. Build.
if [ -z "$build" ]; then
  build=$root/build-gpu
  log "configure (CUDA architectures $arch)"
  if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      "${prefix_args[@]}" >"$out/configure.log" 2>&1; then
    log "configure FAILED"; tail -30 "$out/configure.log"; exit 1
  fi
  log "build ($jobs jobs)"
  if ! timeout 330 cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1; then
    log "build FAILED"; grep -m20 -E "error|Error" "$out/build.log"; exit 1
  fi
fi
grep -q "GTB_HAVE_CUDA:INTERNAL=ON\|CMAKE_CUDA_COMPILER:" "$build/CMakeCache.txt" || log "warning: this build may lack CUDA"

# The remaining steps share what is left of the 8 minutes, most important first: GPU tests, the
# quick suite (the results file), the PyTorch reference, the CPU tests, then memcheck.
deadline=$(( start + ${GTB_CHECK_SECONDS:-460} ))
budget() {  # budget MAX RESERVE: seconds for a step, keeping RESERVE for the steps after it
  local left=$(( deadline - $(date +%s) - $2 ))
  [ $left -gt $1 ] && left=$1
  [ $left -lt 10 ] && left=10
  echo $left
}

# 3. GPU tests, one at a time (they share the device).
log "GPU tests"
timeout "$(budget 120 300)" ctest --test-dir "$build" -L gpu -j 1 --timeout 100 --output-on-failure >"$out/ctest-gpu.log" 2>&1
verdict[gpu-tests]=$([ $? -eq 0 ] && echo pass || echo FAIL)
grep -q "(Skipped)" "$out/ctest-gpu.log" && verdict[gpu-tests]="${verdict[gpu-tests]} (some Skipped: see ctest-gpu.log)"

# 4. The quick suite on this machine.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//')
[ -n "$gpu" ] || gpu=no-gpu
results="$out/gtb-${gpu}-$(date -u +%Y%m%d).json"
log "quick suite -> $(basename "$results")"
timeout "$(budget 260 90)" "$build/bin/gtb" run --quick --out "$results" --logs "$out/suite-logs" >"$out/suite.txt" 2>&1
rc=$?
verdict[quick-suite]=$([ $rc -eq 0 ] && echo pass || echo "exit $rc")

# 5. Reference figures from PyTorch on the same machine, where it is installed (targets compare to it).
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  log "PyTorch reference"
  timeout "$(budget 90 60)" python3 "$root/ci/torch-reference.py" "$out/torch-reference.json" >"$out/torch-reference.log" 2>&1
  verdict[torch-reference]=$([ $? -eq 0 ] && echo done || echo failed)
fi

# 6. CPU tests in parallel.
log "CPU tests"
timeout "$(budget 150 30)" ctest --test-dir "$build" -L cpu -j "$jobs" --timeout 120 --output-on-failure >"$out/ctest-cpu.log" 2>&1
verdict[cpu-tests]=$([ $? -eq 0 ] && echo pass || echo FAIL)

# 7. compute-sanitizer memcheck on each GPU test binary, with the time that is left.
for d in /usr/local/cuda/compute-sanitizer /usr/local/cuda/bin; do
  command -v compute-sanitizer >/dev/null || { [ -x "$d/compute-sanitizer" ] && export PATH="$d:$PATH"; }
done
if command -v compute-sanitizer >/dev/null; then
  ms=pass
  for t in "$build"/tests/test_*_gpu; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if [ $(( deadline - $(date +%s) )) -lt 25 ]; then ms="$ms; not run for $name (out of time)"; continue; fi
    log "memcheck $name"
    GTB_NO_TIMING_ASSERTS=1 timeout "$(budget 90 10)" compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check full "$t" \
      >"$out/memcheck-$name.log" 2>&1
    rc=$?
    case $rc in 0) ;; 77) ms="skipped (no GPU)" ;; 124) ms="$ms; timeout in $name"; log "memcheck $name timed out" ;;
      *) ms="FAIL ($name exit $rc)"; log "memcheck $name: exit $rc" ;; esac
  done
  verdict[memcheck]=$ms
else
  verdict[memcheck]="not run: compute-sanitizer not found"
fi

# 8. Short table last.
[ -f "$results" ] && "$build/bin/gtb" report "$results" >"$out/report.md" 2>/dev/null
echo
echo "gpu-check summary ($(( $(date +%s) - start )) s; GPU: $(sed -n 2p "$out/nvidia-smi.csv" 2>/dev/null | grep -v 'not found' || echo none))"
for k in gpu-tests quick-suite torch-reference cpu-tests memcheck; do
  [ -n "${verdict[$k]:-}" ] && printf '  %-16s %s\n' "$k" "${verdict[$k]}"
done
grep -E "tests passed|tests failed" "$out/ctest-cpu.log" "$out/ctest-gpu.log" | sed 's|.*/||'
[ -f "$results" ] && tail -n +1 "$out/suite.txt" | grep -A200 "^CPU vs GPU" | head -40
echo "logs and results in $out"
case "${verdict[cpu-tests]}${verdict[gpu-tests]}${verdict[quick-suite]}${verdict[memcheck]}" in *FAIL*|*exit*) exit 1 ;; esac
exit 0
