# SPDX-License-Identifier: BSD-2-Clause
"""Study 5, Nahum, Yates, Kurose, Towsley, "Cache Behavior of Network
Protocols", Tables 3-5 and Fig. 6: the eight protocol paths (TCP /
UDP, send / receive, checksum on / off) with hot and with cold caches,
instructions vs data, and the latency an ideal I-cache or D-cache would
give.

The program is cachenet-cord-paths (tools/cord/paths.c): a fixed number of
packets per path, the device's and the peer's work outside the measured
region, and `--icache=cold --dcache=cold` to empty every cache before each
packet (cn_cache_evict_icache + cn_cache_evict_data). Each path runs
natively (median TSC ticks per packet, pinned) and under callgrind's cache
simulator with the host's geometry (exact misses per packet).

Memory time, and so the idealized latencies, comes from a model calibrated
on the same path, so the core's overlap of misses is measured: an L1 data
read miss costs c_D1 = (t_l1 - t_hot) / dD1r, from a run that empties only
the L1 data cache before each packet (`--dcache=l1`); a memory read miss
costs eff = (t_cold - t_hot - dI1 x L2 - dD1r x c_D1) / dLLr, with the TLB
misses of a cold cache folded in; an I1 miss costs memsig's L2 latency.
Write misses are not charged (the store buffer hides them). Nahum et al.
charged every miss its full latency on an in-order R4400; on an out-of-
order core the dependent-load latencies over-charge (the first version of
this study did: its estimate exceeded the measured time on 3 of 4 paths)."""
import concurrent.futures
import os
import re
import statistics
import tempfile

from . import papers
from .util import NotMeasured, fmt, pct, table

PATHS5 = [  # paper row, cachenet-cord-paths path
    ("TCP Send Cksum Off", "tcp-send-off"),
    ("TCP Send Cksum On", "tcp-send-on"),
    ("TCP Recv Cksum Off", "tcp-recv-off"),
    ("TCP Recv Cksum On", "tcp-recv-on"),
    ("UDP Send Cksum Off", "udp-send-off"),
    ("UDP Send Cksum On", "udp-send-on"),
    ("UDP Recv Cksum Off", "udp-recv-off"),
    ("UDP Recv Cksum On", "udp-recv-on"),
]
UDP_PAYLOAD = 1024
COLD = ["--icache=cold", "--dcache=cold"]
MODES = {"hot": [], "l1": ["--dcache=l1"], "cold": COLD}


def host_geometry(ctx):
    """callgrind's --I1/--D1/--LL from the machine table's cache list
    ("L1D 32K 8-way 64B, L1I 32K 8-way 64B, L2 ..., L3 32768K 16-way 64B")."""
    s = ctx.machine.get("cn_caches") or ""
    lv = {}
    for m in re.finditer(r"(L1D|L1I|L\d)\s+(\d+)K\s+(\d+)-way\s+(\d+)B", s):
        lv[m.group(1)] = (int(m.group(2)) * 1024, int(m.group(3)), int(m.group(4)))
    d1, i1 = lv.get("L1D"), lv.get("L1I")
    last = max((k for k in lv if k not in ("L1D", "L1I")), default=None)
    if not d1 or not i1 or not last:
        raise NotMeasured("the host's cache geometry is not known (%r)" % s)
    g = {"I1": i1, "D1": d1, "LL": lv[last]}
    return {k: "%d,%d,%d" % v for k, v in g.items()}


def path_args(path, packets, mode):
    a = [path, str(packets)]
    if path.startswith("udp"):
        a.append("--payload=%d" % UDP_PAYLOAD)
    return a + MODES[mode]


def simulate(ctx, exe, path, packets, mode, geom):
    """Simulated counts per packet of one path (cached)."""
    vg = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--collect-atstart=no",
          "--I1=" + geom["I1"], "--D1=" + geom["D1"], "--LL=" + geom["LL"]]
    cmd = [exe] + path_args(path, packets, mode)
    shown = vg + ["--callgrind-out-file=OUT"] + cmd

    def produce(store):
        # cord's package, beside cnreport on sys.path (cachenet-report)
        from cordlib.verify import callgrind_totals
        with tempfile.TemporaryDirectory(prefix="cn-caches-") as tmp:
            out = os.path.join(tmp, "cg.out")
            env = dict(os.environ, CN_SIM_GEOMETRY="I1=%s:D1=%s:LL=%s" % (
                geom["I1"], geom["D1"], geom["LL"]))
            ctx.run(vg + ["--callgrind-out-file=" + out] + cmd, timeout=900, env=env)
            totals = callgrind_totals(out)
        d = {k: v / packets for k, v in totals.items()}
        ctx.save(store, d)
        return d
    return ctx.cached_run("caches-sim-%s-%s" % (path, mode), shown, [exe], produce)


def timing(ctx, exe, path, packets, mode, reps):
    """Median TSC ticks per packet over reps native runs (cached)."""
    cmd = [exe] + path_args(path, packets, mode) + ["--time"]

    def produce(store):
        got = []
        for _ in range(reps):
            out = ctx.run(ctx.pinned(cmd))
            m = re.search(r"per_packet ([0-9.]+)", out)
            if not m:
                raise RuntimeError("cachenet-cord-paths printed no timing: %r" % out[-300:])
            got.append(float(m.group(1)))
        d = {"median": statistics.median(got), "runs": got}
        ctx.save(store, d)
        return d
    return ctx.cached_run("caches-time-%s-%s" % (path, mode),
                          ["taskset -c %s" % ctx.args.cpu] + cmd + ["# x%d" % reps],
                          [exe], produce)


def rates(s):
    """Nahum et al.'s miss rates: I1 misses / instructions, D1 misses / data
    references, LL misses / LL accesses (the L1 misses)."""
    ir = s.get("Ir") or 0
    dref = (s.get("Dr") or 0) + (s.get("Dw") or 0)
    i1 = s.get("I1mr") or 0
    d1 = (s.get("D1mr") or 0) + (s.get("D1mw") or 0)
    ll = (s.get("ILmr") or 0) + (s.get("DLmr") or 0) + (s.get("DLmw") or 0)
    return (i1 / ir if ir else None, d1 / dref if dref else None,
            ll / (i1 + d1) if i1 + d1 else 0.0)


def g(s, k):
    return s.get(k) or 0


def split(sim, t, l2):
    """Memory time of the hot run per the calibrated model. sim and t map
    mode -> counts per packet / median ticks per packet. Returns (c_d1:
    ticks per L1 data read miss served by the L2, from the l1 run; eff:
    ticks per memory read miss, from the cold run; I-side ticks; D-side
    ticks), or Nones where a run added too few misses to calibrate on."""
    hot, l1r, cold = sim["hot"], sim["l1"], sim["cold"]
    dd1 = g(l1r, "D1mr") - g(hot, "D1mr")
    c_d1 = max(0.0, (t["l1"] - t["hot"]) / dd1) if dd1 >= 1 else None
    dll = g(cold, "ILmr") + g(cold, "DLmr") - g(hot, "ILmr") - g(hot, "DLmr")
    if c_d1 is None or dll < 1:
        return c_d1, None, None, None
    eff = max(0.0, (t["cold"] - t["hot"] - (g(cold, "I1mr") - g(hot, "I1mr")) * l2
                    - (g(cold, "D1mr") - g(hot, "D1mr")) * c_d1) / dll)
    i_mem = g(hot, "I1mr") * l2 + g(hot, "ILmr") * eff
    d_mem = g(hot, "D1mr") * c_d1 + g(hot, "DLmr") * eff
    return c_d1, eff, i_mem, d_mem


def caches(ctx):
    from .net import get_memsig, lat   # net imports papers; keep the cycle out
    if ctx.args.no_sim:
        raise NotMeasured("--no-sim was given")
    exe = ctx.paths.get("cord_paths")
    if not exe or not os.access(exe, os.X_OK):
        raise NotMeasured("cachenet-cord-paths was not built")
    ms = get_memsig(ctx)
    l2 = lat(ms, "L2")
    if l2 is None:
        raise NotMeasured("memsig gave no L2 latency")
    geom = host_geometry(ctx)
    quick = ctx.args.quick
    paths = [p for p in PATHS5 if "Send" in p[0]] if quick else PATHS5
    native_n = {"hot": 1000, "l1": 1000, "cold": 50} if quick else \
        {"hot": 5000, "l1": 5000, "cold": 60}
    sim_n = {"hot": 500, "l1": 300, "cold": 10} if quick else {"hot": 2000, "l1": 500, "cold": 20}
    reps = 1 if quick else 3

    # simulations first, two at a time (counts do not care about the load);
    # then the native timings alone, pinned
    sims = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {pool.submit(simulate, ctx, exe, p, n, m, geom): (p, m)
                for _, p in paths for m, n in sim_n.items()}
        for f in concurrent.futures.as_completed(futs):
            sims[futs[f]] = f.result()
    times = {}
    for _, p in paths:
        for m, n in native_n.items():
            times[(p, m)] = timing(ctx, exe, p, n, m, reps)["median"]

    tsc_ghz = float(ctx.machine.get("tsc_hz") or ms["tsc_hz"]) / 1e9
    us = lambda t: t / tsc_ghz / 1000.0   # noqa: E731  TSC ticks → µs
    md = ["## 5. Hot, cold and idealized caches; instructions vs data (%s)" % papers.short(
              "nahum", "Tables 3-5, Fig. 6"), "",
          "The eight paths of " + papers.cite("nahum") + " with `cachenet-cord-paths` (TCP: one 1460-byte segment a "
          "packet; UDP: %d-byte datagrams; *cksum on* = a separate checksum pass (TCP) or a "
          "software checksum (UDP), *off* = offload / none; RX frames left in cache by the NIC). "
          "*Hot*: the path run over and over (%d packets natively, %d simulated). *Cold*: every "
          "cache emptied before each packet — the I-cache by running a 4 MB block of jumps, the "
          "data caches by reading a 64 MB buffer (`%s`; %d packets natively, %d simulated). "
          "Miss counts are **simulated** by callgrind with this machine's geometry (I1 %s, D1 %s, "
          "LL %s); times are native TSC ticks, median of %d run%s, pinned. Paper: 100 MHz R4400, "
          "x-kernel, 16 KB direct-mapped L1s, 1 MB L2." % (
              UDP_PAYLOAD, native_n["hot"], sim_n["hot"], " ".join(COLD), native_n["cold"], sim_n["cold"],
              geom["I1"], geom["D1"], geom["LL"], reps, "" if reps == 1 else "s"), ""]
    if quick:
        md += ["(`--quick`: the four send paths only.)", ""]

    # Tables 3 and 5: miss rates, hot and cold
    for cold, tname, ptab in ((False, "Table 3, hot", papers.NAHUM_T3), (True, "Table 5, cold", papers.NAHUM_T5)):
        rows = []
        for label, p in paths:
            s = sims[(p, "cold" if cold else "hot")]
            r = rates(s)
            pp = ptab.get(label)
            ir = s.get("Ir") or 0
            dref = (s.get("Dr") or 0) + (s.get("Dw") or 0)
            rows.append([label, fmt(ir), "%.2f" % (ir / dref) if dref else "—",
                         fmt(s.get("I1mr")), fmt((s.get("D1mr") or 0) + (s.get("D1mw") or 0)),
                         fmt((s.get("ILmr") or 0) + (s.get("DLmr") or 0) + (s.get("DLmw") or 0)),
                         pct(r[0]), pct(r[1]), pct(r[2]),
                         " / ".join(pct(x) for x in pp) if pp else "not in the text copy"])
            for k, v in zip(("i1", "d1", "ll"), r):
                ctx.metric("%s/%s/%s_rate" % (p, "cold" if cold else "hot", k), v)
        md += ["**Miss rates, %s caches** (%s; per packet: instructions, instructions per data "
               "reference, misses; then the rates as Nahum et al. define them: I1 misses / "
               "instructions, D1 misses / data references, LL misses / LL accesses):" % (
                   "cold" if cold else "hot", tname), "",
               table(["path", "instr.", "instr./data ref", "I1 miss", "D1 miss", "LL miss",
                      "L1 I", "L1 D", "LL", "paper I / D / L2"], rows), ""]

    # Table 4 and Fig. 6: cold / hot / ideal latency
    rows, bars, names = [], {"cold": [], "hot (measured)": [], "ideal I-cache": [],
                             "ideal D-cache": [], "ideal (both)": []}, []
    for label, p in paths:
        th, tc = times[(p, "hot")], times[(p, "cold")]
        c_d1, eff, i_mem, d_mem = split({m: sims[(p, m)] for m in MODES},
                                        {m: times[(p, m)] for m in MODES}, l2)
        p4 = papers.NAHUM_T4.get(label)
        paper = "%s / %s / %s (%.1f×)" % (p4 + (p4[0] / p4[1],)) if p4 else "—"
        ctx.metric("%s/hot_tsc_per_packet" % p, th)
        ctx.metric("%s/cold_tsc_per_packet" % p, tc)
        if eff is None:
            rows.append([label, us(tc), us(th), "%.1f×" % (tc / th),
                         "%.1f" % c_d1 if c_d1 is not None else "—", "—", "—", "—", "—", "—", paper])
            continue
        mem = i_mem + d_mem
        ideal = th - mem

        def shown(t):
            return us(t) if t > 0 else "model > measured"
        rows.append([label, us(tc), us(th), "%.1f×" % (tc / th), "%.1f" % c_d1, "%.0f" % eff,
                     "%.0f%%" % (100 * mem / th), shown(th - i_mem), shown(th - d_mem),
                     shown(ideal), paper])
        ctx.metric("%s/mem_read_miss_tsc" % p, eff)
        ctx.metric("%s/l1d_read_miss_tsc" % p, c_d1)
        ctx.metric("%s/hot_memory_share" % p, mem / th)
        names.append(label.replace(" Cksum ", "\n"))
        for k, v in (("cold", tc), ("hot (measured)", th), ("ideal I-cache", th - i_mem),
                     ("ideal D-cache", th - d_mem), ("ideal (both)", max(0.0, ideal))):
            bars[k].append(us(v))
    md += ["**Latency per packet, µs** (Table 4, Fig. 6): cold and hot measured; the ideal "
           "columns remove the hot run's memory time, priced from this path's own runs so the "
           "core's overlap of misses is measured, not assumed: an L1 data read miss costs "
           "*c_D1* = (t_l1 − t_hot) / Δ D1 read misses, from a third run that empties only the "
           "L1 data cache before each packet (`--dcache=l1`); a memory read miss costs *eff* = "
           "(t_cold − t_hot − Δ I1 misses × L2 latency − Δ D1 read misses × c_D1) / Δ memory "
           "read misses; an I1 miss costs memsig's L2 latency (%s TSC). Write misses are not "
           "charged (the store buffer). Where the priced misses exceed the measured hot time "
           "the table says *model > measured* rather than print a negative ideal: it happens "
           "when the hot run's L1 misses are a stream the prefetchers hide (the payload of a "
           "received frame) while the L1-emptied run's extra misses are scattered metadata "
           "(TCB, descriptors), so *c_D1* over-prices them. Paper: cold / hot / ideal µs at "
           "100 MHz (cold ÷ hot)." % fmt(l2), "",
           table(["path", "cold", "hot", "cold ÷ hot", "c_D1 (TSC/miss)", "eff (TSC/miss)", "hot memory share",
                  "ideal I-cache", "ideal D-cache", "ideal (both)", "paper cold / hot / ideal"],
                 rows), ""]
    if names:
        md += [ctx.figure("fig-caches-latency", "Per-packet latency: cold, hot and idealized caches",
                          "configuration", "µs per packet",
                          [{"label": k, "x": names, "y": v} for k, v in bars.items()],
                          xlog=False, ylog=True, kind="bar", xticks=names), ""]
    ratio_i = [g(sims[(p, "hot")], "Ir") / max(1.0, g(sims[(p, "hot")], "Dr") + g(sims[(p, "hot")], "Dw"))
               for _, p in paths]
    md += ["Instructions per data reference, hot: %.2f-%.2f here; Nahum et al. found instruction "
           "references outnumbering data references 2:1 without and 3:1 with checksumming "
           "(Sec. 3.3)." % (min(ratio_i), max(ratio_i)), ""]
    return "\n".join(md)
