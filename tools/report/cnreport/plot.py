#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Render cachenet-report figure JSON files to PNG (FILE.json → FILE.png).

A figure: {title, xlabel, ylabel, xlog, ylog, kind: line|bar, series:
[{label, x, y, style?}], note?, xticks?}. Bars are grouped by x index, one
colour per series. Needs matplotlib (Debian python3-matplotlib)."""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def human(n):
    n = float(n)
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            v = n / div
            return ("%d%s" % (v, unit)) if v == int(v) else ("%.3g%s" % (v, unit))
    return "%d" % n


def draw(spec, png):
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    series = [s for s in spec["series"] if s.get("x")]
    if spec.get("kind") == "bar":
        n = max(1, len(series))
        width = 0.8 / n
        for i, s in enumerate(series):
            xs = [j + (i - (n - 1) / 2) * width for j in range(len(s["y"]))]
            ax.bar(xs, [v if v is not None else 0 for v in s["y"]], width, label=s["label"])
        ticks = spec.get("xticks") or (series[0]["x"] if series else [])
        ax.set_xticks(range(len(ticks)))
        ax.set_xticklabels([str(t) for t in ticks], rotation=20 if len(ticks) > 6 else 0)
    else:
        for s in series:
            pts = [(x, y) for x, y in zip(s["x"], s["y"]) if y is not None]
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], s.get("style", "o-"),
                    label=s["label"], markersize=3.5, linewidth=1.3)
        if spec.get("xlog"):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: human(v)))
    if spec.get("ylog"):
        ax.set_yscale("log")
    ax.set_title(spec["title"], fontsize=11)
    ax.set_xlabel(spec["xlabel"])
    ax.set_ylabel(spec["ylabel"])
    ax.grid(True, which="major", alpha=0.35)
    if len(series) > 1 or spec.get("kind") == "bar":
        ax.legend(fontsize=7.5, ncol=2 if len(series) > 6 else 1)
    if spec.get("note"):
        fig.text(0.01, 0.01, spec["note"], fontsize=7, alpha=0.8)
    fig.tight_layout(rect=(0, 0.03 if spec.get("note") else 0, 1, 1))
    fig.savefig(png)
    plt.close(fig)


def main(paths):
    bad = 0
    for js in paths:
        with open(js) as f:
            spec = json.load(f)
        try:
            draw(spec, js[:-5] + ".png")
        except Exception as e:  # one bad figure must not lose the others
            print("plot %s: %s" % (js, e), file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
