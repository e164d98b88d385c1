# SPDX-License-Identifier: BSD-2-Clause
"""Studies 8 and 9: ILP (seed 003, through ilp/model.py, not a copy of it)
and code layout (seed 000 Tables 11-12, through tools/cord)."""
import json
import os
import re
import sys
import tempfile

from . import papers
from .net import SIM_MIN, get_memsig
from .util import NotMeasured, fmt, ratio, results, table

PIPES = ["bswap32+pes+csum", "copy+bswap32+pes+csum"]


def ilp(ctx):
    if not ctx.exe("ilp"):
        raise NotMeasured("cachenet-bench-ilp was not built (the ILP generator needs it)")
    sizes = ["1460"] if ctx.args.quick else ["1460", "65536"]
    states = ["hot", "cold"] if ctx.args.quick else ["hot", "l2", "l3", "cold"]
    forms = "(seq|int)" if ctx.args.quick else "(seq|int|intpf)"
    filt = r"^ilp/(copy\+)?bswap32\+pes\+csum-%s(-scalar)?/(%s)-(%s)(-conflict)?(/|$)" % (
        forms, "|".join(sizes), "|".join(states))
    d = ctx.bench("ilp", ["--benchmark_filter=" + filt] + ctx.timed_args(0.01, 0.02), "table")
    res = results(d)
    tsc_ghz = float(ctx.machine.get("tsc_hz") or 2.6e9) / 1e9
    key = "tsc_per_byte_med"
    md = ["## 8. ILP: sequential vs integrated loops (seed 003, Table II, Fig. 6-12)", "",
          "`seq` = one loop per function, `int` = one integrated loop (AVX-512 where the CPU "
          "has it, `-scalar` = 64-bit registers like the paper's machines); cache state of "
          "the buffers before each op: hot, l2, l3, cold (flushed); `-conflict` places source "
          "and destination at the same cache colour (Fig. 6). Counter `%s` (median timed "
          "stretch; on this shared VM the mean includes lost time slices). ns/B = TSC/B ÷ "
          "%.3f. Paper ns/B, real implementation: HP 9000-735/99 cold %d/%d warm %d/%d "
          "(seq/ILP); SPARCstation 20/71 cold %d/%d warm %d/%d." % (
              key, tsc_ghz, *papers.AHLGREN_T2["HP 9000-735/99"]["real"],
              *papers.AHLGREN_T2["SPARCstation 20/71"]["real"]), ""]
    bars = {}
    for size in sizes:
        rows = []
        for pipe in PIPES:
            for isa in ("", "-scalar"):
                for conf in ("", "-conflict"):
                    r = ["%s%s%s" % (pipe, isa, conf)]
                    for st in states:
                        s = res.get("ilp/%s-seq%s/%s-%s%s" % (pipe, isa, size, st, conf), {}).get(key)
                        i = res.get("ilp/%s-int%s/%s-%s%s" % (pipe, isa, size, st, conf), {}).get(key)
                        r += [s / tsc_ghz if s else None, i / tsc_ghz if i else None, ratio(s, i)]
                        if s and i:
                            ctx.metric("%s%s%s/%s-%s/seq_over_int" % (pipe, isa, conf, size, st), s / i)
                            ctx.metric("%s%s%s/%s-%s/int_tsc_per_byte" % (pipe, isa, conf, size, st), i)
                        if not conf and size == "1460":
                            bars.setdefault("%s%s seq" % (pipe, isa), []).append(s)
                            bars.setdefault("%s%s int" % (pipe, isa), []).append(i)
                    rows.append(r)
        hdr = ["pipeline"]
        for st in states:
            hdr += ["%s seq ns/B" % st, "%s int ns/B" % st, "seq ÷ int"]
        md += ["**%s-byte messages**:" % size, "", table(hdr, rows), ""]
    md += ["Paper's seq ÷ ILP: HP cold %.2f, warm %.2f; SPARCstation 20/71 cold %.2f, warm %.2f." % (
        95 / 49, 54 / 37, 78 / 39, 54 / 32), ""]
    md += [ctx.figure("fig-ilp", "bswap/PES/cksum, 1460 B: sequential vs integrated (TSC/B)",
                      "cache state before each op", "TSC ticks per byte",
                      [{"label": k, "x": states, "y": v} for k, v in bars.items()],
                      xlog=False, kind="bar", xticks=states), ""]
    # register knee: the state sweep (hot, 1460 B)
    if not ctx.args.quick:
        sw = results(ctx.bench("ilp", [r"--benchmark_filter=^ilp/syn\.n[0-9]\.s[0-9]+\.a10-(seq|int)(-scalar)?/1460-hot$"]
                               + ctx.timed_args(0.01, 0.02), "sweep"))
        ser = {}
        for name, b in sw.items():
            m = re.match(r"ilp/syn\.n(\d+)\.s(\d+)\.a10-(seq|int)(-scalar)?/", name)
            if m and b.get(key):
                lab = "n=%s %s%s" % (m.group(1), m.group(3), m.group(4) or "")
                ser.setdefault(lab, []).append((int(m.group(2)), b[key]))
        if ser:
            md += ["**The register knee** (Sec. V-VI, Fig. 10-12): synthetic functions (a = 10 "
                   "instructions) with s state words each, hot, 1460 B; the integrated loop "
                   "spills once the functions' state exceeds the registers (R is probed by "
                   "`ilp/model.py` below).", "",
                   ctx.figure("fig-ilp-knee", "Synthetic functions: TSC/B vs state words per function",
                              "state words per function (s)", "TSC ticks per byte",
                              [{"label": k, "x": [a for a, _ in sorted(v)], "y": [b for _, b in sorted(v)]}
                               for k, v in sorted(ser.items())], xlog=False), ""]
    # the model (ilp/model.py), fed with memsig, the timed table and callgrind counts
    model = ctx.paths.get("ilp_model")
    if ctx.args.no_sim or ctx.args.quick:
        md += ["Model vs measurement: not run (%s; the model needs callgrind's counts of the "
               "synthetic sweep, minutes under valgrind)." % ("--no-sim" if ctx.args.no_sim else "--quick"), ""]
    elif not model or not os.path.exists(model):
        md += ["Model vs measurement: not run (ilp/model.py not found).", ""]
    else:
        ms = get_memsig(ctx)
        sim = ctx.bench("ilp", [r"--benchmark_filter=^ilp/((copy\+)?(bswap32\+pes\+csum|syn\.n3\.s0_1_1[^-]*)|syn\.n[13]\.s[0-9]+\.a10)-(seq|int)(-scalar)?/1460-hot$"]
                        + SIM_MIN, "model-sim", sim="")
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for n, obj in (("memsig", ms), ("table", d), ("sim", sim)):
                paths[n] = os.path.join(tmp, n + ".json")
                with open(paths[n], "w") as f:
                    json.dump(obj, f)
            try:
                out = ctx.run([sys.executable, model, "--memsig", paths["memsig"], "--bench",
                               paths["table"], "--sim", paths["sim"]])
                ctx.commands.append((ctx.section, "python3 ilp/model.py --memsig memsig.json "
                                     "--bench <ilp-table> --sim <ilp-model-sim>", False))
                md += ["**Model (equations (1)-(3)) vs measurement**, `ilp/model.py` on this run's "
                       "memsig, timed table and callgrind counts (parameters measured here, see "
                       "ilp/README.md):", "", "```", out.strip(), "```", ""]
                m = re.search(r"(\d+) of (\d+) within 20%", out)
                if m:
                    ctx.metric("model_within_20pct", int(m.group(1)) / int(m.group(2)))
            except RuntimeError as e:
                md += ["Model vs measurement: FAILED: %s" % e, ""]
    return "\n".join(md)


def layout(ctx):
    test = ctx.paths.get("cord_test")
    if not test or not os.path.exists(test):
        raise NotMeasured("the CORD demonstration program (tests/cord) is only in the source tree")
    if ctx.args.no_sim:
        raise NotMeasured("--no-sim was given (the I-cache figures are simulated)")
    cord = ctx.paths["cord"]
    cmd = [sys.executable, test, ctx.paths["source"], "icache"]

    def produce(path):
        out = ctx.run(cmd, timeout=900)
        with open(path, "w") as f:
            json.dump({"stdout": out}, f)
        return {"stdout": out}
    r = ctx.cached_run("cord-icache", cmd, [test, cord], produce)
    out = r["stdout"]
    lines = out.splitlines()
    rows, hdr, series = [], None, []
    for i, l in enumerate(lines):
        if l.startswith("I1 geometry"):
            hdr = l.split()[2:]
            for l2 in lines[i + 1:]:
                parts = l2.split()
                if not parts or not re.match(r"^\d+,\d+,\d+$", parts[0]):
                    break
                nums = [int(x) for x in parts[1:1 + len(hdr)]]
                size, assoc, _ = parts[0].split(",")
                rows.append(["%d KB %s-way" % (int(size) // 1024, assoc)] + nums +
                            ["%+.1f%%" % (100.0 * (n - nums[0]) / nums[0]) if nums[0] else "—" for n in nums[1:]])
                ctx.metric("cordtest/%s/%s" % (parts[0], "c3_over_base"), ratio(nums[1], nums[0]) if len(nums) > 1 else None)
    ins = re.search(r"instructions: \[(\d+)\]", out)
    span = [l.strip() for l in lines if l.startswith(("before", "after"))][:2]
    md = ["## 9. Code layout before and after CORD (seed 000, Tables 11-12)", "",
          "**On the CORD test program, not yet on the fast path.** `tests/cord/prog`: 19 hot "
          "functions (~12 KB) each between ~12 KB of cold code, 2000 \"packets\"; profiled "
          "with callgrind, ordered by `cachenet-cord` (C3, Pettis-Hansen, hotness), relinked "
          "with GNU ld, verified, and run under callgrind's cache simulator: **simulated** I1 "
          "misses (D1 32 KB 8-way, LL 8 MB 16-way).", "",
          table(["I1 geometry"] + (hdr or []) + ["%s vs base" % h for h in (hdr or [])[1:]], rows), "",
          "Instructions per run, identical in every layout: %s. Hot code: %s." % (
              fmt(int(ins.group(1))) if ins else "?", "; ".join(span) or "?"), "",
          "Paper (Table 12, CORDed x-kernel, 16 KB direct-mapped): TCP send cksum off I/D/L2 "
          "%.1f%% / %.1f%% / %.1f%%; Table 11: CORD cut latency by 2-40%% (UDP send cksum off "
          "20.92 → 12.53 µs)." % tuple(100 * x for x in papers.NAHUM_T12["TCP Send Cksum Off"]), "",
          "The fast path's own before/after (relink libcachenet and cachenet-bench-tcp with "
          "`meson configure BUILD -Dlink_order=hot.ld` after `cachenet-cord record/order/emit` "
          "on `cachenet-bench-tcp`) needs a second build directory and is not run by the "
          "report yet: **not measured**.", ""]
    if rows and hdr:
        md += [ctx.figure("fig-cord", "CORD test program: simulated I1 misses by layout",
                          "I1 geometry", "I1 misses per run",
                          [{"label": h, "x": [r[0] for r in rows], "y": [r[1 + j] for r in rows]}
                           for j, h in enumerate(hdr)], xlog=False, ylog=True, kind="bar",
                          xticks=[r[0] for r in rows]), ""]
    return "\n".join(md)
