#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Plot a memsig JSON file as a memory signature (Nahum et al., Fig. 3).

usage: plot_memsig.py MEMSIG.json OUT.png

Log-log latency (ns per dependent load) against working-set size for both
chase orders, with the detected levels drawn as shaded plateaus and labelled
with their latency; below it, read/write/copy bandwidth when the file has it.

Needs matplotlib. Debian installs it for /usr/bin/python3 (python3-matplotlib)
while the python3 first on PATH may be a pyenv build without it, so when the
import fails the script runs itself again under /usr/bin/python3.
"""
import json
import os
import sys

try:
    import matplotlib
except ImportError:
    SYSTEM_PY = "/usr/bin/python3"
    if (os.environ.get("MEMSIG_PLOT_REEXEC") is None and os.path.exists(SYSTEM_PY)
            and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PY)):
        os.environ["MEMSIG_PLOT_REEXEC"] = "1"
        os.execv(SYSTEM_PY, [SYSTEM_PY] + sys.argv)
    sys.exit("plot_memsig.py: matplotlib is not installed "
             "(Debian: apt-get install python3-matplotlib)")

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

LEVEL_COLOURS = {"L1": "#4c9f38", "L2": "#2a7ab9", "LLC": "#8e44ad", "DRAM": "#c0392b"}
ORDER_STYLE = {
    "random": dict(color="black", marker="o", linestyle="-", label="random order (TLB misses included)"),
    "page": dict(color="#7f7f7f", marker="s", linestyle="--",
                 label="page order (TLB misses amortised; spatial prefetch may help)"),
}


def fmt_bytes(v, _pos=None):
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if v >= scale:
            x = v / scale
            return f"{x:.0f} {unit}" if abs(x - round(x)) < 1e-9 else f"{x:.3g} {unit}"
    return f"{v:.0f} B"


def fmt_ns(v, _pos=None):
    return f"{v:g}"


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    try:
        with open(argv[1]) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"plot_memsig.py: {argv[1]}: {e}\n")
        return 1

    hz = d["tsc_hz"]
    bw = d.get("bandwidth") or []
    if bw:
        fig, (ax, axb) = plt.subplots(2, 1, figsize=(10, 9),
                                      gridspec_kw={"height_ratios": [3, 1.3]})
    else:
        fig, ax = plt.subplots(figsize=(10, 6.5))
        axb = None

    # Latency curves.
    for order, style in ORDER_STYLE.items():
        pts = sorted((p["bytes"], p["ns_per_load"]) for p in d["points"]
                     if p["order"] == order and p["ns_per_load"] is not None)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], markersize=3.5,
                    linewidth=1.2, **style)

    # Detected levels: the plateau shaded, its latency as a line across it,
    # a short tag on the line and the numbers in a box in the empty lower
    # right corner (under the DRAM plateau), so no label hides the curve.
    levels = d.get("levels") or {}
    summary = []
    for name in ("L1", "L2", "LLC", "DRAM"):
        lv = levels.get(name)
        if not lv:
            reason = (d.get("levels_not_found") or {}).get(name, "")
            summary.append((f"{name}: not found ({reason})", "#555"))
            continue
        c = LEVEL_COLOURS[name]
        lo, hi = lv["from_bytes"], lv["to_bytes"]
        ax.axvspan(lo, hi, color=c, alpha=0.08, linewidth=0)
        ax.axhline(lv["ns"], color=c, linewidth=0.8, linestyle=":", alpha=0.8)
        ax.hlines(lv["ns"], lo, hi, colors=c, linewidth=3, alpha=0.7)
        ax.annotate(name, xy=(lo, lv["ns"]), xytext=(1, -3), textcoords="offset points",
                    fontsize=8, fontweight="bold", color=c, va="top")
        summary.append((f"{name}: {lv['ns']:.3g} ns = {lv['tsc']:.3g} TSC ticks, "
                        f"plateau {fmt_bytes(lo)}..{fmt_bytes(hi)}", c))
    for i, (text, c) in enumerate(reversed(summary)):
        ax.text(0.99, 0.03 + 0.045 * i, text, transform=ax.transAxes, ha="right",
                va="bottom", fontsize=8, color=c)

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(fmt_bytes))
    ax.yaxis.set_major_formatter(FuncFormatter(fmt_ns))
    ax.set_xlabel("working set")
    ax.set_ylabel("latency per dependent load (ns)")
    sec = ax.secondary_yaxis("right", functions=(lambda ns: ns * hz / 1e9,
                                                 lambda t: t * 1e9 / hz))
    sec.set_ylabel("TSC ticks per load")
    sec.yaxis.set_major_formatter(FuncFormatter(fmt_ns))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    pages = "THP requested" if d.get("huge_pages") else "4 KB pages"
    ax.set_title(f"Memory signature: {d.get('cpu') or 'unknown CPU'}\n"
                 f"TSC {hz / 1e9:.3f} GHz ({d.get('tsc_source', '?')}), {pages}; "
                 f"levels from the {(levels.get('L1') or {}).get('order', 'random')} order",
                 fontsize=9)

    if axb is not None:
        ops = {"read": "#1f77b4", "write": "#d62728", "copy": "#2ca02c"}
        for op, c in ops.items():
            pts = sorted((b["bytes"], b["gb_per_s"]) for b in bw if b["op"] == op)
            if pts:
                axb.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=c,
                         label=op)
        axb.set_xscale("log", base=2)
        axb.set_yscale("log")
        axb.xaxis.set_major_formatter(FuncFormatter(fmt_bytes))
        axb.yaxis.set_major_formatter(FuncFormatter(fmt_ns))
        axb.set_xlim(ax.get_xlim())
        axb.set_xlabel("working set (copy: half copied into the other half)")
        axb.set_ylabel("GB/s")
        axb.grid(True, which="major", alpha=0.3)
        axb.legend(fontsize=8, ncol=3)

    fig.tight_layout()
    try:
        fig.savefig(argv[2], dpi=110)
    except OSError as e:
        sys.stderr.write(f"plot_memsig.py: {argv[2]}: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
