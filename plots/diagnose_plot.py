#!/usr/bin/env python3
"""One profiler step's GPU timeline by cause, from a `gtb diagnose --format json` diagnosis.

usage: diagnose_plot.py DIAGNOSIS.json --out DIR [--format png|svg|png,svg]

Writes DIR/diagnose_timeline.<fmt>: a row per stream with its events coloured by kind (compute,
communication, memory), and on top the GPU's idle gaps coloured by what the GPU waited for (the
host launching, a sync, other), by the rule the diagnosis states. Exit 0 written, 2 bad input (or
nothing to draw: the trace had no GPU events).
"""
import argparse
import json
import os
import sys

KIND_COLOURS = {"compute": "#4c72b0", "communication": "#dd8452", "memory": "#55a868"}
CAUSE_COLOURS = {"host_launch": "#c44e52", "sync": "#8172b3", "other": "#937860"}
CAUSE_LABELS = {"host_launch": "idle: waiting for the host to launch", "sync": "idle: after a host sync",
                "other": "idle: other (queued work waiting)"}


def die(msg):
    print(f"diagnose_plot: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("diagnosis")
    ap.add_argument("--out", required=True)
    ap.add_argument("--format", default="png")
    a = ap.parse_args(argv)
    try:
        with open(a.diagnosis, encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError) as e:
        die(f"{a.diagnosis}: {e}")
    if d.get("tool") != "gtb diagnose":
        die(f"{a.diagnosis}: not a gtb diagnose JSON (no \"tool\": \"gtb diagnose\")")
    tl = d.get("timeline")
    if not tl:
        die(f"{a.diagnosis}: no timeline (the trace has no GPU events)")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        die("matplotlib is missing (Debian: python3-matplotlib)")

    t0 = tl["begin_us"]
    streams = sorted({e[0] for e in tl["events"]})
    rows = {s: i + 1 for i, s in enumerate(reversed(streams))}
    gpu_row = len(streams) + 1
    fig, ax = plt.subplots(figsize=(14, 1.9 + 0.55 * (len(streams) + 1)))
    by = {}
    for s, b, e, kind in tl["events"]:
        by.setdefault((s, kind), []).append(((b - t0) / 1000, max((e - b) / 1000, 1e-4)))
    for (s, kind), bars in by.items():
        ax.broken_barh(bars, (rows[s] - 0.4, 0.8), facecolors=KIND_COLOURS.get(kind, "grey"), linewidth=0)
    gaps = {}
    for b, e, cause in tl["gaps"]:
        gaps.setdefault(cause, []).append(((b - t0) / 1000, (e - b) / 1000))
    for cause, bars in gaps.items():
        ax.broken_barh(bars, (gpu_row - 0.4, 0.8), facecolors=CAUSE_COLOURS.get(cause, "grey"), linewidth=0)
    ax.set_yticks([gpu_row] + [rows[s] for s in streams])
    ax.set_yticklabels(["GPU idle"] + [f"stream {s}" for s in streams])
    ax.set_xlim(0, (tl["end_us"] - t0) / 1000)
    ax.set_ylim(0.4, gpu_row + 0.6)
    ax.set_xlabel("time from the step's first GPU event (ms)")
    tr = d.get("trace", {})
    gpu = (tr.get("devices") or ["GPU not named in the trace"])[0]
    ax.set_title(f"{tr.get('file', '')}: {tl.get('step', '')} on {gpu}, GPU timeline by cause", fontsize=10)
    handles = [Patch(color=c, label=k) for k, c in KIND_COLOURS.items()]
    handles += [Patch(color=CAUSE_COLOURS[k], label=CAUSE_LABELS[k]) for k in CAUSE_COLOURS if k in gaps]
    # Beside the axes, not under them: a one-stream figure has no room below for six entries.
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    if tl.get("events_capped"):
        ax.text(1, 1.02, "first 20000 events drawn", transform=ax.transAxes, ha="right", fontsize=7)
    fig.tight_layout()
    os.makedirs(a.out, exist_ok=True)
    for fmt in a.format.split(","):
        path = os.path.join(a.out, f"diagnose_timeline.{fmt}")
        fig.savefig(path, dpi=130)
        print(f"diagnose_plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
