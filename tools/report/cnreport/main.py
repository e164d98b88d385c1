# SPDX-License-Identifier: BSD-2-Clause
"""cachenet-report's driver: options, the eleven sections in order, report.md
and report.json, the progress lines."""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

from . import caches, compare, devices, ilplayout, machine, memkern, net, tap
from .util import Ctx, NotMeasured, render

# name, title, function
SECTIONS = [
    ("memsig", "1. Memory signature", memkern.memsig),
    ("kernels", "2. Kernels", memkern.kernels),
    ("buffers", "3. Buffers", memkern.buffers),
    ("payload", "4. Per-payload characterization", net.payload),
    ("caches", "5. Hot, cold and idealized caches", caches.caches),
    ("sensitivity", "6. Cache size and associativity", net.sensitivity),
    ("dca", "7. DCA", net.dca),
    ("ilp", "8. ILP", ilplayout.ilp),
    ("layout", "9. Code layout", ilplayout.layout),
    ("tap", "10. A real peer (TAP)", tap.tap),
    ("devices", "11. Devices (TAP, AF_XDP, DPDK)", devices.devices),
]
NAMES = [s[0] for s in SECTIONS]
ALIASES = {"memory": "kernels", "bench": "kernels"}   # the old section names


# The report's on/off switches and what each does.
SWITCHES = (
    ("--quick", "fewer sizes and configurations, no repetitions (about 2 min on 2 cores; "
     "the default run about 8)"),
    ("--no-sim", "skip the callgrind simulations (miss tables then say so)"),
    ("--fresh", "measure everything again instead of reusing DIR/runs"),
)


def parse(argv, cfg):
    ap = argparse.ArgumentParser(
        prog="cachenet-report", description=cfg["doc"],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="cachenet-report",
                    help="directory for report.md, report.json, figure JSON and PNG "
                         "(default ./cachenet-report); measurements are cached in DIR/runs")
    ap.add_argument("--only", action="append", metavar="SECTION",
                    help="run only these sections (repeatable or comma-separated): "
                         + ",".join(NAMES))
    ap.add_argument("--cpu", type=int, default=None,
                    help="pin every run to this CPU with taskset (default: the last CPU)")
    for name, text in SWITCHES:
        ap.add_argument(name, action="store_true", help=text)
    ap.add_argument("--filter", default=None, metavar="REGEX",
                    help="kernels: replace the benchmark filter (tests use it)")
    ap.add_argument("--version", action="version", version="cachenet-report " + cfg["version"])
    args = ap.parse_args(argv)
    wanted = []
    for o in args.only or []:
        for n in o.split(","):
            n = ALIASES.get(n.strip(), n.strip())
            if n not in NAMES:
                ap.error("unknown section %r (sections: %s)" % (n, ", ".join(NAMES)))
            if n not in wanted:
                wanted.append(n)
    args.wanted = wanted or list(NAMES)
    return args


def main(argv, cfg):
    if argv and argv[0] == "compare":
        return compare.main(argv[1:])
    args = parse(argv, cfg)
    if args.cpu is None:
        args.cpu = (os.cpu_count() or 1) - 1
    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()
    status = {}
    with open(os.path.join(args.out, "report.log"), "w") as log:
        ctx = Ctx(args, cfg["paths"], log)
        ctx.memsig = None
        ctx.section = "machine"
        print("cachenet-report: machine description", file=sys.stderr, flush=True)
        # memsig first when asked for: the machine table and studies 5 and 8 use it
        parts = []
        bodies = {}
        order = [s for s in SECTIONS if s[0] in args.wanted]
        ctx.machine = {}
        mach_md, ctx.machine = machine.describe(ctx)
        total = len(order)
        for k, (name, title, fn) in enumerate(order, 1):
            ctx.section = name
            t0 = time.time()
            print("cachenet-report: [%d/%d] %s ..." % (k, total, title), file=sys.stderr, flush=True)
            try:
                bodies[name] = fn(ctx)
                st = "ok"
            except NotMeasured as e:
                bodies[name] = "## %s\n\nNot measured: %s.\n" % (title, e)
                st = "not measured: %s" % e
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
                bodies[name] = "## %s\n\nFAILED: %s\n" % (title, e)
                st = "FAILED: %s" % e
            dt = time.time() - t0
            status[name] = {"status": st, "seconds": round(dt, 1)}
            print("cachenet-report: [%d/%d] %s: %s (%.0f s)" % (k, total, title, st.split(":")[0], dt),
                  file=sys.stderr, flush=True)
        ctx.section = "plots"
        print("cachenet-report: rendering %d plots" % len(ctx.figures), file=sys.stderr, flush=True)
        plot_note = render(ctx)

    elapsed = time.time() - t_start
    head = ["# cachenet report", "",
            "cachenet %s, %s; %s mode; runs pinned to CPU %d; %d measurements taken, %d reused "
            "from `%s/runs` (`--fresh` measures again); %.0f s." % (
                cfg["version"], datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                "quick" if args.quick else "full", args.cpu, ctx.measured, ctx.reused,
                args.out, elapsed), "",
            "Units: **TSC ticks** (the invariant time-stamp counter, not core cycles; the "
            "machine table gives the measured core clock). Cache-miss counts are **simulated** "
            "by callgrind unless the machine table says hardware counters are available.", ""]
    if plot_note:
        head += [plot_note, ""]
    summary = [[title, status[name]["status"], status[name]["seconds"]]
               for name, title, _ in SECTIONS if name in status]
    head += ["| section | status | seconds |", "|---|---|---|"] + \
        ["| %s | %s | %s |" % tuple(str(c) for c in r) for r in summary] + [""]
    parts = ["\n".join(head), mach_md]
    parts += [bodies[n] for n, _, _ in SECTIONS if n in bodies]
    cmds = ["## Commands", "", "Every measurement above, as run (`=` reused from the cache):", "", "```"]
    cmds += ["%s %s   # %s" % ("=" if reused else "$", c, sec) for sec, c, reused in ctx.commands]
    cmds += ["```", ""]
    parts.append("\n".join(cmds))
    report = "\n\n".join(p for p in parts if p) + "\n"
    path = os.path.join(args.out, "report.md")
    with open(path, "w") as f:
        f.write(report)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump({"version": cfg["version"], "date": datetime.datetime.now().isoformat(),
                   "quick": args.quick, "host": platform.node(), "machine": ctx.machine,
                   "sections": status, "seconds": round(elapsed, 1),
                   "figures": [os.path.basename(p) for p in ctx.figures],
                   "metrics": ctx.metrics,
                   "commands": [{"section": s, "command": c, "reused": r} for s, c, r in ctx.commands]},
                  f, indent=1, sort_keys=True)
    print(report)
    print("cachenet-report: %s written (%.0f s)" % (path, elapsed), file=sys.stderr)
    return 1 if any(v["status"].startswith("FAILED") for v in status.values()) else 0
