#!/usr/bin/env python3
"""gpu-check-plan: a dry run of ci/gpu-check.sh's phases with a stand-in clock. Every phase of the plan
(gc_plan in ci/gpu-check-lib.sh, the families' own phases included) is given its budget the way the
script gives it (its cap, cut by the deadline minus the reserve; a phase with under 20 s left is not
run), and costs planted seconds instead of running: a `gtb run` phase costs, per family in run order,
a process start (with the family's own start cost, --start: a cold `import torch`, say) plus
each selected record's planted time, and keeps a family only when the family ends before the phase's
SIGTERM (a family cut short is dropped from the results file, as gtb run does). A family's phase that
runs its own GPU records (kind family-gpu) first probes the family's start (its import, at most half
the phase), then runs the records of its slice that the GPU passes before it did not hold. Prints each
phase's predicted seconds and verdict and which records the run keeps, as text, JSON or Markdown. A
prediction: the planted costs are inputs, not measurements.

usage: gpu-check-plan.py [--plan PLAN | --root ROOT] [--list LIST | --gtb GTB] [costs...]
                         [--require-...] [--json | --markdown | --doc FILE [--check]]
  PLAN   `gc_plan ROOT` output ("NAME BUDGET KIND [CASES [FAMILY]]" lines); default: gc_plan of ROOT
         (default: the tree this script is in)
  LIST   `gtb list --json` output (each family's workloads in run order, backend, axes and case
         count); or GTB, the gtb binary to ask
A record is labelled workload/variant/backend/axis=value,... where its workload's cases are its axes'
product (no filter dropped one), else workload/variant/backend#N.
Requirements (exit 1 when one is unmet, printed either way):
  --require-phase NAME       the phase is predicted to run to its end (verdict done)
  --require-records N        every family with GPU records keeps at least N of them (all, if fewer)
  --require-case FAM:GLOB    some GPU record FAM keeps has a label matching GLOB (fnmatch)
--doc FILE: the block between `<!-- gpu-check-plan: ARGS -->` and `<!-- /gpu-check-plan -->` in FILE is
the Markdown of a dry run with ARGS (costs, deadline and requirements; no other option may be given
with --doc), and the budget of each row "| # | NAME | BUDGET | ..." of a phase of the plan is the
plan's (every phase has one): rewritten, or with --check compared (exit 1 when they differ, with the
difference).
Exit status: 0, 1 a requirement unmet or the doc differs, 2 bad usage or input.
"""
import argparse
import difflib
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap

MIN_PHASE = 20  # gpu-check.sh's budget(): a phase with less left is not run
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC_OPEN = re.compile(r"^<!-- gpu-check-plan:(.*)-->\s*$")
DOC_CLOSE = "<!-- /gpu-check-plan -->"
# The options a --doc marker may hold: the scenario, not where its inputs come from.
SCENARIO = {"--deadline", "--reserve", "--kill-grace", "--gpu-record", "--cpu-record", "--family-start",
            "--stop-seconds", "--build", "--gpu-tests", "--family-phase", "--torch", "--memcheck", "--cpu-tests",
            "--start", "--require-phase", "--require-records", "--require-case"}


class Bad(Exception):
    pass


def load_plan(text, where):
    plan = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) not in (3, 4, 5) or not parts[1].isdigit():
            raise Bad(f"{where}:{n}: not 'NAME BUDGET KIND [CASES [FAMILY]]': {line.strip()!r}")
        lo, hi = 0, None
        if len(parts) >= 4:
            a, sep, b = parts[3].partition(":")
            if not sep or not (a.isdigit() or a == "") or not (b.isdigit() or b == ""):
                raise Bad(f"{where}:{n}: CASES is FROM:TO, not {parts[3]!r}")
            lo, hi = int(a or 0), (int(b) if b else None)
        family = parts[4] if len(parts) == 5 else None
        if parts[2] == "family-gpu" and family is None:
            raise Bad(f"{where}:{n}: a family-gpu phase names its family: {line.strip()!r}")
        plan.append({"name": parts[0], "cap": int(parts[1]), "kind": parts[2], "lo": lo, "hi": hi, "family": family})
    if not plan:
        raise Bad(f"{where}: no phases")
    return plan


def scalar(v):
    return v if isinstance(v, str) else json.dumps(v)


def workload_labels(w):
    """The labels of a listed workload's cases in run order (the first axis varies fastest)."""
    head = f"{w.get('workload', '?')}/{w.get('variant', '?')}/{w.get('backend', '?')}"
    n = int(w.get("cases", 0))
    points = [[]]
    for a in w.get("axes", []):
        names = a.get("names") or [a.get("name", "?")]
        vals = [v if len(names) > 1 else [v] for v in a.get("values", [])]
        pairs = [[f"{k}={scalar(x)}" for k, x in zip(names, v)] for v in vals]
        points = [p + q for q in pairs for p in points]  # this axis varies slower than those before
    if len(points) == n and n > 0:
        return [f"{head}/{','.join(p)}" for p in points]
    return [f"{head}#{i}" for i in range(n)]


def load_listing(text, where):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Bad(f"{where}: not JSON: {e}")
    if not isinstance(doc, list):
        raise Bad(f"{where}: not a `gtb list --json` array")
    fams = []
    for fam in doc:
        cases = []
        for w in fam.get("workloads", []):
            cases += [(w.get("backend", "?"), label) for label in workload_labels(w)]
        fams.append((fam.get("family", "?"), cases))
    return fams


def cases_of(cases, backend):
    return [label for b, label in cases if b == backend]


def process_cost(fam, n, per, a):
    return a.family_start + a.start.get(fam, 0.0) + per * n


def suite_phase(fams, backend, lo, hi, budget, a):
    """Families in run order, each its selected cases; gtb is sent SIGTERM at the budget minus the
    grace. Returns (seconds, kept {family: [case indices]}, cut family or None)."""
    grace = max(1, min(budget // 3, a.kill_grace))
    term = max(1, budget - grace)
    t, kept, cut = 0.0, {}, None
    per = a.gpu_record if backend == "cuda" else a.cpu_record
    for fam, cases in fams:
        mine = list(range(len(cases_of(cases, backend))))[lo:hi]
        if not mine:
            continue
        cost = process_cost(fam, len(mine), per, a)
        if t + cost > term:
            cut = fam
            t = term + a.stop_seconds  # gtb writes the completed families after SIGTERM
            break
        t += cost
        kept[fam] = mine
    return min(t, budget), kept, cut


def family_gpu_phase(fams, p, held, budget, a):
    """A family's own phase over its GPU records p['lo']:p['hi'], from what the passes hold on: its
    probe (the family's start cost, at most half the phase), then one `gtb run` in what is left.
    Returns (seconds, kept indices, verdict)."""
    cases = dict(fams).get(p["family"])
    if cases is None:
        return 0, [], f"not run: no family {p['family']} in the listing"
    mine = list(range(len(cases_of(cases, "cuda"))))
    todo = mine[max(p["lo"], held):p["hi"]]
    if not todo:
        return 0, [], f"not run: the GPU passes before it ran its first {p['hi']} GPU records"
    probe = a.start.get(p["family"], 0.0)
    if probe > budget // 2:
        return budget // 2, [], "timeout: the probe's import"
    left = max(1, int(budget - probe))
    term = max(1, left - max(1, min(left // 3, a.kill_grace)))
    cost = process_cost(p["family"], len(todo), a.gpu_record, a)
    if cost > term:
        return probe + term + a.stop_seconds, [], f"timeout: {p['family']} cut, dropped"
    return probe + cost, todo, "done"


def simulate(plan, fams, a):
    left = a.deadline - a.reserve
    out = []
    fixed = {"build": a.build, "gpu-tests": a.gpu_tests, "family": a.family_phase, "torch": a.torch,
             "memcheck": a.memcheck, "cpu-tests": a.cpu_tests}
    held = {}  # family -> GPU records the passes so far hold (gpu-check.sh's gpu_records_held)
    labels = {f: cases_of(c, "cuda") for f, c in fams}
    for p in plan:
        name, cap, kind = p["name"], p["cap"], p["kind"]
        b = cap if a.deadline == 0 else (0 if left < MIN_PHASE else int(min(cap, left)))
        row = {"phase": name, "kind": kind, "budget": b}
        if b == 0:
            row.update(seconds=0, verdict="not run: out of time (overall deadline)")
            out.append(row)
            continue
        if kind in ("gpu-suite", "cpu-suite"):
            backend = "cuda" if kind == "gpu-suite" else "cpu"
            secs, kept, cut = suite_phase(fams, backend, p["lo"], p["hi"], b, a)
            if backend == "cuda":
                for f, idx in kept.items():
                    held[f] = held.get(f, 0) + len(idx)
                row["kept_gpu"] = kept
            row.update(seconds=round(secs, 1), records=sum(len(v) for v in kept.values()),
                       verdict=f"timeout: {cut} cut, dropped" if cut else "done")
        elif kind == "family-gpu":
            secs, idx, verdict = family_gpu_phase(fams, p, held.get(p["family"], 0), b, a)
            row.update(seconds=round(secs, 1), records=len(idx), verdict=verdict,
                       kept_gpu={p["family"]: idx} if idx else {})
        else:
            cost = fixed.get(kind, a.family_phase)
            secs = min(cost, b)
            row.update(seconds=secs, verdict="done" if cost <= b else "timeout")
        left -= row["seconds"]
        out.append(row)
    kept = {}
    for r in out:
        for f, idx in r.pop("kept_gpu", {}).items():
            kept.setdefault(f, set()).update(idx)
            r.setdefault("kept", {})[f] = [labels[f][i] for i in idx]
    return out, {f: [labels[f][i] for i in sorted(s)] for f, s in kept.items()}


def requirements(a, rows, summary, kept):
    reqs = []
    verdicts = {r["phase"]: r["verdict"] for r in rows}
    for name in a.require_phase:
        v = verdicts.get(name, "not in the plan")
        reqs.append({"what": f"phase {name} runs to its end", "met": v == "done", "got": v})
    if a.require_records is not None:
        short = [f"{f} {summary['gpu_records_kept'][f]}" for f in summary["gpu_families"]
                 if summary["gpu_records_kept"][f] < min(a.require_records, summary["gpu_records_planned"][f])]
        fewest = min(summary["gpu_families"], key=lambda f: summary["gpu_records_kept"][f], default=None)
        reqs.append({"what": f"every family with GPU records keeps at least {a.require_records} of them",
                     "met": not short, "got": "short: " + ", ".join(short) if short else
                     f"the fewest: {fewest} {summary['gpu_records_kept'][fewest]}" if fewest else "no family"})
    for spec in a.require_case:
        fam, _, glob = spec.partition(":")
        hit = [x for x in kept.get(fam, []) if fnmatch.fnmatchcase(x, glob)]
        reqs.append({"what": f"{fam} keeps a GPU record {glob}", "met": bool(hit), "got": hit[0] if hit else "none"})
    return reqs


def wrap(text):
    """Lines of at most 100 characters; a number stays beside its unit ("240 s", "2 of 23")."""
    kept = re.sub(r"(\d) (s\b|of \d+)", lambda m: m.group(1) + "\0" + m.group(2).replace(" ", "\0"), text)
    return [line.replace("\0", " ") for line in textwrap.wrap(kept, 100, break_on_hyphens=False)]


def markdown(a, s):
    p = s["planted"]
    starts = ", ".join(f"{f}'s {p['family_start'] + v:g} s" for f, v in sorted(a.start.items()))
    intro = (f"Predicted for `--deadline {a.deadline}` with these planted costs (inputs, not measurements): "
             f"build {p['build']:g} s, each GPU record {p['gpu_record']:g} s, each CPU record {p['cpu_record']:g} s, "
             f"each family process {p['family_start']:g} s to start" + (f" ({starts})" if starts else "") +
             f", the GPU tests {p['gpu_tests']:g} s, a family's own phase {p['family_phase']:g} s, PyTorch's "
             f"figures {p['torch']:g} s, memcheck {p['memcheck']:g} s, the CPU tests {p['cpu_tests']:g} s. "
             f"The quick suite lists {sum(s['gpu_records_planned'].values())} GPU records over "
             f"{len(s['gpu_families'])} families ("
             + ", ".join(f"{f} {s['gpu_records_planned'][f]}" for f in s["gpu_families"]) + ").")
    lines = wrap(intro) + [
             "", "| phase | budget (s) | predicted (s) | predicted outcome |", "| --- | --- | --- | --- |"]
    for r in s["phases"]:
        kept = f", {r['records']} records kept" if "records" in r else ""
        lines.append(f"| {r['phase']} | {r['budget']} | {r['seconds']:g} | {r['verdict']}{kept} |")
    lines += [""] + wrap(
        f"Predicted end: {s['predicted_seconds']:g} s of the {a.deadline} s. GPU records kept per family: "
        + ", ".join(f"{f} {s['gpu_records_kept'][f]} of {s['gpu_records_planned'][f]}" for f in s["gpu_families"])
        + ".")
    for f in a.require_families:
        lines += ["", f"The {f} family's GPU records kept:", ""]
        lines += [f"- `{x}`" for x in s["kept"].get(f, [])] or ["- none"]
    if s["requirements"]:
        lines += ["", "Its requirements (exit 1 when one is unmet):", ""]
        lines += [f"- {r['what']}: {'yes' if r['met'] else 'NO'} ({r['got']})" for r in s["requirements"]]
    return "\n".join(lines)


def text(a, s):
    out = [f"predicted with a stand-in clock (planted: {s['planted']}); deadline {a.deadline} s"]
    for r in s["phases"]:
        extra = f", {r['records']} records kept" if "records" in r else ""
        out.append(f"  {r['phase']:<16} budget {r['budget']:>4} s  predicted {r['seconds']:>6} s  {r['verdict']}{extra}")
    out.append(f"  total {s['predicted_seconds']:.0f} s")
    out.append("GPU records kept per family (of the quick suite's):")
    for f in s["gpu_families"]:
        out.append(f"  {f:<14} {s['gpu_records_kept'][f]:>3} of {s['gpu_records_planned'][f]}")
    for f in a.require_families:
        out.append(f"{f}'s GPU records kept:")
        out += [f"  {x}" for x in s["kept"].get(f, [])] or ["  none"]
    for r in s["requirements"]:
        out.append(f"{'met' if r['met'] else 'UNMET'}: {r['what']} ({r['got']})")
    return "\n".join(out)


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--plan")
    p.add_argument("--root", default=ROOT)
    p.add_argument("--list")
    p.add_argument("--gtb")
    p.add_argument("--deadline", type=int, default=480)
    p.add_argument("--reserve", type=int, default=15)
    p.add_argument("--kill-grace", type=int, default=10)
    p.add_argument("--gpu-record", type=float, default=3.0, help="planted seconds per GPU record")
    p.add_argument("--cpu-record", type=float, default=2.0, help="planted seconds per CPU record")
    p.add_argument("--family-start", type=float, default=3.0, help="planted seconds per family process")
    p.add_argument("--start", action="append", default=[], metavar="FAMILY=SECONDS",
                   help="planted seconds a family's process takes to start beyond --family-start (repeatable)")
    p.add_argument("--stop-seconds", type=float, default=2.0, help="gtb's writing after SIGTERM")
    p.add_argument("--build", type=float, default=180.0)
    p.add_argument("--gpu-tests", type=float, default=90.0)
    p.add_argument("--family-phase", type=float, default=30.0)
    p.add_argument("--torch", type=float, default=60.0)
    p.add_argument("--memcheck", type=float, default=150.0)
    p.add_argument("--cpu-tests", type=float, default=240.0)
    p.add_argument("--require-phase", action="append", default=[])
    p.add_argument("--require-records", type=int)
    p.add_argument("--require-case", action="append", default=[], metavar="FAMILY:GLOB")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--markdown", action="store_true")
    out.add_argument("--doc")
    p.add_argument("--check", action="store_true", help="with --doc: compare, do not write")
    return p


def finish_args(a):
    starts = {}
    for spec in a.start:
        fam, sep, secs = spec.partition("=")
        try:
            starts[fam] = float(secs)
        except ValueError:
            sep = ""
        if not sep or not fam or starts[fam] < 0:
            raise Bad(f"--start is FAMILY=SECONDS, not {spec!r}")
    a.start = starts
    for spec in a.require_case:
        if ":" not in spec or spec.startswith(":"):
            raise Bad(f"--require-case is FAMILY:GLOB, not {spec!r}")
    a.require_families = list(dict.fromkeys(s.partition(":")[0] for s in a.require_case))
    if a.deadline < 0 or min(a.gpu_record, a.cpu_record, a.family_start) < 0:
        raise Bad("--deadline >= 0 and costs >= 0")
    return a


def inputs(a):
    if a.plan:
        with open(a.plan) as f:
            plan = load_plan(f.read(), a.plan)
    else:
        lib = os.path.join(a.root, "ci")
        run = subprocess.run(["bash", "-c", 'source "$1/gpu-check-lib.sh" && source "$1/families.sh" && gc_plan "$2"',
                              "gc_plan", lib, a.root], capture_output=True, text=True)
        if run.returncode != 0:
            raise Bad(f"gc_plan {a.root}: exit {run.returncode}: {run.stderr.strip()}")
        plan = load_plan(run.stdout, f"gc_plan {a.root}")
    if a.list:
        with open(a.list) as f:
            fams = load_listing(f.read(), a.list)
    elif a.gtb:
        run = subprocess.run([a.gtb, "list", "--json"], capture_output=True, text=True)
        if run.returncode != 0:
            raise Bad(f"{a.gtb} list --json: exit {run.returncode}: {run.stderr.strip()[:300]}")
        fams = load_listing(run.stdout, f"{a.gtb} list --json")
    else:
        raise Bad("--list or --gtb is needed")
    return plan, fams


def dry_run(a, plan, fams):
    rows, kept = simulate(plan, fams, a)
    gpu_fams = [f for f, cases in fams if any(b == "cuda" for b, _ in cases)]
    summary = {"deadline": a.deadline, "predicted_seconds": round(sum(r["seconds"] for r in rows), 1), "phases": rows,
               "gpu_families": gpu_fams, "gpu_records_kept": {f: len(kept.get(f, [])) for f in gpu_fams},
               "gpu_records_planned": {f: sum(1 for b, _ in c if b == "cuda") for f, c in fams if f in gpu_fams},
               "kept": kept,
               "planted": {k: getattr(a, k) for k in ("gpu_record", "cpu_record", "family_start", "start", "build",
                                                        "gpu_tests", "family_phase", "torch", "memcheck", "cpu_tests")}}
    summary["requirements"] = requirements(a, rows, summary, kept)
    return summary


def doc_block(path):
    with open(path) as f:
        lines = f.read().split("\n")
    opens = [i for i, l in enumerate(lines) if DOC_OPEN.match(l)]
    closes = [i for i, l in enumerate(lines) if l.strip() == DOC_CLOSE]
    if len(opens) != 1 or len(closes) != 1 or closes[0] < opens[0]:
        raise Bad(f"{path}: want one '<!-- gpu-check-plan: ARGS -->' ... '{DOC_CLOSE}' block")
    return lines, opens[0], closes[0], shlex.split(DOC_OPEN.match(lines[opens[0]]).group(1))


PHASE_ROW = re.compile(r"^(\|\s*[0-9a-z]+\s*\|\s*)([a-z0-9-]+)(\s*\|\s*)(\d+)(\s*\|.*)$")


def phase_rows(lines, plan):
    """The doc's table of phases with each phase's budget the plan's ("| # | NAME | BUDGET | ..." rows);
    returns the lines and the phases that have no row."""
    caps = {p["name"]: p["cap"] for p in plan}
    seen, out = set(), []
    for line in lines:
        m = PHASE_ROW.match(line)
        if m and m.group(2) in caps:
            seen.add(m.group(2))
            line = f"{m.group(1)}{m.group(2)}{m.group(3)}{caps[m.group(2)]}{m.group(5)}"
        out.append(line)
    return out, [p["name"] for p in plan if p["name"] not in seen]


def main(argv):
    p = parser()
    a = p.parse_args(argv)
    try:
        if a.doc:
            given = [x.split("=")[0] for x in argv if x.startswith("--")]
            extra = sorted(set(given) & SCENARIO)
            if extra:
                raise Bad(f"with --doc the scenario is the block's own ARGS, not {' '.join(extra)}")
            lines, i, j, doc_args = doc_block(a.doc)
            bad = [x for x in doc_args if x.startswith("--") and x.split("=")[0] not in SCENARIO]
            if bad:
                raise Bad(f"{a.doc}:{i + 1}: the block's ARGS may hold only the scenario, not {' '.join(bad)}")
            a = p.parse_args(argv + doc_args)
        elif a.check:
            raise Bad("--check goes with --doc")
        finish_args(a)
        plan, fams = inputs(a)
    except (OSError, Bad) as e:
        print(f"gpu-check-plan: {e}", file=sys.stderr)
        return 2
    s = dry_run(a, plan, fams)
    unmet = [r for r in s["requirements"] if not r["met"]]
    if a.doc:
        new = lines[:i + 1] + markdown(a, s).split("\n") + lines[j:]
        new, missing = phase_rows(new, plan)
        if missing:
            print(f"FAIL: {a.doc}: its table of phases lacks {', '.join(missing)} (a row '| # | NAME | BUDGET | ...')")
            return 1
        if a.check:
            if new != lines:
                sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in lines], [l + "\n" for l in new],
                                                           a.doc, "the dry run now"))
                at = next((k for k, (x, y) in enumerate(zip(lines, new)) if x != y), min(len(lines), len(new)))
                print(f"FAIL: {a.doc}:{at + 1}: differs from the dry run (the gpu-check-plan block, or a phase's "
                      f"budget in the table of phases; regenerate: python3 ci/gpu-check-plan.py --gtb build/bin/gtb "
                      f"--doc {a.doc})")
                return 1
            print(f"{a.doc}: the gpu-check-plan block is the dry run's")
        else:
            with open(a.doc, "w") as f:
                f.write("\n".join(new))
            print(f"{a.doc}: the gpu-check-plan block rewritten")
    elif a.json:
        print(json.dumps(s, indent=1))
    elif a.markdown:
        print(markdown(a, s))
    else:
        print(text(a, s))
    for r in unmet:
        print(f"FAIL: {r['what']} ({r['got']})", file=sys.stderr)
    return 1 if unmet else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
