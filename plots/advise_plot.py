#!/usr/bin/env python3
"""Draws gtb advise's breakdown: the predicted CPU and GPU step stacked by part, and the fixes.

usage: advise_plot.py ADVICE.json OUT.png     (ADVICE.json: `gtb advise ... --format json`)

A side the model cannot say about is drawn as an empty bar with the reason; nothing is invented.
Exit status: 0 written, 2 bad input or missing matplotlib.
"""
import json
import sys
import textwrap


def die(msg):
    print(f"advise_plot: {msg}", file=sys.stderr)
    sys.exit(2)


def seconds_text(s):
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def main(argv):
    if len(argv) != 3:
        die("usage: advise_plot.py ADVICE.json OUT.png")
    try:
        with open(argv[1], encoding="utf-8") as fh:
            advice = json.load(fh)
    except (OSError, ValueError) as e:
        die(f"{argv[1]}: {e}")
    if advice.get("schema") != "gtb-advice":
        die(f"{argv[1]}: not a gtb advise JSON output (schema gtb-advice)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        die("matplotlib is needed")

    preds = advice.get("predictions", [])
    names = []
    for p in preds:
        for part in p.get("parts", []):
            if part["name"] not in names:
                names.append(part["name"])
    cmap = plt.get_cmap("tab10")
    colours = {n: cmap(i % 10) for i, n in enumerate(names)}

    totals = [p["total"].get("seconds") or 0 for p in preds]
    savings = [f.get("saving_s") or 0 for p in preds for f in p.get("fixes", [])]
    # One unit for both panels: microseconds for small steps, milliseconds otherwise.
    scale, unit = (1e6, "us") if max(totals + savings + [0]) < 1e-3 else (1e3, "ms")
    fig, (ax, axf) = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1.35]})
    labels = []
    for i, p in enumerate(preds):
        side = "CPU" if p["backend"] == "cpu" else "GPU"
        labels.append(side)
        total = p["total"].get("seconds")
        if total is None:
            reason = textwrap.fill("cannot say: " + p["total"].get("cannot_say", ""), 34)
            ax.text(i, 0.02, reason, ha="center", va="bottom", fontsize=8, transform=ax.get_xaxis_transform(),
                    color="0.35")
            continue
        bottom = 0.0
        for part in p["parts"]:
            s = part.get("seconds") or 0.0
            if s <= 0:
                continue
            ax.bar(i, s * scale, bottom=bottom * scale, color=colours[part["name"]], width=0.6,
                   label=part["name"] if part["name"] not in ax.get_legend_handles_labels()[1] else None)
            if s / total > 0.06:
                ax.text(i, (bottom + s / 2) * scale, f"{part['name']}\n{seconds_text(s)}", ha="center", va="center",
                        fontsize=7.5)
            bottom += s
        ax.text(i, total * scale, seconds_text(total), ha="center", va="bottom", fontsize=9, fontweight="bold")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel(f"predicted {unit} per step")
    ax.set_ylim(bottom=0)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.08), ncol=4, frameon=False)
    ax.set_title("Predicted step, by part", fontsize=10)

    rows = []
    for p in preds:
        side = "CPU" if p["backend"] == "cpu" else "GPU"
        for f in p.get("fixes", []):
            if f.get("saving_s") is not None and f["saving_s"] > 0:
                rows.append((f"{side}: {f['title']}", f["saving_s"], f.get("saving_fraction", 0)))
    rows.sort(key=lambda r: r[1])
    if rows:
        y = range(len(rows))
        axf.barh(list(y), [r[1] * scale for r in rows], height=0.6,
                 color=["tab:blue" if r[0].startswith("CPU") else "tab:green" for r in rows])
        axf.set_yticks(list(y), [textwrap.shorten(r[0], 58) for r in rows], fontsize=8)
        for j, r in enumerate(rows):
            axf.text(r[1] * scale, j, f" {seconds_text(r[1])} ({100 * r[2]:.0f}%)", va="center", fontsize=8)
        axf.set_xlim(0, max(r[1] for r in rows) * scale * 1.35)
        axf.set_ylim(-0.5 - max(0, 3 - len(rows)) / 2, len(rows) - 0.5 + max(0, 3 - len(rows)) / 2)
        axf.set_xlabel(f"predicted saving, {unit} per step (CPU blue, GPU green)")
    else:
        axf.axis("off")
        axf.text(0.5, 0.5, "no fix with a predicted saving", ha="center", va="center", transform=axf.transAxes)
    axf.set_title("Fixes by predicted saving", fontsize=10)

    m = advice.get("machine", {})
    cfg = advice.get("config", {})
    desc = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in cfg.items() if k in (
        "model", "width", "depth", "layers", "d_model", "heads", "seq_len", "params", "batch", "precision"))
    fig.suptitle(f"gtb advise: {desc}\nA prediction from measured cost terms, not a measurement", fontsize=10)
    fig.text(0.01, 0.005, f"{m.get('cpu', '?')} · commit {str(m.get('commit', '?'))[:12]} · "
             f"results of {m.get('generated_at', '?')} · {advice.get('source', '')}", fontsize=7, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
