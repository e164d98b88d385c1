#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cachenet-report: run cachenet's studies and benchmarks on this machine and
write one Markdown report (tables, PNG plots) into --out DIR.

Sections (--only NAME, repeatable):
  memsig   the memory signature (seed 000 Fig. 3/4): latency vs working set,
           the L1/L2/LLC/DRAM table every other study uses
  memory   glibc memcpy and a load loop, hot vs flushed caches, 64 B..64 MB,
           timed (TSC ticks) and simulated (callgrind: instructions, misses)
  bench    every other cachenet-bench-* program found: one table per family,
           implementations side by side

Standard library only; the PNG plots use matplotlib when it is importable
(Debian python3-matplotlib), else the report says they were skipped.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys

VERSION = "@VERSION@"
INSTALLED_LIBEXEC = "@LIBEXECDIR@"
SOURCE_ROOT = "@SOURCE_ROOT@"
DATADIR = "@DATADIR@"

SECTIONS = ("memsig", "memory", "bench")


class SectionFailed(Exception):
    """A section that produced part of its output before something failed."""

    def __init__(self, partial, why):
        super().__init__(why)
        self.partial = partial


def locate():
    """Paths of memsig, the benchmark programs and the plot script, from the
    build tree when this script runs from one, else from the install."""
    here = os.path.dirname(os.path.realpath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    if os.path.exists(os.path.join(root, "build.ninja")):
        return {
            "memsig": os.path.join(root, "tools", "memsig", "memsig"),
            "bench": os.path.join(root, "bench"),
            "plot": os.path.join(SOURCE_ROOT, "tools", "memsig", "plot_memsig.py"),
        }
    return {
        "memsig": os.path.join(here, "memsig"),
        "bench": INSTALLED_LIBEXEC,
        "plot": os.path.join(DATADIR, "plot_memsig.py"),
    }


def run(cmd, log, timeout=1800):
    """Run cmd, echo it, keep its stderr in the log; raise on failure."""
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    log.write("$ " + " ".join(cmd) + "\n" + p.stderr + "\n")
    if p.returncode != 0:
        raise RuntimeError("%s exited with %d:\n%s" % (cmd[0], p.returncode, p.stderr[-2000:]))
    return p.stdout


def fmt(x, digits=3):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return "{:,.0f}".format(x)
    return "{:.{d}g}".format(x, d=digits)


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(c) for c in r) + " |")
    return "\n".join(out)


def human_bytes(n):
    n = int(n)
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= div:
            return "%d %s" % (n // div, unit) if n % div == 0 else "%.3g %s" % (n / div, unit)
    return "%d B" % n


def pinned(cmd, cpu):
    if cpu is not None and shutil.which("taskset"):
        return ["taskset", "-c", str(cpu)] + cmd
    return cmd


# --------------------------------------------------------------- memsig

def section_memsig(args, paths, log, out):
    if not os.path.exists(paths["memsig"]):
        return "## Memory signature\n\nSkipped: %s was not built.\n" % paths["memsig"]
    js = os.path.join(args.out, "memsig.json")
    cmd = [paths["memsig"], "--json", js] + (["--quick"] if args.quick else [])
    text = run(pinned(cmd, args.cpu), log)
    with open(js) as f:
        d = json.load(f)
    md = ["## Memory signature (seed 000, Fig. 3/4)", "",
          "Dependent loads in a random cyclic order (one per cache line), so no "
          "prefetcher can help; `page` order visits every line of a 4 KB page "
          "before the next page (TLB misses amortised), `random` crosses pages "
          "on every load. TSC at %.3f GHz (%s); core cycles are not measured "
          "(no PMU is assumed)." % (d["tsc_hz"] / 1e9, d.get("tsc_source", "?")), ""]
    rows = []
    for name in ("L1", "L2", "LLC", "DRAM"):
        lv = d.get("levels", {}).get(name)
        if not lv:
            rows.append([name, "not found", None, None])
            continue
        span = "%s .. %s" % (human_bytes(lv["from_bytes"]), human_bytes(lv["to_bytes"])) \
            if lv.get("from_bytes") is not None and lv.get("to_bytes") is not None else "—"
        rows.append([name, span, lv["tsc"], lv["ns"]])
    md += [table(["level", "plateau (working set)", "TSC ticks/load", "ns/load"], rows), ""]
    bw = d.get("bandwidth", [])
    if bw:
        sizes = sorted({b["bytes"] for b in bw})
        ops = ["read", "write", "copy"]
        rows = []
        for s in sizes:
            r = [human_bytes(s)]
            for op in ops:
                v = [b for b in bw if b["bytes"] == s and b["op"] == op]
                r.append(v[0]["gb_per_s"] if v else None)
            rows.append(r)
        md += ["Bandwidth (GB/s):", "", table(["working set"] + ops, rows), ""]
    png = os.path.join(args.out, "memsig.png")
    note = plot(paths["plot"], js, png, log)
    md += [note, ""]
    return "\n".join(md)


def plot(script, js, png, log):
    """Run the plot script with a Python that has matplotlib."""
    if not os.path.exists(script):
        return "(plot skipped: %s not found)" % script
    for py in (sys.executable, "/usr/bin/python3"):
        if not os.path.exists(py):
            continue
        p = subprocess.run([py, "-c", "import matplotlib"], capture_output=True)
        if p.returncode == 0:
            try:
                run([py, script, js, png], log)
                return "![memory signature](%s)" % os.path.basename(png)
            except RuntimeError as e:
                return "(plot failed: %s)" % str(e).splitlines()[0]
    return "(plot skipped: matplotlib not importable; install python3-matplotlib)"


# --------------------------------------------------------------- benchmarks

def run_bench(exe, args, log, extra, tag):
    """Run one benchmark program; return its parsed JSON."""
    outjs = os.path.join(args.out, "%s-%s.json" % (os.path.basename(exe), tag))
    cmd = [exe, "--benchmark_format=json", "--benchmark_out=" + outjs,
           "--benchmark_out_format=json"] + extra
    run(pinned(cmd, args.cpu), log, timeout=5400)
    with open(outjs) as f:
        return json.load(f)


def bench_extra(args):
    if args.quick:
        return ["--benchmark_min_time=0.02"]
    return ["--benchmark_min_time=0.1", "--benchmark_repetitions=3",
            "--benchmark_report_aggregates_only=true"]


def results(d):
    """name → benchmark entry; medians where repetitions were run."""
    res = {}
    for b in d.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
            res[b["run_name"]] = b
        else:
            res.setdefault(b.get("run_name", b["name"]), b)
    return res


def split(name):
    fam, impl, case = name.split("/", 2)
    return fam, impl, case


def case_key(c):
    head = c.split("+")[0].split("-")[0]
    try:
        return (0, int(head), c)
    except ValueError:
        return (1, 0, c)


def section_memory(args, paths, log, out):
    exe = os.path.join(paths["bench"], "cachenet-bench-memory")
    if not os.path.exists(exe):
        return "## Memory: memcpy and loads\n\nSkipped: %s not built.\n" % exe
    d = run_bench(exe, args, log, bench_extra(args), "timed")
    ctx = d.get("context", {})
    res = results(d)
    md = ["## Memory: glibc memcpy and a load loop, hot vs flushed", "",
          "Counters: %s." % ctx.get("cn_counters", "?"),
          "TSC ticks per byte (lower is better); *flushed* = source and destination "
          "flushed from every cache level before each iteration (untimed).", ""]
    sizes = sorted({int(split(n)[2]) for n in res})
    cols = [("memcpy-hot", "glibc"), ("memcpy-flushed", "glibc"),
            ("load-hot", "c"), ("load-flushed", "c")]
    rows = []
    for s in sizes:
        r = [human_bytes(s)]
        for fam, impl in cols:
            b = res.get("%s/%s/%d" % (fam, impl, s))
            r.append(b.get("tsc_per_byte") if b else None)
        rows.append(r)
    md += [table(["size"] + ["%s/%s" % c for c in cols], rows), ""]

    # Simulated misses: exact counts for a few sizes.
    if not args.no_sim and shutil.which("valgrind"):
        sim_sizes = [4096, 1 << 20] if args.quick else [4096, 65536, 1 << 20, 16 << 20]
        filt = "^(memcpy|load)-(hot|flushed)/[^/]+/(%s)$" % "|".join(map(str, sim_sizes))
        ds = run_bench(exe, args, log, ["--cn_sim", "--benchmark_filter=" + filt,
                                        "--benchmark_min_time=0.01"], "sim")
        rs = results(ds)
        md += ["%s; counts per op. A flushed range is evicted from the simulated "
               "caches (callgrind ignores CLFLUSH). Under valgrind glibc's memcpy "
               "runs as `rep movsb`, which callgrind counts as one instruction and "
               "one read and write per byte." %
               ds.get("context", {}).get("cn_counters", "?").split(";")[0].capitalize(), ""]
        rows = []
        for name in sorted(rs, key=lambda n: (int(split(n)[2]), n)):
            b = rs[name]
            rows.append([name, b.get("instructions"), b.get("sim_dr"), b.get("sim_dw"),
                         b.get("sim_d1mr"), b.get("sim_d1mw"), b.get("sim_llmr"),
                         b.get("sim_llmw")])
        md += [table(["benchmark", "instructions", "data reads", "data writes",
                      "D1 read miss", "D1 write miss", "LL read miss", "LL write miss"],
                     rows), ""]
    elif not args.no_sim:
        md += ["Simulation skipped: valgrind not installed.", ""]
    return "\n".join(md)


def section_bench(args, paths, log, out):
    exes = sorted(glob.glob(os.path.join(paths["bench"], "cachenet-bench-*")))
    exes = [e for e in exes if os.access(e, os.X_OK) and not e.endswith("-memory")
            and os.path.isfile(e)]
    if not exes:
        return ""
    md = ["## Kernels and peers", ""]
    failed = []
    for exe in exes:
        try:
            d = run_bench(exe, args, log, bench_extra(args), "timed")
        except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
            failed.append(os.path.basename(exe))
            md += ["### %s" % os.path.basename(exe), "", "FAILED: %s" % e, ""]
            continue
        res = results(d)
        fams = {}
        for name, b in res.items():
            try:
                fam, impl, case = split(name)
            except ValueError:
                continue
            fams.setdefault(fam, {}).setdefault(case, {})[impl] = b
        md += ["### %s" % os.path.basename(exe), ""]
        for fam in sorted(fams):
            impls = sorted({i for c in fams[fam].values() for i in c},
                           key=lambda i: (not i.startswith("cachenet"), i))
            metric = "tsc_per_byte"
            if not any(metric in b for c in fams[fam].values() for b in c.values()):
                metric = "tsc_per_op"
            # Peers beside ours: "peer / cachenet" > 1 means cachenet is faster.
            ours = "cachenet" if "cachenet" in impls else None
            peers = [i for i in impls if ours and not i.startswith("cachenet")]
            rows = []
            for case in sorted(fams[fam], key=case_key):
                row = fams[fam][case]
                vals = [row.get(i, {}).get(metric) for i in impls]
                ratios = []
                for p in peers:
                    a, b = row.get(p, {}).get(metric), row.get(ours, {}).get(metric)
                    ratios.append(a / b if a and b else None)
                rows.append([case] + vals + ratios)
            md += ["**%s** — %s (TSC ticks; lower is better)" % (fam, metric), "",
                   table(["case"] + impls + ["%s ÷ cachenet" % p for p in peers], rows), ""]
    if failed:
        # The other programs' tables stand; the section still counts as failed.
        raise SectionFailed("\n".join(md), "benchmark programs failed: " + ", ".join(failed))
    return "\n".join(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="shorter runs: fewer sizes simulated, no repetitions (~1-2 min)")
    ap.add_argument("--out", default="cachenet-report",
                    help="directory for report.md, JSON and PNG (default ./cachenet-report)")
    ap.add_argument("--only", action="append", choices=SECTIONS,
                    help="run only this section (repeatable)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="pin every run to this CPU with taskset (default: the last CPU)")
    ap.add_argument("--no-sim", action="store_true", help="skip the callgrind simulations")
    ap.add_argument("--version", action="version", version="cachenet-report " + VERSION)
    args = ap.parse_args()
    if args.cpu is None:
        args.cpu = (os.cpu_count() or 1) - 1
    os.makedirs(args.out, exist_ok=True)
    paths = locate()
    wanted = args.only or list(SECTIONS)

    head = ["# cachenet report", "",
            "cachenet %s, %s, %s, %d CPUs; runs pinned to CPU %d. %s." % (
                VERSION, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                platform.machine(), os.cpu_count() or 0, args.cpu,
                "quick mode" if args.quick else "full mode"), ""]
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
        head[-1:-1] = ["CPU: %s." % model]
    except OSError:
        pass
    parts = [ "\n".join(head) ]
    failed = []
    with open(os.path.join(args.out, "report.log"), "w") as log:
        for name, fn in (("memsig", section_memsig), ("memory", section_memory),
                         ("bench", section_bench)):
            if name not in wanted:
                continue
            try:
                parts.append(fn(args, paths, log, args.out))
            except SectionFailed as e:
                failed.append(name)
                parts.append(e.partial + "\n\nFAILED: %s\n" % e)
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
                failed.append(name)
                parts.append("## %s\n\nFAILED: %s\n" % (name, e))
    report = "\n\n".join(p for p in parts if p) + "\n"
    path = os.path.join(args.out, "report.md")
    with open(path, "w") as f:
        f.write(report)
    print(report)
    print("report written to %s" % path, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
