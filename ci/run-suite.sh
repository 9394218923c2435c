#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs the quick suite (or what is asked: any
# `gtb run` options may follow), writes a results file and its findings, and prints a summary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup.sh"
source "$here/common.sh"
cd "$gtb_root"
echo "== build (build/, without the tests; a re-run rebuilds only what changed)"
gtb_build build -DGTB_BUILD_TESTS=OFF
mkdir -p results/local
out="results/local/gtb-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ).json"
echo "== gtb run --out $out $*"
rc=0
build/bin/gtb run --out "$out" "$@" || rc=$?
if [ -f "$out" ] && build/bin/gtb report "$out" >"${out%.json}.md" 2>/dev/null; then
  echo "findings: ${out%.json}.md"
fi
exit $rc
