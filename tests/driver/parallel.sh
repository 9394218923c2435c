#!/usr/bin/env bash
# End-to-end tests of `gtb run --family parallel --ranks N` (the CPU path; nccl_two_ranks: two GPUs):
# one case per invocation.
# usage: parallel.sh CASE GTB PYTHON VALIDATE_SCRIPT WORKDIR
set -u
case_name=$1 gtb=$2 py=$3 validate=$4 work=$5
source "$(dirname "$0")/lib.sh"

case "$case_name" in
two_ranks)
  command -v mpirun >/dev/null || { echo "no mpirun: skipped"; exit 77; }
  # The whole quick suite of the family, bounded to a few seconds by the budget.
  expect_rc 0 "$gtb" run --family parallel --ranks 2 --budget 0.05 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "d['context']['parallel']['ranks']==2 and len(d['context']['parallel']['hosts'])==2"
  # One file, every record once: rank 1 wrote nothing of its own.
  json_check "$work/r.json" "len({r['id'] for r in d['records']})==len(d['records'])"
  json_check "$work/r.json" "any(r['workload']=='collective' and r['params'].get('ranks')==2 and r['status']=='ok' and r['counters']['busbw']['value']>0 for r in d['records'])"
  json_check "$work/r.json" "any(r['workload']=='dp_step' and r['params'].get('ranks')==2 and r['status']=='ok' and r['check']['passed'] for r in d['records'])"
  json_check "$work/r.json" "all(r['status']=='skipped' and r['status_detail'] for r in d['records'] if r['backend']=='cuda') or d['context']['gpu']['available']"
  json_check "$work/r.json" "'scaling_efficiency' in d['findings']['parallel']['data']['dp_step'][0]"
  # The overlap A/B is measured as a pair across ranks: rounds alternate on every rank in lockstep.
  json_check "$work/r.json" "any(r['workload']=='dp_step' and r['status']=='ok' and r.get('paired') and len(r['paired'][0]['a_s'])>=6 for r in d['records'])"
  # Repetitions leave a family run as ranks alone (each process would shuffle its cases apart and the
  # ranks would wait in different collectives): its first cases once each, within the time limit.
  expect_rc 0 "$gtb" run --family parallel --ranks 2 --cases 0:2 --repetitions 3 --budget 0.05 --family-timeout 60 --out "$work/rep.json"
  json_check "$work/rep.json" "d['repetitions']==3 and len(d['records'])==2 and all('repetitions' not in r['info'] for r in d['records'])"
  ;;
ranks_zero)
  expect_rc 2 "$gtb" run --family parallel --ranks 0 --out "$work/r.json"
  grep -q "ranks must be at least 1" "$work/out.txt" || fail "no clear message"
  [ ! -e "$work/r.json" ] || fail "a results file was written"
  ;;
missing_hostfile)
  expect_rc 2 "$gtb" run --family parallel --ranks 2 --hostfile "$work/nope" --out "$work/r.json"
  grep -q "does not exist" "$work/out.txt" || fail "no clear message"
  [ ! -e "$work/r.json" ] || fail "a results file was written"
  ;;
mpirun_fails)
  # An mpirun that cannot start anything: a clear failure, a non-zero exit, and a complete results
  # file whose family entry says it failed and why (nothing half-written).
  printf '#!/bin/sh\necho "mpirun: cannot start ranks" >&2\nexit 3\n' >"$work/mpirun" && chmod +x "$work/mpirun"
  expect_rc 1 env GTB_MPIRUN="$work/mpirun" "$gtb" run --family parallel --ranks 2 --out "$work/r.json"
  grep -q "mpirun" "$work/out.txt" || fail "the message does not name mpirun"
  json_check "$work/r.json" "d['families'][0]['status']=='failed' and 'mpirun' in d['families'][0]['error'] and d['records']==[]"
  ;;
no_mpirun)
  # No mpirun on PATH: the family still runs, as one process whose CPU records say why they were skipped.
  expect_rc 0 env PATH=/nonexistent "$gtb" run --family parallel --ranks 2 --out "$work/r.json"
  json_check "$work/r.json" "d['records'] and all(r['status']=='skipped' and 'mpirun not found' in r['status_detail'] for r in d['records'] if r['backend']=='cpu')"
  ;;
nccl_two_ranks)
  # One GPU per rank under mpirun, the NCCL id broadcast over MPI. NCCL refuses two ranks on one GPU,
  # so this needs two GPUs; with fewer it is Skipped, never passed.
  command -v mpirun >/dev/null || { echo "no mpirun: skipped"; exit 77; }
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "${gpus:-0}" -ge 2 ] || { echo "needs 2 GPUs, found ${gpus:-0}: skipped"; exit 77; }
  expect_rc 0 "$gtb" run --family parallel --ranks 2 --budget 0.05 --out "$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "any(r['workload']=='collective' and r['variant']=='nccl' and r['status']=='ok' and r['info']['gpus']==2 and r['info']['processes']==2 and r['counters']['busbw']['value']>0 for r in d['records'])"
  json_check "$work/r.json" "all(r['status']=='ok' for r in d['records'] if r['variant']=='nccl' and r['workload']=='collective')"
  json_check "$work/r.json" "[r['check']['passed'] for r in d['records'] if r['workload']=='dp_step' and r['variant']=='nccl' and r['params']['ranks']==2] == [True, True]"
  ;;
*) fail "unknown case" ;;
esac
echo "ok [$case_name]"
