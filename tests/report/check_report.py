#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Smoke test of cachenet-report: a tiny run (memsig --quick, one checksum
size, the machine table), then the shape of report.md, report.json and the
figure JSON, and the compare mode. Asserts shape and sanity, never speed."""
import json
import os
import subprocess
import sys
import tempfile


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def check_kernel_goals():
    """The kernels' target table judged on constructed numbers with known verdicts."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tools", "report"))
    from cnreport import memkern

    class Ctx:
        class args:
            quick = False
        metrics = {}

        def metric(self, k, v):
            self.metrics[k] = v

    def b(**kw):
        return dict(kw)
    got = {
        "csum": {
            "csum/cachenet/1460": b(tsc_per_byte=0.015), "csum/dpdk/1460": b(tsc_per_byte=0.07),
            "csum/cachenet/9000": b(tsc_per_byte=0.017), "csum/dpdk/9000": b(tsc_per_byte=0.07),
            "csum/cachenet/20": b(tsc_per_op=5.0), "csum/dpdk/20": b(tsc_per_op=4.0),
            "csum/cachenet-cold/4096": b(tsc_per_op=900), "csum/loadsum512-cold/4096": b(tsc_per_op=800),
            "csum_copy/cachenet/576": b(tsc_per_op=19), "copy/glibc/576": b(tsc_per_op=7),
            "csum_copy/cachenet-memcpy+csum/576": b(tsc_per_op=23),
            "copy/loop512/576": b(tsc_per_op=8),
        },
        "copy": {
            "bswap32/cachenet/65536": b(tsc_per_op=1800), "copy/glibc/65536": b(tsc_per_op=1250),
            "copy/loop512/65536": b(tsc_per_op=1750),
            "touch/load512/65536": b(tsc_per_op=850), "touch/store512/65536": b(tsc_per_op=875),
        },
        "crypto": {"aes128ctr/cachenet/16384": b(tsc_per_byte=0.06),
                   "aes128ctr/openssl/16384": b(tsc_per_byte=0.23)},
    }
    ctx = Ctx()
    md = "\n".join(memkern.kernel_goals(ctx, got))
    want = {
        "csum hot 1460 B, TSC/B": "met",               # 0.015 <= 0.020
        "csum hot 1460 B, DPDK / cachenet": "met",     # 4.67 >= 3.4
        "csum hot 9000 B, TSC/B": "NOT met",           # 0.017 > 0.016
        "csum hot 9000 B, DPDK / cachenet": "met",
        "csum 20 B per call, cachenet / DPDK (inlined)": "NOT met",   # 1.25
        "csum cold 4096 B, cachenet / 512-bit load loop": "met",      # 1.125
        "csum cold 9000 B, cachenet / 512-bit load loop": "not run",
        "copy+csum hot 576 B, cachenet / memcpy": "NOT met",          # 2.7
        "copy+csum hot 576 B, fused / memcpy then csum": "met",       # 0.83
        "aes128ctr 16 KB, TSC/B": "met",
        "chacha20 16 KB, TSC/B": "not run",
        "bswap32 65536 B, cachenet / memcpy": "NOT met",              # 1.44
    }
    for goal, status in want.items():
        row = [l for l in md.splitlines() if l.startswith("| " + goal + " |")]
        check(len(row) == 1 and row[0].split(" | ")[3] == status,
              "goal %r: want %s, row %s" % (goal, status, row))
    check("6 of 10 judged goals met" in md, "goal count line: " + md.splitlines()[2])
    row = [l for l in md.splitlines() if l.startswith("| bswap32 65536 B, cachenet / memcpy |")]
    check(len(row) == 1 and row[0].endswith(
        "| 1.03x a bare AVX-512 copy loop; the loop's loads alone + its stores alone: 1.38x memcpy |"),
        "bswap fill note: %s" % row)   # 1800 / 1750, (850 + 875) / 1250
    row = [l for l in md.splitlines() if l.startswith("| copy+csum hot 576 B, cachenet / memcpy |")]
    check(len(row) == 1 and row[0].endswith("| 2.38x a bare AVX-512 copy loop (+11.0 ticks) |"),
          "copy loop note: %s" % row)   # 19 / 8, 19 - 8
    check(abs(ctx.metrics.get("goals/kernels/csum hot 1460 B, DPDK / cachenet", 0) - 0.07 / 0.015)
          < 1e-9, "goal metric recorded")


def report_module(name):
    """A cnreport module, imported from the source tree."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tools", "report"))
    import importlib
    return importlib.import_module("cnreport." + name)


class MetricCtx:
    """The one part of a report context these checks use: metric()."""

    def __init__(self):
        self.metrics = {}

    def metric(self, k, v):
        self.metrics[k] = v


def check_tx_path():
    """The TX-path table's arithmetic on constructed counts: a tcp_tx row
    less pauses_per_packet pause/resume pairs, a tcp_ack row as measured,
    no row value when the pair was not measured."""
    net = report_module("net")
    sim = {"tcp_tx/offload-contig-out/1460": {"instructions_per_packet": 330.0,
                                              "pauses_per_packet": 1.0625},
           "tcp_tx/harness/pause-resume": {"instructions": 28.0},
           "tcp_ack/cachenet/pure": {"instructions_per_packet": 302.0}}
    check(abs(net.path_counts(sim, "tcp_tx/offload-contig-out/1460") - (330.0 - 1.0625 * 28.0))
          < 1e-9, "TX path less its pauses")
    check(net.path_counts(sim, "tcp_ack/cachenet/pure") == 302.0, "ACK row as measured")
    check(net.path_counts(sim, "tcp_tx/offload-mbuf-out/1460") is None, "absent row")
    nopr = {k: v for k, v in sim.items() if k != "tcp_tx/harness/pause-resume"}
    check(net.path_counts(nopr, "tcp_tx/offload-contig-out/1460") is None,
          "no pause-resume measured: no net figure")
    ctx = MetricCtx()
    md = "\n".join(net.path_vs_clark(ctx, sim, net.PATH_QUICK))
    row = [l for l in md.splitlines() if l.startswith("| `tcp_tx/offload-contig-out/1460`")]
    check(len(row) == 1 and row[0].split(" | ")[2] == "300" and row[0].split(" | ")[3] == "371 |",
          "TX path row: %s" % row)
    check("tcp_ack/cachenet/pure/instructions_per_segment" in ctx.metrics, "ACK metric recorded")


def check_dca_recovery():
    """The prefetch-recovery verdicts on constructed medians."""
    net = report_module("net")
    check(abs(net.recovery(300, 100, 140) - 0.8) < 1e-12, "recovery 0.8")
    check(net.recovery(100, 100, 90) is None, "no gap: not judged")
    check(net.recovery(300, None, 140) is None, "missing figure: not judged")
    check(net.rx_name("offload-mbuf-split", "flush") == "tcp_rx/offload-mbuf-flush-split/1460",
          "split benchmark name")
    check(net.rx_name("offload-mbuf-b4", "prefetch") == "tcp_rx_pf/offload-mbuf-prefetch-b4-k8-l1/1460"
          and net.rx_name("offload-mbuf-b4", "inject") == "tcp_rx_pf/offload-mbuf-inject-b4/1460",
          "batch-4 benchmark names")
    t = lambda v: {"tsc_per_packet": v}  # noqa: E731
    timed = {"tcp_rx/offload-mbuf-flush/1460": t(300), "tcp_rx/offload-mbuf-inject/1460": t(100),
             "tcp_rx/offload-mbuf-prefetch/1460": t(139),     # 80.5%: met
             "tcp_rx/fused-contig-flush/1460": t(500), "tcp_rx/fused-contig-inject/1460": t(200),
             "tcp_rx/fused-contig-prefetch/1460": t(270)}     # 76.7%: not met
    ctx = MetricCtx()
    rows, met, judged = net.recovery_rows(ctx, timed, ["offload-mbuf", "fused-contig",
                                                       "separate-mbuf"])
    check([r[-1] for r in rows] == ["met", "NOT met", "not run"], "verdicts %s" % rows)
    check((met, judged) == (1, 2), "counts %d of %d" % (met, judged))
    check(abs(ctx.metrics["goals/dca/offload-mbuf/1460/recovery"] - 161 / 200) < 1e-12,
          "recovery metric")
    # each mode at its fastest batch: flush from b32, inject and prefetch from b4
    bb = {"tcp_rx_pf/offload-mbuf-flush-b4/1460": t(400), "tcp_rx_pf/offload-mbuf-inject-b4/1460": t(90),
          "tcp_rx_pf/offload-mbuf-prefetch-b4-k8-l1/1460": t(120)}
    bb.update(timed)
    ctx = MetricCtx()
    md, bmet = net.best_batch_rows(ctx, bb, ["offload-mbuf", "offload-mbuf-b4", "fused-contig"])
    row = [l for l in "\n".join(md).splitlines() if l.startswith("| `offload-mbuf`")]
    # (300 - 120) / (300 - 90) = 85.7%
    check(len(row) == 1 and "300 (b32)" in row[0] and "90 (b4)" in row[0] and "120 (b4)" in row[0]
          and "| met" in row[0], "best-batch row %s" % row)
    check(bmet == 1 and abs(ctx.metrics["dca/offload-mbuf/1460/recovery_best_batch"] - 180 / 210) < 1e-12,
          "best-batch metric")
    check(net.best_batch_rows(MetricCtx(), timed, ["fused-contig"]) == ([], 0), "no b4 row, no table")
    # loading the frames alone: the best distance, each row's target against it
    for d, v in ((0, 340), (32, 230), (96, 160), (192, 190)):
        timed["tcp_rx_mem/flush-d%d/1460" % d] = t(v)
    timed["tcp_rx_mem/inject-d0/1460"] = t(66)
    timed["tcp_rx_mem/flush-f4-sum/1460"] = t(170)
    ctx = MetricCtx()
    md = "\n".join(net.mem_floor(ctx, timed, ["offload-mbuf", "fused-contig", "separate-mbuf"]))
    check("160 ticks (96 lines ahead" in md and "66 loaded" in md and "4 frames ahead, summed: 170" in md,
          "best distance: %s" % md)
    row = [l for l in md.splitlines() if l.startswith("| `offload-mbuf`")]
    # target 100 + 0.2 x 200 = 140; 140 / 160 and 139 / 160
    check(len(row) == 1 and row[0].split(" | ")[2:] == ["140", "139", "0.875", "0.869 |"],
          "offload-mbuf row %s" % row)
    check(not [l for l in md.splitlines() if l.startswith("| `separate-mbuf`")], "unmeasured row left out")
    check(ctx.metrics["tcp_rx_mem/flush-best/1460/tsc_per_packet"] == 160, "load-only metric")
    check("was not run" in "\n".join(net.mem_floor(MetricCtx(), {}, ["offload-mbuf"])), "not run")
    # a summed pattern faster than every line distance is the floor
    timed["tcp_rx_mem/flush-f4-sum/1460"] = t(150)
    ctx = MetricCtx()
    md = "\n".join(net.mem_floor(ctx, timed, ["offload-mbuf"]))
    check("150 ticks (4 frames ahead, summed" in md and
          ctx.metrics["tcp_rx_mem/flush-best/1460/tsc_per_packet"] == 150, "summed floor: %s" % md)
    # the read-ahead sweep: each mode's fastest distance, the recovery at those
    ra = {}
    for mode, vals in (("flush", (400, 230, 240, 250, 290)), ("inject", (131, 128, 130, 133, 135)),
                       ("prefetch", (300, 180, 170, 162, 160))):
        for d, v in zip(net.RA_DISTANCES, vals):
            ra["tcp_rx_ra/offload-mbuf-%s-ra%d/1460" % (mode, d)] = t(v)
    ctx = MetricCtx()
    md = "\n".join(net.readahead_rows(ctx, ra))
    check("offload-mbuf flush 5840; offload-mbuf inject 5840; offload-mbuf prefetch 17520" in md,
          "fastest distances: %s" % md)
    # (230 - 160) / (230 - 128)
    check(abs(ctx.metrics["tcp_rx_ra/offload-mbuf/1460/recovery_best"] - 70 / 102) < 1e-12,
          "best-distance recovery")
    check("offload-mbuf 68.63%" in md and "| `offload-contig` flush | — |" in md.replace(" None ", " — "),
          "recovery text and an unmeasured configuration: %s" % md)
    check("was not run" in "\n".join(net.readahead_rows(MetricCtx(), {})), "sweep not run")


def check_goal_rows(what, md, want):
    """Each goal of WANT {goal: (value, verdict)} has exactly one row in the
    Markdown MD, ending in its value and verdict."""
    for goal, (value, verdict) in want.items():
        row = [l for l in md.splitlines() if l.startswith("| " + goal + " |")]
        check(len(row) == 1 and row[0].endswith("| %s | %s |" % (value, verdict)),
              "%s goal %r: want %s %s, row %s" % (what, goal, value, verdict, row))


def check_ilp_goals():
    """The integrated loops' target table on constructed medians: the verdicts, and each
    ratio printed to three decimals (1.103 is not "1.1" beside NOT met)."""
    ilp = report_module("ilplayout")

    def bm(name, v):
        return {"name": name, "run_name": name, "run_type": "aggregate",
                "aggregate_name": "median", "tsc_per_byte_med": v}

    class Ctx(MetricCtx):
        def timed_args(self, *a, **kw):
            return []

        sfx = ""

        def bench(self, which, args, tag):
            check(which == "ilp" and any("aes128ctr" in x for x in args), "cipher run %r" % args)
            # the run asks for the form's rows only
            check(any(("-avx2" in x) == (self.sfx == "-avx2") for x in args if "filter" in x),
                  "cipher run of form %r: %r" % (self.sfx, args))
            rows = []
            for size, st in ilp.CIPHER_GOALS:
                for sfx, k in (("", 1), ("-avx2", 2)):
                    if sfx != self.sfx:   # what the filter leaves out
                        continue
                    rows.append(bm("ilp/aes128ctr-seq%s/%s-%s" % (sfx, size, st), 0.1 * k))
                    rows.append(bm("ilp/copy+aes128ctr+csum-int%s/%s-%s" % (sfx, size, st),
                                   k * ({"hot": 0.1103, "l2": 0.11}[st] if size == "65536"
                                        else 0.125)))
                    rows.append(bm("ilp/chacha20-seq%s/%s-%s" % (sfx, size, st), 0.2 * k))
                    rows.append(bm("ilp/copy+chacha20+csum-int%s/%s-%s" % (sfx, size, st),
                                   0.21 * k if not sfx else 0.5))
            return {"benchmarks": rows}

    pipe = "copy+bswap32+pes+csum"
    # seq and intpf medians per (size-cache); 65536-cold not measured
    res = {}
    for sc, seq, pf in (("1460-hot", 0.06, 0.04), ("65536-l2", 0.06, 0.025),
                        ("1460-cold", 0.4, 0.3)):
        res["ilp/%s-seq/%s" % (pipe, sc)] = {"tsc_per_byte_med": seq}
        res["ilp/%s-intpf/%s" % (pipe, sc)] = {"tsc_per_byte_med": pf}
    ctx = Ctx()
    md = "\n".join(ilp.goals(ctx, res, "tsc_per_byte_med"))
    want = {"%s-intpf, 1460 hot" % pipe: ("1.500", "met"),
            "%s-intpf, 65536 l2" % pipe: ("2.400", "NOT met"),
            "%s-intpf, 1460 cold" % pipe: ("1.333", "met"),
            "%s-intpf, 65536 cold" % pipe: ("—", "not measured"),
            "copy+aes128ctr+csum-int, 1460 hot": ("1.250", "NOT met"),
            "copy+aes128ctr+csum-int, 65536 hot": ("1.103", "NOT met"),
            "copy+aes128ctr+csum-int, 65536 l2": ("1.100", "met"),
            "copy+chacha20+csum-int, 1460 hot": ("1.050", "met")}
    check_goal_rows("ILP", md, want)
    check(abs(ctx.metrics["goal/aes128ctr/65536-hot/int_over_alone"] - 1.103) < 1e-9,
          "cipher goal metric")
    check(not [l for l in md.splitlines() if "-avx2" in l], "AVX-512 goals name AVX2 rows")

    # the AVX2 form: its own targets (seq ÷ intpf >= 1.8 hot, >= 2.5 at 64 KB
    # in L2, >= 1.2 at 1460 B flushed), judged on the -avx2 rows only; the
    # AVX-512 rows beside them (here with other values) are not read
    for sc, seq, pf in (("1460-hot", 0.25, 0.125), ("65536-l2", 0.3125, 0.125),
                        ("1460-cold", 0.5, 0.43)):
        res["ilp/%s-seq-avx2/%s" % (pipe, sc)] = {"tsc_per_byte_med": seq}
        res["ilp/%s-intpf-avx2/%s" % (pipe, sc)] = {"tsc_per_byte_med": pf}
    ctx = Ctx()
    ctx.sfx = "-avx2"
    md = "\n".join(ilp.goals(ctx, res, "tsc_per_byte_med", "avx2"))
    check("targets, AVX2 form" in md, "AVX2 goals heading: %s" % md.splitlines()[0])
    want = {"%s-intpf-avx2, 1460 hot" % pipe: ("2.000", "met"),
            "%s-intpf-avx2, 65536 l2" % pipe: ("2.500", "met"),
            "%s-intpf-avx2, 1460 cold" % pipe: ("1.163", "NOT met"),
            "copy+aes128ctr+csum-int-avx2, 1460 hot": ("1.250", "NOT met"),
            "copy+aes128ctr+csum-int-avx2, 65536 l2": ("1.100", "met"),
            "copy+chacha20+csum-int-avx2, 1460 hot": ("1.250", "NOT met")}
    check_goal_rows("AVX2", md, want)
    rows = [l for l in md.splitlines() if l.startswith("| copy+")]
    check(len(rows) == 3 + 6 and all("-avx2, " in l for l in rows),
          "AVX2 goal rows: only the AVX2 targets %s" % rows)
    check(abs(ctx.metrics["goal/intpf-avx2/1460-hot/seq_over_intpf"] - 2) < 1e-9,
          "AVX2 goal metric")
    check("not judged" in "\n".join(ilp.goals(ctx, res, "tsc_per_byte_med", None)),
          "no vector form: no goals")


def main():
    check_kernel_goals()
    check_tx_path()
    check_dca_recovery()
    check_ilp_goals()
    report = sys.argv[1]
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(report)))),
                         "bench")
    for b in ("memory", "csum"):
        if not os.path.exists(os.path.join(bench, "cachenet-bench-" + b)):
            print("SKIP: cachenet-bench-%s not built" % b)
            sys.exit(77)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, report, "--quick", "--out", out, "--only", "memsig,kernels",
               "--filter", "^csum/(cachenet|cachenet-generic)/(64|1460)$"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        print(p.stderr[-3000:])
        check(p.returncode == 0, "report exited with %d" % p.returncode)
        md = open(os.path.join(out, "report.md")).read()
        for s in ("# cachenet report", "## Machine", "## 1. Memory signature",
                  "## 2. Kernels", "## Commands", "TSC", "core clock", "cachenet-bench-csum", "csum/csum"):
            check(s in md, "report.md lacks %r" % s)
        check("cachenet-report: [1/2]" in p.stderr and "[2/2]" in p.stderr, "progress lines")
        js = json.load(open(os.path.join(out, "report.json")))
        for k in ("machine", "sections", "metrics", "figures", "commands"):
            check(k in js, "report.json lacks %r" % k)
        check(set(js["sections"]) == {"memsig", "kernels"}, "sections %s" % js["sections"])
        check(all(v["status"] == "ok" for v in js["sections"].values()), "status %s" % js["sections"])
        check(js["machine"].get("tsc_hz", 0) > 1e8, "TSC frequency")
        m = js["metrics"]
        l1, dram = m.get("memsig/L1_ns"), m.get("memsig/DRAM_ns")
        check(l1 and 0.1 < l1 < 20, "L1 latency %r ns" % l1)
        check(dram is None or dram > l1, "DRAM slower than L1")
        cs = [v for k, v in m.items() if k.startswith("kernels/csum/cachenet/")]
        check(cs and all(0 < v < 100 for v in cs), "csum TSC/B %r" % cs)
        for f in js["figures"]:
            fig = json.load(open(os.path.join(out, f)))
            check(fig["series"] and all(len(s["x"]) == len(s["y"]) for s in fig["series"]),
                  "figure %s shape" % f)
        check(any(f.startswith("fig-memsig") for f in js["figures"]), "memsig figure")
        # second run reuses every measurement
        p2 = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        check(p2.returncode == 0 and "reusing" in p2.stderr, "cached re-run")
        c = subprocess.run([sys.executable, report, "compare", out, out],
                           capture_output=True, text=True, timeout=60)
        check(c.returncode == 0 and "geometric mean B/A 1.000" in c.stdout, "compare: " + c.stdout[-500:])
    print("ok")


if __name__ == "__main__":
    main()
