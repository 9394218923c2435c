#!/usr/bin/env bash
# The planted twin of results.clean: a scratch checkout holding results/README.md and one results file
# from a dirty tree that the README does not declare; check_results_clean.py must reject it.
# usage: results_clean_planted.sh PYTHON SOURCE_ROOT WORK
set -euo pipefail
py=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/results"
cp "$src/results/README.md" "$work/results/"
"$py" - "$src/tests/fixtures/cpu_b.json" "$work/results/gtb-planted.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("context", {}).setdefault("build", {})["git_dirty"] = True
json.dump(d, open(sys.argv[2], "w"))
PY
git -C "$work" init -q
git -C "$work" add -A
exec "$py" "$src/tests/tools/check_results_clean.py" "$work"
