#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The report prints only machine facts measured on the machine it runs on.

Runs the report's own formatting (the machine table, and the memory
signature, kernels and ILP sections in --quick mode) on a made-up machine
description and made-up measurements: a CPU, TSC rate, core clock and
caches that no real machine has. Every fact printed must follow them (the
TSC rate in the kernels section, ns per byte in the ILP section, the clock
cross-check), no other clock rate may appear, and no text may name an issue
number, a "seed", or a CPU generation the description does not. The
sections' programs are not run: the context hands them the made-up
measurements where they would run a benchmark.
"""
import ast
import glob
import os
import re
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "..", "tools", "report")
sys.path.insert(0, REPORT)

from cnreport import devices, ilplayout, machine, memkern, targets  # noqa: E402
from cnreport.util import Ctx  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


# A machine no one has: every figure below must come back from here.
FAKE = {
    "cpu": "Imaginary Q-7 Test Processor", "arch": "x86_64", "cpus": 3,
    "cn_caches": "L1d 40 KB 10-way 64 B; L1i 24 KB 6-way; L2 1280 KB 20-way; LLC 7 MB 14-way",
    "tsc_hz": 3.137e9, "cn_tsc_source": "made-up calibration",
    "core_ghz": 4.811, "core_clock_how": "measured: made up for this test",
    "cn_counters": "hardware counters unavailable: made up", "counters_hw": False,
    "cn_cpu_features": "sse2 avx2", "load_avg": [0.5, 0.25, 0.125],
}
# memsig's L1 plateau: 1.0393 ns = 5.00 core cycles at 4.811 GHz
MEMSIG = {
    "tsc_hz": FAKE["tsc_hz"], "tsc_source": "made-up calibration",
    "levels": {"L1": {"ns": 1.0393, "tsc": 3.2603, "from_bytes": 1024, "to_bytes": 40960},
               "L2": {"ns": 3.9, "tsc": 12.2, "from_bytes": 65536, "to_bytes": 1 << 20},
               "LLC": {"ns": 11.0, "tsc": 34.5, "from_bytes": 2 << 20, "to_bytes": 6 << 20},
               "DRAM": {"ns": 95.0, "tsc": 298.0, "from_bytes": 64 << 20, "to_bytes": 256 << 20}},
    "bandwidth": [{"bytes": 4096, "op": op, "gb_per_s": 100.0, "bytes_per_tsc": 31.9}
                  for op in ("read", "write", "copy")],
    "points": [],
}


def bm(name, **counters):
    return dict({"name": name, "run_name": name, "run_type": "iteration"}, **counters)


CANNED = {
    "memsig": MEMSIG,
    "csum-kernels": {"context": {"cn_counters": FAKE["cn_counters"]}, "benchmarks": [
        bm("csum/cachenet/1460", tsc_per_byte=0.018, tsc_per_op=26.3),
        bm("csum/dpdk/1460", tsc_per_byte=0.07, tsc_per_op=102.2),
        bm("csum/cachenet/64", tsc_per_byte=0.2, tsc_per_op=12.8)]},
    "ilp-table": {"benchmarks": [
        bm("ilp/bswap32+pes+csum-%s-scalar/1460-%s" % (f, st), tsc_per_byte_med=v)
        for f, st, v in (("seq", "hot", 0.3137), ("int", "hot", 0.15685),
                         ("seq", "cold", 0.6274), ("int", "cold", 0.3137))]},
}


class FakeCtx(Ctx):
    """The report's context with the programs replaced by CANNED: exe()
    names a program that need not exist, cached_run() returns the canned
    measurement of its tag (an empty benchmark run where none is canned)."""

    def __init__(self, out):
        args = types.SimpleNamespace(out=out, quick=True, cpu=None, fresh=False, filter=None,
                                     no_sim=False)
        super().__init__(args, {"memsig": sys.executable, "bench": out, "root": None,
                                "ilp_model": None}, open(os.devnull, "w"))
        self.machine = dict(FAKE)
        self.memsig = None

    def exe(self, name):
        return os.path.join(self.out, "cachenet-bench-" + name)

    def cached_run(self, tag, cmd, inputs, produce, shown=None):
        self.commands.append((self.section, " ".join(shown or cmd), False))
        return CANNED.get(tag, {"benchmarks": []})


def tcp_med(mbit, busy):
    return {"mbit_s": mbit, "busy": busy, "device": busy / 2, "stack": busy / 4, "app": busy / 4,
            "cpu_total": 3.5, "ours_s_gb": 1.25, "cpu_p_sys": 2.0, "cpu_ksoftirqd": 0.5,
            "cpu_m_softirq": 0.75}


def udp_med(pps):
    return {"sent_pps": pps, "rx_pps": pps, "mbit_s": pps * 1472 * 8 / 1e6, "busy_per_frame": 100.0,
            "cpu_share": 0.5, "ours_s_gb": 1.0, "cpu_total": 2.0}


# stream.py's medians: the TSC rate comes from cachenet-tapnet's summary
DEVICES = {"tsc_hz": FAKE["tsc_hz"], "mb": 50, "reps": 1, "udp_s": 1.5, "load_avg": [0.5, 0.25, 0.125],
           "medians": {"tcp-tap": tcp_med(400.0, 40000.0),
                       "tcp-afxdp": dict(tcp_med(800.0, 20000.0), window=2.75),
                       "tcp-linux": {"mbit_s": 1000.0, "cpu_total": 3.0, "cpu_p_sys": 1.5,
                                     "cpu_ksoftirqd": 0.25, "cpu_m_softirq": 0.5, "window": 3.0},
                       "udp-bare": udp_med(50000.0), "udp-afxdp": udp_med(45000.0),
                       "tcp-dpdk-xdp-tx": tcp_med(600.0, 24000.0),
                       "memif": {"mbit_s": 2000.0, "sha_equal": 1, "tx_copy": 0, "cpu_procs": 2.5,
                                 "cpu_ksoftirqd": 0.0, "cpu_m_sys": 0.25, "cpu_m_softirq": 0.0,
                                 "cpu_m_user": 3.0, "cpu_p_sys": 0.125, "snd_busy": 3000.0, "snd_device": 1000.0,
                                 "snd_stack": 2000.0, "snd_cpu_s_per_gb": 1.25, "rcv_busy": 4000.0,
                                 "rcv_device": 1500.0, "rcv_stack": 2500.0, "rcv_cpu_s_per_gb": 1.25}},
           "skipped": {"tcp-dpdk-xdp": "the stream stalled: no progress for 3 s"},
           # three repetitions: cachenet's CPU while streaming over Linux's
           "ratios": {"tcp-afxdp": {"window": [0.5, 0.875, 1.25]}}}


def ghz_figures(text):
    return {float(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?GHz", text)}


def no_process_words(name, text):
    check(not re.search(r"\bseeds?\b", text, re.I), "%s says 'seed'" % name)
    check(not re.search(r"\bissues?\s*#?\s*\d+|#\d+\b", text, re.I),
          "%s names an issue number" % name)
    for gen in ("Zen", "Sapphire", "Ice Lake", "Skylake", "EPYC"):
        check(gen not in text, "%s names a CPU (%s) the description does not" % (name, gen))


def ilp_rows(*forms):
    """The ILP table's canned rows for the given name suffixes ("" AVX-512,
    "-avx2", "-scalar"): 1460 B hot and cold, distinct per form."""
    per = {"": (0.03137, 0.015685), "-avx2": (0.06274, 0.03137), "-scalar": (0.3137, 0.15685)}
    rows = []
    for sfx in forms:
        s, i = per[sfx]
        for st, k in (("hot", 1), ("cold", 2)):
            rows += [bm("ilp/bswap32+pes+csum-seq%s/1460-%s" % (sfx, st), tsc_per_byte_med=s * k),
                     bm("ilp/bswap32+pes+csum-int%s/1460-%s" % (sfx, st), tsc_per_byte_med=i * k)]
    return {"benchmarks": rows}


def check_vector_form(ctx):
    """The ILP section uses the best vector form with rows: AVX2 (`-avx2`
    rows) where no AVX-512 rows came back, AVX-512 where they did, and
    asks the benchmark for the form the CPU's features name."""
    got = {"avx2": ilp_rows("-avx2", "-scalar"), "avx512": ilp_rows("", "-avx2", "-scalar")}
    ctx.machine = dict(FAKE)
    for feats, rows, want in (("sse2 avx2", "avx2", "avx2"),
                              ("sse2 avx2 avx512f avx512bw", "avx512", "avx512"),
                              (None, "avx2", "avx2"), (None, "avx512", "avx512")):
        ctx.machine["cn_cpu_features"] = feats
        CANNED["ilp-table"] = got[rows]
        ctx.commands = []
        il = ilplayout.ilp(ctx)
        filt = [c for _, c, _ in ctx.commands if "bswap32" in c]
        check(len(filt) == 1, "ILP table command %s" % filt)
        filt = filt[0] if filt else ""
        shown = {"avx2": "AVX2 (rows named `-avx2`)",
                 "avx512": "AVX-512 (rows without a suffix)"}[want]
        check("vector form in this run: **%s**" % shown in il,
              "features %r, %s rows: form line %s" % (
                  feats, rows, [l for l in il.splitlines() if "vector form in" in l]))
        # ns/B at 3.137 GHz: AVX2 0.06274 / 0.03137 TSC/B hot = 0.02 / 0.01,
        # cold twice that; AVX-512 half of AVX2
        ns = {"avx2": ["0.02", "0.01", "2", "0.04", "0.02", "2"],
              "avx512": ["0.01", "0.005", "2", "0.02", "0.01", "2"]}[want]
        name = "bswap32+pes+csum" + ("-avx2" if want == "avx2" else "")
        row = [l for l in il.splitlines() if l.startswith("| %s |" % name)]
        check(len(row) == 1 and [c.strip() for c in row[0].split("|")[2:8]] == ns,
              "features %r: %s row %s" % (feats, name, row))
        other = "bswap32+pes+csum" + ("" if want == "avx2" else "-avx2")
        check(not [l for l in il.splitlines() if l.startswith("| %s |" % other)],
              "features %r: the other form's row %s shown" % (feats, other))
        check(re.search(r"\| bswap32\+pes\+csum-scalar \| 0\.1 \| 0\.05 \|", il),
              "features %r: scalar row" % feats)
        # the benchmark is asked for the -avx2 rows unless the features
        # name AVX-512; the AVX-512 rows (no suffix) unless they name AVX2
        # without it
        if feats:
            check(("-avx2" in filt) == (want == "avx2"), "filter %r for %r" % (filt, feats))
            check(("(-scalar)?" in filt) == (want == "avx512"), "filter %r for %r" % (filt, feats))
        else:
            check("(-scalar|-avx2)?" in filt, "filter %r without features" % filt)
    # a CPU with neither: the scalar rows alone, no vector form
    ctx.machine["cn_cpu_features"] = "sse2"
    CANNED["ilp-table"] = ilp_rows("-scalar")
    il = ilplayout.ilp(ctx)
    check("vector form in this run: **none" in il, "no vector form")
    check(ilplayout.vector_form({}) is None, "vector_form of nothing")
    CANNED["ilp-table"] = ilp_rows("-scalar")
    ctx.machine = dict(FAKE)


def main():
    md = machine.machine_table(FAKE)
    for fact in (FAKE["cpu"], FAKE["cn_caches"], "3.1370 GHz", "made-up calibration",
                 "4.81 GHz", "1 TSC tick = 1.53 core cycles", "3 logical CPUs"):
        check(fact in md, "machine table lacks %r" % fact)
    check(ghz_figures(md) <= {3.137, 4.81}, "machine table GHz %s" % ghz_figures(md))
    no_process_words("machine table", md)

    with tempfile.TemporaryDirectory() as out:
        ctx = FakeCtx(out)
        ctx.section = "memsig"
        ms = memkern.memsig(ctx)
        check("1.04 ns, is 5.00 core cycles at the 4.81 GHz" in ms,
              "clock cross-check does not follow the description: %s" %
              [l for l in ms.splitlines() if "Cross-check" in l])
        check("caution" not in ms, "a whole number of cycles flagged")
        check(ghz_figures(ms) <= {4.81}, "memsig section GHz %s" % ghz_figures(ms))
        no_process_words("memsig section", ms)

        ctx.section = "kernels"
        kern = memkern.kernels(ctx)
        check("TSC at 3.137 GHz, measured here" in kern, "kernels section: TSC rate")
        check(ghz_figures(kern) <= {3.137}, "kernels section GHz %s" % ghz_figures(kern))
        row = [l for l in kern.splitlines() if l.startswith("| csum hot 1460 B, TSC/B |")]
        check(len(row) == 1 and "| met |" in row[0], "target row %s" % row)
        no_process_words("kernels section", kern)

        ctx.section = "ilp"
        il = ilplayout.ilp(ctx)
        check("ns/B = TSC/B ÷ 3.137" in il, "ILP section: TSC rate")
        # 0.3137 TSC/B at 3.137 GHz = 0.1 ns/B
        row = [l for l in il.splitlines() if l.startswith("| bswap32+pes+csum-scalar |")]
        check(len(row) == 1 and row[0].split(" | ")[1:3] == ["0.1", "0.05"],
              "ILP ns/B row %s" % row)
        check(ghz_figures(il) <= set(), "ILP section GHz %s" % ghz_figures(il))
        no_process_words("ILP section", il)

        # without a measured TSC rate the ILP section is not measured; it
        # does not fall back to a rate of its own
        ctx.machine = dict(FAKE, tsc_hz=None)
        try:
            ilplayout.ilp(ctx)
            check(False, "ILP section ran without a TSC rate")
        except Exception as e:  # noqa: BLE001
            check(type(e).__name__ == "NotMeasured", "ILP without TSC: %r" % e)
        ctx.machine = dict(FAKE, tsc_hz=None)
        check("TSC frequency not measured" in memkern.kernels(ctx), "kernels without a TSC rate")
        check_vector_form(ctx)

        ctx.section = "devices"
        dv = devices.render(ctx, DEVICES)
        check("TSC at 3.137 GHz, measured here" in dv, "devices section: TSC rate")
        check(ghz_figures(dv) <= {3.137}, "devices section GHz %s" % ghz_figures(dv))
        check("frame rate: **0.9**" in dv, "devices section: sink / bare ratio")
        check("load average at the end of the run 0.5, 0.2, 0.1" in dv, "devices section: load")
        row = [l for l in dv.splitlines() if l.startswith("| Linux → cachenet | AF_XDP (veth) |")]
        check(len(row) == 1 and "| 800 | 20,000 | 10,000 | 5,000 | 5,000 | 2.75 | 3.5 | 1.25 |" in row[0],
              "devices AF_XDP row %s" % row)
        check("Linux → Linux's CPU time per GB while streaming (median of the repetitions' "
              "ratios, 0.5-1.25 over 3;" in dv and "used **0.875** of" in dv,
              "devices: AF_XDP / Linux ratio while streaming")
        check("?" not in dv.split("TSC at")[1][:4], "devices: TSC rate shown")
        row = [l for l in dv.splitlines() if l.startswith("| cachenet → Linux | DPDK net_af_xdp (veth) |")]
        check(len(row) == 1 and "| 600 | 24,000 | 12,000 | 6,000 | 6,000 | — | 3.5 | 1.25 |" in row[0],
              "devices DPDK row %s" % row)
        check("Not measured, Linux → cachenet over DPDK net_af_xdp (veth): the stream stalled: no "
              "progress for 3 s." in dv, "devices: a DPDK row not measured says why")
        check("**2,000 Mbit/s**" in dv and "| sender | 3,000 | 1,000 | 2,000 | 1.25 |" in dv and
              "(rusage system) 0.125, ksoftirqd 0, and machine-wide from `/proc/stat` system "
              "0.25, softirq 0, user 3" in dv, "devices: memif part")
        dv = devices.render(ctx, dict(DEVICES, tsc_hz=None))
        check("TSC at ? GHz" in dv, "devices without a TSC rate names none")
        no_process_words("devices section", dv)

    # every string the report's code can print: no issue number, no seed
    for path in sorted(glob.glob(os.path.join(REPORT, "cnreport", "*.py")) +
                       [os.path.join(REPORT, "cachenet-report.py")]):
        tree = ast.parse(open(path).read())
        text = "\n".join(n.value for n in ast.walk(tree)
                         if isinstance(n, ast.Constant) and isinstance(n.value, str))
        no_process_words(os.path.relpath(path, REPORT), text)
    # the targets' names say what they measure
    for t in targets.TARGETS:
        check(not re.search(r"\b(issue|goal|seed)\b", t.key, re.I), "target %r" % t.key)

    if FAILS:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
