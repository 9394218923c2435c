#!/usr/bin/env bash
# gtb compare and gtb ab print the exit status they return: for each status a command can return
# (0 no regression, 1 a regression, 2 different machines or a failed BASE, 3 only unconfirmed), the
# status in the text summary, the Markdown heading, the JSON summary and the line of --out is the
# one the command exits with, and the one the case wants.
# usage: exit_status.sh compare|ab GTB PYTHON FIXTURES WORKDIR
set -u
case_name=$1 gtb=$2 py=$3 fix=$4 work=$5
validate=/dev/null
source "$(dirname "$0")/lib.sh"

# printed_status FILE PATTERN: the N of the last "(exit N)" on the last line PATTERN selects.
printed_status() { grep -E -- "$2" "$1" | tail -n 1 | grep -Eo '\(exit [0-9]+\)$' | tr -dc '0-9'; }
# json_status FILE: the JSON summary's exit_code, when its outcome ends with the same "(exit N)".
json_status() {
  "$py" -c 'import json, re, sys
s = json.load(open(sys.argv[1]))["summary"]
m = re.search(r"\(exit ([0-9]+)\)$", s["outcome"])
print(s["exit_code"] if m and int(m.group(1)) == s["exit_code"] else "outcome %r, exit_code %s" % (s["outcome"], s["exit_code"]))' \
    "$1" 2>&1
}

# same_status WANT LABEL CMD...: runs CMD once for each output form in $forms (text: the summary
# line; markdown: the heading; json: the summary; out: --out's line on stdout and the JSON it
# wrote); each run must exit WANT and print WANT.
forms="text markdown json out"
same_status() {
  local want=$1 label=$2; shift 2
  local form rc printed
  for form in $forms; do
    local flags=()
    case $form in
      markdown) flags=(--format markdown) ;;
      json) flags=(--format json) ;;
      out) flags=(--format json --out "$work/written.json") ;;
    esac
    rm -f "$work/written.json"
    "$@" "${flags[@]}" >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    case $form in
      text) printed=$(printed_status "$work/out.txt" '^summary: ') ;;
      markdown) printed=$(printed_status "$work/out.txt" '^## gtb [a-z]+: ') ;;
      json) printed=$(json_status "$work/out.txt") ;;
      out)
        printed=$(printed_status "$work/out.txt" ' written -> ')
        local written
        written=$(json_status "$work/written.json")
        [ "$written" = "$printed" ] || printed="$printed on stdout, $written in the file"
        ;;
    esac
    if [ "$rc" != "$want" ] || [ "$printed" != "$want" ]; then
      cat "$work/out.txt" "$work/err.txt" >&2
      fail "$label ($form): exit $rc, printed '${printed}', wanted $want: $*"
    fi
    echo "ok: $label ($form): exit $rc, printed $printed"
  done
}

case "$case_name" in
compare)
  same_status 0 "same results" "$gtb" compare "$fix/gpu_base.json" "$fix/gpu_aa.json"
  same_status 1 "a regression" "$gtb" compare "$fix/gpu_base.json" "$fix/gpu_regressed.json"
  same_status 2 "different machines" "$gtb" compare "$fix/gpu_base.json" "$fix/gpu_other_model.json"
  # The regressed file's families measured on a busy machine: its slower records are unconfirmed
  # (its broken record, a regression whatever the machine did, left out).
  "$py" - "$fix/gpu_regressed.json" "$work/busy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["records"] = [r for r in d["records"] if r["status"] not in ("failed", "invalid")]
for f in d["families"]:
    f["health"] = {"busy": True, "warnings": ["other processes used 55% of the CPUs"]}
json.dump(d, open(sys.argv[2], "w"))
PY
  same_status 3 "slower on a busy machine" "$gtb" compare "$fix/gpu_base.json" "$work/busy.json"
  grep -q "UNCONFIRMED" "$work/written.json" || fail "the summary of exit 3 does not say unconfirmed"
  ;;
ab)
  # The self-test family of this build on both sides; a side whose binary fails in round 2 (a crash
  # in NEW is a regression, in BASE bad input). gtb ab decides on paired rounds and has no exit 3.
  build=$(dirname "$gtb")
  [ -x "$build/gtb-selftest" ] || fail "no $build/gtb-selftest"
  mkdir -p "$work/crash"
  printf '#!/bin/sh\ncase "$*" in *round2*) echo "planted crash" >&2; exit 1 ;; esac\nexec "%s" "$@"\n' \
    "$build/gtb-selftest" >"$work/crash/gtb-selftest"
  chmod +x "$work/crash/gtb-selftest"
  export GTB_FAMILIES=selftest
  forms="text out"  # each form is a whole run of both builds; Markdown is compare's renderer, tested above
  ab=("$gtb" ab --family selftest --rounds 3 --budget 0.05)
  same_status 0 "the same build" "${ab[@]}" "$build" "$build"
  same_status 1 "NEW failed in a round" "${ab[@]}" --confirm-rounds 0 "$build" "$work/crash"
  grep -q "NEW FAILED: 1 family run" "$work/written.json" || fail "the summary does not say NEW failed"
  same_status 2 "BASE failed in a round" "${ab[@]}" --confirm-rounds 0 "$work/crash" "$build"
  grep -q "BASE FAILED: 1 family run" "$work/written.json" || fail "the summary does not say BASE failed"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
