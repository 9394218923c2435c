#!/bin/sh
# A planted twin: runs a check on an input it must reject, and passes only when the check fails
# (exit 1) for the reason given, so a check that has stopped failing is caught.
# usage: expect_fail.sh PATTERN CMD...   (PATTERN: grep -E over the check's output)
# Exit 0: CMD exited 1 and said PATTERN; 77: CMD was Skipped (77), passed on as Skipped; 1 otherwise.
set -u
[ $# -ge 2 ] || { echo "usage: expect_fail.sh PATTERN CMD..."; exit 2; }
pattern=$1; shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 77 ] && exit 77
if [ $rc -eq 0 ]; then
  echo "PLANTED DEFECT NOT CAUGHT: the check passed on an input it must reject: $*"
  exit 1
fi
# Any other status (a crash, a missing file, a usage error) is not the check rejecting the input.
[ $rc -eq 1 ] || { echo "the check exited $rc, not 1 (a failed check): $*"; exit 1; }
printf '%s\n' "$out" | grep -Eq -- "$pattern" || { echo "the check failed, but not saying: $pattern"; exit 1; }
echo "ok: the planted defect was caught (exit 1, said: $pattern)"
