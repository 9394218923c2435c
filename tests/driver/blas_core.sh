#!/usr/bin/env bash
# The OpenBLAS core type a family process runs: the user's OPENBLAS_CORETYPE is respected and
# recorded, OpenBLAS's own detection is measured in a child process, the probe verifies a core.
# usage: blas_core.sh GTB_GEMM PYTHON WORKDIR
set -u
gemm=$1 py=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {  # check FILE PYTHON-EXPR (d = the document, rec(variant) = that record)
  # An explicit exit, not assert: with PYTHONOPTIMIZE set an assert is compiled out and passes.
  "$py" -c "
import json,sys
d=json.load(open(sys.argv[1]))
def rec(v): return next(r for r in d['records'] if r['variant']==v)
if not ($2): sys.exit('false; context.host.blas: ' + json.dumps(d['context']['host']['blas']))" "$1" || fail "$1: $2"
}
filter='gemm/gemm/openblas.*/cpu/m=256,n=256,k=256,'
unset OPENBLAS_CORETYPE GTB_OPENBLAS_AUTOCORE GTB_OPENBLAS_DETECTED GTB_OPENBLAS_REASON

# As the machine comes: gtb's choice (kept or replaced) is explained in the context.
"$gemm" --benchmark_filter="$filter" --gtb_budget=0.05 --gtb_out="$work/auto.json" >/dev/null 2>&1 ||
  fail "plain run failed"
check "$work/auto.json" "d['context']['host']['blas']['coretype']['source'] in ('detected','gtb')"
check "$work/auto.json" "d['context']['host']['blas']['coretype']['reason']"
check "$work/auto.json" "rec('openblas')['status']=='ok' and rec('openblas')['info']['corename']==d['context']['host']['blas']['corename']"
own=$("$py" -c "import json,sys; b=json.load(open(sys.argv[1]))['context']['host']['blas']['coretype']; print(b.get('detected', b['corename']))" "$work/auto.json")

# A user's choice is kept, even a generic core, and OpenBLAS's own detection is measured beside it.
OPENBLAS_CORETYPE=Prescott "$gemm" --benchmark_filter="$filter" --gtb_budget=0.05 --gtb_out="$work/user.json" \
  >/dev/null 2>&1 || fail "run with OPENBLAS_CORETYPE=Prescott failed"
check "$work/user.json" "d['context']['host']['blas']['corename']=='Prescott'"
check "$work/user.json" "d['context']['host']['blas']['coretype']['source']=='user'"
check "$work/user.json" "'set by the user' in d['context']['host']['blas']['coretype']['reason']"
check "$work/user.json" "rec('openblas')['info']['corename']=='Prescott' and rec('openblas')['info']['coretype_source']=='user'"
if [ "$own" = Prescott ]; then
  check "$work/user.json" "rec('openblas_detected')['status']=='skipped'"
else
  check "$work/user.json" "rec('openblas_detected')['status']=='ok' and rec('openblas_detected')['info']['corename']=='$own'"
  check "$work/user.json" "rec('openblas_detected')['check']['passed'] and len(rec('openblas_detected')['samples_s'])>0"
fi

# GTB_OPENBLAS_AUTOCORE=0 keeps OpenBLAS's own choice and says so.
GTB_OPENBLAS_AUTOCORE=0 "$gemm" --benchmark_filter="$filter" --gtb_budget=0.05 --gtb_out="$work/off.json" \
  >/dev/null 2>&1 || fail "run with GTB_OPENBLAS_AUTOCORE=0 failed"
check "$work/off.json" "d['context']['host']['blas']['coretype']['source']=='detected'"
check "$work/off.json" "'GTB_OPENBLAS_AUTOCORE=0' in d['context']['host']['blas']['coretype']['reason']"

# The probe verifies SGEMM with the core it is given and reports which core ran.
out=$(OPENBLAS_CORETYPE=Prescott "$gemm" --gtb_blas_probe) || fail "probe with Prescott failed: $out"
set -- $out
[ "$1" = Prescott ] && [ "$2" = 1 ] || fail "probe output '$out'"
"$py" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)" "$3" || fail "probe rate '$3'"
echo "ok"
