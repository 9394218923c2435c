#!/usr/bin/env python3
"""Regenerates gtb's figures from a results file (schema gtb-results, version 1).

usage: gtb_plot.py RESULTS.json --out DIR [--format png|svg|png,svg]

Every figure is titled with the machine (GPU name, or CPU model, and host) and the run's date.
A figure whose data the file lacks is skipped with a message; nothing is interpolated or invented.
Exit status: 0 figures written (or all skipped), 2 bad input or missing matplotlib.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

SCHEMA, VERSIONS = "gtb-results", (1, 2)
FED_IDLE_DEFAULT = 0.10


def die(msg):
    print(f"gtb plot: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except OSError as e:
        die(f"{path}: cannot open ({e.strerror})")
    except UnicodeDecodeError:
        die(f"{path}: not UTF-8 text")
    if not text.strip():
        die(f"{path}: empty file")
    try:
        doc = json.loads(text, parse_constant=lambda c: die(f"{path}: holds {c}, which results never contain"))
    except json.JSONDecodeError as e:
        die(f"{path}: not valid JSON ({e})")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        die(f'{path}: not a gtb results file ("schema" is not "{SCHEMA}")')
    if doc.get("schema_version") not in VERSIONS:
        die(f"{path}: schema version {doc.get('schema_version')} is not supported (this gtb reads versions 1 to 2)")
    if not isinstance(doc.get("records"), list) or not isinstance(doc.get("context"), dict):
        die(f'{path}: "records" or "context" is missing')
    for i, r in enumerate(doc["records"]):
        if not isinstance(r, dict):
            die(f"{path}: records[{i}] is not an object")
        if r.get("status") == "ok" and not is_num(r.get("value")):
            die(f"{path}: records[{i}] ({r.get('id', '?')}): value is not a number")
    return doc


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# ---------------------------------------------------------------------------------------- helpers

def machine(doc):
    ctx = doc.get("context", {})
    host = ctx.get("host", {}) if isinstance(ctx.get("host"), dict) else {}
    gpu = ctx.get("gpu", {}) if isinstance(ctx.get("gpu"), dict) else {}
    if gpu.get("available") and isinstance(gpu.get("devices"), list) and gpu["devices"]:
        names = sorted({str(d.get("name", "GPU")) for d in gpu["devices"] if isinstance(d, dict)})
        what = " + ".join(names)
    else:
        what = f"{host.get('cpu_model', 'unknown CPU')} (no GPU)"
    hostname = host.get("hostname")
    return f"{what} on {hostname}" if hostname else what


def caption(doc):
    date = str(doc.get("generated_at", ""))[:10] or "undated"
    tag = " [synthetic test data]" if doc.get("synthetic") is True else ""
    return f"{machine(doc)}, {date}{tag}"


def ok(doc, family=None, workload=None, backend=None):
    out = []
    for r in doc["records"]:
        if r.get("status") != "ok" or not is_num(r.get("value")):
            continue
        if family and r.get("family") != family:
            continue
        if workload and r.get("workload") != workload:
            continue
        if backend and r.get("backend") != backend:
            continue
        out.append(r)
    return out


def param(r, k, default=None):
    p = r.get("params") if isinstance(r.get("params"), dict) else {}
    return p.get(k, default)


def option(r, k, default=None):
    o = r.get("options") if isinstance(r.get("options"), dict) else {}
    return o.get(k, default)


def counter(r, k):
    c = r.get("counters") if isinstance(r.get("counters"), dict) else {}
    v = c.get(k)
    return v.get("value") if isinstance(v, dict) and is_num(v.get("value")) else None


def kv(d, skip=()):
    return ", ".join(f"{k}={v}" for k, v in d.items() if k not in skip) if isinstance(d, dict) else ""


def size_label(b):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f:
            v = b / f
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{b:.0f} B"


class Skip(Exception):
    pass


def finish(plt, fig, doc, name, title, out, formats):
    fig.suptitle(f"{title}\n{caption(doc)}", fontsize=10)
    fig.tight_layout()
    paths = []
    for fmt in formats:
        path = os.path.join(out, f"{name}.{fmt}")
        meta = {"Software": None} if fmt == "png" else {"Date": None}
        fig.savefig(path, dpi=120, metadata=meta)
        paths.append(path)
    plt.close(fig)
    return paths


# ---------------------------------------------------------------------------------------- figures

def fig_transfer_bandwidth(plt, doc):
    recs = [r for r in ok(doc, "transfer") if str(r.get("workload", "")).startswith("copy_") and is_num(param(r, "bytes"))]
    if not recs:
        raise Skip("no ok transfer copy record")
    order = {"copy_h2d": 0, "copy_d2h": 1, "copy_bidir": 2}
    directions = sorted({r["workload"] for r in recs}, key=lambda w: (order.get(w, 9), w))
    fig, axes = plt.subplots(1, len(directions), figsize=(5.5 * len(directions), 4.2), squeeze=False)
    for ax, wl in zip(axes[0], directions):
        series = defaultdict(list)
        for r in recs:
            if r["workload"] != wl:
                continue
            if r.get("backend") == "cuda":
                clock = option(r, "clock")
                label = f"GPU copy, {option(r, 'memory', '?')} host memory" + (f" ({clock} clock)" if clock else "")
            else:
                label = f"CPU {r.get('variant')} (host memcpy)"
            series[label].append((param(r, "bytes"), r["value"]))
        for label in sorted(series):
            pts = sorted(series[label])
            style = "--" if label.startswith("CPU") else "-"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("transfer size (bytes)")
        ax.set_ylabel("bandwidth (GB/s, 10^9 bytes/s)")
        ax.set_title(wl.replace("copy_", "").upper() if wl != "copy_bidir" else "bidirectional")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    return fig, "Copy bandwidth vs size per memory kind and direction"


def fig_transfer_batching(plt, doc):
    recs = [r for r in ok(doc, "transfer", "batching") if is_num(param(r, "samples"))]
    if not recs:
        raise Skip("no ok transfer/batching record")
    sizes = sorted({param(r, "sample_bytes") for r in recs}, key=lambda x: (x is None, x))
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.2), squeeze=False)
    for ax, sb in zip(axes[0], sizes):
        series = defaultdict(list)
        for r in recs:
            if param(r, "sample_bytes") == sb:
                series[f"{r.get('backend')} {r.get('variant')}"].append((param(r, "samples"), r["value"]))
        for label in sorted(series):
            pts = sorted(series[label])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "--" if label.startswith("cpu") else "-", marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("samples per batch")
        ax.set_ylabel("samples/s")
        ax.set_title(f"sample size {size_label(sb)}" if is_num(sb) else "batching")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    return fig, "Batching small samples into one copy"


def fig_loader_idle(plt, doc):
    recs = [r for r in ok(doc, "transfer", "loader") if counter(r, "idle_fraction") is not None and is_num(param(r, "workers"))]
    if not recs:
        raise Skip("no ok transfer/loader record with an idle_fraction counter")
    series = defaultdict(list)
    for r in recs:
        rest = {k: v for k, v in r.get("params", {}).items() if k != "workers"}
        label = f"{r.get('variant')} ({kv(r.get('options', {}))}; depth {rest.get('depth', '?')})"
        series[label].append((param(r, "workers"), counter(r, "idle_fraction")))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for label in sorted(series):
        pts = sorted(series[label])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=label)
    fed = FED_IDLE_DEFAULT
    loader = doc.get("findings", {}).get("transfer", {}).get("loader", {}) if isinstance(doc.get("findings"), dict) else {}
    for v in (loader or {}).values():
        if isinstance(v, dict) and is_num(v.get("max_idle_fraction")):
            fed = v["max_idle_fraction"]
    ax.axhline(fed, color="grey", ls=":", label=f"fed: idle <= {fed:.0%}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("loader worker threads")
    ax.set_ylabel("consumer idle fraction")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return fig, "Loader: consumer idle fraction vs worker threads"


def fig_gemm(plt, doc):
    recs = [r for r in ok(doc, "gemm", "gemm") if all(is_num(param(r, k)) for k in "mnk")]
    recs = [r for r in recs if option(r, "l2", "warm") == "warm"]
    if not recs:
        raise Skip("no ok gemm record")
    # Square shapes make a clean size axis; other shapes (skinny, misaligned) are drawn as points.
    square = [r for r in recs if param(r, "m") == param(r, "n") == param(r, "k")]
    if len({param(r, "m") for r in square}) >= 2:
        others, recs = [r for r in recs if r not in square], square
    else:
        others = []
    best = defaultdict(dict)  # (backend, precision) -> size -> best TFLOP/s over libraries
    peaks = {}
    for r in recs:
        key = (r.get("backend"), option(r, "precision", "fp32"))
        size = (param(r, "m") * param(r, "n") * param(r, "k")) ** (1.0 / 3.0)
        best[key][size] = max(best[key].get(size, 0.0), r["value"])
        ds = r.get("info", {}).get("datasheet") if isinstance(r.get("info"), dict) else None
        if isinstance(ds, dict) and is_num(ds.get("peak_tflops")):
            peaks[key] = ds["peak_tflops"]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    colors = {}
    for key in sorted(best):
        pts = sorted(best[key].items())
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "--" if key[0] == "cpu" else "-", marker="o", ms=4,
                        label=f"{'CPU' if key[0] == 'cpu' else 'GPU'} {key[1]}")
        colors[key] = line.get_color()
    for r in others:
        key = (r.get("backend"), option(r, "precision", "fp32"))
        size = (param(r, "m") * param(r, "n") * param(r, "k")) ** (1.0 / 3.0)
        ax.plot([size], [r["value"]], "x", color=colors.get(key, "grey"), ms=5)
    if others:
        ax.plot([], [], "x", color="grey", label="non-square shapes (x = cube root of m*n*k)")
    for key, peak in sorted(peaks.items()):
        ax.axhline(peak, color=colors.get(key, "grey"), ls=":", lw=1)
        ax.annotate(f"{key[1]} peak {peak:g}", (ax.get_xlim()[0], peak), fontsize=7, va="bottom", color=colors.get(key, "grey"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("matrix size (cube root of m*n*k)")
    ax.set_ylabel("TFLOP/s (2*m*n*k / time)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return fig, "GEMM throughput vs size per precision" + (" (dotted: datasheet peak)" if peaks else "")


def fig_vectorize(plt, doc):
    recs = ok(doc, "vectorize")
    if not recs:
        raise Skip("no ok vectorize record")
    ceilings = doc.get("context", {}).get("ceilings", {}) or {}
    backends = [b for b in ("cpu", "cuda") if any(r.get("backend") == b for r in recs)]
    fig, axes = plt.subplots(1, len(backends), figsize=(6 * len(backends), 4.4), squeeze=False)
    for ax, be in zip(axes[0], backends):
        mine = [r for r in recs if r.get("backend") == be]
        workloads = sorted({r["workload"] for r in mine})
        bars, labels = [], []
        ceiling_name = None
        for wl in workloads:
            wr = [r for r in mine if r["workload"] == wl]
            nmax = max((param(r, "n", 0) for r in wr if is_num(param(r, "n", 0))), default=None)
            for r in sorted(wr, key=lambda r: r["value"]):
                if param(r, "n") != nmax:
                    continue
                bars.append(r["value"])
                extra = kv(r.get("options", {}))
                labels.append(f"{wl}\n{r.get('variant')}" + (f"\n{extra}" if extra else ""))
                ceiling_name = r.get("ceiling") or ceiling_name
        ax.bar(range(len(bars)), bars, color="tab:blue" if be == "cpu" else "tab:green")
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels(labels, fontsize=6, rotation=45, ha="right")
        ax.set_ylabel("GB/s (bytes read + written)")
        title = f"{'CPU' if be == 'cpu' else 'GPU'}, largest n measured"
        if ceiling_name and is_num(ceilings.get(ceiling_name)):
            # Named in the title, not in a legend: a legend inside the axes covers the tallest bar.
            ax.axhline(ceilings[ceiling_name], color="red", ls="--")
            title += f"\n(red dashed: measured ceiling {ceiling_name} = {ceilings[ceiling_name]:.4g} GB/s)"
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    return fig, "Loops vs vectorized code against the measured ceiling"


def crossover_lines(ax, entries, xkey):
    for e in entries or []:
        if isinstance(e, dict) and is_num(e.get(xkey)):
            ax.axvline(e[xkey], color="grey", ls=":", lw=1)
            ax.annotate(f"GPU ahead from {e[xkey]:g}", (e[xkey], ax.get_ylim()[0]), fontsize=7, rotation=90,
                        va="bottom", ha="right", color="grey")


def train_sweep(plt, doc, workload, xkey, title, fixed):
    recs = [r for r in ok(doc, "train", workload) if is_num(param(r, xkey))]
    if not recs:
        raise Skip(f"no ok train/{workload} record")
    series = defaultdict(list)
    for r in recs:
        rest = {k: v for k, v in r.get("params", {}).items() if k != xkey}
        opts = kv(r.get("options", {}))
        label = f"{'CPU' if r.get('backend') == 'cpu' else 'GPU'} {r.get('variant')}" + (f" [{opts}]" if opts else "") + f" ({kv(rest)})"
        series[label].append((param(r, xkey), r["value"]))
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for label in sorted(series):
        pts = sorted(series[label])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "--" if label.startswith("CPU") else "-", marker="o", ms=4, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xkey)
    ax.set_ylabel("training samples/s")
    ax.grid(True, alpha=0.3)
    f = doc.get("findings", {}).get("train", {}) if isinstance(doc.get("findings"), dict) else {}
    crossover_lines(ax, f.get(fixed[0]) if isinstance(f, dict) else None, fixed[1])
    ax.legend(fontsize=6)
    return fig, title


def fig_train_batch(plt, doc):
    return train_sweep(plt, doc, "batch_sweep", "batch", "Training throughput vs batch size, CPU and GPU (dotted: crossover)",
                       ("crossover_batch", "crossover_batch"))


def fig_train_model(plt, doc):
    return train_sweep(plt, doc, "model_sweep", "width", "Training throughput vs model width, CPU and GPU (dotted: crossover)",
                       ("gpu_slower_below", "crossover_width"))


def fig_speedup_heatmap(plt, doc):
    comps = [c for c in doc.get("comparisons", []) or [] if isinstance(c, dict) and is_num(c.get("gpu_over_cpu"))]
    if not comps:
        raise Skip("no CPU/GPU comparison (needs ok CPU and GPU records of the same problem)")
    rows = defaultdict(list)
    for c in comps:
        # One row per GPU configuration, so each row is a sweep over problem sizes.
        gpu = c.get("cuda", {}) if isinstance(c.get("cuda"), dict) else {}
        opts = kv(gpu.get("options", {}), skip=("clock",))
        rows[f"{c.get('family')}/{c.get('workload')} {gpu.get('variant', '')}" + (f" [{opts}]" if opts else "")].append(c)
    names = sorted(rows)
    width = max(len(v) for v in rows.values())

    def sort_key(c):
        p = c.get("params", {}) if isinstance(c.get("params"), dict) else {}
        nums = [v for v in p.values() if is_num(v)]
        return (math.prod(nums) if nums else 0, json.dumps(p, sort_keys=True))

    import numpy as np
    grid = np.full((len(names), width), np.nan)
    text = [["" for _ in range(width)] for _ in names]
    for i, n in enumerate(names):
        for j, c in enumerate(sorted(rows[n], key=sort_key)):
            grid[i, j] = math.log2(c["gpu_over_cpu"])
            text[i][j] = f"{c['gpu_over_cpu']:.2g}"
    lim = max(1.0, float(np.nanmax(np.abs(grid))))
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * width + 5), 0.32 * len(names) + 2))
    im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(len(names)):
        for j in range(width):
            if text[i][j]:
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=6)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xticks([])
    ax.set_xlabel("problem size, smallest to largest\n(cell: GPU/CPU; > 1 the GPU is better)")
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("log2 GPU/CPU")
    return fig, "GPU over CPU on the same problem"


def pitfalls_findings(doc, key):
    f = doc.get("findings", {})
    f = f.get("pitfalls", {}) if isinstance(f, dict) else {}
    rows = f.get(key, []) if isinstance(f, dict) else []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def fig_pitfalls_steps(plt, doc):
    rows = [r for r in pitfalls_findings(doc, "steps") if is_num(r.get("pct_of_clean")) and is_num(r.get("width"))]
    if not rows:
        raise Skip("no pitfalls step findings")
    backends = [b for b in ("cpu", "cuda") if any(r.get("backend") == b for r in rows)]
    fig, axes = plt.subplots(1, len(backends), figsize=(6 * len(backends), 4.4), squeeze=False)
    for ax, be in zip(axes[0], backends):
        series = {}
        for r in rows:
            if r.get("backend") == be:
                series.setdefault((r.get("pitfall"), r.get("variant"), r.get("batch")), []).append(r)
        for (pit, var, batch), pts in sorted(series.items(), key=lambda kv: str(kv[0])):
            pts.sort(key=lambda r: r["width"])
            ax.plot([r["width"] for r in pts], [r["pct_of_clean"] for r in pts], marker="o",
                    label=f"{pit} {var}, batch {batch}")
        ax.axhline(100, color="red", ls="--", lw=1, label="dominates (costs the clean step again)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("model width")
        ax.set_ylabel("extra time, % of the clean step")
        ax.set_title("CPU" if be == "cpu" else "GPU")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    return fig, "Cost of a habit per training step against the clean loop"


def fig_pitfalls_builds(plt, doc):
    rows = [r for r in pitfalls_findings(doc, "builds") if is_num(r.get("slowdown")) and r.get("variant") != r.get("baseline")]
    if not rows:
        raise Skip("no pitfalls build findings")
    backends = [b for b in ("cpu", "cuda") if any(r.get("backend") == b for r in rows)]
    fig, axes = plt.subplots(1, len(backends), figsize=(6 * len(backends), 4.4), squeeze=False)
    for ax, be in zip(axes[0], backends):
        mine = [r for r in rows if r.get("backend") == be]
        bars, labels, errs = [], [], [[], []]
        for wl in sorted({r.get("workload") for r in mine}):
            wr = [r for r in mine if r.get("workload") == wl]
            nmax = max(r.get("n", 0) for r in wr)
            for r in sorted((r for r in wr if r.get("n") == nmax), key=lambda r: str(r.get("variant"))):
                v = r["slowdown"]
                bars.append(v)
                lo, hi = r.get("slowdown_q1"), r.get("slowdown_q3")
                errs[0].append(max(0.0, v - lo) if is_num(lo) else 0.0)
                errs[1].append(max(0.0, hi - v) if is_num(hi) else 0.0)
                labels.append(f"{wl}\n{r.get('variant')} (n={nmax})")
        ax.bar(range(len(bars)), bars, yerr=errs, color="tab:blue" if be == "cpu" else "tab:green", capsize=2)
        ax.axhline(1, color="black", lw=1)
        ax.set_yscale("log")
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels(labels, fontsize=6, rotation=45, ha="right")
        base = mine[0].get("baseline", "")
        ax.set_ylabel(f"time / time of the default build ({base})")
        ax.set_title(("CPU" if be == "cpu" else "GPU") + ", largest n measured")
        ax.grid(True, axis="y", alpha=0.3)
    return fig, "Build flags: slowdown against the project's default build"
def fig_parallel_busbw(plt, doc):
    """Measured collective busbw against size, one line per collective and backend (never projected)."""
    recs = [r for r in ok(doc, "parallel", "collective") if r.get("variant") != "mpi_plain_loop"
            and is_num(param(r, "bytes")) and is_num(counter(r, "busbw"))]
    if not recs:
        raise Skip("no ok parallel/collective record")
    lines = defaultdict(list)
    for r in recs:
        ranks = (r.get("info") or {}).get("ranks", (r.get("info") or {}).get("gpus", "?"))
        lines[f"{r.get('variant')} {param(r, 'collective')} {option(r, 'dtype', '')} ({ranks} ranks)"].append(r)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, rs in sorted(lines.items()):
        rs.sort(key=lambda r: param(r, "bytes"))
        ax.plot([param(r, "bytes") for r in rs], [counter(r, "busbw") for r in rs], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes, nccl-tests' convention)")
    ax.set_ylabel("busbw (GB/s, measured)")
    ax.legend(fontsize=7)
    return fig, "Collective bus bandwidth vs size (measured)"


FIGURES = [
    ("transfer_bandwidth", fig_transfer_bandwidth),
    ("transfer_batching", fig_transfer_batching),
    ("loader_idle", fig_loader_idle),
    ("gemm_tflops", fig_gemm),
    ("vectorize_bars", fig_vectorize),
    ("train_throughput_batch", fig_train_batch),
    ("train_throughput_model", fig_train_model),
    ("speedup_heatmap", fig_speedup_heatmap),
    ("pitfalls_steps", fig_pitfalls_steps),
    ("pitfalls_builds", fig_pitfalls_builds),
    ("parallel_busbw", fig_parallel_busbw),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Regenerate gtb figures from a results file.")
    ap.add_argument("results")
    ap.add_argument("--out", required=True, help="folder for the figures (created if missing)")
    ap.add_argument("--format", default="png", help="png, svg or png,svg")
    ap.add_argument("--only", default="", help="comma-separated figure names")
    a = ap.parse_args(argv)
    formats = [f for f in a.format.split(",") if f]
    if not formats or any(f not in ("png", "svg") for f in formats):
        die("--format must be png, svg or png,svg")
    doc = load(a.results)
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "gtb"
        import matplotlib.pyplot as plt
    except ImportError:
        die("matplotlib is not installed for " + sys.executable + " (apt install python3-matplotlib, or set GTB_PYTHON)")
    try:
        os.makedirs(a.out, exist_ok=True)
    except OSError as e:
        die(f"{a.out}: cannot create ({e.strerror})")
    only = {x for x in a.only.split(",") if x}
    unknown = only - {n for n, _ in FIGURES}
    if unknown:
        die(f"unknown figure(s): {', '.join(sorted(unknown))}")
    written = 0
    for name, fn in FIGURES:
        if only and name not in only:
            continue
        try:
            fig, title = fn(plt, doc)
        except Skip as s:
            print(f"skipped {name}: {s}")
            continue
        for p in finish(plt, fig, doc, name, title, a.out, formats):
            print(f"wrote {p}")
            written += 1
    print(f"gtb plot: {written} file(s) in {a.out} for {caption(doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
