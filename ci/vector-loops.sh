#!/usr/bin/env bash
# vector-loops: checks that CPU loops the cost model prices at a vector rate were compiled as vector
# loops. For each FUNCTION (a demangled name, every clone of it) in LIB, its instructions must match
# WANT (an extended regex, say a packed square root) and must not call FORBID (say sqrtf).
#
# usage: ci/vector-loops.sh LIB FUNCTION WANT [FORBID] [-- LIB FUNCTION WANT [FORBID]]...
# Exits 0 when every function matches, 1 with a "FAIL:" line per function that does not, 2 on bad
# usage, and 77 (skipped) where objdump is missing or the machine is not x86-64.
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: ci/vector-loops.sh LIB FUNCTION WANT [FORBID] [-- LIB FUNCTION WANT [FORBID]]..." >&2; exit 2; }
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 77; }
[[ "$(uname -m)" == x86_64 ]] || { echo "SKIP: the patterns are x86-64's"; exit 77; }
status=0
while [[ $# -gt 0 ]]; do
  lib=$1 fn=$2 want=$3 forbid=""
  shift 3
  if [[ $# -gt 0 && "$1" != "--" ]]; then forbid=$1; shift; fi
  if [[ $# -gt 0 ]]; then [[ "$1" == "--" ]] || { echo "vector-loops: expected -- between checks, got $1" >&2; exit 2; }; shift; fi
  [[ -f "$lib" ]] || { echo "FAIL: $lib not found"; status=1; continue; }
  body=$(objdump -d -C --no-show-raw-insn "$lib" | awk -v n="<$fn(" 'index($0, n) && />:$/ { on = 1; next } /^$/ { on = 0 } on')
  if [[ -z "$body" ]]; then echo "FAIL: $fn not found in $(basename "$lib")"; status=1; continue; fi
  if ! grep -Eq "$want" <<<"$body"; then
    echo "FAIL: $fn in $(basename "$lib") has no instruction matching $want: the loop is scalar"; status=1; continue
  fi
  if [[ -n "$forbid" ]] && grep -Eq "call.*$forbid" <<<"$body"; then
    echo "FAIL: $fn in $(basename "$lib") calls $forbid: the loop is scalar"; status=1; continue
  fi
  echo "ok: $fn in $(basename "$lib")"
done
exit $status
