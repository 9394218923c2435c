#!/usr/bin/env bash
# End-to-end tests of the framework family: one case per invocation.
# usage: e2e.sh CASE GTB GTB_FRAMEWORK PYTHON VALIDATE_SCRIPT WORKDIR
# GTB_PYTHON (the interpreter with PyTorch, CTest sets it) is what with_torch and planted measure.
set -u
case_name=$1 gtb=$2 fwbin=$3 py=$4 validate=$5 work=$6
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../driver/lib.sh"
torch_python=${GTB_PYTHON:-python3}
need_torch() {  # Skipped (77), never passed, where the interpreter has no torch
  "$torch_python" -c 'import torch' >/dev/null 2>&1 || { echo "SKIPPED: GTB_PYTHON=$torch_python has no module torch"; exit 77; }
}

case "$case_name" in
without_torch)
  # Every record skipped with the reason; the run itself succeeds and says which interpreter it was.
  GTB_TEST_PYTHON=$py GTB_PYTHON="$here/python-without-torch" expect_rc 0 "$fwbin" --gtb_out="$work/r.json"
  validate "$work/r.json"
  json_check "$work/r.json" "len(d['records']) > 10 and all(r['status']=='skipped' for r in d['records'])"
  json_check "$work/r.json" "all('has no module torch' in r['status_detail'] and 'python-without-torch' in r['status_detail'] for r in d['records'] if r['backend']=='cpu')"
  json_check "$work/r.json" "'has no module torch' in d['context']['framework']['unavailable'] and d['context']['framework'].get('torch') is None"
  ;;
bad_python)
  # A program that does not exist, or is not Python: exit 2 with the message, nothing written,
  # from the family binary and from gtb run.
  for bad in /no/such/python /bin/false; do
    rm -f "$work/r.json"
    GTB_PYTHON=$bad expect_rc 2 "$fwbin" --gtb_out="$work/r.json"
    grep -q "GTB_PYTHON=$bad" "$work/out.txt" || fail "no message naming $bad"
    [ ! -e "$work/r.json" ] || fail "the family wrote $work/r.json"
    GTB_PYTHON=$bad expect_rc 2 "$gtb" run --family framework --out "$work/r.json"
    grep -q "GTB_PYTHON=$bad" "$work/out.txt" || fail "gtb run: no message naming $bad"
    [ ! -e "$work/r.json" ] || fail "gtb run wrote $work/r.json"
  done
  ;;
with_torch)
  need_torch
  # A few short cases of each kind: the checks pass, the records are measured, the context names
  # the PyTorch that ran and its threads (all cores), and what this PyTorch lacks is skipped with why.
  filter='op_chain/eager/cpu/n=256/|loop_vs_vector/.*/cpu/n=256/|mlp_step/pytorch/cpu/width=64|dataloader/.*sample_us=50,'
  # PyTorch's own kernels the step is priced with: torch.mm, the optimizer step, the autograd operator.
  filter="$filter|matmul/pytorch/cpu/in=64,out=16,rows=32,|optimizer/pytorch/cpu/params=4096,tensors=8,|autograd_chain/eager/cpu/n=256/"
  expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 --benchmark_filter="$filter"
  validate "$work/r.json"
  json_check "$work/r.json" "all(r['status']=='ok' and r['check']['passed'] for r in d['records'] if r['backend']=='cpu' and r['options'].get('mode')!='compiled')"
  json_check "$work/r.json" "len([r for r in d['records'] if r['status']=='ok']) >= 6"
  json_check "$work/r.json" "all(r['status']=='skipped' and 'torch.compile' in r['status_detail'] for r in d['records'] if r['options'].get('mode')=='compiled') if not d['context']['framework']['compile'] else True"
  cores=$(nproc)
  json_check "$work/r.json" "d['context']['framework']['torch'] and d['context']['framework']['threads']==$cores and d['context']['framework']['python']"
  json_check "$work/r.json" "all(r['status']=='skipped' for r in d['records'] if r['backend']=='cuda') or d['context']['framework']['cuda_available']"
  json_check "$work/r.json" "'fed' in d['findings']['framework']['data'] and 'loops' in d['findings']['framework']['data']"
  json_check "$work/r.json" "any(t['name']=='framework_op' and t['backend']=='cpu' and t['points'] for t in d['findings']['framework']['terms'])"
  for term in framework_matmul framework_optimizer framework_step_op framework_loader; do
    json_check "$work/r.json" "any(t['name']=='$term' and t['backend']=='cpu' and t.get('points') for t in d['findings']['framework']['terms'])"
  done
  # gtb advise prices PyTorch's dispatch from those terms: by default, since the file measured it.
  expect_rc 0 "$gtb" advise "$work/r.json" --model mlp --width 64 --depth 4 --batch 256 --format json --out "$work/a.json"
  json_check "$work/a.json" "d['config']['framework']=='pytorch-eager' and any(p['name']=='dispatch' and p['seconds']>0 for p in d['predictions'][0]['parts'] if p['group']=='overhead')"
  json_check "$work/a.json" "any(p['name']=='matmul' and 'torch.mm' in p['what'] for p in d['predictions'][0]['parts'])"
  expect_rc 0 "$gtb" advise "$work/r.json" --model mlp --width 64 --depth 4 --batch 256 --framework native --format json --out "$work/n.json"
  json_check "$work/n.json" "d['config'].get('framework','native')=='native' and not any(p['name']=='dispatch' for p in d['predictions'][0]['parts'])"
  expect_rc 2 "$gtb" advise "$work/r.json" --model mlp --width 64 --depth 4 --batch 256 --framework jax
  ;;
planted)
  need_torch
  # A worker whose output is off by 1e-2 fails gtb's float64 check: the record is invalid, not a number.
  GTB_FRAMEWORK_PLANT=1 expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 \
    --benchmark_filter='op_chain/eager/cpu/n=256/|mlp_step/pytorch/cpu/width=64,.*eager|matmul/pytorch/cpu/in=64,out=16,rows=32,orientation=nn|optimizer/pytorch/cpu/params=4096,tensors=8,optimizer=sgd|autograd_chain/eager/cpu/n=256/'
  json_check "$work/r.json" "len(d['records'])==5 and all(r['status']=='invalid' and 'value' not in r for r in d['records'])"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS [$case_name]"
