#!/usr/bin/env python3
"""Checks that no legend of a gtb figure covers a bar or a plotted point of its own axes.

usage: test_plot_layout.py RESULTS.json   (exit 0: every figure clear, 1: an overlap, named)
"""
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots"))
import gtb_plot  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402


def overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def all_tall(doc):
    """The same file with every vectorize bar as tall as the tallest: the worst case for a legend
    drawn inside the axes, wherever it is placed."""
    out = copy.deepcopy(doc)
    vec = [r for r in out["records"] if r.get("family") == "vectorize" and gtb_plot.is_num(r.get("value"))]
    top = max((r["value"] for r in vec), default=None)
    for r in vec:
        r["value"] = top
    return out


def main(path):
    loaded = gtb_plot.load(path)
    problems, checked = [], 0
    for doc in (loaded, all_tall(loaded)):
        check(doc, problems)
        checked += 1
    if not problems and checked == 0:
        return 1
    for p in problems:
        print(p)
    print(f"{len(problems)} figures with a legend over a bar")
    return 1 if problems else 0


def check(doc, problems):
    checked = 0
    for name, family, section, spec in gtb_plot.family_figures(doc) + [("speedup_heatmap", None, None, None)]:
        try:
            if name == "speedup_heatmap":
                fig, _ = gtb_plot.fig_speedup_heatmap(plt, doc)
            elif spec is None:
                continue
            else:
                fig, _ = gtb_plot.draw_figure(plt, doc, family, section, spec)
        except gtb_plot.Skip:
            continue
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is None:
                continue
            box = leg.get_window_extent(renderer)
            for patch in ax.patches:
                if isinstance(patch, Rectangle) and patch.get_height() > 0 and overlaps(box, patch.get_window_extent(renderer)):
                    problems.append(f"{name}: the legend covers a bar")
                    break
        checked += 1
        plt.close(fig)
    if checked == 0:
        problems.append("no figure could be drawn")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
