#!/usr/bin/env python3
"""Two runs' declared A/B pairs side by side: the measured saving of every pair of the savings validation
(`gtb advise FILE --format json`, savings_validation) in each run, with its noise, and whether the two
agree. Two savings agree when their difference is within the two noises added (their ~95% intervals
overlap), or when both lie inside their own noise; a saving whose noise cannot be estimated agrees with
nothing and is counted apart. Also each run's savings validation counts (scored, within target) and the
health readings of its families.
usage: pairs-two-runs.py ADVISE1.json ADVISE2.json RESULTS1.json RESULTS2.json"""
import json
import math
import sys


def rows(path):
    with open(path) as fh:
        doc = json.load(fh)
    out = {}
    for r in doc.get("savings_validation", {}).get("rows", doc.get("savings_validation", [])):
        key = (r.get("family", ""), r.get("fix", ""), r.get("a", ""), r.get("b", ""))
        out[key] = r
    return out


def label(family, fix, a, b):
    """A pair named by what differs between its two record ids (path parts and parameters), then
    the parameters they share: `<family> bf16: precision=fp32 → bf16 (batch=512, width=512, ...)`."""
    pa, pb = a.split("/"), b.split("/")
    qa = dict(kv.split("=", 1) for kv in pa[-1].split(",") if "=" in kv) if "=" in pa[-1] else {}
    qb = dict(kv.split("=", 1) for kv in pb[-1].split(",") if "=" in kv) if "=" in pb[-1] else {}
    paths_a, paths_b = pa[:-1] if qa else pa, pb[:-1] if qb else pb
    diff = [f"{x} → {y}" for x, y in zip(paths_a, paths_b) if x != y]
    diff += [f"{k}={qa.get(k, '-')} → {qb.get(k, '-')}" for k in list(qa) + [k for k in qb if k not in qa]
             if qa.get(k) != qb.get(k)]
    shared = [f"{k}={v}" for k, v in qa.items() if qb.get(k) == v]
    where = "/".join(x for x, y in zip(paths_a, paths_b) if x == y)
    return f"{family} {fix}: {'; '.join(diff)} ({where}; {', '.join(shared)})"


def us(x):
    return "-" if x is None else f"{x * 1e6:.1f}"


def noise_text(r):
    n = r.get("measured_noise_s")
    return "cannot say" if n is None or not math.isfinite(n) else "± " + us(n)


def health(path):
    with open(path) as fh:
        doc = json.load(fh)
    out = []
    for fam in doc.get("families", []):
        h = fam.get("health") or {}
        state = "busy" if h.get("busy") else "quiet"
        out.append((fam.get("name", "?"), state, "; ".join(h.get("warnings") or [])))
    return out


def main(argv):
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    a, b = rows(argv[1]), rows(argv[2])
    keys = [k for k in a if k in b]
    agree = both_noise = unknown = disagree = 0
    print("| pair | run 1 (us) | run 2 (us) | rounds | agree |")
    print("| --- | ---: | ---: | ---: | --- |")
    for k in keys:
        r1, r2 = a[k], b[k]
        s1, s2 = r1.get("measured_saving_s"), r2.get("measured_saving_s")
        n1, n2 = r1.get("measured_noise_s"), r2.get("measured_noise_s")
        rounds = f"{r1.get('measured_paired_rounds') or 0}/{r2.get('measured_paired_rounds') or 0}"
        if s1 is None or s2 is None or n1 is None or n2 is None or not (math.isfinite(n1) and math.isfinite(n2)):
            verdict = "cannot say"
            unknown += 1
        elif abs(s1) <= n1 and abs(s2) <= n2:
            verdict = "both in noise"
            both_noise += 1
        elif abs(s1 - s2) <= n1 + n2:
            verdict = "yes"
            agree += 1
        else:
            verdict = "**no**"
            disagree += 1
        name = label(*k)
        print(f"| {name} | {us(s1)} {noise_text(r1)} | {us(s2)} {noise_text(r2)} | {rounds} | {verdict} |")
    print()
    print(f"pairs in both runs: {len(keys)}; agree: {agree}; both inside their noise: {both_noise}; "
          f"disagree: {disagree}; cannot say (an interval not estimable): {unknown}")
    for i, r in ((1, a), (2, b)):
        scored = [x for x in r.values() if x.get("status") == "scored"]
        within = [x for x in scored if x.get("within_target")]
        print(f"run {i}: savings validation rows {len(r)}, scored {len(scored)}, within target {len(within)}, "
              f"in noise {sum(1 for x in r.values() if x.get('status') == 'in_noise')}, "
              f"cannot say {sum(1 for x in r.values() if x.get('status') == 'cannot_say')}")
    for i, path in ((1, argv[3]), (2, argv[4])):
        print(f"run {i} health:")
        for name, state, detail in health(path):
            print(f"  {name}: {state} {detail}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
