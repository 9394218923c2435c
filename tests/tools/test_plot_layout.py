#!/usr/bin/env python3
"""Checks that no legend of a gtb figure covers a bar or a plotted point of its own axes.

usage: test_plot_layout.py RESULTS.json [--plant]
  exit 0: every legend clear, 1: an overlap (named), or nothing was checked (no figure drawn, or no
  legend with a bar or point beside it)
  --plant: every legend is first moved onto a plotted point, which the check must then report
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
from matplotlib.transforms import Bbox  # noqa: E402


def overlaps(a, b):
    """Boxes that share area, or a point (a zero-size box) inside or on the edge of the other box."""
    return a.x0 <= b.x1 and b.x0 <= a.x1 and a.y0 <= b.y1 and b.y0 <= a.y1


def all_tall(doc):
    """The same file with every vectorize bar as tall as the tallest: the worst case for a legend
    drawn inside the axes, wherever it is placed."""
    out = copy.deepcopy(doc)
    vec = [r for r in out["records"] if r.get("family") == "vectorize" and gtb_plot.is_num(r.get("value"))]
    top = max((r["value"] for r in vec), default=None)
    for r in vec:
        r["value"] = top
    return out


def fail_if_empty(count, what, problems):
    """A loop over no figure or no legend checks nothing: that is a failure, never a pass."""
    if count == 0:
        problems.append(f"nothing checked: {what}")


def main(path, plant=False):
    loaded = gtb_plot.load(path)
    problems, legends = [], 0
    for doc in (loaded, all_tall(loaded)):
        legends += check(doc, problems, plant)
    fail_if_empty(legends, "no legend had a bar or a point beside it in its axes", problems)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s); {legends} legend(s) checked against their axes' bars and points")
    return 1 if problems else 0


def data_boxes(ax, renderer):
    """Display boxes of the bars and the marked points of one axes."""
    boxes = []
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_height() > 0:
            boxes.append(("bar", patch.get_window_extent(renderer)))
    for line in ax.get_lines():
        if line.get_marker() in (None, "None", "", " ") or len(line.get_xydata()) == 0:
            continue
        for x, y in line.get_transform().transform(line.get_xydata()):
            boxes.append(("plotted point", Bbox.from_extents(x, y, x, y)))
    return boxes


def plant_legends_on_points(fig):
    """The planted defect: each legend centred on its axes' first marked point."""
    for ax in fig.axes:
        if ax.get_legend() is None:
            continue
        pts = [line.get_xydata()[0] for line in ax.get_lines()
               if line.get_marker() not in (None, "None", "", " ") and len(line.get_xydata())]
        if pts:
            at = ax.transAxes.inverted().transform(ax.transData.transform(pts[0]))
            ax.legend(fontsize=6, loc="center", bbox_to_anchor=(float(at[0]), float(at[1])))


def check(doc, problems, plant):
    drawn = legends = 0
    for name, family, section, spec in gtb_plot.family_figures(doc) + [("speedup_heatmap", None, None, None)]:
        try:
            if name == "speedup_heatmap":
                fig, title = gtb_plot.fig_speedup_heatmap(plt, doc)
                notes = []
            elif spec is None:
                continue
            else:
                fig, title, notes = gtb_plot.draw_figure(plt, doc, family, section, spec)
        except gtb_plot.Skip:
            continue
        gtb_plot.lay_out(fig, doc, title, family, notes)  # as gtb plot lays it out before writing the file
        if plant:
            plant_legends_on_points(fig)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            leg = ax.get_legend()
            boxes = data_boxes(ax, renderer) if leg is not None else []
            if not boxes:
                continue
            legends += 1
            box = leg.get_window_extent(renderer)
            hit = next((what for what, b in boxes if overlaps(box, b)), None)
            if hit:
                problems.append(f"{name}: the legend covers a {hit}")
        drawn += 1
        plt.close(fig)
    fail_if_empty(drawn, "no figure could be drawn", problems)
    return legends


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 2) or (len(args) == 2 and args[1] != "--plant"):
        sys.exit("usage: test_plot_layout.py RESULTS.json [--plant]")
    sys.exit(main(args[0], plant=len(args) == 2))
