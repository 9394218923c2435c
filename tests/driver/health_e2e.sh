#!/usr/bin/env bash
# End-to-end checks of gtb run's output and measurement health on the CPU: one case per invocation.
# usage: health_e2e.sh CASE GTB PYTHON WORKDIR
set -u
case_name=$1 gtb=$2 py=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL [$case_name]: $*" >&2; [ -f "$work/out.txt" ] && cat "$work/out.txt" >&2; exit 1; }
json_check() {  # json_check FILE PYTHON-EXPR (d = the document)
  # An explicit exit, not assert: with PYTHONOPTIMIZE set an assert is compiled out and passes.
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 'false')" "$1" || fail "$2"
}

case "$case_name" in
line_buffered)
  # stdout (the summary) and stderr (progress, the results line) into one file, as in a CI log:
  # each line whole, and the results line after the whole summary.
  # One record of the family (--cases): the output's order is under test, not the family.
  "$gtb" run --family ceilings --cases 0:1 --budget 0.02 --out "$work/r.json" >"$work/out.txt" 2>&1 || fail "gtb run failed"
  tail -n 1 "$work/out.txt" | grep -q "^results: $work/r.json$" || fail "the last line is not the results line"
  [ "$(grep -c "results:" "$work/out.txt")" -eq 1 ] || fail "a results line landed inside another line"
  grep -q "^Families$" "$work/out.txt" || fail "no summary"
  grep -Eq "^(WARNING: measured on a busy machine|Measurement health: )" "$work/out.txt" || fail "no health line in the summary"
  json_check "$work/r.json" "'busy' in d['families'][0]['health'] and 'thresholds' in d['context']['health']"
  json_check "$work/r.json" "isinstance(d['context']['health']['start']['unavailable'], list)"
  ;;
wait_idle)
  # Bounded: on a busy machine it gives up after the limit and still measures.
  start=$(date +%s)
  "$gtb" run --family ceilings --cases 0:1 --budget 0.02 --wait-idle=2 --out "$work/r.json" -q >"$work/out.txt" 2>&1 || fail "gtb run failed"
  # The wait is bounded, not the family: its own time depends on the machine (the ceilings' arrays
  # grow with the last-level cache), so only what the run spent outside the family is limited.
  elapsed=$(( $(date +%s) - start ))
  json_check "$work/r.json" "$elapsed - sum(f['seconds'] for f in d['families']) <= 30"
  grep -q "waiting up to 2 s for the machine to settle" "$work/out.txt" || fail "no line saying it waits"
  json_check "$work/r.json" "d['context']['health']['wait_idle']['max_seconds'] == 2"
  json_check "$work/r.json" "d['context']['health']['wait_idle']['waited_s'] <= 4"
  json_check "$work/r.json" "isinstance(d['context']['health']['wait_idle']['settled'], bool)"
  ;;
wait_idle_bad)
  for bad in --wait-idle=-1 --wait-idle=abc --wait-idle=4000; do
    "$gtb" run --family ceilings "$bad" --out "$work/r.json" >"$work/out.txt" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$bad: exit $rc, wanted 2"
    grep -q -- "--wait-idle" "$work/out.txt" || fail "$bad: the message does not name --wait-idle"
    [ ! -e "$work/r.json" ] || fail "$bad: wrote a file"
  done
  ;;
*) fail "unknown case" ;;
esac
echo "ok [$case_name]"
