#!/usr/bin/env bash
# End-to-end tests of the gtb driver on the CPU: one case per invocation.
# usage: e2e.sh CASE GTB PYTHON VALIDATE_SCRIPT WORKDIR
set -u
case_name=$1 gtb=$2 py=$3 validate=$4 work=$5
source "$(dirname "$0")/lib.sh"

case "$case_name" in
run_valid)
  expect_rc 0 "$gtb" run --family ceilings --budget 0.02 --out "$work/r.json"
  grep -q "Families" "$work/out.txt" || fail "no summary table"
  validate "$work/r.json"
  json_check "$work/r.json" "any(r['backend']=='cpu' and r['status']=='ok' for r in d['records'])"
  json_check "$work/r.json" "d['families'][0]['status']=='ok' and d['context']['ceilings']['host_copy_gbps']>0"
  json_check "$work/r.json" "d['context']['gpu']['available'] or all(r['status']=='skipped' and r['status_detail'] for r in d['records'] if r['backend']=='cuda')"
  # A planted defect must be caught by the schema check (the validator can fail).
  "$py" - "$work/r.json" "$work/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d['records'][0]['value'] = "fast"
json.dump(d, open(sys.argv[2], 'w'))
PY
  "$py" "$validate" "$work/bad.json" --expect-invalid 2>/dev/null || fail "validator accepted a string value"
  ;;
unknown_family)
  expect_rc 2 "$gtb" run --family nosuchfamily --out "$work/r.json"
  grep -q "unknown family 'nosuchfamily'" "$work/out.txt" || fail "message"
  [ ! -e "$work/r.json" ] || fail "wrote a file"
  ;;
bad_flags)
  expect_rc 2 "$gtb" run --budget -1 --out "$work/r.json"
  expect_rc 2 "$gtb" run --quick --full --out "$work/r.json"
  expect_rc 2 "$gtb" run --no-such-flag --out "$work/r.json"
  expect_rc 2 "$gtb" frobnicate
  expect_rc 2 "$gtb"
  [ ! -e "$work/r.json" ] || fail "wrote a file"
  ;;
unwritable)
  expect_rc 2 "$gtb" run --family ceilings --out /nonexistent-gtb-dir/r.json
  grep -q "nonexistent-gtb-dir" "$work/out.txt" || fail "message does not name the path"
  mkdir -p "$work/file-not-dir" && echo x > "$work/plain"
  expect_rc 2 "$gtb" run --family ceilings --out "$work/plain/r.json"
  ;;
crash_isolated)
  mkdir -p "$work/bin"
  ln -s "$(dirname "$gtb")/gtb-ceilings" "$work/bin/gtb-ceilings"
  printf '#!/bin/sh\necho "about to crash"\nkill -SEGV $$\n' > "$work/bin/gtb-crash" && chmod +x "$work/bin/gtb-crash"
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=crash,ceilings expect_rc 1 "$gtb" run --budget 0.02 --out "$work/r.json"
  grep -q "about to crash" "$work/out.txt" || fail "the failed family's log was not shown"
  validate "$work/r.json"
  json_check "$work/r.json" "[f['status'] for f in d['families']]==['failed','ok']"
  json_check "$work/r.json" "'signal 11' in d['families'][0]['error']"
  json_check "$work/r.json" "any(r['family']=='ceilings' and r['status']=='ok' for r in d['records'])"
  ;;
interrupt_before_any|interrupt_int|interrupt_term|interrupt_runs)
  # A family that finishes (the self-test family) and one that hangs until it is signalled.
  mkdir -p "$work/bin"
  ln -s "$(dirname "$gtb")/gtb-selftest" "$work/bin/gtb-selftest"
  printf '#!/bin/sh\necho $$ > "%s/slow.pid"\nexec sleep 60\n' "$work" > "$work/bin/gtb-slow" && chmod +x "$work/bin/gtb-slow"
  echo '{"old": true}' > "$work/r.json"
  sig=INT want=130 fams=selftest,slow runs=1
  case "$case_name" in
    interrupt_before_any) fams=slow ;;
    interrupt_term) sig=TERM want=143 ;;
    interrupt_runs) runs=2 ;;
  esac
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=$fams "$gtb" run --runs $runs --budget 0.05 --out "$work/r.json" >"$work/out.txt" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do [ -s "$work/slow.pid" ] && break; sleep 0.1; done
  [ -s "$work/slow.pid" ] || { kill "$pid"; fail "the slow family never started"; }
  t0=$(date +%s)
  kill -$sig "$pid"
  wait "$pid"; rc=$?
  [ $(( $(date +%s) - t0 )) -le 10 ] || fail "the driver took over 10 s to stop after SIG$sig"
  [ "$rc" -eq $want ] || { cat "$work/out.txt" >&2; fail "exit $rc after SIG$sig, wanted $want"; }
  child=$(cat "$work/slow.pid")
  if kill -0 "$child" 2>/dev/null; then kill "$child"; fail "the running family was not stopped"; fi
  ls "$work" | grep -q 'r.json.tmp' && fail "a temp file was left behind"
  if [ "$case_name" = interrupt_before_any ]; then
    grep -q '"old": true' "$work/r.json" || fail "no family finished, yet the old results file was replaced"
  else
    validate "$work/r.json"
    json_check "$work/r.json" "any(r['family']=='selftest' and r['status']=='ok' for r in d['records'])"
    json_check "$work/r.json" "[(f['name'], f['status']) for f in d['families']][:2]==[('selftest','ok'),('slow','failed')]"
    json_check "$work/r.json" "d['families'][1]['error']=='interrupted'"
    if [ "$case_name" = interrupt_runs ]; then
      json_check "$work/r.json" "[(f['name'], f['run'], f['status']) for f in d['families']][2:]==[('selftest',2,'not_run'),('slow',2,'not_run')]"
      json_check "$work/r.json" "d['runs']==2 and all(len(r['runs'])==1 for r in d['records'])"
    fi
  fi
  ;;
runs)
  GTB_FAMILIES=selftest expect_rc 0 "$gtb" run --family selftest --runs 3 --budget 0.05 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "d['runs']==3 and [(f['name'], f['run']) for f in d['families']]==[('selftest',1),('selftest',2),('selftest',3)]"
  json_check "$work/r.json" "all([x['run'] for x in r['runs']]==[1,2,3] and r['stats']['count']==sum(x['stats']['count'] for x in r['runs']) for r in d['records'])"
  expect_rc 0 "$gtb" compare "$work/r.json" "$work/r.json"
  grep -q "3r/3r" "$work/out.txt" || fail "compare did not decide on the runs"
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" run --family selftest --runs 0 --out "$work/r2.json"
  [ ! -e "$work/r2.json" ] || fail "wrote a file"
  ;;
ab)
  build=$(dirname "$gtb")
  GTB_FAMILIES=selftest expect_rc 0 "$gtb" ab "$build" "$build" --family selftest --rounds 3 --budget 0.05 --format json --out "$work/ab.json"
  json_check "$work/ab.json" "d['settings']['paired'] and all(r['evidence']=='paired rounds' and r['base']['runs']==3 for r in d['records'])"
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" ab "$build" "$work/nowhere" --family selftest
  grep -q "no executable gtb-selftest" "$work/out.txt" || fail "message does not say what is missing"
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" ab "$build" "$build" --rounds 2
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" ab "$build" "$build" --confirm-rounds 2
  grep -q "confirm-rounds must be 0" "$work/out.txt" || fail "bad --confirm-rounds not explained"
  expect_rc 2 "$gtb" ab "$build"
  ;;
planted)
  # A 50% slowdown planted in NEW's self-test binary is caught, on that record alone; the knob
  # reaches no other family.
  mkdir -p "$work/new"
  printf '#!/bin/sh\nGTB_SELFTEST_SLOWDOWN=0.5@*steps=262144 exec "%s" "$@"\n' "$(dirname "$gtb")/gtb-selftest" > "$work/new/gtb-selftest"
  chmod +x "$work/new/gtb-selftest"
  # Five rounds: with three (2 degrees of freedom) a test running beside it on two cores could widen
  # the interval past a 50% change.
  GTB_FAMILIES=selftest expect_rc 1 "$gtb" ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --format json --out "$work/ab.json"
  json_check "$work/ab.json" "[r['id'] for r in d['records'] if r['verdict']=='slower']==['selftest/spin/scalar/cpu/steps=262144']"
  # Found slower in five rounds, then confirmed on five fresh rounds of its family (kept apart).
  json_check "$work/ab.json" "d['settings']['confirm_rounds']==5 and d['settings']['confirmed_families']==['selftest'] and all('confirmed: slower on 5 fresh rounds' in r['note'] for r in d['records'] if r['verdict']=='slower')"
  GTB_FAMILIES=selftest expect_rc 1 "$gtb" ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --keep "$work/keep"
  json_check "$work/keep/new.confirm.json" "d['runs']==5 and all(len(r['runs'])==5 for r in d['records'] if r['status']=='ok')"
  json_check "$work/keep/new.json" "d['runs']==5"
  # The kept files decide again as gtb ab did.
  expect_rc 1 "$gtb" compare "$work/keep/base.json" "$work/keep/new.json" --paired --confirmed-by "$work/keep/base.confirm.json" "$work/keep/new.confirm.json" --format json --out "$work/again.json"
  json_check "$work/again.json" "d['settings']['confirm_rounds']==5 and [r['id'] for r in d['records'] if r['verdict']=='slower']==['selftest/spin/scalar/cpu/steps=262144']"
  expect_rc 2 "$gtb" compare "$work/keep/base.json" "$work/keep/new.json" --confirmed-by "$work/keep/base.confirm.json" "$work/keep/new.confirm.json"
  # Without the confirmation the first five rounds decide alone.
  GTB_FAMILIES=selftest expect_rc 1 "$gtb" ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --confirm-rounds 0 --format json --out "$work/ab0.json"
  json_check "$work/ab0.json" "d['settings']['confirm_rounds']==0 and d['settings']['confirmed_families']==[]"
  GTB_SELFTEST_SLOWDOWN=nonsense expect_rc 0 "$(dirname "$gtb")/gtb-ceilings" --gtb_list
  GTB_SELFTEST_SLOWDOWN=nonsense "$(dirname "$gtb")/gtb-selftest" --gtb_out="$work/s.json" >"$work/out.txt" 2>&1
  json_check "$work/s.json" "all(r['status']=='failed' and 'GTB_SELFTEST_SLOWDOWN' in r['status_detail'] for r in d['records'])"
  ;;
list)
  expect_rc 0 "$gtb" list
  grep -q "^ceilings" "$work/out.txt" || fail "ceilings not listed"
  grep -q "axis   bytes" "$work/out.txt" || fail "axes not listed"
  expect_rc 0 "$gtb" list --json --family ceilings
  expect_rc 2 "$gtb" list --family nope
  ;;
every_family)
  [ -n "${GTB_EXPECT_FAMILIES:-}" ] || fail "no family expected (GTB_EXPECT_FAMILIES is empty)"
  expect_rc 0 "$gtb" list --json
  for f in ${GTB_EXPECT_FAMILIES//,/ }; do
    "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if '$f' in [x['family'] for x in d] else 1)" "$work/out.txt" \
      || fail "family '$f' is not built"
  done
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
