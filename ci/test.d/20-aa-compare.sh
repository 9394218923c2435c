#!/usr/bin/env bash
# A/A at the default settings. `gtb ab` of one build against itself is the gate: nothing changed
# between the sides, so a regression there is a false alarm (or a broken pipeline) and fails the job.
# Two `--runs 3` files of the build are compared too; on a shared machine whose load changes between
# the two files that comparison can flag records (docs/compare.md has the rates measured on a loaded
# 2-core machine), so its regressions are printed as a warning, while exit 2 (unreadable or
# incomparable files) fails.
set -euo pipefail
build=$1
source "$(cd "$(dirname "$0")/.." && pwd)/families.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
ab_families=$(ci_families "$root" aa-ab)    # the families that declare these roles (ci/families.sh)
runs_families=$(ci_families "$root" aa-runs)
[ -n "$ab_families" ] && [ -n "$runs_families" ] || { echo "A/A: no family declares aa-ab and aa-runs" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
"$build/bin/gtb" ab "$build" "$build" --family "$ab_families" >"$work/ab.txt" 2>"$work/ab.log" || rc=$?
tail -4 "$work/ab.txt"
case $rc in
  0) echo "A/A of gtb ab: no regression" ;;
  1) echo "A/A of gtb ab FAILED: a regression between a build and itself (a false alarm)" >&2; exit 1 ;;
  *) echo "A/A of gtb ab FAILED (exit $rc)" >&2; tail -20 "$work/ab.log" >&2; exit 1 ;;
esac
for side in a b; do
  "$build/bin/gtb" run --family "$runs_families" --quick --runs 3 --out "$work/$side.json" -q 2>"$work/$side.log" ||
    { cat "$work/$side.log"; exit 1; }
done
rc=0
"$build/bin/gtb" compare "$work/a.json" "$work/b.json" >"$work/aa.txt" || rc=$?
case $rc in
  0) tail -2 "$work/aa.txt"; echo "A/A of two --runs 3 files: no regression" ;;
  1) grep -E '^(slower|summary)' "$work/aa.txt"
     echo "A/A WARNING: records flagged between two --runs 3 files of the same build (the machine's load changed)" ;;
  *) cat "$work/aa.txt"; echo "A/A compare of two --runs 3 files failed (exit $rc)" >&2; exit 1 ;;
esac
