#!/usr/bin/env python3
"""Summarises ci/calibrate-compare.sh's comparisons (gtb compare --format json files, each with a .rc file
holding its exit code): A/A false alarms and how often the planted slowdowns were caught."""
import glob
import json
import math
import os
import sys


def load(pattern):
    out = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as fh:
            doc = json.load(fh)
        with open(path[:-5] + ".rc") as fh:
            out.append((doc, int(fh.read().strip() or 2)))
    return out


def aa_line(name, cmps):
    compared = flagged = unconfirmed = faster = noisy = exit1 = exit2 = exit3 = confirmed = 0
    for doc, rc in cmps:
        confirmed += bool(doc["settings"].get("confirmed_families"))
        for r in doc["records"]:
            if "ratio" not in r:
                continue
            compared += 1
            flagged += r["verdict"] == "slower"
            unconfirmed += r["verdict"] == "unconfirmed"
            faster += r["verdict"] == "faster"
            noisy += r["verdict"] == "noisy"
        exit1 += rc == 1
        exit2 += rc == 2
        exit3 += rc == 3
    rate = 100.0 * flagged / compared if compared else 0.0
    return (f"| {name} | {len(cmps)} | {compared} | {flagged} ({rate:.2f}%) | {unconfirmed} | {faster} | {noisy} | "
            f"{exit1} | {exit3} | {exit2} | {confirmed} |")


def plant_line(name, cmps, target):
    caught = unconfirmed = seen = 0
    changes = []
    for doc, rc in cmps:
        for r in doc["records"]:
            if r["id"] == target and "ratio" in r:
                seen += 1
                caught += r["verdict"] == "slower"
                unconfirmed += r["verdict"] == "unconfirmed"
                changes.append(100.0 * (r["ratio"] - 1))
    changes.sort()
    med = changes[len(changes) // 2] if changes else float("nan")
    rate = 100.0 * caught / seen if seen else 0.0
    urate = 100.0 * unconfirmed / seen if seen else 0.0
    return f"| {name} | {seen} | {caught} ({rate:.0f}%) | {unconfirmed} ({urate:.0f}%) | {med:+.1f}% |"


def run_spread(files, rid):
    """Median over files of the run-to-run spread (sd of the per-run log values) of one record."""
    out = []
    for path in files:
        with open(path) as fh:
            doc = json.load(fh)
        for r in doc["records"]:
            if r["id"] == rid and len(r.get("runs", [])) >= 2:
                logs = [math.log(x["value"]) for x in r["runs"] if x.get("status") == "ok"]
                if len(logs) >= 2:
                    m = sum(logs) / len(logs)
                    out.append(math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1)))
    out.sort()
    return out[len(out) // 2] if out else float("nan")


def main(out, target):
    print("| A/A mode | pairs | records compared | flagged slower | unconfirmed (busy) | flagged faster | noisy | "
          "pairs exit 1 | pairs exit 3 (unconfirmed) | pairs exit 2 | pairs that ran confirmation rounds |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(aa_line("`--runs` baselines", load(os.path.join(out, "aa-runs-*.json"))))
    print(aa_line("`gtb ab`", load(os.path.join(out, "aa-ab-*.json"))))
    print()
    bases = glob.glob(os.path.join(out, "..", "files", "plant-runs-*.base.json"))
    print(f"Planted slowdowns of `{target}` (its run-to-run spread in the --runs baselines: "
          f"{100 * run_spread(bases, target):.2f}%, median over {len(bases)} files):")
    print()
    print("| planted (time x (1 + f)) | trials | caught as slower | reported unconfirmed (busy) | median measured change |")
    print("| --- | ---: | ---: | ---: | ---: |")
    fracs = sorted({os.path.basename(p).split("-")[2] for p in glob.glob(os.path.join(out, "plant-*.json"))})
    for f in fracs:
        for mode, label in (("runs", "`--runs` baselines"), ("ab", "`gtb ab`")):
            cmps = load(os.path.join(out, f"plant-{mode}-{f}-*.json"))
            print(plant_line(f"f = {f}, {label}", cmps, target))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
