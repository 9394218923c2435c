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
    # gtb ab asks the same precheck of both builds: exit 2, the message, no comparison, nothing kept.
    build=$(dirname "$fwbin")
    rm -rf "$work/keep"
    GTB_PYTHON=$bad expect_rc 2 "$gtb" ab "$build" "$build" --family framework --out "$work/ab.json" --keep "$work/keep"
    grep -q "gtb ab: framework: GTB_PYTHON=$bad" "$work/out.txt" || fail "gtb ab: no message naming $bad"
    [ ! -e "$work/ab.json" ] && [ ! -e "$work/keep" ] || fail "gtb ab wrote $work/ab.json or $work/keep"
  done
  ;;
with_torch)
  need_torch
  # A few short cases of each kind: the checks pass, the records are measured, the context names
  # the PyTorch that ran and its threads (all cores), and what this PyTorch lacks is skipped with why.
  filter='op_chain/eager/cpu/n=256/|loop_vs_vector/.*/cpu/n=256/|mlp_step/pytorch/cpu/width=64|dataloader/.*sample_us=50,'
  # PyTorch's own kernels the step is priced with: torch.mm, the optimizer step, the autograd operator.
  filter="$filter|matmul/pytorch/cpu/in=64,out=16,rows=32,|optimizer/pytorch/cpu/params=4096,tensors=8,|autograd_chain/eager/cpu/n=256/"
  # torch.bmm at attention's smallest per-head shapes, one per orientation.
  filter="$filter|bmm/pytorch/cpu/count=16,m=128,n=128,k=32,|bmm/pytorch/cpu/count=16,m=128,n=32,k=128,"
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
  for term in framework_matmul framework_matmul_batched framework_optimizer framework_step_op framework_loader; do
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
    --benchmark_filter='op_chain/eager/cpu/n=256/|mlp_step/pytorch/cpu/width=64,.*eager|matmul/pytorch/cpu/in=64,out=16,rows=32,orientation=nn|optimizer/pytorch/cpu/params=4096,tensors=8,optimizer=sgd|autograd_chain/eager/cpu/n=256/|bmm/pytorch/cpu/count=16,m=128,n=128,k=32,orientation=nt'
  json_check "$work/r.json" "len(d['records'])==6 and all(r['status']=='invalid' and 'value' not in r for r in d['records'])"
  # A step whose last row differs from gtb's data: the check covers every row the step trains on.
  GTB_FRAMEWORK_PLANT=last_row expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 \
    --benchmark_filter='mlp_step/pytorch/cpu/width=64,.*eager'
  json_check "$work/r.json" "len(d['records'])==1 and d['records'][0]['status']=='invalid' and 'whole batch (256 rows)' in d['records'][0]['check']['detail']"
  ;;
without_numpy)
  # pip's PyTorch installs no numpy: the worker exchanges tensors without it. With numpy unimportable
  # (tests/framework/no-numpy stands in for a missing one), one case of each CPU workload measures,
  # none fails, the file validates and the context says numpy was missing.
  no_numpy="$here/no-numpy${PYTHONPATH:+:$PYTHONPATH}"
  PYTHONPATH=$no_numpy "$torch_python" -c 'import torch' >/dev/null 2>&1 ||
    { echo "SKIPPED: GTB_PYTHON=$torch_python has no torch that imports without numpy"; exit 77; }
  filter='op_chain/eager/cpu/n=256/|autograd_chain/eager/cpu/n=256/|loop_vs_vector/.*/cpu/n=256/|mlp_step/pytorch/cpu/width=64,.*eager'
  filter="$filter|mixed_precision/pytorch/cpu/.*precision=bf16|loss_read/pytorch/cpu/width=256,depth=4,batch=32,loss_read_every=100"
  filter="$filter|transformer_step/pytorch/cpu/layers=2,d_model=128,.*attention=materialised,precision=fp32"
  filter="$filter|matmul/pytorch/cpu/in=64,out=16,rows=32,orientation=nn|bmm/pytorch/cpu/count=16,m=128,n=32,k=128,orientation=nn"
  filter="$filter|optimizer/pytorch/cpu/params=4096,tensors=8,optimizer=adamw|dataloader/pytorch/cpu/sample_us=50,num_workers=1,"
  PYTHONPATH=$no_numpy expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 --benchmark_filter="$filter"
  validate "$work/r.json"
  json_check "$work/r.json" "d['context']['framework']['torch'] and d['context']['framework']['numpy'] is None"
  json_check "$work/r.json" "not [r['id'] for r in d['records'] if r['status'] in ('failed', 'invalid')]"
  json_check "$work/r.json" "all(r['status']=='ok' and r['check']['passed'] for r in d['records'] if r['backend']=='cpu')"
  json_check "$work/r.json" "{r['workload'] for r in d['records'] if r['status']=='ok'} == {'op_chain', 'autograd_chain', 'loop_vs_vector', 'mlp_step', 'mixed_precision', 'loss_read', 'transformer_step', 'matmul', 'bmm', 'optimizer', 'dataloader'}"
  ;;
tf32_override)
  need_torch
  # NVIDIA's PyTorch containers set TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (PyTorch's FP32 GEMMs then run
  # TF32 whatever allow_tf32 says): the worker unsets it before torch loads, so the fp32 records pass
  # the fp32 check and the context says what was found and what the work ran with. NVIDIA_TF32_OVERRIDE,
  # which cuBLAS reads itself, is in the context as found.
  filter='matmul/pytorch/cpu/in=64,out=16,rows=32,orientation=nn|bmm/pytorch/cpu/count=16,m=128,n=32,k=128,orientation=nn|mlp_step/pytorch/cpu/width=64,.*eager'
  filter="$filter|transformer_step/pytorch/cpu/layers=2,d_model=128,.*attention=materialised,precision=fp32"
  TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 NVIDIA_TF32_OVERRIDE=0 expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 \
    --benchmark_filter="$filter"
  validate "$work/r.json"
  json_check "$work/r.json" "len(d['records'])==4 and all(r['status']=='ok' and r['check']['passed'] for r in d['records'])"
  json_check "$work/r.json" "d['context']['framework']['tf32']=={'TORCH_ALLOW_TF32_CUBLAS_OVERRIDE': '1', 'override_unset': True, 'matmul_allow_tf32': False, 'cudnn_allow_tf32': False, **({'float32_matmul_precision': 'highest'} if 'float32_matmul_precision' in d['context']['framework']['tf32'] else {})}"
  json_check "$work/r.json" "d['context']['environment']=={'NVIDIA_TF32_OVERRIDE': '0'}"
  # Neither set: nothing found, nothing unset, FP32 all the same.
  env -u TORCH_ALLOW_TF32_CUBLAS_OVERRIDE -u NVIDIA_TF32_OVERRIDE "$fwbin" --gtb_out="$work/n.json" --gtb_budget=0.05 \
    --benchmark_filter='matmul/pytorch/cpu/in=64,out=16,rows=32,orientation=nn' >"$work/out.txt" 2>&1 || fail "exit $?"
  json_check "$work/n.json" "d['context']['framework']['tf32']['TORCH_ALLOW_TF32_CUBLAS_OVERRIDE'] is None and not d['context']['framework']['tf32']['override_unset'] and not d['context']['framework']['tf32']['matmul_allow_tf32']"
  json_check "$work/n.json" "d['context']['environment']=={} and d['records'][0]['status']=='ok'"
  ;;
compile_fails)
  need_torch
  # Inductor compiles at the compiled step's first call, not at torch.compile(): a compiler that fails
  # there (planted: through Dynamo's backend where this PyTorch has torch.compile) skips the compiled
  # case with the compiler's message, never fails it; the eager case beside it measures.
  GTB_FRAMEWORK_PLANT=compile expect_rc 0 "$fwbin" --gtb_out="$work/r.json" --gtb_budget=0.05 \
    --benchmark_filter='mlp_step/pytorch/cpu/width=64,'
  validate "$work/r.json"
  json_check "$work/r.json" "sorted(r['options']['mode'] for r in d['records'])==['compiled', 'eager']"
  json_check "$work/r.json" "all(r['status']=='ok' for r in d['records'] if r['options']['mode']=='eager')"
  json_check "$work/r.json" "all(r['status']=='skipped' and 'torch.compile failed at the first call' in r['status_detail'] and 'planted compiler failure' in r['status_detail'] for r in d['records'] if r['options']['mode']=='compiled')"
  ;;
sections)
  # What the report's framework sections and figure specs say, from synthetic records
  # (--gtb_findings_from: no interpreter runs): PyTorch's operator cost beside gtb's, the
  # DataLoader figure's lines named by their preprocessing cost and one setting drawn, memory beside
  # speed-up, and every sentence ending once.
  "$py" - "$here/../fixtures/cpu_b.json" "$work" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
base = next(r for r in d["records"] if r["status"] == "ok" and "stats" in r)
def rec(workload, variant, params, options, median, backend="cpu", counters=None, info=None, status="ok", detail=""):
    r = copy.deepcopy(base)
    r.update(family="framework", workload=workload, variant=variant, backend=backend, params=params, options=options,
             value=1.0 / median, unit="1/s", metric_kind="rate", counters={k: {"value": v, "unit": "1"} for k, v in (counters or {}).items()},
             info=info or {}, status=status)
    kv = ",".join(f"{k}={v}" for k, v in list(params.items()) + list(options.items()))
    r["id"] = f"framework/{workload}/{variant}/{backend}/{kv}"
    r["stats"]["median"] = median
    if status != "ok":
        r.pop("value", None), r.pop("stats", None)
        r["status_detail"] = detail
    return r
recs = [rec("op_chain", "eager", {"n": 256}, {}, 30e-6, counters={"time_vs_same_work": 10.0},
            info={"same_work_record": "vectorize/chain/openmp/cpu/n=256"}),
        rec("op_chain", "eager", {"n": 4096}, {}, 60e-6),
        rec("mlp_step", "pytorch", {"width": 256, "depth": 4, "batch": 32}, {"mode": "eager"}, 1e-3),
        rec("mlp_step", "pytorch", {"width": 256, "depth": 4, "batch": 32}, {"mode": "eager"}, 1e-3, backend="cuda",
            status="skipped", detail="torch 1.13 sees no CUDA device (torch.cuda.is_available() is False)."),
        rec("mixed_precision", "pytorch", {"width": 512, "depth": 4, "batch": 512}, {"precision": "fp32"}, 0.02,
            counters={"loss_after_k": 1.5, "k_steps": 20, "step_memory_bytes": 8e6}),
        rec("mixed_precision", "pytorch", {"width": 512, "depth": 4, "batch": 512}, {"precision": "bf16"}, 0.01,
            counters={"loss_after_k": 1.6, "k_steps": 20, "step_memory_bytes": 6e6})]
for us in (50, 1000):
    for w in (0, 1, 2):
        for pin in ("off", "on"):
            recs.append(rec("dataloader", "pytorch", {"sample_us": us, "num_workers": w, "batch": 16, "step_ms": 10},
                            {"pin_memory": pin, "persistent_workers": "on" if w else "off"}, 0.01,
                            counters={"idle_fraction": 0.5 / (1 + w)}))
d["records"] = recs
json.dump(d, open(f"{sys.argv[2]}/in.json", "w"))
PY
  expect_rc 0 "$fwbin" --gtb_findings_from="$work/in.json"
  cp "$work/out.txt" "$work/findings.json"
  "$py" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
f = json.load(open(f"{w}/findings.json"))
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL [sections]: {what}")
secs = {s["id"]: s for s in f["sections"]}
def table(sid, tid):
    t = next(t for t in secs[sid]["tables"] if t["id"] == tid)
    names = [c["name"] for c in t["columns"]]
    return [dict(zip(names, r)) for r in t["rows"]]
def figure(sid, fid):
    return next(g for g in secs[sid]["figures"] if g["id"] == fid)
# PyTorch's time per operator and gtb's own for the same chain, both in the figure's source.
ops = table("ops", "ops")
check({(r["measured"], r["n"]) for r in ops} == {("PyTorch eager", 256), ("gtb's kernel", 256), ("PyTorch eager", 4096)}, ops)
check(any(r["measured"] == "gtb's kernel" and abs(r["per operator"] - 1.0) < 1e-9 for r in ops), ops)
g = figure("ops", "framework_op_cost")
check(g["source"] == "ops" and g["y"] == "per operator" and "measured" in g["series"], g)
# The DataLoader figure: one line per preprocessing cost, one setting (pin_memory off, workers kept).
g = figure("dataloader", "framework_loader_idle")
check(g["series"] == ["preprocessing per sample"] and not g.get("panels"), g)
rows = table("dataloader", "loaders")
def drawn(r):
    return any(all(r.get(k) == v for k, v in alt.items()) for alt in g["where"])
check(sorted((r["preprocessing per sample"], r["num_workers"]) for r in rows if drawn(r)) ==
      [(50, 0), (50, 1), (50, 2), (1000, 0), (1000, 1), (1000, 2)], g["where"])
check(all(r["pin_memory"] == "off" for r in rows if drawn(r)), "pin_memory on drawn")
# Memory beside speed-up and loss.
prec = {r["precision"]: r for r in table("precision", "precisions")}
check(prec["bf16"]["step's tensors"] == 6e6 and abs(prec["bf16"]["over fp32's"] - 0.75) < 1e-12, prec)
# Every sentence ends once: the report adds the full stop after "Not measured: ...".
for s in f["sections"]:
    nm = s.get("not_measured", "")
    check(not nm.endswith(".") and ".." not in nm, f"{s['id']}: not_measured {nm!r}")
    for p in s.get("text", []):
        check(p.endswith((".", ")")) and ".." not in p, f"{s['id']}: {p!r}")
check("GPU records: skipped: torch 1.13 sees no CUDA device (torch.cuda.is_available() is False)" in secs["crossover"]["not_measured"],
      secs["crossover"].get("not_measured"))
d = json.load(open(f"{w}/in.json"))
d["findings"] = {"framework": f}
json.dump(d, open(f"{w}/with_findings.json", "w"))
PY
  # The report as a reader sees it: each sentence of the family's part ends once.
  expect_rc 0 "$gtb" report "$work/with_findings.json" --out "$work/report.md"
  sed -n '/^## PyTorch/,/^## GPU vs CPU/p' "$work/report.md" > "$work/framework.md"
  grep -q "Not measured: no batch ran on both the CPU and the GPU; GPU records: skipped: torch 1.13 sees no CUDA device (torch.cuda.is_available() is False)\.$" "$work/framework.md" ||
    fail "the crossover's not-measured line does not end once"
  ! grep -n '\.\.' "$work/framework.md" || fail "a sentence of the framework section ends twice"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS [$case_name]"
