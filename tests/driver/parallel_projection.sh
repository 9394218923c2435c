#!/usr/bin/env bash
# The parallel family's projections from --gtb_findings_from: the N-rank CPU step and the N-GPU step
# from one-rank records and a user-given busbw, each row with its inputs and the ring all-reduce time
# gradient_bytes * 2(n-1)/n / busbw; no busbw, no projection.
# usage: parallel_projection.sh GTB_PARALLEL PYTHON FIXTURE WORK
set -euo pipefail
bin=$1 py=$2 fixture=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$py" - "$fixture" "$work/doc.json" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
base = next(r for r in d["records"] if r["status"] == "ok" and "stats" in r)
recs = []
for backend, median in (("cpu", 0.004), ("cuda", 0.0002)):
    r = copy.deepcopy(base)
    r.update(family="parallel", workload="dp_step", variant="one_rank", backend=backend, options={},
             params={"ranks": 2, "width": 512, "depth": 3, "rows_per_rank": 16},
             id=f"parallel/dp_step/one_rank/{backend}/ranks=2,width=512,depth=3,rows_per_rank=16")
    r["stats"]["median"] = median
    r["counters"] = {"gradient_bytes": {"value": 2e6, "unit": "bytes"}}
    recs.append(r)
d["records"] = recs
json.dump(d, open(sys.argv[2], "w"))
PY
GTB_PARALLEL_BUSBW_GBPS=100 GTB_PARALLEL_PROJECT_RANKS=8 "$bin" --gtb_findings_from="$work/doc.json" >"$work/with.json"
"$bin" --gtb_findings_from="$work/doc.json" >"$work/without.json"
"$py" - "$work/with.json" "$work/without.json" <<'PY'
import json, sys
def check(cond, what):
    # Not assert: with PYTHONOPTIMIZE set an assert is compiled out and every check passes.
    if not cond:
        sys.exit(f"FAIL [parallel_projection]: {what}")
def data(path):
    d = json.load(open(path))
    return d.get("data", d)
w = data(sys.argv[1])
comm = 2e6 * 2 * 7 / 8 / 100e9  # 8 ranks, ring all-reduce
for key, step, ranks_key in (("projected", 0.004, "ranks"), ("projected_gpu", 0.0002, "gpus")):
    rows = w[key]["rows"]
    check(len(rows) == 1, (key, rows))
    r = rows[0]
    check(r["label"] == "projected" and r["inputs"][ranks_key] == 8 and r["inputs"]["busbw_gbps"] == 100, r)
    check(abs(r["comm_s"] - comm) < 1e-12, (key, r["comm_s"], comm))
    check(abs(r["step_s_no_overlap"] - (step + comm)) < 1e-12, r)
    check(abs(r["step_s_full_overlap"] - max(step, comm)) < 1e-12, r)
    check(abs(r["scaling_efficiency_no_overlap"] - step / (step + comm)) < 1e-12, r)
    check(abs(r["scaling_efficiency_full_overlap"] - step / max(step, comm)) < 1e-12, r)
wo = data(sys.argv[2])
check("projected" not in wo and "projected_gpu" not in wo, list(wo.keys()))
print("PASS [parallel_projection]")
PY

# Measured busbw: the all-reduce at the size nearest the bucket, not the largest size (a 1 MiB
# bucket's bandwidth is a fraction of 16 MiB's); an overlap that slowed the step is said so.
"$py" - "$work/doc.json" "$work/measured.json" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
one = d["records"][0]
recs = [one]
for size, busbw in ((1 << 20, 5.0), (16 << 20, 20.0)):
    r = copy.deepcopy(one)
    r.update(workload="collective", variant="mpi", options={"dtype": "fp32"},
             params={"ranks": 2, "collective": "all_reduce", "bytes": size},
             id=f"parallel/collective/mpi/cpu/ranks=2,collective=all_reduce,bytes={size},dtype=fp32")
    r["counters"] = {"busbw": {"value": busbw, "unit": "GB/s"}}
    r["info"] = {"ranks": 2}
    recs.append(r)
rs = copy.deepcopy(recs[1])  # a reduce-scatter at 1 MiB far below the all-reduce's busbw there
rs["params"]["collective"] = "reduce_scatter"
rs["id"] = rs["id"].replace("all_reduce", "reduce_scatter")
rs["counters"]["busbw"]["value"] = 1.25
recs.append(rs)
for overlap, value in (("on", 80.0), ("off", 100.0)):
    r = copy.deepcopy(one)
    r.update(variant="ddp", options={"overlap": overlap},
             params={"ranks": 2, "width": 512, "depth": 3, "rows_per_rank": 16, "bucket_mb": 1.0},
             id=f"parallel/dp_step/ddp/cpu/ranks=2,width=512,depth=3,rows_per_rank=16,bucket_mb=1,overlap={overlap}")
    r["value"] = value
    r["info"] = {"ranks": 2}
    recs.append(r)
d["records"] = recs
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" --gtb_findings_from="$work/measured.json" >"$work/measured_findings.json"
"$py" - "$work/measured_findings.json" <<'PY'
import json, sys
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL [parallel_projection measured]: {what}")
d = json.load(open(sys.argv[1]))
w = d.get("data", d)
rows = w.get("projected", {}).get("rows", [])
check(len(rows) == 1, rows)
inp = rows[0]["inputs"]
check(inp["busbw_gbps"] == 5.0, f"busbw {inp['busbw_gbps']}: not the 1 MiB all-reduce's")
check("bytes=1048576" in inp["busbw_source"] and "1 MiB bucket" in inp["busbw_source"], inp["busbw_source"])
dp = w["dp_step"][0]
check(abs(dp["overlap_gain"] - 0.8) < 1e-9, dp)
check("slower" in dp.get("overlap_note", ""), dp)
notes = w.get("collective_notes", [])
check(len(notes) == 1 and "reduce_scatter" in notes[0]["record"] and abs(notes[0]["ratio"] - 0.25) < 1e-9, notes)
check("bandwidth-optimal ring" in notes[0]["note"], notes)
print("PASS [parallel_projection measured]")
PY
