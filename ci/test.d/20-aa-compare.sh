#!/usr/bin/env bash
# A/A at the default settings: two `--runs 3` files of one build, and `gtb ab` of the build against
# itself. Nothing changed between the sides, so any regression is a false alarm of the gate (or a
# broken pipeline) and fails the job; docs/compare.md has the false-alarm rates measured on a loaded
# 2-core machine.
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
families=ceilings,vectorize,train
for side in a b; do
  "$build/bin/gtb" run --family "$families" --quick --runs 3 --out "$work/$side.json" -q 2>"$work/$side.log" ||
    { cat "$work/$side.log"; exit 1; }
done
verdict() {  # verdict NAME RC: 0 passes, anything else fails the step
  case $2 in
    0) echo "$1: no regression" ;;
    1) echo "$1 FAILED: a regression between two runs of the same build (a false alarm)" >&2; return 1 ;;
    *) echo "$1 FAILED (exit $2): the files are unreadable or not comparable" >&2; return 1 ;;
  esac
}
rc=0
"$build/bin/gtb" compare "$work/a.json" "$work/b.json" >"$work/aa.txt" || rc=$?
tail -4 "$work/aa.txt"
verdict "A/A of two --runs 3 files" $rc
rc=0
"$build/bin/gtb" ab "$build" "$build" --family vectorize --rounds 3 >"$work/ab.txt" 2>"$work/ab.log" || rc=$?
tail -4 "$work/ab.txt"
verdict "A/A of gtb ab" $rc || { tail -20 "$work/ab.log"; exit 1; }
