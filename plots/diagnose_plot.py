#!/usr/bin/env python3
"""One profiler step's GPU timeline by cause, from a `gtb diagnose --format json` diagnosis; a job's
ranks side by side; a diff's before and after.

usage: diagnose_plot.py DIAGNOSIS.json --out DIR [--format png|svg|png,svg]

A job (gtb diagnose DIR): DIR/diagnose_job.<fmt>, a bar per rank of its median step split by cause
(compute, communication not hidden by compute, memory, idle; or, for CPU-only ranks, the wait in
collectives and the rest of the host step). A diff (gtb diagnose --diff): DIR/diagnose_diff.<fmt>,
the median per step of each category before and after, the step-to-step spread as error bars.

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
    if d.get("kind") in ("job", "diff"):
        return draw_job(d, a) if d["kind"] == "job" else draw_diff(d, a)
    if not d.get("timeline"):
        die(f"{a.diagnosis}: no timeline (the trace has no GPU events)")
    return draw_timeline(d, a)


def draw_timeline(d, a):
    plt = pyplot()
    from matplotlib.patches import Patch
    tl = d["timeline"]
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
    return save(fig, a, "diagnose_timeline")


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        die("matplotlib is missing (Debian: python3-matplotlib)")


def save(fig, a, stem):
    fig.tight_layout()
    os.makedirs(a.out, exist_ok=True)
    for fmt in a.format.split(","):
        path = os.path.join(a.out, f"{stem}.{fmt}")
        fig.savefig(path, dpi=130)
        print(f"diagnose_plot: {path}")
    return 0


def draw_job(d, a):
    plt = pyplot()
    ranks = d.get("ranks") or []
    if not ranks:
        die("the job has no ranks")
    gpu = any((r["median_per_step"].get("compute_us") is not None) for r in ranks)

    def v(r, k):
        x = r["median_per_step"].get(k)
        return (x or 0) / 1000

    if gpu:
        parts = [("compute", lambda r: v(r, "compute_us"), KIND_COLOURS["compute"]),
                 ("communication not hidden by compute", lambda r: v(r, "exposed_communication_us"), KIND_COLOURS["communication"]),
                 ("memory", lambda r: v(r, "memory_us"), KIND_COLOURS["memory"]),
                 ("idle", lambda r: v(r, "idle_us"), "#bbbbbb")]
    else:
        parts = [("wait in collectives (the others came late)", lambda r: v(r, "wait_in_collectives_us"), "#c44e52"),
                 ("rest of the host step", lambda r: max(0.0, v(r, "step_us") - v(r, "wait_in_collectives_us")), "#4c72b0")]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(ranks) + 3), 4.2))
    xs = list(range(len(ranks)))
    bottom = [0.0] * len(ranks)
    for label, f, colour in parts:
        h = [f(r) for r in ranks]
        ax.bar(xs, h, bottom=bottom, color=colour, label=label, width=0.6)
        bottom = [b + x for b, x in zip(bottom, h)]
    s = d.get("straggler") or {}
    ax.set_xticks(xs)
    ax.set_xticklabels([f"rank {r['rank']}" + (" (straggler)" if s.get("rank") == r["rank"] else "") for r in ranks], fontsize=8)
    ax.set_ylabel("median per step (ms)")
    what = "GPU time by cause" if gpu else "host step (no GPU events in the traces)"
    ax.set_title(f"a job of {len(ranks)} ranks: each rank's median step,\n{what}", fontsize=9)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    return save(fig, a, "diagnose_job")


def draw_diff(d, a):
    plt = pyplot()
    cats = [(k, c) for k, c in d.get("categories", {}).items() if c.get("before_median") is not None or c.get("after_median") is not None]
    if not cats:
        die("the diff has no category to draw")
    labels = {"step_us": "step", "compute_us": "compute", "communication_us": "communication", "memory_us": "memory",
              "idle_us": "idle", "idle_host_launch_us": "idle: host launch", "idle_sync_us": "idle: sync",
              "idle_other_us": "idle: other", "data_loader_us": "data loader (host)"}
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(cats) + 2), 4.2))
    xs = list(range(len(cats)))
    w = 0.38
    for off, side, colour in ((-w / 2, "before", "#8c8c8c"), (w / 2, "after", "#4c72b0")):
        h = [(c.get(f"{side}_median") or 0) / 1000 for _, c in cats]
        err = [(c.get(f"{side}_spread") or 0) / 2000 for _, c in cats]
        ax.bar([x + off for x in xs], h, width=w, color=colour, label=f"{side}: {d[side]['file']}", yerr=err, capsize=3)
    for x, (_, c) in zip(xs, cats):
        if c.get("beyond_noise"):
            top = max(c.get("before_median") or 0, c.get("after_median") or 0) / 1000
            ax.text(x, top, "beyond noise", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(xs)
    ax.set_xticklabels([labels.get(k, k) for k, _ in cats], fontsize=8, rotation=20)
    ax.set_ylabel("median per step (ms)")
    import textwrap
    ax.set_title("\n".join(textwrap.wrap(d.get("verdict", ""), 70)) + "\n(error bars: half the step-to-step spread)",
                 fontsize=8)
    ax.legend(fontsize=8, frameon=False)
    return save(fig, a, "diagnose_diff")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
