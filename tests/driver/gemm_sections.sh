#!/usr/bin/env bash
# What the gemm family's section on a step's parts says about synthetic sequence records
# (--gtb_findings_from): each size's shares from its paired records (all threads, one thread) and its
# cold record, FP32 first, by GEMM size; hot and chain records play no part; a file without paired or
# cold records says it measured none.
# usage: gemm_sections.sh GTB_GEMM PYTHON FIXTURE WORK
set -euo pipefail
gemm=$1 py=$2 fixture=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$py" - "$fixture" "$work" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
base = next(r for r in d["records"] if r["status"] == "ok" and "stats" in r)
def seq(rows, width, precision, mode, threads, counters):
    r = copy.deepcopy(base)
    params = {"rows": rows, "width": width, "layers": 4}
    options = {"precision": precision, "mode": mode, "threads": threads}
    r.update(family="gemm", workload="sequence", variant="plan", backend="cpu", params=params, options=options,
             value=1e-3, unit="s", metric_kind="time", counters={k: {"value": v, "unit": "fraction"} for k, v in counters.items()})
    kv = ",".join(f"{k}={v}" for k, v in list(params.items()) + list(options.items()))
    r["id"] = f"gemm/sequence/plan/cpu/{kv}"
    r["stats"]["median"] = 1e-3
    return r
def write(name, recs):
    doc = copy.deepcopy(d)
    doc["records"] = recs
    json.dump(doc, open(f"{sys.argv[2]}/{name}.json", "w"))
paired = {"gemm_hot_over_in_step": 0.9, "pass_hot_over_in_step": 0.5, "update_hot_over_in_step": 0.25}
write("sequences", [
    seq(512, 256, "fp32", "paired", "all", paired),
    seq(512, 256, "fp32", "paired", "one", {"pass_hot_over_in_step": 0.8, "update_hot_over_in_step": 0.7}),
    seq(512, 256, "fp32", "cold", "all", {"hot_over_cold": 0.6, "last_level_cache_bytes": 2 ** 25}),
    seq(64, 64, "fp32", "paired", "all", {"gemm_hot_over_in_step": 0.95}),
    seq(64, 64, "bf16_fp32acc", "paired", "all", paired),
    seq(64, 64, "fp32", "hot", "all", {"gemm_hot_over_in_step": 0.1}),  # a hot record: no share of its own
])
write("none", [seq(64, 64, "fp32", "chain", "all", {})])
PY
"$gemm" --gtb_findings_from="$work/sequences.json" >"$work/sequences.out"
"$gemm" --gtb_findings_from="$work/none.json" >"$work/none.out"
"$py" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def check(cond, what):
    # Not assert: with PYTHONOPTIMIZE set an assert is compiled out and every check passes.
    if not cond:
        sys.exit(f"FAIL [gemm_sections]: {what}")
def section(name):
    f = json.load(open(f"{w}/{name}.out"))
    return next(s for s in f["sections"] if s["id"] == "in_step")
rows = section("sequences")["tables"][0]["rows"]
check([r[:3] for r in rows] == [["fp32", "64 x 64", 0.524288], ["fp32", "512 x 256", 2 * 512 * 256 * 256 / 1e6],
                                ["bf16_fp32acc", "64 x 64", 0.524288]], rows)
check(rows[0][3:] == [0.95, None, None, None, None, None], f"the smallest FP32 size: only its GEMMs' share: {rows[0]}")
check(rows[1][3:] == [0.9, 0.6, 0.5, 0.25, 0.8, 0.7], f"every share where it was measured: {rows[1]}")
check(rows[2][3] == 0.9 and rows[2][4] is None, rows[2])
none = section("none")
check("no paired or cold" in none.get("not_measured", ""), none)
print("gemm_sections: ok")
PY
