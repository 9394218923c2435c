#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs the quick suite (or what is asked: any
# `gtb run` options may follow), writes a results file, its findings and its figures, and prints a
# summary.
#
# GTB_CUDA_ARCHITECTURES: the CUDA architectures to build for (CMake's list, default "80-real;90":
# A100-class machine code, and H100/H200 code with PTX that newer GPUs compile at first launch).
# A GPU of compute capability 8.x runs the 8.0 code (A10, A40, L4, L40, RTX 30/40); "89-real;90"
# would build machine code for an L4/L40 instead. GPUs older than 8.0 (T4, V100) are outside what gtb
# is built and tested for. Ignored without the CUDA Toolkit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup.sh"
source "$here/common.sh"
cd "$gtb_root"
archs=${GTB_CUDA_ARCHITECTURES:-80-real;90}
echo "== build (build/, without the tests; CUDA architectures $archs; a re-run rebuilds only what changed)"
gtb_build build -DGTB_BUILD_TESTS=OFF "-DCMAKE_CUDA_ARCHITECTURES=$archs"
mkdir -p results/local
out="results/local/gtb-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ).json"
echo "== gtb run --out $out $*"
rc=0
build/bin/gtb run --out "$out" "$@" || rc=$?
if [ -f "$out" ]; then
  if build/bin/gtb report "$out" >"${out%.json}.md" 2>/dev/null; then
    echo "findings: ${out%.json}.md"
  fi
  # The figures need Python with matplotlib (ci/setup.sh installs it); without it the results and
  # the findings still stand, and the line says why there is no figure.
  if build/bin/gtb plot "$out" --out "${out%.json}-plots" >"${out%.json}-plots.log" 2>&1; then
    echo "figures: ${out%.json}-plots/ ($(grep -c '^wrote ' "${out%.json}-plots.log") files; skipped ones say why in ${out%.json}-plots.log)"
  else
    echo "figures: none ($(tail -1 "${out%.json}-plots.log"))"
  fi
fi
exit $rc
