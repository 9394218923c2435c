#!/usr/bin/env bash
# The committed fixtures are what tests/fixtures/make_fixtures.py writes with this build's family
# binaries (their typed findings are derived by those binaries): a change to a family's findings
# that was not carried into the fixtures fails here, naming the file.
# usage: check_fixtures.sh PYTHON BIN_DIR FIXTURE_DIR WORK [--plant]
#   --plant: change one committed value in a copy first; the check must then fail (the twin).
set -uo pipefail
py=$1 bin=$2 fixtures=$3 work=$4 plant=${5:-}
rm -rf "$work" && mkdir -p "$work/made" "$work/committed"
cp "$fixtures"/*.json "$work/committed/"
if [ "$plant" = "--plant" ]; then
  "$py" - "$work/committed/cpu_b.json" <<'PY' || exit 2
import json, sys
d = json.load(open(sys.argv[1]))
d["records"][0]["value"] = d["records"][0].get("value", 1.0) * 1.5
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
fi
"$py" "$fixtures/make_fixtures.py" "$bin" "$work/made" >"$work/make.log" 2>&1 || { cat "$work/make.log"; echo "FAIL: make_fixtures.py failed"; exit 1; }
bad=0
for f in "$work"/made/*.json; do
  name=$(basename "$f")
  if [ ! -f "$work/committed/$name" ]; then
    echo "FAIL: make_fixtures.py writes $name, which is not committed"; bad=1
  elif ! cmp -s "$f" "$work/committed/$name"; then
    echo "FAIL: tests/fixtures/$name differs from what make_fixtures.py writes with this build (regenerate: python3 tests/fixtures/make_fixtures.py BUILD/bin)"
    diff <("$py" -m json.tool "$work/committed/$name" 2>/dev/null || cat "$work/committed/$name") \
         <("$py" -m json.tool "$f" 2>/dev/null || cat "$f") | head -20
    bad=1
  fi
done
for f in "$work"/committed/*.json; do
  [ -f "$work/made/$(basename "$f")" ] || { echo "FAIL: committed fixture $(basename "$f") is not written by make_fixtures.py"; bad=1; }
done
[ $bad -eq 0 ] && echo "PASS: every fixture is what make_fixtures.py writes with this build"
exit $bad
