#!/bin/sh
# The checks of the gtb plot tests, as commands a planted input can be given to (expect_fail.sh).
# usage: plot_check.sh run GTB RESULTS DIR PATTERN  gtb plot RESULTS into an emptied DIR: exit 0 and a
#                                                   line of its output matching PATTERN (grep -E)
#        plot_check.sh files DIR NAME...            each DIR/NAME is a PNG file
#        plot_check.sh stale GTB RESULTS DIR NAME   DIR holds an old NAME.png and a file of the user's;
#                                                   gtb plot RESULTS (which skips NAME) removes the one,
#                                                   keeps the other
#        plot_check.sh layout SCRIPT RESULTS [ARG...]  runs the legend check SCRIPT with that Python
# Exit 0 pass, 1 fail, 77 Skipped: no Python with matplotlib (the figures cannot be drawn here).
# The Python: GTB_PYTHON, else the first of python3, /usr/bin/python3 that has matplotlib.
set -u
fail() { echo "FAIL: $*"; exit 1; }

py=""
for cand in ${GTB_PYTHON:-python3 /usr/bin/python3}; do
  if "$cand" -c "import matplotlib" >/dev/null 2>&1; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  echo "Skipped: no Python with matplotlib (tried ${GTB_PYTHON:-python3 /usr/bin/python3}; apt install python3-matplotlib, or set GTB_PYTHON)"
  exit 77
fi
GTB_PYTHON=$py
export GTB_PYTHON

mode=${1:-}
[ $# -gt 0 ] && shift
case "$mode" in
run)
  [ $# -eq 4 ] || fail "usage: plot_check.sh run GTB RESULTS DIR PATTERN"
  gtb=$1 results=$2 dir=$3 pattern=$4
  # Only figures of this run may be found by the tests that read DIR afterwards.
  rm -rf "$dir" && mkdir -p "$dir" || fail "cannot empty $dir"
  "$gtb" plot "$results" --out "$dir" >"$dir.out" 2>&1
  rc=$?
  cat "$dir.out"
  [ $rc -eq 0 ] || fail "gtb plot exited $rc, expected 0"
  grep -Eq -- "$pattern" "$dir.out" || fail "output lacks a line matching: $pattern"
  ;;
files)
  [ $# -ge 2 ] || fail "usage: plot_check.sh files DIR NAME..."
  dir=$1; shift
  for name in "$@"; do
    [ -f "$dir/$name" ] || fail "$dir/$name is missing"
    # The 8-byte PNG signature: a file matplotlib wrote, not an empty or truncated one.
    sig=$(od -An -tx1 -N8 "$dir/$name" | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || fail "$dir/$name is not a PNG (starts with $sig)"
    echo "ok: $dir/$name"
  done
  ;;
stale)
  [ $# -eq 4 ] || fail "usage: plot_check.sh stale GTB RESULTS DIR NAME"
  gtb=$1 results=$2 dir=$3 name=$4
  rm -rf "$dir" && mkdir -p "$dir" || fail "cannot empty $dir"
  echo "an older run's figure" >"$dir/$name.png"
  echo "the user's notes" >"$dir/notes.txt"
  "$gtb" plot "$results" --out "$dir" >"$dir.out" 2>&1
  rc=$?
  cat "$dir.out"
  [ $rc -eq 0 ] || fail "gtb plot exited $rc, expected 0"
  grep -q "^skipped $name: " "$dir.out" || fail "gtb plot did not skip $name, so this input proves nothing"
  [ ! -e "$dir/$name.png" ] || fail "the older $name.png is still in $dir after gtb plot skipped $name"
  [ -f "$dir/notes.txt" ] || fail "gtb plot removed a file that is not one of its figures"
  ;;
layout)
  [ $# -ge 2 ] || fail "usage: plot_check.sh layout SCRIPT RESULTS [ARG...]"
  "$py" "$@" || fail "$*"
  ;;
*) fail "unknown mode '$mode' (run, files, stale, layout)" ;;
esac
echo "ok: plot_check.sh $mode"
