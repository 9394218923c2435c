#!/usr/bin/env python3
"""Google Benchmark's JSON from a family binary, in the shape google/benchmark's tools/compare.py
reads, and with gtb's sampler as its only clock: every row's real_time is the median of gtb's record
so far (the last repetition's is the record's median), in the row's time_unit.

usage: check_gbench_json.py FAMILY_BINARY WORKDIR [--plant]
Runs the binary on one case with two repetitions, writing both JSON files into WORKDIR, and checks
them. --plant drops real_time from a row first (the planted twin: must fail). Exit 1 on a failure.
"""
import json
import os
import subprocess
import sys

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    plant = "--plant" in args
    args = [a for a in args if a != "--plant"]
    if len(args) != 2:
        print(__doc__)
        return 2
    binary, work = args
    os.makedirs(work, exist_ok=True)
    gb_path, gtb_path = os.path.join(work, "gbench.json"), os.path.join(work, "gtb.json")
    cmd = [binary, "--benchmark_filter=^selftest/spin/", "--benchmark_repetitions=2", "--benchmark_format=console",
           "--benchmark_out_format=json", "--benchmark_out=" + gb_path, "--gtb_budget=0.02", "--gtb_out=" + gtb_path]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), run.returncode, run.stderr[-2000:]))
    with open(gb_path) as f:
        gb = json.load(f)
    with open(gtb_path) as f:
        records = {r["id"]: r for r in json.load(f)["records"]}
    if plant:
        gb["benchmarks"][0].pop("real_time", None)

    # What compare.py (gbench/util.py, gbench/report.py) reads.
    if not isinstance(gb.get("context"), dict):
        fail("no context object")
    rows = gb.get("benchmarks")
    if not isinstance(rows, list) or not rows:
        fail("no benchmarks list")
    for i, b in enumerate(rows):
        for key, kind in (("name", str), ("run_type", str), ("time_unit", str), ("real_time", (int, float)),
                          ("cpu_time", (int, float))):
            if not isinstance(b.get(key), kind):
                fail("benchmarks[%d] (%s) has no %s of type %s" % (i, b.get("name"), key, kind))
        if b["time_unit"] not in UNITS:
            fail("benchmarks[%d]: time_unit %r is not one compare.py knows" % (i, b["time_unit"]))
        if b["run_type"] not in ("iteration", "aggregate"):
            fail("benchmarks[%d]: run_type %r" % (i, b["run_type"]))
        if b["run_type"] == "aggregate" and not isinstance(b.get("aggregate_name"), str):
            fail("benchmarks[%d]: an aggregate without aggregate_name" % i)

    # One clock: each iteration row's time is gtb's median; the last one is the record's.
    names = sorted({b["name"] for b in rows if b["run_type"] == "iteration"})
    if not names:
        fail("no iteration rows")
    for name in names:
        its = [b for b in rows if b["run_type"] == "iteration" and b["name"] == name]
        if len(its) != 2:
            fail("%s: %d iteration rows for --benchmark_repetitions=2" % (name, len(its)))
        if not any(b["run_type"] == "aggregate" and b.get("run_name", b["name"]).startswith(name) and
                   b.get("aggregate_name") == "median" for b in rows):
            fail("%s: no median aggregate over its repetitions" % name)
        rid = name  # GB appends what the registration sets: .../iterations:1/manual_time
        for suffix in ("/manual_time", "/iterations:1"):
            rid = rid[: -len(suffix)] if rid.endswith(suffix) else rid
        rec = records.get(rid)
        if rec is None or rec.get("status") != "ok":
            fail("%s: no measured gtb record %s" % (name, rid))
        median = rec["stats"]["median"]
        seconds = its[-1]["real_time"] * UNITS[its[-1]["time_unit"]]
        if abs(seconds - median) > 1e-6 * median:
            fail("%s: Google Benchmark reports %.9g s, gtb's median is %.9g s: a second clock" % (name, seconds, median))
        if its[-1].get("iterations") != 1:
            fail("%s: %r iterations; gtb's sampler repeats, Google Benchmark runs the case once" % (name, its[-1].get("iterations")))
    print("ok: %d cases in compare.py's shape, real_time = gtb's median" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
