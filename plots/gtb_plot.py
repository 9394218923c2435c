#!/usr/bin/env python3
"""Regenerates gtb's figures from a results file (schema gtb-results, versions 1 to 3).

usage: gtb_plot.py RESULTS.json --out DIR [--format png|svg|png,svg]

Every figure is captioned with the machine (GPU name, or CPU model, and host), the commit measured,
the suite and date, and whether the machine was busy while the figure's family ran.
A figure whose data the file lacks is skipped with a message; nothing is interpolated or invented.
Each figure's older files in the folder (NAME.png, NAME.svg) are removed first, so a skipped figure
leaves none from an earlier run; other files there are left alone.
Exit status: 0 figures written (or all skipped, each with its reason), 1 the file is from before typed
findings (schema 1 or 2) and holds no figure spec, 2 bad input or missing matplotlib.
"""
import argparse
import json
import math
import os
import re
import sys
from collections import defaultdict

SCHEMA, VERSIONS = "gtb-results", (1, 2, 3)


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
        die(f"{path}: schema version {doc.get('schema_version')} is not supported (this gtb reads versions 1 to 3)")
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


def commit(doc):
    build = doc.get("context", {}).get("build") if isinstance(doc.get("context"), dict) else None
    build = build if isinstance(build, dict) else {}
    sha = str(build.get("git_commit") or "")[:10]
    if not sha:
        return "commit not recorded"
    return f"commit {sha}" + (" with uncommitted changes" if build.get("git_dirty") is True else "")


SPEED_SPREAD_LIMIT = 0.15  # harness/driver/common/speed.h: kSpeedSpreadLimit
CACHE_SHARED_LIMIT = 0.75  # kCacheSharedLimit


def speed_changed(speed):
    """Whether a family's speed readings (health.speed) moved while it ran, as gtb's health::speed_change
    judges them: a loop rate by more than SPEED_SPREAD_LIMIT, or the cache reading across
    CACHE_SHARED_LIMIT by more than it."""
    if not isinstance(speed, dict) or not isinstance(speed.get("before"), dict) or not isinstance(speed.get("after"), dict):
        return False
    b, a = speed["before"], speed["after"]
    for key in ("one_core_gmadd_per_s", "all_cores_gmadd_per_s"):
        x, y = b.get(key), a.get(key)
        if is_num(x) and is_num(y) and x > 0 and y > 0 and min(x, y) / max(x, y) < 1 - SPEED_SPREAD_LIMIT:
            return True
    x, y = b.get("cache_scaling"), a.get("cache_scaling")
    return (is_num(x) and is_num(y) and x > 0 and y > 0 and min(x, y) < CACHE_SHARED_LIMIT <= max(x, y)
            and max(x, y) - min(x, y) > SPEED_SPREAD_LIMIT)


def busy(doc, family=None):
    """Whether the machine was busy (gtb's health readings, or its speed readings moved) while the
    family ran, or any family."""
    fams = [f for f in doc.get("families", []) or [] if isinstance(f, dict)]
    read = [f for f in fams if isinstance(f.get("health"), dict) and (family is None or f.get("name") == family)]
    if not read:
        return "machine load not recorded"
    hot = sorted({str(f.get("name")) for f in read if f["health"].get("busy") is True or speed_changed(f["health"].get("speed"))},
                 key=[str(f.get("name")) for f in read].index)
    if not hot:
        return "machine idle" if family else "machine idle during every family"
    return "machine BUSY (numbers may be low)" if family else "machine BUSY during " + ", ".join(hot)


def caption(doc, family=None):
    date = str(doc.get("generated_at", ""))[:10] or "undated"
    suite = doc.get("suite")
    tag = " [synthetic test data]" if doc.get("synthetic") is True else ""
    when = f"{suite} suite, {date}" if isinstance(suite, str) and suite else date
    return f"{machine(doc)}; {commit(doc)}; {when}; {busy(doc, family)}{tag}"


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


def kv(d, skip=()):
    return ", ".join(f"{k}={v}" for k, v in d.items() if k not in skip) if isinstance(d, dict) else ""


MIN_JOINED = 4  # points a line needs before it is joined: three far-apart sizes suggest a curve they cannot show


class Skip(Exception):
    pass


def covers_data(ax, box, renderer):
    """Whether the display box covers a bar or a marked point of the axes."""
    from matplotlib.patches import Rectangle
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_height() > 0:
            b = patch.get_window_extent(renderer)
            if b.x0 < box.x1 and box.x0 < b.x1 and b.y0 < box.y1 and box.y0 < b.y1:
                return True
    for line in ax.get_lines():
        if line.get_marker() in (None, "None", "", " ") or len(line.get_xydata()) == 0:
            continue
        for x, y in line.get_transform().transform(line.get_xydata()):
            if box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1:
                return True
    return False


def keep_legends_off_data(fig, top=1.0):
    """A legend stays inside its axes where matplotlib finds room for it; where every place there
    covers a bar or a point (a measurement the reader cannot see), it moves out to the right."""
    outside = set()
    for _ in range(len(fig.axes)):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        moved = False
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is None or id(ax) in outside or not covers_data(ax, leg.get_window_extent(renderer), renderer):
                continue
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
            outside.add(id(ax))
            moved = True
        if not moved:
            return
        fig.tight_layout(rect=(0, 0, 1, top))


def lay_out(fig, doc, title, family=None, notes=()):
    """Title, caption and the notes saying what the figure lacks and why, above the axes."""
    import textwrap
    w, h = fig.get_size_inches()
    width = max(60, int(w * 14))
    body = [t for n in [caption(doc, family), *notes] for t in textwrap.wrap(n, width)]
    # Room for the text block: the axes keep their height, the figure grows.
    # The figure grows by the text block, so the axes keep their height.
    extra = 0.3 + 0.14 * len(body)
    H = h + extra
    fig.set_size_inches(w, H)
    fig.suptitle(title, fontsize=10, y=1 - 0.05 / H, va="top")
    fig.text(0.5, 1 - 0.3 / H, "\n".join(body), ha="center", va="top", fontsize=7.5, linespacing=1.25)
    # The block's height from its lines (a draw to measure it would double the time of every figure).
    top = 1 - (0.3 + len(body) * 7.5 * 1.25 * 1.2 / 72 + 0.1) / H
    fig.tight_layout(rect=(0, 0, 1, top))
    keep_legends_off_data(fig, top)


def finish(plt, fig, doc, name, title, out, formats, family=None, notes=()):
    lay_out(fig, doc, title, family, notes)
    paths = []
    for fmt in formats:
        path = os.path.join(out, f"{name}.{fmt}")
        meta = {"Software": None} if fmt == "png" else {"Date": None}
        fig.savefig(path, dpi=120, metadata=meta)
        paths.append(path)
    plt.close(fig)
    return paths


# ---------------------------------------------------------------------------------------- figures
# Every family's figures come from the figure specs in its typed findings (docs/results-format.md):
# which records or table, x and y, series, panels, log scales. Nothing here knows a family.

def field(point, name):
    """A point's field: a record addressed as the results file names it, or a table row by column."""
    if "." in name and name.split(".", 1)[0] in ("params", "options", "counters", "info"):
        group, key = name.split(".", 1)
        g = point.get(group) if isinstance(point.get(group), dict) else {}
        v = g.get(key)
        return v.get("value") if group == "counters" and isinstance(v, dict) else v
    return point.get(name)


def matches(point, where, lenient=False):
    """Whether the point has what `where` asks; a list of conditions: one of them. lenient: a field
    the point lacks is not held against it (records without a number carry fewer fields)."""
    if isinstance(where, list):
        return any(matches(point, w, lenient) for w in where)
    for key, want in (where or {}).items():
        if lenient and field(point, key.rstrip("!")) is None:
            continue
        negate = key.endswith("!")
        wants = want if isinstance(want, list) else [want]
        hit = field(point, key.rstrip("!")) in wants
        if hit == negate:
            return False
    return True


def x_of(point, xs):
    vals = [field(point, k) for k in xs]
    if not vals or not all(is_num(v) and v > 0 for v in vals):
        return vals[0] if len(vals) == 1 and is_num(vals[0]) else None
    return math.prod(vals) ** (1.0 / len(vals)) if len(vals) > 1 else vals[0]


def label_of(point, fields, units=None):
    """A series' or a panel's name: a record's params and options as key=value, other fields as they
    are; a table column's number with the column's unit ("1000 us", not "1000")."""
    parts = []
    for k in fields:
        v = field(point, k)
        if v is None or v == "":
            continue
        if k.startswith(("params.", "options.")):
            parts.append(f"{k.split('.', 1)[-1]}={v}")
        elif units and units.get(k) and is_num(v):
            parts.append(f"{v:g} {units[k]}")
        else:
            parts.append(str(v))
    return " ".join(parts) or "all"


def column_units(section, spec):
    """The units of a table figure's columns, by name (a records figure has none)."""
    table = next((t for t in section.get("tables", []) if t.get("id") == spec.get("source")), None) if spec.get("source") else None
    return {c.get("name"): c.get("unit") for c in (table or {}).get("columns", []) if c.get("unit")}


def natural(label):
    """Sorts "50 us" before "1000 us": the digit runs of a label compared as numbers."""
    return [int(t) if i % 2 else t for i, t in enumerate(re.split(r"(\d+)", label))]


def legend(ax, spec):
    """The axes' legend; a table figure's legend is titled with the columns its series name."""
    title = ", ".join(spec.get("series", [])) if spec.get("source") and spec.get("series") else None
    ax.legend(fontsize=6, title=title, title_fontsize=6)


def figure_points(doc, family, section, spec):
    if spec.get("source"):
        table = next((t for t in section.get("tables", []) if t.get("id") == spec["source"]), None)
        if table is None:
            raise Skip(f"table {spec['source']} is not in the findings")
        names = [c.get("name") for c in table.get("columns", [])]
        points = [dict(zip(names, row)) for row in table.get("rows", [])]
    else:
        points = ok(doc, family)
    out, texts = [], set()
    for p in points:
        if not matches(p, spec.get("where")):
            continue
        x = x_of(p, spec.get("x", []))
        y = field(p, spec.get("y", "value"))
        if spec.get("kind") != "bar" and not is_num(x):
            continue
        if is_num(y):
            out.append((p, x, y))
        elif isinstance(y, str) and y:
            texts.add(y)
    if not out and texts:
        # Every point the figure would draw holds a verdict instead of a number: say which.
        raise Skip("every point's " + repr(spec.get("y", "value")) + " is " + " or ".join(repr(t) for t in sorted(texts)))
    return out


def draw_figure(plt, doc, family, section, spec):
    pts = figure_points(doc, family, section, spec)
    if not pts:
        why = section.get("not_measured") or "no matching point with a number"
        raise Skip(f"{family}: {why}")
    units = column_units(section, spec)
    panels = defaultdict(list)
    for p in pts:
        panels[label_of(p[0], spec.get("panels", []), units) if spec.get("panels") else ""].append(p)
    names = sorted(panels, key=str)
    notes = set()
    fig, axes = plt.subplots(1, len(names), figsize=(max(7, 6 * len(names)), 4.4), squeeze=False)
    measured = doc.get("context", {}).get("ceilings", {}) if isinstance(doc.get("context"), dict) else {}
    # A log axis over less than a decade shows unreadable ticks and no more than a linear one from zero.
    ys = [y for _, _, y in pts if y > 0]
    log_y = bool(spec.get("logy")) and bool(ys) and max(ys) / min(ys) >= 10
    for ax, name in zip(axes[0], names):
        mine = panels[name]
        if spec.get("kind") == "bar":
            if spec.get("largest"):
                top = defaultdict(lambda: -math.inf)
                group = (spec.get("series") or [""])[0]
                for p, _, _ in mine:
                    v = field(p, spec["largest"])
                    if is_num(v):
                        top[field(p, group)] = max(top[field(p, group)], v)
                mine = [m for m in mine if field(m[0], spec["largest"]) == top[field(m[0], group)]]
            mine.sort(key=lambda m: (label_of(m[0], spec.get("series", [])[:1]), m[2]))
            lo = [max(0.0, m[2] - field(m[0], spec["err_low"])) if is_num(field(m[0], spec.get("err_low", ""))) else 0.0 for m in mine]
            hi = [max(0.0, field(m[0], spec["err_high"]) - m[2]) if is_num(field(m[0], spec.get("err_high", ""))) else 0.0 for m in mine]
            ax.bar(range(len(mine)), [m[2] for m in mine], yerr=[lo, hi] if any(lo) or any(hi) else None, capsize=2,
                   color=["tab:blue" if field(m[0], "backend") != "cuda" else "tab:green" for m in mine])
            ax.set_xticks(range(len(mine)))
            ax.set_xticklabels([label_of(m[0], spec.get("series", [])).replace(" ", "\n", 1) for m in mine], fontsize=6,
                               rotation=45, ha="right")
            ax.grid(True, axis="y", alpha=0.3)
        else:
            series = defaultdict(dict)
            for p, x, y in mine:
                s = series[label_of(p, spec.get("series", []), units)]
                s[x] = max(s.get(x, -math.inf), y) if spec.get("reduce") == "max" else y
            if len({x for _, x, _ in mine}) == 1:
                # One x value only: a line has nothing to run along; bars from zero compare the series.
                x0 = mine[0][1]
                labels = sorted(series)
                ax.bar(range(len(labels)), [series[s][x0] for s in labels], width=0.6,
                       color=["tab:green" if s.startswith("cuda") else "tab:blue" for s in labels])
                ax.set_xlim(-0.5 - 0.5 * (len(labels) < 3), len(labels) - 0.5 + 0.5 * (len(labels) < 3))
                ax.set_xticks(range(len(labels)))
                ax.set_xticklabels([s.replace(" ", "\n", 1) for s in labels], fontsize=7)
                ax.set_ylim(bottom=0)
                ax.grid(True, axis="y", alpha=0.3)
                ax.set_xlabel(f"{spec.get('xlabel') or ', '.join(spec.get('x', []))} = {x0:g} (the only value measured)")
                ax.set_ylabel(spec.get("ylabel") or spec.get("y", "value"))
                if name:
                    ax.set_title(name, fontsize=9)
                notes.add(f"only one value of {spec.get('xlabel') or 'x'} was measured: bars, not lines "
                          f"(no sweep to draw a line along)")
                continue
            for label in sorted(series, key=natural):
                xy = sorted(series[label].items())
                joined = len(xy) >= MIN_JOINED
                if not joined:
                    notes.add(f"a line with fewer than {MIN_JOINED} points is drawn as points, not joined "
                              f"(too few sizes to show a trend or a crossover)")
                ax.plot([a for a, _ in xy], [b for _, b in xy], linestyle=("--" if label.startswith("cpu") else "-") if joined else "none",
                        marker="o", ms=4 if joined else 6, label=label)
            ax.grid(True, alpha=0.3)
            if not spec.get("logx") and all(float(x).is_integer() for _, x, _ in mine):
                # A count along x (workers, layers): ticks at whole numbers only.
                from matplotlib.ticker import MaxNLocator
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if not log_y and all(y >= 0 for _, _, y in mine):
                # A linear axis cut above zero exaggerates a difference.
                ax.set_ylim(0, 1.08 * max(y for _, _, y in mine) or 1)
            if len(series) > 1 or spec.get("hlines") or spec.get("vlines"):
                legend(ax, spec)
        if spec.get("ceiling_line"):
            names_used = {field(p, "ceiling") for p, _, _ in mine if field(p, "ceiling")}
            for c in sorted(names_used):
                if is_num(measured.get(c)):
                    ax.axhline(measured[c], color="red", ls="--", lw=1)
                    ax.set_title((f"{name}: " if name else "") + f"measured ceiling {c} = {measured[c]:.4g} (red dashed)",
                                 fontsize=8)
        for m in spec.get("hlines", []):
            ax.axhline(m["value"], color="grey", ls=":", lw=1, label=m.get("label"))
        for m in spec.get("vlines", []):
            ax.axvline(m["value"], color="grey", ls=":", lw=1)
            ax.annotate(m.get("label", ""), (m["value"], 0.02), xycoords=("data", "axes fraction"), fontsize=7, rotation=90,
                        va="bottom", ha="right", color="grey")
        if spec.get("hlines") and spec.get("kind") != "bar":
            legend(ax, spec)
        if spec.get("logx"):
            ax.set_xscale("log", base=spec["logx"])
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(spec.get("xlabel") or ", ".join(spec.get("x", [])))
        ax.set_ylabel(spec.get("ylabel") or spec.get("y", "value"))
        if name and not spec.get("ceiling_line"):
            ax.set_title(name, fontsize=9)
    drawn = {field(p, "backend") for p, _, _ in pts}
    return fig, spec.get("title") or spec["id"], missing(doc, family, spec, drawn) + sorted(notes)


BACKENDS = {"cuda": "GPU", "cpu": "CPU"}


def missing(doc, family, spec, drawn):
    """One line per backend the figure asks for but cannot draw, with its records' commonest reason."""
    if spec.get("source"):
        return []
    why = defaultdict(lambda: defaultdict(int))
    for r in doc["records"]:
        b = r.get("backend")
        if r.get("family") != family or b in drawn or r.get("status") == "ok":
            continue
        if matches(r, spec.get("where"), lenient=True):
            why[b][f"{r.get('status')}: {r.get('status_detail') or 'no reason recorded'}"] += 1
    out = []
    for b in sorted(why, key=str):
        reason, n = max(why[b].items(), key=lambda kv_: kv_[1])
        out.append(f"no {BACKENDS.get(b, b)} numbers: its {n} record(s) were {reason}")
    return out


def family_figures(doc):
    """(name, family, section, spec) for every figure spec of every family with typed findings."""
    out = []
    findings = doc.get("findings") if isinstance(doc.get("findings"), dict) else {}
    for family in sorted(findings, key=lambda f: (findings[f].get("order", 1000) if isinstance(findings[f], dict) else 1000, f)):
        entry = findings[family]
        if not isinstance(entry, dict) or not isinstance(entry.get("sections"), list):
            out.append((f"{family}_findings", family, None, None))
            continue
        for section in entry["sections"]:
            for spec in section.get("figures", []) if isinstance(section, dict) else []:
                if isinstance(spec, dict) and spec.get("id"):
                    out.append((spec["id"], family, section, spec))
    return out


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
    if doc.get("schema_version") in (1, 2):
        print(f"gtb plot: no figure: {a.results} is schema version {doc['schema_version']}, from before typed findings: "
              f"it holds no figure specs; gtb-<family> --gtb_findings_from={a.results} derives each family's findings "
              f"again from its records", file=sys.stderr)
        return 1
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
    figures = family_figures(doc) + [("speedup_heatmap", None, None, None)]
    unknown = only - {n for n, _, _, _ in figures}
    if unknown:
        die(f"unknown figure(s): {', '.join(sorted(unknown))}")
    written = 0
    for name, family, section, spec in figures:
        if only and name not in only:
            continue
        # A figure this run skips must not leave an older run's file behind, passing for this file's.
        for fmt in ("png", "svg"):
            try:
                os.remove(os.path.join(a.out, f"{name}.{fmt}"))
            except FileNotFoundError:
                pass
            except OSError as e:
                die(f"{a.out}: cannot remove the old {name}.{fmt} ({e.strerror})")
        try:
            if name == "speedup_heatmap":
                fig, title = fig_speedup_heatmap(plt, doc)
                notes = []
            elif spec is None:
                raise Skip(f"findings.{family} predate typed findings (schema version 3); "
                           f"gtb-{family} --gtb_findings_from=FILE derives them again")
            else:
                fig, title, notes = draw_figure(plt, doc, family, section, spec)
        except Skip as s:
            print(f"skipped {name}: {s}")
            continue
        for p in finish(plt, fig, doc, name, title, a.out, formats, family, notes):
            print(f"wrote {p}")
            written += 1
    print(f"gtb plot: {written} file(s) in {a.out} for {caption(doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
