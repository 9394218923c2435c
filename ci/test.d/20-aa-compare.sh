#!/usr/bin/env bash
# A/A at the default settings. `gtb ab` of one build against itself is the gate: nothing changed
# between the sides, so a regression there is a false alarm (or a broken pipeline) and fails the job.
# The two results files that run kept (`--keep`: each side's five runs) are then compared as a CI job
# compares a new file with its baseline (`gtb compare`, unpaired): on a shared machine whose load
# changes while they are measured that comparison can flag records (docs/compare.md has the rates
# measured on a loaded 2-core machine), so its regressions (exit 1) and its unconfirmed slowdowns
# (exit 3, a family measured busy) are printed as a warning, while exit 2 (unreadable or
# incomparable files) fails. The files come from the runs the gate made: no family
# is measured twice for the two checks.
set -euo pipefail
build=$1
source "$(cd "$(dirname "$0")/.." && pwd)/families.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
ab_families=$(ci_families "$root" aa-ab)    # the families that declare this role (ci/families.sh)
[ -n "$ab_families" ] || { echo "A/A: no family declares aa-ab" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
"$build/bin/gtb" ab "$build" "$build" --family "$ab_families" --keep "$work/kept" >"$work/ab.txt" 2>"$work/ab.log" || rc=$?
tail -4 "$work/ab.txt"
case $rc in
  0) echo "A/A of gtb ab: no regression" ;;
  1) echo "A/A of gtb ab FAILED: a regression between a build and itself (a false alarm)" >&2; exit 1 ;;
  *) echo "A/A of gtb ab FAILED (exit $rc)" >&2; tail -20 "$work/ab.log" >&2; exit 1 ;;
esac
for side in base new; do
  [ -s "$work/kept/$side.json" ] || { echo "A/A: gtb ab --keep wrote no $side.json" >&2; exit 1; }
done
rc=0
"$build/bin/gtb" compare "$work/kept/base.json" "$work/kept/new.json" >"$work/aa.txt" || rc=$?
case $rc in
  0) tail -2 "$work/aa.txt"; echo "A/A of the two kept files: no regression" ;;
  1) grep -E '^(slower|summary)' "$work/aa.txt"
     echo "A/A WARNING: records flagged between the two kept files of the same build (the machine's load changed)" ;;
  3) grep -E '^(unconfirmed|summary)' "$work/aa.txt"
     echo "A/A WARNING: a record found slower between the two kept files, unconfirmed (a family measured busy)" ;;
  *) cat "$work/aa.txt"; echo "A/A compare of the two kept files failed (exit $rc)" >&2; exit 1 ;;
esac
