#!/usr/bin/env bash
# Regenerates docs/plots/ from a committed results file with this version's figure specs.
#
# usage: bash ci/doc-plots.sh RESULTS.json [BUILD_DIR] [OUT_DIR]
#
# The figure specs travel inside a results file's findings, so a file measured before a spec changed
# draws the old figure. Each family binary derives its findings again from the file's own records
# (--gtb_findings_from: nothing is measured); the figures are drawn from a copy of the file with those
# findings, and the caption still names the file's machine, commit and load. The committed file is
# not touched.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
results=${1:?usage: bash ci/doc-plots.sh RESULTS.json [BUILD_DIR] [OUT_DIR]}
build=${2:-$root/build}
out=${3:-$root/docs/plots}
[ -f "$results" ] || { echo "doc-plots: no such file: $results" >&2; exit 2; }
[ -x "$build/bin/gtb" ] || { echo "doc-plots: $build/bin/gtb is not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for fam in $(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])).get("findings", {}))))' "$results"); do
  bin="$build/bin/gtb-$fam"
  if [ -x "$bin" ]; then
    "$bin" --gtb_findings_from="$results" >"$work/$fam.json"
  else
    echo "doc-plots: $bin is not built: the $fam figures keep the file's own specs" >&2
  fi
done
python3 - "$results" "$work" <<'EOF'
import glob, json, os, sys
path, work = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
for f in glob.glob(os.path.join(work, "*.json")):
    doc["findings"][os.path.basename(f)[:-5]] = json.load(open(f))
json.dump(doc, open(os.path.join(work, "rederived.json"), "w"))
EOF
"$build/bin/gtb" plot "$work/rederived.json" --out "$out"
