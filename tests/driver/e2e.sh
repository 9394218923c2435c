#!/usr/bin/env bash
# End-to-end tests of the gtb driver on the CPU: one case per invocation.
# usage: e2e.sh CASE GTB PYTHON VALIDATE_SCRIPT WORKDIR
set -u
case_name=$1 gtb=$2 py=$3 validate=$4 work=$5
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/failmodes.sh"

case "$case_name" in
run_valid)
  expect_rc 0 "$gtb" run --family ceilings --budget 0.02 --out "$work/r.json"
  grep -q "Families" "$work/out.txt" || fail "no summary table"
  validate "$work/r.json"
  json_check "$work/r.json" "any(r['backend']=='cpu' and r['status']=='ok' for r in d['records'])"
  # A host copy ceiling, or (a machine whose cache is too large for its free memory) the reason why not.
  json_check "$work/r.json" "d['families'][0]['status']=='ok' and (d['context'].get('ceilings', {}).get('host_copy_gbps', 0)>0 or 'last-level cache' in d['context'].get('ceilings_missing', {}).get('host_copy_gbps', ''))"
  json_check "$work/r.json" "d['context']['gpu']['available'] or all(r['status']=='skipped' and r['status_detail'] for r in d['records'] if r['backend']=='cuda')"
  # A planted defect must be caught by the schema check (the validator can fail).
  "$py" - "$work/r.json" "$work/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d['records'][0]['value'] = "fast"
json.dump(d, open(sys.argv[2], 'w'))
PY
  "$py" "$validate" "$work/bad.json" --expect-invalid 2>/dev/null || fail "validator accepted a string value"
  ;;
large_cache)
  # A server CPU's 480 MiB last-level cache, injected: the host arrays grow until they stream from
  # memory, and the host ceilings and the percentages built on them are still there. Three 1 GiB
  # arrays need 6 GiB free (half of the available memory holds them); a smaller machine cannot
  # stand for this one, and no_host_ceiling covers what it does instead.
  avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
  if [ "${avail_kib:-0}" -lt $((6 * 1024 * 1024 + 65536)) ]; then
    echo "Skipped: large_cache needs 6 GiB of available memory, this machine has $((${avail_kib:-0} / 1024)) MiB"
    exit 77
  fi
  GTB_CPU_LLC_BYTES=503316480 expect_rc 0 "$gtb" run --family ceilings --budget 0.02 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "d['context']['host']['caches']['last_level_bytes']==503316480 and d['context']['host']['caches']['last_level_injected']=='GTB_CPU_LLC_BYTES'"
  json_check "$work/r.json" "d['context']['ceilings']['host_copy_gbps']>0 and d['context']['ceilings']['host_triad_gbps']>0"
  json_check "$work/r.json" "any(r['workload']=='stream_copy' and r['backend']=='cpu' and r['params']['bytes']>=1<<30 and r['info']['cache_resident'] is False and r['status']=='ok' for r in d['records'])"
  json_check "$work/r.json" "'host_copy_gbps' not in d['context'].get('ceilings_missing', {})"
  grep -q "ceiling.* not measured" "$work/out.txt" && fail "warned of a missing ceiling that was measured"
  ;;
no_host_ceiling)
  # A 1.5 GiB cache on a machine with 2 GiB free: no array size streams out of the cache. The
  # context says why, the run warns, and the report says so instead of dropping the percentages.
  GTB_CPU_LLC_BYTES=1610612736 GTB_HOST_AVAILABLE_BYTES=2147483648 \
    expect_rc 0 "$gtb" run --family ceilings --budget 0.02 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "'host_copy_gbps' not in d['context'].get('ceilings', {})"
  json_check "$work/r.json" "'1536 MiB last-level cache' in d['context']['ceilings_missing']['host_copy_gbps']"
  grep -q "WARNING: 2 ceilings not measured" "$work/out.txt" || fail "the run did not warn of the missing host ceilings"
  grep -q "host_triad_gbps: a host array of 3072 MiB" "$work/out.txt" || fail "the warning does not say why"
  expect_rc 0 "$gtb" report "$work/r.json"
  grep -q "Ceilings not measured in this file" "$work/out.txt" || fail "the report does not say the ceiling is missing"
  grep -q "| host_copy_gbps | a host array of 3072 MiB" "$work/out.txt" || fail "the report does not say why"
  ;;
version)
  # gtb --version names the commit the sources are at (a build from a git checkout), the same one
  # the results files record in context.build.git_commit.
  expect_rc 0 "$gtb" --version
  src=$(cd "$(dirname "$0")/../.." && pwd)
  grep -Eq '^gtb [0-9]+[.][0-9]+[.][0-9]+ [(]commit ' "$work/out.txt" || fail "no version line: $(cat "$work/out.txt")"
  # A commit of this history (HEAD, or an ancestor when the tree moved on since the build).
  sha=$(sed -n 's/^gtb [^ ]* (commit \([0-9a-f]\{40\}\).*/\1/p' "$work/out.txt")
  if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
    [ -n "$sha" ] || fail "gtb --version names no commit: $(cat "$work/out.txt")"
    git -C "$src" merge-base --is-ancestor "$sha" HEAD 2>/dev/null ||
      fail "gtb --version names $sha, not a commit of this checkout's history"
  fi
  cp "$work/out.txt" "$work/version.txt"
  # One record of a real family is enough for the results file's commit.
  expect_rc 0 "$gtb" run --family ceilings --cases 0:1 --budget 0.02 --out "$work/r.json"
  json_check "$work/r.json" "('commit ' + d['context']['build']['git_commit']) in open('$work/version.txt').read()"
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
  # The healthy family runs one record (--cases): what is tested is the isolation, not the family.
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=crash,ceilings expect_rc 1 "$gtb" run --cases 0:1 --budget 0.02 --out "$work/r.json"
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
  json_check "$work/r.json" "all(r['sample_groups']==[x['stats']['count'] for x in r['runs']] for r in d['records'])"
  # Each run's own findings kept beside the merged ones, one entry per run, each with the family's.
  json_check "$work/r.json" "[x['run'] for x in d['run_findings']]==[1,2,3] and all(set(x['findings'])==set(d['findings']) for x in d['run_findings'])"
  expect_rc 0 "$gtb" compare "$work/r.json" "$work/r.json"
  grep -q "3r/3r" "$work/out.txt" || fail "compare did not decide on the runs"
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" run --family selftest --runs 0 --out "$work/r2.json"
  [ ! -e "$work/r2.json" ] || fail "wrote a file"
  ;;
repetitions)
  # Each case run three times in one process, in a shuffled order: a record pools its repetitions'
  # samples and takes the median of their counters (the case's call number: 1, 2, 3 -> 2).
  GTB_FAMILIES=selftest expect_rc 0 "$gtb" run --family selftest --repetitions 3 --budget 0.05 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "d['repetitions']==3 and all(r['status']=='ok' for r in d['records'])"
  json_check "$work/r.json" "all(r['info']['repetitions']==3 and r['counters']['call']['value']==2 for r in d['records'])"
  json_check "$work/r.json" "all(r['stats']['count']==len(r['samples_s']) and r['stats']['count']>=9 for r in d['records'])"
  # Each repetition's samples are a group of their own (they met the machine apart).
  json_check "$work/r.json" "all(len(r['sample_groups'])==3 and sum(r['sample_groups'])==len(r['samples_s']) for r in d['records'])"
  # The report's header says how the file was measured.
  expect_rc 0 "$gtb" report "$work/r.json" --out "$work/r.md"
  grep -q "^| runs | one run; within it, each family's cases 3 times in a random interleaved order" "$work/r.md" || fail "the report does not say the cases ran 3 times"
  # A check that fails on a later repetition makes the record invalid, and says which repetition.
  GTB_FAMILIES=selftest GTB_SELFTEST_FAIL_CALL='2@*steps=262144' expect_rc 0 "$gtb" run --family selftest --repetitions 3 --budget 0.05 --out "$work/f.json"
  json_check "$work/f.json" "[(r['params']['steps'], r['status']) for r in d['records']]==[(262144,'invalid'),(1048576,'ok')]"
  json_check "$work/f.json" "[r['status_detail'][:13] for r in d['records'] if r['status']=='invalid']==['repetition 2:']"
  GTB_FAMILIES=selftest expect_rc 2 "$gtb" run --family selftest --repetitions 0 --out "$work/r2.json"
  grep -q "repetitions" "$work/out.txt" || fail "a bad --repetitions is not named"
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
  grep -q "confirm-rounds: must be 0" "$work/out.txt" || fail "bad --confirm-rounds not explained"
  expect_rc 2 "$gtb" ab "$build"
  # A family whose binary judges its input first (PRECHECK): gtb ab asks it of both builds, as gtb run
  # does, and a rejection in NEW's ends it with the message before any round, nothing written.
  mkdir -p "$work/pre"
  printf '#!/bin/sh\n[ "$1" = --gtb_precheck ] && { echo "planted: input rejected"; exit 2; }\nexec "%s" "$@"\n' "$build/gtb-selftest" > "$work/pre/gtb-selftest"
  chmod +x "$work/pre/gtb-selftest"
  rm -rf "$work/ab.json" "$work/keep"
  GTB_FAMILIES=selftest GTB_PRECHECK_FAMILIES=selftest expect_rc 2 "$gtb" ab "$build" "$work/pre" --family selftest --budget 0.05 --out "$work/ab.json" --keep "$work/keep"
  grep -q "gtb ab: selftest: planted: input rejected" "$work/out.txt" || fail "gtb ab: the precheck's message is missing"
  [ ! -e "$work/ab.json" ] && [ ! -e "$work/keep" ] || fail "gtb ab wrote a file after a rejected precheck"
  # gtb run, the same check (one shared code path).
  rm -f "$work/r.json"
  GTB_BIN_DIR="$work/pre" GTB_FAMILIES=selftest GTB_PRECHECK_FAMILIES=selftest expect_rc 2 "$gtb" run --family selftest --out "$work/r.json"
  grep -q "gtb run: selftest: planted: input rejected" "$work/out.txt" || fail "gtb run: the precheck's message is missing"
  [ ! -e "$work/r.json" ] || fail "gtb run wrote a file after a rejected precheck"
  ;;
planted)
  # A 50% slowdown planted in NEW's self-test binary is caught, on that record alone; the knob
  # reaches no other family.
  mkdir -p "$work/new"
  printf '#!/bin/sh\nGTB_SELFTEST_SLOWDOWN=0.5@*steps=262144 exec "%s" "$@"\n' "$(dirname "$gtb")/gtb-selftest" > "$work/new/gtb-selftest"
  chmod +x "$work/new/gtb-selftest"
  # Five rounds: with three (2 degrees of freedom) a test running beside it on two cores could widen
  # the interval past a 50% change. A shared machine can still have a burst that makes every record
  # noisy (gtb ab then honestly exits 0 with "0 regressions, 0 faster, N noisy"): only that outcome is
  # tried again, at most twice; a missed slowdown ("same") or a wrong verdict fails at once.
  ab_slower() {
    local try
    for try in 1 2 3; do
      GTB_FAMILIES=selftest "$gtb" "$@" >"$work/out.txt" 2>&1
      local rc=$?
      [ "$rc" -eq 1 ] && return 0
      if [ "$rc" -eq 0 ] && grep -Eq "^gtb ab: 0 regressions, 0 faster, [1-9][0-9]* noisy of" "$work/out.txt" && [ "$try" -lt 3 ]; then
        echo "gtb ab found only noise on try $try (a busy machine); trying again:"; tail -n 1 "$work/out.txt"
        continue
      fi
      cat "$work/out.txt" >&2; fail "exit $rc, wanted 1: $*"
    done
  }
  ab_slower ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --format json --out "$work/ab.json"
  json_check "$work/ab.json" "[r['id'] for r in d['records'] if r['verdict']=='slower']==['selftest/spin/scalar/cpu/steps=262144']"
  # Found slower in five rounds, then confirmed on five fresh rounds of its family (kept apart).
  json_check "$work/ab.json" "d['settings']['confirm_rounds']==5 and d['settings']['confirmed_families']==['selftest'] and all('confirmed: slower on 5 fresh rounds' in r['note'] for r in d['records'] if r['verdict']=='slower')"
  rm -rf "$work/keep"
  ab_slower ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --keep "$work/keep"
  json_check "$work/keep/new.confirm.json" "d['runs']==5 and all(len(r['runs'])==5 for r in d['records'] if r['status']=='ok')"
  json_check "$work/keep/new.json" "d['runs']==5"
  # The kept files decide again as gtb ab did.
  expect_rc 1 "$gtb" compare "$work/keep/base.json" "$work/keep/new.json" --paired --confirmed-by "$work/keep/base.confirm.json" "$work/keep/new.confirm.json" --format json --out "$work/again.json"
  json_check "$work/again.json" "d['settings']['confirm_rounds']==5 and [r['id'] for r in d['records'] if r['verdict']=='slower']==['selftest/spin/scalar/cpu/steps=262144']"
  expect_rc 2 "$gtb" compare "$work/keep/base.json" "$work/keep/new.json" --confirmed-by "$work/keep/base.confirm.json" "$work/keep/new.confirm.json"
  # Without the confirmation the first five rounds decide alone.
  ab_slower ab "$(dirname "$gtb")" "$work/new" --family selftest --rounds 5 --budget 0.05 --confirm-rounds 0 --format json --out "$work/ab0.json"
  json_check "$work/ab0.json" "d['settings']['confirm_rounds']==0 and d['settings']['confirmed_families']==[]"
  GTB_SELFTEST_SLOWDOWN=nonsense expect_rc 0 "$(dirname "$gtb")/gtb-ceilings" --gtb_list
  GTB_SELFTEST_SLOWDOWN=nonsense "$(dirname "$gtb")/gtb-selftest" --gtb_out="$work/s.json" >"$work/out.txt" 2>&1
  json_check "$work/s.json" "all(r['status']=='failed' and 'GTB_SELFTEST_SLOWDOWN' in r['status_detail'] for r in d['records'])"
  ;;
timeout_hang)
  # The self-test family with a case that spins for ever, then the self-test family as it is.
  mkdir -p "$work/bin"
  ln -s "$(dirname "$gtb")/gtb-selftest" "$work/bin/gtb-selftest"
  printf '#!/bin/sh\nGTB_SELFTEST_HANG="*steps=1048576" exec "%s" "$@"\n' "$(dirname "$gtb")/gtb-selftest" > "$work/bin/gtb-hang"
  chmod +x "$work/bin/gtb-hang"
  t0=$(date +%s)
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=hang,selftest expect_rc 1 "$gtb" run --family-timeout 3 --budget 0.05 --out "$work/r.json"
  [ $(( $(date +%s) - t0 )) -le 40 ] || fail "the run took over 40 s"
  validate "$work/r.json"
  json_true "$work/r.json" "[(f['name'], f['status']) for f in d['families']]==[('hang','failed'),('selftest','ok')]"
  json_true "$work/r.json" "d['families'][0]['error']=='timed out after 3 s (last case started: selftest/spin/scalar/cpu/steps=1048576)'"
  # The spinning process dies at SIGTERM: the limit, not the grace after it, is what the hang cost.
  json_true "$work/r.json" "3 <= d['families'][0]['seconds'] < 7 and d['families'][0]['exit_code']==128+15"
  json_true "$work/r.json" "d['families'][1]['records']==2 and [r['status'] for r in d['records']]==['ok','ok']"
  grep -q "hang .*FAILED: timed out after 3 s" "$work/out.txt" || fail "the timeout was not reported on stderr"
  expect_rc 0 "$gtb" report "$work/r.json"
  grep -q 'family `hang` failed: timed out after 3 s (last case started: selftest/' "$work/out.txt" || fail "the report does not say what timed out"
  ;;
timeout_stubborn|timeout_grandchild)
  # A family that ignores SIGTERM, and one whose grandchild does: SIGKILL after the grace stops both,
  # and no process of theirs is left.
  mode=${case_name#timeout_}
  fake_family "$work/bin" "$mode" "$mode"
  ln -s "$(dirname "$gtb")/gtb-selftest" "$work/bin/gtb-selftest"
  # The limit applies to every family: 4 s leaves the selftest family that runs next (its listing and
  # two short cases) room on a loaded machine or under the sanitizers, where 2 s at times did not.
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=$mode,selftest expect_rc 1 "$gtb" run --family-timeout 4 --budget 0.05 --out "$work/r.json"
  for p in "$work/bin/$mode.pid" "$work/bin/$mode.grandchild"; do
    [ -s "$p" ] || fail "the fake family never started ($p missing)"
    gone "$(cat "$p")" || { kill -9 "$(cat "$p")"; fail "process $(cat "$p") ($(basename "$p")) outlived its family"; }
  done
  validate "$work/r.json"
  json_true "$work/r.json" "[(f['name'], f['status']) for f in d['families']]==[('$mode','failed'),('selftest','ok')]"
  json_true "$work/r.json" "d['families'][0]['error']=='timed out after 4 s (last case started: none)'"
  # SIGTERM did not end it: it lasted the limit plus the 5 s grace, then SIGKILL (on the leader
  # itself when it ignores SIGTERM; on the grandchild after the leader died of SIGTERM).
  json_true "$work/r.json" "9 <= d['families'][0]['seconds'] < 17"
  want_code=$([ "$mode" = stubborn ] && echo 137 || echo 143)
  json_true "$work/r.json" "d['families'][0]['exit_code']==$want_code"
  json_true "$work/r.json" "any(r['family']=='selftest' and r['status']=='ok' for r in d['records'])"
  ;;
interrupt_stubborn)
  # SIGTERM to the driver reaches a family in its own process group; one that ignores it is killed
  # after the grace, and the driver still records it "interrupted".
  fake_family "$work/bin" stubborn stubborn
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=stubborn "$gtb" run --out "$work/r.json" >"$work/out.txt" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do [ -s "$work/bin/stubborn.grandchild" ] && [ -s "$work/bin/stubborn.pid" ] && break; sleep 0.1; done
  [ -s "$work/bin/stubborn.pid" ] || { kill "$pid"; fail "the stubborn family never started"; }
  t0=$(date +%s)
  kill -TERM "$pid"
  wait "$pid"; rc=$?
  [ "$rc" -eq 143 ] || { cat "$work/out.txt" >&2; fail "exit $rc after SIGTERM, wanted 143"; }
  [ $(( $(date +%s) - t0 )) -le 12 ] || fail "the driver took over 12 s to stop a family that ignores SIGTERM"
  for p in "$work/bin/stubborn.pid" "$work/bin/stubborn.grandchild"; do
    gone "$(cat "$p")" || { kill -9 "$(cat "$p")"; fail "process $(cat "$p") outlived the interrupt"; }
  done
  ;;
timeout_flags)
  GTB_FAMILIES=selftest
  export GTB_FAMILIES
  for v in 0 -1 -0.5 abc 3s inf nan 1e999 ''; do
    expect_rc 2 "$gtb" run --family-timeout "$v" --out "$work/r.json"
    grep -q -- "--family-timeout" "$work/out.txt" || fail "bad --family-timeout '$v' not explained"
  done
  [ ! -e "$work/r.json" ] || fail "wrote a file"
  # The default limit, and the rule that scales it with a larger budget (0.5 s = 2 x the quick suite's 0.25).
  expect_rc 0 "$gtb" run --budget 0.05 --out "$work/r.json"
  grep -q "selftest .*running 2 cases (time limit 600 s)" "$work/out.txt" || fail "quick default is not 600 s"
  expect_rc 0 "$gtb" run --budget 0.5 --out "$work/r.json"
  grep -q "time limit 1200 s" "$work/out.txt" || fail "a 2x budget did not double the limit"
  expect_rc 0 "$gtb" run --budget 0.05 --family-timeout 45.5 --out "$work/r.json"
  grep -q "time limit 45.5 s" "$work/out.txt" || fail "--family-timeout 45.5 not applied"
  ;;
fail_exit3|fail_no_results|fail_garbage|fail_missing)
  # A family that fails without a signal, or writes no or an unreadable results file, or is not there:
  # recorded failed with what happened, the family after it still runs, exit 1.
  mode=${case_name#fail_}
  fake_family "$work/bin" broken "$mode"
  ln -s "$(dirname "$gtb")/gtb-selftest" "$work/bin/gtb-selftest"
  case $mode in
    exit3) WANT="exited with code 3" ;;
    no_results) WANT="exited with code 0 but wrote no results file" ;;
    garbage) WANT="exited with code 0 but its results file is unreadable: not valid JSON" ;;
    missing) WANT="cannot start $work/bin/gtb-broken: No such file or directory" ;;
  esac
  export WANT
  GTB_BIN_DIR="$work/bin" GTB_FAMILIES=broken,selftest expect_rc 1 "$gtb" run --budget 0.05 --out "$work/r.json"
  validate "$work/r.json"
  json_true "$work/r.json" "[(f['name'], f['status']) for f in d['families']]==[('broken','failed'),('selftest','ok')]"
  json_true "$work/r.json" "d['families'][0]['error'].startswith(os.environ['WANT']) and d['families'][0]['records']==0"
  json_true "$work/r.json" "d['families'][1]['records']==2 and all(r['family']=='selftest' and r['status']=='ok' for r in d['records'])"
  grep -qF "FAILED: $WANT" "$work/out.txt" || fail "stderr does not say '$WANT'"
  if [ "$mode" = exit3 ]; then
    json_true "$work/r.json" "d['families'][0]['exit_code']==3"
    grep -q "fake family: giving up" "$work/out.txt" || fail "the failed family's log was not shown"
  fi
  ;;
summary)
  # The end of the run fits a screen and names the file that holds the whole per-record table, which
  # the run writes beside its results (OUT without .json, -summary.txt) and does not print.
  export GTB_FAMILIES=selftest
  expect_rc 0 "$gtb" run --budget 0.05 --out "$work/r.json"
  table="$work/r-summary.txt"
  [ -s "$table" ] || fail "no table beside the results: $(ls "$work")"
  grep -qxF "table: $table (every record, its value or why none)" "$work/out.txt" ||
    fail "the screen does not name the table's file: $(cat "$work/out.txt")"
  grep -q "^Records: 2: 2 ok" "$work/out.txt" || fail "the records are not counted: $(cat "$work/out.txt")"
  grep -q "^record .*parameters" "$work/out.txt" && fail "the per-record table was printed: $(cat "$work/out.txt")"
  grep -q "^record .*parameters" "$table" || fail "the table's file holds no per-record table: $(cat "$table")"
  "$py" - "$work/r.json" "$table" <<'PY' || fail "a record is missing from the table's file"
import json, sys
d = json.load(open(sys.argv[1])); table = open(sys.argv[2]).read()
names = ['/'.join((r['family'], r['workload'], r['variant'], r['backend'])) for r in d['records']]
missing = [n for n in names if n + ' ' not in table]
sys.exit('missing: %s' % missing if missing or not names else 0)
PY
  # --summary full prints the table too, before the short end; -q prints neither and writes no table.
  expect_rc 0 "$gtb" run --budget 0.05 --summary full --out "$work/f.json"
  grep -q "^record .*parameters" "$work/out.txt" || fail "--summary full did not print the table"
  [ "$(grep -n '^record .*parameters' "$work/out.txt" | cut -d: -f1)" -lt "$(grep -n '^table: ' "$work/out.txt" | cut -d: -f1)" ] ||
    fail "--summary full: the table is not before the short end"
  expect_rc 0 "$gtb" run --budget 0.05 -q --out "$work/q.json"
  [ -e "$work/q-summary.txt" ] && fail "-q wrote a table"
  grep -q "^Families" "$work/out.txt" && fail "-q printed a summary"
  expect_rc 2 "$gtb" run --budget 0.05 --summary long --out "$work/b.json"
  grep -q -- "--summary" "$work/out.txt" || fail "a bad --summary is not named"
  # A table that cannot be written is said, and the run exits 1 with its results file written.
  mkdir -p "$work/d-summary.txt/x"
  expect_rc 1 "$gtb" run --budget 0.05 --out "$work/d.json"
  grep -qF "the summary table not kept: cannot write $work/d-summary.txt" "$work/out.txt" || fail "the lost table was not reported"
  grep -q "^table: " "$work/out.txt" && fail "a table that was not written is named"
  json_true "$work/d.json" "d['families'][0]['status']=='ok'"
  ;;
logs)
  export GTB_FAMILIES=selftest
  expect_rc 0 "$gtb" run --budget 0.05 --logs "$work/logs" --out "$work/r.json"
  grep -q '^selftest/spin/scalar/cpu/steps=262144' "$work/logs/selftest.log" || fail "--logs: no family log"
  json_true "$work/logs/selftest.gbench.json" "len(d['benchmarks'])==2"
  expect_rc 0 "$gtb" run --budget 0.05 --keep-logs --out "$work/k.json"
  grep -q '^selftest/spin/scalar/cpu/steps=1048576' "$work/k.json.logs/selftest.log" || fail "--keep-logs: no log beside the results"
  # A logs folder that cannot be made is bad input: exit 2, nothing written.
  echo x > "$work/plain"
  expect_rc 2 "$gtb" run --budget 0.05 --logs "$work/plain/logs" --out "$work/n.json"
  grep -qF -- "--logs $work/plain/logs" "$work/out.txt" || fail "message does not name the logs folder"
  echo x > "$work/kl.json.logs"
  expect_rc 2 "$gtb" run --budget 0.05 --keep-logs --out "$work/kl.json"
  grep -qF -- "--keep-logs $work/kl.json.logs" "$work/out.txt" || fail "message does not name the --keep-logs folder"
  [ ! -e "$work/n.json" ] && [ ! -e "$work/kl.json" ] || fail "wrote a results file"
  # A logs folder that is gone by the end of the run: the results stay, the loss is reported, exit 1.
  mkdir -p "$work/bin"
  printf '#!/bin/sh\nrm -rf "%s/lost"; echo x > "%s/lost"\nexec "%s" "$@"\n' "$work" "$work" "$(dirname "$gtb")/gtb-selftest" > "$work/bin/gtb-selftest"
  chmod +x "$work/bin/gtb-selftest"
  GTB_BIN_DIR="$work/bin" expect_rc 1 "$gtb" run --budget 0.05 --logs "$work/lost" --out "$work/l.json"
  grep -qF "logs not kept: cannot create $work/lost" "$work/out.txt" || fail "the lost logs were not reported"
  json_true "$work/l.json" "d['families'][0]['status']=='ok' and len(d['records'])==2"
  ;;
report_sections)
  root=$(cd "$(dirname "$0")/../.." && pwd)
  # A fresh run: health readings, what ran, no GPU pair, nothing suspect.
  GTB_FAMILIES=selftest expect_rc 0 "$gtb" run --budget 0.05 --out "$work/r.json"
  expect_rc 0 "$gtb" report "$work/r.json"
  cp "$work/out.txt" "$work/fresh.md"
  for s in "## Measurement health" "## What ran" "| selftest | 2 | 0 | 0 | 0 |" "## GPU vs CPU on the same problem" "No comparison:"; do
    grep -qF "$s" "$work/fresh.md" || fail "fresh report lacks '$s'"
  done
  # A loaded machine may make a fresh record suspect (drift, spread): the section follows the records.
  suspects=$("$py" -c "import json,sys; print(sum(1 for r in json.load(open(sys.argv[1]))['records'] if r.get('suspect')))" "$work/r.json")
  if [ "$suspects" = 0 ]; then
    grep -q "Suspect numbers" "$work/fresh.md" && fail "Suspect numbers without a suspect record"
  else
    grep -qF "## Suspect numbers" "$work/fresh.md" || fail "$suspects suspect records but no Suspect numbers section"
  fi
  # The same file with a suspect record planted: its section appears, with the reason.
  "$py" - "$work/r.json" "$work/suspect.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['records'][0]['suspect'] = 'planted: faster than the machine can be'
json.dump(d, open(sys.argv[2], 'w'))
PY
  expect_rc 0 "$gtb" report "$work/suspect.json"
  grep -qF "## Suspect numbers" "$work/out.txt" || fail "no Suspect numbers section for a suspect record"
  grep -qF "planted: faster than the machine can be" "$work/out.txt" || fail "the suspect reason is not shown"
  # A file with CPU and GPU records of the same problem, and no health readings.
  expect_rc 0 "$gtb" report "$root/tests/fixtures/gpu_base.json"
  grep -qF "| workload | GPU wins | lowest GPU/CPU | highest GPU/CPU |" "$work/out.txt" || fail "no GPU vs CPU table"
  grep -q "Measurement health" "$work/out.txt" && fail "Measurement health without health readings"
  # No section of any committed results file or readable fixture fails to read.
  n=0
  for f in "$root"/results/*.json "$root"/tests/fixtures/*.json "$root"/tests/fixtures/real/*.json; do
    case $(basename "$f") in bad_*) continue ;; esac
    expect_rc 0 "$gtb" report "$f"
    grep -q "Could not read" "$work/out.txt" && { grep "Could not read" "$work/out.txt" >&2; fail "$f: a section could not be read"; }
    n=$((n + 1))
  done
  [ "$n" -ge 5 ] || fail "only $n files reported"
  # The check above can fail: findings of a shape the report cannot read say so.
  "$py" - "$root/tests/fixtures/gpu_base.json" "$work/odd.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['findings']['transfer']['sections'][0]['tables'][0]['rows'] = [[1]]
json.dump(d, open(sys.argv[2], 'w'))
PY
  expect_rc 0 "$gtb" report "$work/odd.json"
  grep -q "Could not read" "$work/out.txt" || fail "a planted unreadable section went unnoticed"
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
