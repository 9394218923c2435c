#!/usr/bin/env bash
# What four families' report sections (and A/B pairs) say about synthetic records (--gtb_findings_from): the CPU's
# mixed precision is reported whenever a CPU BF16 step and its FP32 step were measured (a slower BF16
# step included); the transformer's sweep figures are named only where their records are (the plots
# draw none without points); a habit that never dominated reads "never", with no width it "stops" at;
# the gemm family's step parts take each size's shares from its paired records (all threads, one
# thread) and its cold record, FP32 first, by GEMM size, hot records playing no part, and a file
# without paired or cold records says it measured none.
# usage: family_sections.sh GTB_TRAIN GTB_TRANSFORMER GTB_PITFALLS GTB_GEMM PYTHON FIXTURE WORK
set -euo pipefail
train=$1 xfmr=$2 pitfalls=$3 gemm=$4 py=$5 fixture=$6 work=$7
rm -rf "$work" && mkdir -p "$work"
"$py" - "$fixture" "$work" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
base = next(r for r in d["records"] if r["status"] == "ok" and "stats" in r)
def rec(family, workload, variant, params, options, value, unit, kind, median):
    r = copy.deepcopy(base)
    r.update(family=family, workload=workload, variant=variant, backend="cpu", params=params, options=options,
             value=value, unit=unit, metric_kind=kind, counters={})
    kv = ",".join(f"{k}={v}" for k, v in list(params.items()) + list(options.items()))
    r["id"] = f"{family}/{workload}/{variant}/cpu/{kv}"
    r["stats"]["median"] = median
    return r
def write(name, recs):
    doc = copy.deepcopy(d)
    doc["records"] = recs
    json.dump(doc, open(f"{sys.argv[2]}/{name}.json", "w"))
shape = {"batch": 512, "width": 512, "depth": 4}
opts = lambda p: {"precision": p, "optimizer": "adam", "activation": "gelu"}
# BF16 slower than FP32 on this CPU: still measured, as a ratio under 1.
write("train", [rec("train", "precision", "fastest_blas", shape, opts("fp32"), 20000, "samples/s", "rate", 0.0256),
                rec("train", "precision", "fastest_blas", shape, opts("bf16"), 15000, "samples/s", "rate", 0.0341)])
xshape = {"layers": 2, "d_model": 128, "heads": 4, "seq_len": 128, "batch": 4, "precision": "fp32"}
configs = rec("transformer", "configs", "fused", xshape, {}, 27000, "tokens/s", "rate", 0.019)
write("xfmr_no_sweeps", [configs])
write("xfmr_batch_sweep", [configs, rec("transformer", "batch_sweep", "fused", xshape, {}, 27000, "tokens/s", "rate", 0.019)])
# GPU steps eager and in a CUDA Graph: steps in the cost model's keys, and an A/B pair.
gpu = []
for mode, median in (("eager", 0.004), ("graph", 0.003)):
    g = rec("transformer", "configs", "fused", xshape, {"mode": mode}, 512 / median, "tokens/s", "rate", median)
    g["backend"] = "cuda"
    g["id"] = g["id"].replace("/cpu/", "/cuda/")
    gpu.append(g)
write("xfmr_graph", gpu)
habit = []
for w, clean, every10 in ((64, 100.0, 105.0), (256, 1000.0, 1020.0)):
    p = {"width": w, "batch": 64}
    habit.append(rec("pitfalls", "loss_read", "never", p, {}, clean, "us", "time", clean * 1e-6))
    habit.append(rec("pitfalls", "loss_read", "every_10", p, {}, every10, "us", "time", every10 * 1e-6))
write("pitfalls", habit)
def seq(rows, width, precision, mode, threads, counters):
    p, o = {"rows": rows, "width": width, "layers": 4}, {"precision": precision, "mode": mode, "threads": threads}
    r = rec("gemm", "sequence", "plan", p, o, 1e-3, "s", "time", 1e-3)
    r["counters"] = {k: {"value": v, "unit": "fraction"} for k, v in counters.items()}
    return r
paired = {"gemm_hot_over_in_step": 0.9, "pass_hot_over_in_step": 0.5, "update_hot_over_in_step": 0.25}
write("gemm", [
    seq(512, 256, "fp32", "paired", "all", paired),
    seq(512, 256, "fp32", "paired", "one", {"pass_hot_over_in_step": 0.8, "update_hot_over_in_step": 0.7}),
    seq(512, 256, "fp32", "cold", "all", {"hot_over_cold": 0.6, "last_level_cache_bytes": 2 ** 25}),
    seq(64, 64, "fp32", "paired", "all", {"gemm_hot_over_in_step": 0.95}),
    seq(64, 64, "bf16_fp32acc", "paired", "all", paired),
    seq(64, 64, "fp32", "hot", "all", {"gemm_hot_over_in_step": 0.1}),  # a hot record: no share of its own
])
write("gemm_none", [seq(64, 64, "fp32", "chain", "all", {})])
PY
"$train" --gtb_findings_from="$work/train.json" >"$work/train.out"
"$xfmr" --gtb_findings_from="$work/xfmr_no_sweeps.json" >"$work/xfmr_no_sweeps.out"
"$xfmr" --gtb_findings_from="$work/xfmr_batch_sweep.json" >"$work/xfmr_batch_sweep.out"
"$xfmr" --gtb_findings_from="$work/xfmr_graph.json" >"$work/xfmr_graph.out"
"$pitfalls" --gtb_findings_from="$work/pitfalls.json" >"$work/pitfalls.out"
"$gemm" --gtb_findings_from="$work/gemm.json" >"$work/gemm.out"
"$gemm" --gtb_findings_from="$work/gemm_none.json" >"$work/gemm_none.out"
"$py" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def check(cond, what):
    # Not assert: with PYTHONOPTIMIZE set an assert is compiled out and every check passes.
    if not cond:
        sys.exit(f"FAIL [family_sections]: {what}")
def section(name, sid):
    f = json.load(open(f"{w}/{name}.out"))
    return next(s for s in f["sections"] if s["id"] == sid)
g = section("train", "graph_precision")
lines = {l["id"]: l for l in g["lines"]}
check("mixed_precision" not in lines, f"mixed precision said not measured beside a measured BF16 step: {lines}")
check("mixed_bf16_cpu_speedup" in lines, lines)
check(abs(lines["mixed_bf16_cpu_speedup"]["value"] - 0.75) < 1e-9, lines["mixed_bf16_cpu_speedup"])
check("slower than FP32" in lines["mixed_bf16_cpu_speedup"].get("note", ""), lines["mixed_bf16_cpu_speedup"])
# The family declares its A/B pair (the same step at fp32 and at bf16) for the savings validation.
pairs = json.load(open(f"{w}/train.out")).get("pairs", [])
check([(p["fix"], p["a"].endswith("precision=fp32,optimizer=adam,activation=gelu"),
        p["b"].endswith("precision=bf16,optimizer=adam,activation=gelu")) for p in pairs] == [("bf16", True, True)], pairs)
habit_pairs = json.load(open(f"{w}/pitfalls.out")).get("pairs", [])
check(sorted(p["fix"] for p in habit_pairs) == ["fewer_syncs", "fewer_syncs"], habit_pairs)
g = json.load(open(f"{w}/xfmr_graph.out"))
check(all("mode" not in st["config"] for st in g.get("steps", [])), g.get("steps"))
check(sorted(st["config"].get("cuda_graph", False) for st in g.get("steps", [])) == [False, True], g.get("steps"))
check([p["fix"] for p in g.get("pairs", [])] == ["cuda_graphs"], g.get("pairs"))
s = section("xfmr_no_sweeps", "sweeps")
check(s.get("figures", []) == [], f"figures named without their records: {s.get('figures')}")
check("full suite" in s.get("not_measured", ""), s)
s = section("xfmr_batch_sweep", "sweeps")
check([f["id"] for f in s.get("figures", [])] == ["transformer_batch"], s.get("figures"))
d = section("pitfalls", "dominance")
rows = d["tables"][0]["rows"]
check(len(rows) == 1, rows)
row = rows[0]
check(str(row[3]).startswith("never"), f"a habit that never dominated: {row}")
check(row[4] == "-", f"no width it stops dominating at: {row}")
check(row[5] == 64, f"under 10% from the smallest width: {row}")
rows = section("gemm", "in_step")["tables"][0]["rows"]
check([r[:3] for r in rows] == [["fp32", "64 x 64", "64 x 64 x 64"], ["fp32", "512 x 256", "512 x 256 x 256"],
                                ["bf16_fp32acc", "64 x 64", "64 x 64 x 64"]], rows)
check(rows[0][3:] == [0.95, None, None, None, None, None], f"the smallest FP32 size: only its GEMMs' share: {rows[0]}")
check(rows[1][3:] == [0.9, 0.6, 0.5, 0.25, 0.8, 0.7], f"every share where it was measured: {rows[1]}")
check(rows[2][3] == 0.9 and rows[2][4] is None, rows[2])
none = section("gemm_none", "in_step")
check("no paired or cold" in none.get("not_measured", ""), none)
print("family_sections: ok")
PY
