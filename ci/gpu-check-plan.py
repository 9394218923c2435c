#!/usr/bin/env python3
"""gpu-check-plan: a dry run of ci/gpu-check.sh's phases with a stand-in clock. Every phase of the plan
(gc_plan in ci/gpu-check-lib.sh, the families' own phases included) is given its budget the way the
script gives it (its cap, cut by the deadline minus the reserve; a phase with under 20 s left is not
run), and costs planted seconds instead of running: a `gtb run` phase costs, per family in run order,
a process start plus each selected record's planted time, and keeps a family only when the family
ends before the phase's SIGTERM (a family cut short is dropped from the results file, as gtb run
does). Prints each phase's predicted seconds and verdict and which records the run keeps, as text
or JSON. A prediction: the planted costs are inputs, not measurements.

usage: gpu-check-plan.py --plan PLAN --list LIST [--deadline S] [costs...] [--json]
  PLAN   `gc_plan ROOT` output ("NAME BUDGET KIND [CASES]" lines)
  LIST   `gtb list --json` output (each family's workloads in run order, backend and case count)
"""
import argparse
import json
import sys

MIN_PHASE = 20  # gpu-check.sh's budget(): a phase with less left is not run


def load_plan(path):
    plan = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) not in (3, 4) or not parts[1].isdigit():
                raise ValueError(f"{path}:{n}: not 'NAME BUDGET KIND [CASES]': {line.strip()!r}")
            lo, hi = 0, None
            if len(parts) == 4:
                a, sep, b = parts[3].partition(":")
                if not sep or not (a.isdigit() or a == "") or not (b.isdigit() or b == ""):
                    raise ValueError(f"{path}:{n}: CASES is FROM:TO, not {parts[3]!r}")
                lo, hi = int(a or 0), (int(b) if b else None)
            plan.append((parts[0], int(parts[1]), parts[2], lo, hi))
    if not plan:
        raise ValueError(f"{path}: no phases")
    return plan


def load_listing(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, list):
        raise ValueError(f"{path}: not a `gtb list --json` array")
    fams = []
    for fam in doc:
        cases = []
        for w in fam.get("workloads", []):
            label = f"{w.get('workload', '?')}/{w.get('variant', '?')}"
            cases += [(w.get("backend", "?"), label)] * int(w.get("cases", 0))
        fams.append((fam.get("family", "?"), cases))
    return fams


def suite_phase(fams, backend, lo, hi, budget, a):
    """Families in run order, each its selected cases; gtb is sent SIGTERM at the budget minus the
    grace. Returns (seconds, kept {family: [labels]}, cut family or None)."""
    grace = max(1, min(budget // 3, a.kill_grace))
    term = max(1, budget - grace)
    t, kept, cut = 0.0, {}, None
    per = a.gpu_record if backend == "cuda" else a.cpu_record
    for fam, cases in fams:
        mine = [label for b, label in cases if b == backend][lo:hi]
        if not mine:
            continue
        cost = a.family_start + per * len(mine)
        if t + cost > term:
            cut = fam
            t = term + a.stop_seconds  # gtb writes the completed families after SIGTERM
            break
        t += cost
        kept[fam] = mine
    return min(t, budget), kept, cut


def simulate(plan, fams, a):
    left = a.deadline - a.reserve
    out = []
    fixed = {"build": a.build, "gpu-tests": a.gpu_tests, "family": a.family_phase, "torch": a.torch,
             "memcheck": a.memcheck, "cpu-tests": a.cpu_tests}
    for name, cap, kind, lo, hi in plan:
        b = cap if a.deadline == 0 else (0 if left < MIN_PHASE else int(min(cap, left)))
        row = {"phase": name, "kind": kind, "budget": b}
        if b == 0:
            row.update(seconds=0, verdict="not run: out of time (overall deadline)")
            out.append(row)
            continue
        if kind in ("gpu-suite", "cpu-suite"):
            backend = "cuda" if kind == "gpu-suite" else "cpu"
            secs, kept, cut = suite_phase(fams, backend, lo, hi, b, a)
            row.update(seconds=round(secs, 1), kept=kept, records=sum(len(v) for v in kept.values()),
                       verdict=f"timeout: {cut} cut, dropped" if cut else "done")
        else:
            cost = fixed.get(kind, a.family_phase)
            secs = min(cost, b)
            row.update(seconds=secs, verdict="done" if cost <= b else "timeout")
        left -= row["seconds"]
        out.append(row)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--plan", required=True)
    p.add_argument("--list", required=True)
    p.add_argument("--deadline", type=int, default=480)
    p.add_argument("--reserve", type=int, default=15)
    p.add_argument("--kill-grace", type=int, default=10)
    p.add_argument("--gpu-record", type=float, default=3.0, help="planted seconds per GPU record")
    p.add_argument("--cpu-record", type=float, default=2.0, help="planted seconds per CPU record")
    p.add_argument("--family-start", type=float, default=3.0, help="planted seconds per family process")
    p.add_argument("--stop-seconds", type=float, default=2.0, help="gtb's writing after SIGTERM")
    p.add_argument("--build", type=float, default=180.0)
    p.add_argument("--gpu-tests", type=float, default=90.0)
    p.add_argument("--family-phase", type=float, default=30.0)
    p.add_argument("--torch", type=float, default=60.0)
    p.add_argument("--memcheck", type=float, default=150.0)
    p.add_argument("--cpu-tests", type=float, default=240.0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    try:
        plan, fams = load_plan(a.plan), load_listing(a.list)
    except (OSError, ValueError) as e:
        print(f"gpu-check-plan: {e}", file=sys.stderr)
        return 2
    if a.deadline < 0 or min(a.gpu_record, a.cpu_record, a.family_start) < 0:
        print("gpu-check-plan: --deadline >= 0 and costs >= 0", file=sys.stderr)
        return 2
    rows = simulate(plan, fams, a)
    gpu_fams = [f for f, cases in fams if any(b == "cuda" for b, _ in cases)]
    kept_gpu = {}
    for r in rows:
        if r["kind"] == "gpu-suite":
            for f, labels in r.get("kept", {}).items():
                kept_gpu.setdefault(f, []).extend(labels)
    total = sum(r["seconds"] for r in rows)
    summary = {"deadline": a.deadline, "predicted_seconds": round(total, 1), "phases": rows,
               "gpu_families": gpu_fams, "gpu_records_kept": {f: len(kept_gpu.get(f, [])) for f in gpu_fams},
               "gpu_records_planned": {f: sum(1 for b, _ in c if b == "cuda") for f, c in fams if f in gpu_fams},
               "planted": {k: getattr(a, k) for k in ("gpu_record", "cpu_record", "family_start", "build",
                                                        "gpu_tests", "family_phase", "torch", "memcheck",
                                                        "cpu_tests")}}
    if a.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"predicted with a stand-in clock (planted: {summary['planted']}); deadline {a.deadline} s")
    for r in rows:
        extra = f", {r['records']} records kept" if "records" in r else ""
        print(f"  {r['phase']:<16} budget {r['budget']:>4} s  predicted {r['seconds']:>6} s  {r['verdict']}{extra}")
    print(f"  total {total:.0f} s")
    print("GPU records kept per family (of the quick suite's):")
    for f in gpu_fams:
        print(f"  {f:<14} {summary['gpu_records_kept'][f]:>3} of {summary['gpu_records_planned'][f]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
