#!/usr/bin/env python3
"""Checks how gtb_plot.py draws a figure spec on a small invented results file (no family named).

usage: test_plot_specs.py [--self-contained]   (the argument is accepted and ignored: the file is built here)
  exit 0: every check holds, 1: a check failed (each named)

What a user must be able to trust in a figure: one x value is drawn as bars from zero, not a lone
point on a cut axis; a line of fewer than four points is not joined; a linear y axis starts at zero;
the caption names the machine, the commit and whether the machine was busy; a backend with no
number is named with its records' reason; a `where` list selects points matching one of its
conditions; a file from before typed findings writes no figure and exits non-zero.
"""
import contextlib
import io
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots"))
import gtb_plot  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def rec(workload, variant, backend, params, value, status="ok", detail=""):
    r = {"family": "fam", "workload": workload, "variant": variant, "backend": backend, "params": params,
         "options": {}, "status": status, "unit": "GB/s"}
    if status == "ok":
        r["value"] = value
    else:
        r["status_detail"] = detail
    return r


def doc(busy):
    records = [rec("one", v, "cpu", {"n": 64}, y) for v, y in (("a", 100.0), ("b", 80.0))]
    records += [rec("sparse", "a", "cpu", {"n": n}, 90.0 + n / 1e6) for n in (1 << 10, 1 << 20, 1 << 26)]
    records += [rec("dense", "a", "cpu", {"n": n}, 50.0 + n) for n in (1, 2, 4, 8)]
    records += [rec(w, "k", "cuda", {"n": 64}, None, "skipped", "no usable GPU: the driver said no") for w in ("one", "sparse")]
    records += [rec("left", "a", "cpu", {"n": 1}, 1.0), rec("right", "a", "cpu", {"n": 1}, 2.0),
                rec("right", "a", "cuda", {"n": 1}, 3.0)]

    def fig(i, where, **kw):
        return dict({"id": i, "title": i, "kind": "line", "where": where, "x": ["params.n"], "y": "value",
                     "series": ["backend", "variant"], "logx": 2, "logy": False}, **kw)

    figures = [fig("f_one", {"workload": "one"}), fig("f_sparse", {"workload": "sparse"}),
               fig("f_dense", {"workload": "dense"}),
               fig("f_or", [{"workload": "left"}, {"workload": "right", "backend": "cuda"}])]
    # A figure drawn from a table whose series column carries a unit, over a count.
    table = {"id": "t", "columns": [{"name": "cost", "unit": "us", "hint": "duration"}, {"name": "k", "unit": "", "hint": "count"},
                                    {"name": "idle", "unit": "", "hint": "fraction"}],
             "rows": [[c, k, 0.5 / (1 + k) + c / 1e4] for c in (1000, 50) for k in (0, 1, 2, 3)]}
    figures.append({"id": "f_table", "title": "f_table", "kind": "line", "source": "t", "x": ["k"], "y": "idle",
                    "series": ["cost"], "logx": 0, "logy": False})
    return {"schema": "gtb-results", "schema_version": 3, "generated_at": "2026-01-02T03:04:05Z", "suite": "quick",
            "context": {"host": {"cpu_model": "Test CPU", "hostname": "box"}, "gpu": {"available": False},
                        "build": {"git_commit": "0123456789abcdef", "git_dirty": False}},
            "families": [{"name": "fam", "status": "ok", "health": {"busy": busy}}],
            "records": records,
            "findings": {"fam": {"title": "Fam", "order": 1,
                                 "sections": [{"id": "s", "title": "S", "tables": [table], "figures": figures}]}}}


def drawn(d, name):
    for n, family, section, spec in gtb_plot.family_figures(d):
        if n == name:
            return gtb_plot.draw_figure(plt, d, family, section, spec), gtb_plot.figure_points(d, family, section, spec)
    raise AssertionError(f"no figure {name}")


def main():
    d = doc(busy=False)
    (fig, _, notes), _ = drawn(d, "f_one")
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() > 0]
    check(len(bars) == 2, f"f_one: one x value must be drawn as one bar per series, got {len(bars)} bars")
    check(ax.get_ylim()[0] == 0, f"f_one: the bars' axis must start at zero, starts at {ax.get_ylim()[0]}")
    check(any("only one value" in n for n in notes), f"f_one: the figure must say only one x value was measured: {notes}")
    check(any(n.startswith("no GPU numbers: its 1 record(s) were skipped: no usable GPU: the driver said no") for n in notes),
          f"f_one: the missing GPU side must be named with its reason: {notes}")
    plt.close(fig)

    (fig, _, notes), _ = drawn(d, "f_sparse")
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xydata()) == 3]
    check(lines and all(ln.get_linestyle() == "None" for ln in lines), "f_sparse: three points must not be joined")
    check(any("not joined" in n for n in notes), f"f_sparse: the figure must say why the points are not joined: {notes}")
    check(fig.axes[0].get_ylim()[0] == 0, "f_sparse: a linear y axis must start at zero")
    plt.close(fig)

    (fig, _, notes), _ = drawn(d, "f_dense")
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xydata()) == 4]
    check(lines and all(ln.get_linestyle() != "None" for ln in lines), "f_dense: four points must be joined")
    check(not any("GPU" in n for n in notes), f"f_dense: no GPU record was asked for, none may be said missing: {notes}")
    plt.close(fig)

    (fig, _, _), pts = drawn(d, "f_or")
    got = sorted((p["workload"], p["backend"]) for p, _, _ in pts)
    check(got == [("left", "cpu"), ("right", "cuda")], f"f_or: a where list must match one of its conditions, got {got}")
    plt.close(fig)

    (fig, _, _), _ = drawn(d, "f_table")
    ax = fig.axes[0]
    leg = ax.get_legend()
    labels = [t.get_text() for t in leg.get_texts()] if leg else []
    check(labels == ["50 us", "1000 us"], f"f_table: series named by the column's number and unit, in numeric order: {labels}")
    check(leg is not None and leg.get_title().get_text() == "cost", "f_table: the legend must name the series' column")
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    check(ticks and all(float(t).is_integer() for t in ticks), f"f_table: a count along x has whole-number ticks: {ticks}")
    plt.close(fig)

    cap = gtb_plot.caption(d, "fam")
    for want in ("Test CPU (no GPU) on box", "commit 0123456789", "quick suite, 2026-01-02", "machine idle"):
        check(want in cap, f"caption lacks {want!r}: {cap}")
    busy = gtb_plot.caption(doc(busy=True), "fam")
    check("BUSY" in busy, f"caption of a busy run must say so: {busy}")
    # Speed readings that moved while the family ran (a file from before gtb judged them): busy too;
    # readings that held are not.
    def read(all_cores, cache):
        return {"one_core_gmadd_per_s": 12.0, "all_cores_gmadd_per_s": all_cores, "cache_scaling": cache}
    # The figures' captions and gtb's health judgement use the same limits (one rule in two languages).
    speed_h = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "harness", "driver", "common", "speed.h")
    with open(speed_h) as fh:
        header = fh.read()
    for name, value in (("kSpeedSpreadLimit", gtb_plot.SPEED_SPREAD_LIMIT), ("kCacheSharedLimit", gtb_plot.CACHE_SHARED_LIMIT)):
        m = re.search(r"\b" + name + r"\s*=\s*([0-9.]+)", header)
        check(m is not None and float(m.group(1)) == value, f"{name} in speed.h and gtb_plot.py differ")
    moved = doc(busy=False)
    moved["families"][0]["health"]["speed"] = {"before": read(24.0, 0.97), "after": read(24.0, 0.5)}
    check("BUSY" in gtb_plot.caption(moved, "fam"), "caption of a family whose speed changed must say busy")
    moved["families"][0]["health"]["speed"] = {"before": read(24.0, 0.97), "after": read(23.0, 0.93)}
    check("idle" in gtb_plot.caption(moved, "fam"), "caption of a family whose speed held must say idle")
    dirty = doc(busy=False)
    dirty["context"]["build"]["git_dirty"] = True
    check("uncommitted" in gtb_plot.caption(dirty, "fam"), "caption of a dirty tree must say so")
    check("date" not in cap and cap.count(";") >= 3, f"caption must carry more than a date: {cap}")

    # A file from before typed findings: no figure, exit 1, the reason and the way out.
    with tempfile.TemporaryDirectory() as tmp:
        old = dict(doc(busy=False), schema_version=1, findings={"fam": {"raw": 1}})
        path = os.path.join(tmp, "old.json")
        with open(path, "w") as fh:
            json.dump(old, fh)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = gtb_plot.main([path, "--out", os.path.join(tmp, "figs")])
        check(rc == 1, f"a schema-1 file must exit 1, exited {rc}")
        check("no figure" in err.getvalue() and "--gtb_findings_from" in err.getvalue(),
              f"a schema-1 file must say why there is no figure: {err.getvalue()!r}")
        figs = os.path.join(tmp, "figs")
        check(not os.path.isdir(figs) or not os.listdir(figs), "a schema-1 file must write no figure")

    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
