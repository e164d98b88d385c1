# SPDX-License-Identifier: BSD-2-Clause
"""Studies 4, 6 and 7 on the TCP/UDP fast path and the in-memory NIC
(cachenet-bench-tcp): per-payload characterization, cache
size/associativity, DCA (study 5 is caches.py). Each says "not measured"
when the fast path has not been built; study 6 then falls back to the
kernels, labelled as such."""
import math
import re

from . import papers, targets
from .util import NotMeasured, pct, ratio, results, table

NOT_LANDED = "cachenet-bench-tcp was not built (the TCP/UDP fast path's benchmark)"
ALL_PAYLOADS = [64, 128, 256, 512, 1024, 1460, 2048, 4096, 8192, 16384, 32768, 65536]
# Simulated runs: google-benchmark times the valgrind-slowed process, so
# 0.02 s buys a few hundred iterations of a small op (a shorter time left
# many benchmarks at 1 iteration, whose counts are the first, cold call).
SIM_MIN = ["--benchmark_min_time=0.02"]


def need_tcp(ctx):
    if not ctx.exe("tcp"):
        raise NotMeasured(NOT_LANDED)


def need_sim(ctx):
    if ctx.args.no_sim:
        raise NotMeasured("--no-sim was given")


def esc(s):
    """Escape for google-benchmark's POSIX extended regex (no \\- there)."""
    return re.sub(r"([.+*?()\[\]{}|^$])", r"\\\1", str(s))


def alt(xs):
    return "(" + "|".join(esc(x) for x in xs) + ")"


def sim_label(d):
    return (d.get("context", {}).get("cn_counters") or "simulated").split(";")[0]


def rates(b):
    """Miss rates in Nahum et al.'s sense from a simulated entry: I1 misses per
    instruction fetch, D1 misses per data reference, LL misses per LL access."""
    ins = b.get("instructions")
    dref = (b.get("sim_dr") or 0) + (b.get("sim_dw") or 0)
    d1 = (b.get("sim_d1mr") or 0) + (b.get("sim_d1mw") or 0)
    i1 = b.get("l1i_miss") or 0
    ll = (b.get("sim_llmr") or 0) + (b.get("sim_llmw") or 0)
    return (i1 / ins if ins else None, d1 / dref if dref else None,
            ll / (i1 + d1) if (i1 + d1) else 0.0)


def get_memsig(ctx):
    if ctx.memsig is None:
        from . import memkern
        sec = ctx.section
        ctx.section = "memsig"
        memkern.memsig(ctx)   # cached; its Markdown is not repeated here
        ctx.section = sec
    return ctx.memsig


def lat(ms, level):
    lv = (ms.get("levels") or {}).get(level)
    return lv["tsc"] if lv else None


# ------------------------------------------------------------ 4 per-payload

TX_CFGS = ["separate-mbuf", "stored-contig"]
RX_CFGS = ["separate-mbuf-flush", "offload-mbuf-flush", "offload-contig-flush"]


# The TX path and the ACK against Clark et al. (1989): simulated counts.
PATH_QUICK = ["tcp_tx/offload-contig-out/1460", "tcp_tx/harness/pause-resume",
              "tcp_ack/cachenet/pure"]
PATH_FULL = PATH_QUICK + ["tcp_tx/offload-mbuf-out/1460", "tcp_tx/offload-contig-proto/1460",
                          "tcp_tx/offload-mbuf-proto/1460"]


def path_counts(sim, name):
    """Instructions per segment of a tcp_tx/*-out|-proto run net of its
    harness pauses (pauses_per_packet x the pause-resume pair), or of a
    tcp_ack run as measured; None when not simulated."""
    b, pr = sim.get(name), sim.get("tcp_tx/harness/pause-resume")
    if not b or b.get("instructions_per_packet") is None:
        return None
    v = b["instructions_per_packet"]
    if b.get("pauses_per_packet"):
        if not pr or pr.get("instructions") is None:
            return None
        v -= b["pauses_per_packet"] * pr["instructions"]
    return v


def path_vs_clark(ctx, sim, names):
    what = {
        "tcp_tx/offload-contig-out/1460": ("TX path, ring send buffer: tcp_output to the TX "
                                           "ring, and the completed frame's release",
                                           papers.CLARK_TX_DATA),
        "tcp_tx/offload-mbuf-out/1460": ("TX path, mbuf-chain send buffer (payload by "
                                         "m_copym-style references)", papers.CLARK_TX_DATA),
        "tcp_ack/cachenet/pure": ("one pure ACK: parse, lookup, prediction, release of the "
                                  "acknowledged bytes, the frame's free",
                                  "%d-%d" % papers.CLARK_RX_ACK),
        "tcp_tx/offload-contig-proto/1460": ("TX path + the ACKs (one per 2 segments) + the "
                                             "driver's RX refill, per segment, ring", None),
        "tcp_tx/offload-mbuf-proto/1460": ("the same, mbuf chain", None),
    }
    rows = []
    for n in names:
        if n not in what:
            continue
        v = path_counts(sim, n)
        if v is not None:
            ctx.metric(n + "/instructions_per_segment", v)
        rows.append(["`%s`" % n, what[n][0], v, what[n][1]])
    return ["**The TX fast path against Clark et al. (1989)**, instructions per 1460-byte "
            "segment, checksum offloaded, simulated. The tcp_tx rows are the benchmark's "
            "count less its pause/resume pairs (`pauses_per_packet` x "
            "`tcp_tx/harness/pause-resume`); they still hold ~9 instructions of the "
            "benchmark loop. Clark's counts (%s, as Ang's Table 11 summarizes them) are TCP + "
            "IP + buffering + timers on an i386 without driver, checksum or copy; the target "
            "for the TX path is %s instructions." % (
                papers.cite("clark"),
                targets.bound(targets.get("TX fast path, instructions per 1460-byte segment"))),
            "",
            table(["benchmark", "what is counted", "instructions", "Clark 1989"], rows), ""]


def payload(ctx):
    need_tcp(ctx)
    pays = [64, 1460, 65536] if ctx.args.quick else ALL_PAYLOADS
    filt = "^tcp_tx/%s/%s$|^tcp_rx/%s/%s$" % (alt(TX_CFGS), alt(pays), alt(RX_CFGS), alt(pays))
    timed = results(ctx.bench("tcp", ["--benchmark_filter=" + filt] + ctx.timed_args(0.01, 0.03),
                              "payload"))
    sim, simd = {}, None
    sim_why = None
    path = PATH_QUICK if ctx.args.quick else PATH_FULL
    try:
        need_sim(ctx)
        simd = ctx.bench("tcp", ["--benchmark_filter=" + filt + "|^" + alt(path) + "$"] + SIM_MIN,
                         "payload-sim", sim="")
        sim = results(simd)
    except NotMeasured as e:
        sim_why = str(e)
    md = ["## 4. Per-payload characterization, TX and RX (%s)" % papers.short(
              "makineni", "Tables 1 and 3"), "", "Paper: %s." % papers.cite("makineni"), "",
          "One op = one application write (TX) or read (RX) of *payload* bytes, MSS 1460, "
          "against a simulated peer on the in-memory NIC; the peer's and the device's work "
          "is paused. Counts per payload are **%s** (no PMU here); timings are TSC ticks. "
          "Branches and TLB misses are not measured: no PMU, and callgrind's cache "
          "simulation counts neither. *Memory refs* = simulated data reads + writes (the "
          "paper counts memory accesses, i.e. references that reach memory: compare with "
          "our LL misses). Paper: Makineni & Iyer, Table 1 (Pentium 4, Windows)." % (
              sim_label(simd) if simd else "not simulated (%s)" % sim_why), ""]
    figs_t, figs_i = [], []
    for side, cfgs, pi in (("tx", TX_CFGS, 0), ("rx", RX_CFGS, 1)):
        for cfg in cfgs:
            rows = []
            pts_t, pts_i = [], []
            for p in pays:
                name = "tcp_%s/%s/%d" % (side, cfg, p)
                t, s = timed.get(name, {}), sim.get(name, {})
                pp = papers.MAKINENI_T1.get(p)
                pk = t.get("packets_per_op") or s.get("packets_per_op")
                refs = (s.get("sim_dr", 0) + s.get("sim_dw", 0)) if s else None
                ll = (s.get("sim_llmr", 0) + s.get("sim_llmw", 0)) if s else None
                rows.append([p, pk, t.get("tsc_per_op"), t.get("tsc_per_packet"),
                             s.get("instructions"), pp[0][pi] if pp else None, refs,
                             ll, pp[2][pi] if pp else None,
                             s.get("l1i_miss"), pp[4][pi] if pp else None,
                             s.get("l1d_miss"), pp[5][pi] if pp else None])
                if t.get("tsc_per_op"):
                    pts_t.append((p, t["tsc_per_op"]))
                    ctx.metric("tcp_%s/%s/%d/tsc_per_op" % (side, cfg, p), t["tsc_per_op"])
                if s.get("instructions"):
                    pts_i.append((p, s["instructions"]))
                    ctx.metric("tcp_%s/%s/%d/instructions" % (side, cfg, p), s["instructions"])
            md += ["**%s `%s`**" % (side.upper(), cfg), "",
                   table(["payload", "segments", "TSC/payload", "TSC/packet", "instructions",
                          "paper", "data refs", "LL misses", "paper mem acc.", "I1 misses",
                          "paper", "D1 misses", "paper"], rows), ""]
            if pts_t:
                figs_t.append({"label": "%s %s" % (side.upper(), cfg), "x": [x for x, _ in pts_t],
                               "y": [y for _, y in pts_t]})
            if pts_i:
                figs_i.append({"label": "%s %s (simulated)" % (side.upper(), cfg),
                               "x": [x for x, _ in pts_i], "y": [y for _, y in pts_i]})
        figs_i.append({"label": "%s paper (Makineni T1)" % side.upper(), "x": list(papers.MAKINENI_T1),
                       "y": [v[0][pi] for v in papers.MAKINENI_T1.values()], "style": "k:"})
    # Table 3: share of misses caused by copies (RX): offload-mbuf copies the
    # payload out to the application, offload-contig delivers into the posted
    # buffer; same checksum mode, same DCA mode.
    if sim:
        rows = []
        for p in pays:
            a, b = sim.get("tcp_rx/offload-mbuf-flush/%d" % p), sim.get("tcp_rx/offload-contig-flush/%d" % p)
            if not a or not b:
                continue
            ma = (a.get("l1d_miss") or 0) + (a.get("l1i_miss") or 0)
            mb = (b.get("l1d_miss") or 0) + (b.get("l1i_miss") or 0)
            la = (a.get("sim_llmr") or 0) + (a.get("sim_llmw") or 0)
            lb = (b.get("sim_llmr") or 0) + (b.get("sim_llmw") or 0)
            rows.append([p, ma, mb, pct(max(0.0, (ma - mb) / ma) if ma else None),
                         pct(max(0.0, (la - lb) / la) if la else None),
                         pct(papers.MAKINENI_T3_COPY.get(p))])
        md += ["**Share of RX misses caused by the copy** (Makineni & Iyer, Table 3), estimated as the "
               "difference between `offload-mbuf-flush` (copies out to the application) and "
               "`offload-contig-flush` (delivers in place), simulated. TX copies in every "
               "configuration (no zero-copy TX variant), so its share is not measured.", "",
               table(["payload", "L1 misses, copy", "L1 misses, no copy", "L1 share",
                      "LL share", "paper (% of misses)"], rows), ""]
    if sim:
        md += path_vs_clark(ctx, sim, path)
    if figs_t:
        md += [ctx.figure("fig-payload-tsc", "TCP TX/RX: TSC ticks per payload", "payload (bytes)",
                          "TSC ticks per application write/read", figs_t, ylog=True), ""]
    if len(figs_i) > 2:
        md += [ctx.figure("fig-payload-instr", "Instructions per payload (simulated) vs Makineni & Iyer",
                          "payload (bytes)", "instructions", figs_i, ylog=True), ""]
    return "\n".join(md)


# ------------------------------------------------------------ 6 sensitivity

def geometry(size_kb, assoc, ll="1048576,16,64"):
    g = "%d,%d,64" % (size_kb * 1024, assoc)
    return "I1=%s:D1=%s:LL=%s" % (g, g, ll)


def geometry_row(s, label, paper, rows, fi, fd):
    """One cache geometry's table row into ROWS: LABEL, the simulated L1 I,
    L1 D and LL miss rates of S (None: not run) and the paper's (PAPER, or
    none); the L1 I and D rates in percent into the figure's FI and FD.
    Returns the three rates."""
    r = rates(s) if s else (None, None, None)
    rows.append([label, pct(r[0]), pct(r[1]), pct(r[2]),
                 " / ".join(pct(x) for x in paper) if paper else "—"])
    fi.append(r[0] * 100 if r[0] is not None else None)
    fd.append(r[1] * 100 if r[1] is not None else None)
    return r


def sensitivity(ctx):
    need_sim(ctx)
    if ctx.exe("tcp"):
        benches = ["tcp_tx/offload-mbuf/1460"] + ([] if ctx.args.quick else ["tcp_tx/separate-mbuf/1460"])
        prog, what = "tcp", "TCP send (cksum off: `tcp_tx/offload-mbuf/1460`%s)" % (
            "" if ctx.args.quick else "; cksum on: `tcp_tx/separate-mbuf/1460`")
    else:
        benches = ["csum_copy/cachenet/1460", "csum/cachenet/65536"]
        prog, what = "csum", ("**the kernels, not the fast path** (%s): `csum_copy/cachenet/1460` "
                             "and `csum/cachenet/65536`" % NOT_LANDED)
        if not ctx.exe("csum"):
            raise NotMeasured(NOT_LANDED + "; cachenet-bench-csum was not built either")
    sizes = [8, 32, 128] if ctx.args.quick else [8, 16, 32, 64, 128]
    assocs = [1, 8] if ctx.args.quick else [1, 2, 4, 8]
    filt = "|".join("^%s$" % esc(b) for b in benches)
    runs = {}
    for sz in sizes:
        runs[(sz, 1)] = None
    for a in assocs:
        runs[(16, a)] = None
    label = None
    for (sz, a) in list(runs):
        d = ctx.bench(prog, ["--benchmark_filter=" + filt] + SIM_MIN, "geom-%dk-%dway" % (sz, a),
                      sim=geometry(sz, a))
        runs[(sz, a)] = results(d)
        label = sim_label(d)
    md = ["## 6. Cache size and associativity (%s)" % papers.short("nahum", "Tables 6-7, Fig. 7-10"),
          "", "Paper: %s." % papers.cite("nahum"), "",
          "%s, **simulated** by callgrind with I1 = D1 of the given geometry (64-byte lines) "
          "and LL fixed at 1 MB 16-way (the paper's L2 is 1 MB; it also varies the L2's "
          "associativity with L1's, we keep it fixed). Size sweep direct-mapped, "
          "associativity sweep at 16 KB, as in the paper. Last run: %s." % (what, label), ""]
    for b in benches:
        rows, fi, fd = [], [], []
        for sz in sizes:
            p = papers.NAHUM_T6.get(sz) if prog == "tcp" and "offload" in b else None
            r = geometry_row(runs[(sz, 1)].get(b), "%d KB" % sz, p, rows, fi, fd)
            ctx.metric("%s/%dk-1way/i1_rate" % (b, sz), r[0])
            ctx.metric("%s/%dk-1way/d1_rate" % (b, sz), r[1])
        md += ["**`%s` vs L1 size, direct-mapped** (Table 6):" % b, "",
               table(["L1 size", "L1 I", "L1 D", "LL", "paper I / D / L2"], rows), ""]
        md += [ctx.figure("fig-size-%s" % b.replace("/", "-"), "%s: miss rate vs L1 size (simulated, 1-way)" % b,
                          "L1 size (bytes)", "miss rate (%)",
                          [{"label": "L1 I", "x": [s * 1024 for s in sizes], "y": fi},
                           {"label": "L1 D", "x": [s * 1024 for s in sizes], "y": fd}] +
                          ([{"label": "paper L1 I", "x": [k * 1024 for k in papers.NAHUM_T6],
                             "y": [v[0] * 100 for v in papers.NAHUM_T6.values()], "style": "k:"},
                            {"label": "paper L1 D", "x": [k * 1024 for k in papers.NAHUM_T6],
                             "y": [v[1] * 100 for v in papers.NAHUM_T6.values()], "style": "k--"}]
                           if prog == "tcp" and "offload" in b else [])), ""]
        rows, fi, fd = [], [], []
        for a in assocs:
            p = papers.NAHUM_T7.get(a) if prog == "tcp" and "offload" in b else None
            r = geometry_row(runs[(16, a)].get(b), "%d-way" % a, p, rows, fi, fd)
            ctx.metric("%s/16k-%dway/i1_rate" % (b, a), r[0])
        md += ["**`%s` vs associativity, 16 KB** (Table 7):" % b, "",
               table(["associativity", "L1 I", "L1 D", "LL", "paper I / D / L2"], rows), ""]
        md += [ctx.figure("fig-assoc-%s" % b.replace("/", "-"), "%s: miss rate vs associativity (simulated, 16 KB)" % b,
                          "ways", "miss rate (%)",
                          [{"label": "L1 I", "x": assocs, "y": fi}, {"label": "L1 D", "x": assocs, "y": fd}],
                          xlog=True), ""]
    return "\n".join(md)


# ------------------------------------------------------------ 7 DCA

# The prefetch DCA mode's target (targets.py): the share of the gap between
# flush and inject it recovers for 1460-byte RX, every RX configuration.
RECOVERY_CFGS = ["offload-mbuf", "offload-contig", "fused-contig", "separate-mbuf"]
RECOVERY_TARGET = targets.get("prefetch recovery at 1460 B")
RECOVERY_GOAL = RECOVERY_TARGET.bound


def recovery(flush, inject, prefetch):
    """Share of the flush - inject gap the prefetch mode wins back, or None
    when a figure is missing or there is no gap to recover."""
    if not flush or not inject or not prefetch or flush <= inject:
        return None
    return (flush - prefetch) / (flush - inject)


def rx_name(cfg, mode, payload=1460):
    """tcp_rx benchmark name; a "-split" configuration puts the DCA mode
    before the suffix (tcp_rx/offload-mbuf-flush-split/1460); a "-b4" one
    is the driver-batch sweep's batch-4 run (tcp_rx_pf/..., prefetch at the
    default distance k 8, L1, unpaced)."""
    if cfg.endswith("-b4"):
        base = cfg[:-len("-b4")]
        if mode == "prefetch":
            return "tcp_rx_pf/%s-prefetch-b4-k8-l1/%d" % (base, payload)
        return "tcp_rx_pf/%s-%s-b4/%d" % (base, mode, payload)
    if cfg.endswith("-split"):
        return "tcp_rx/%s-%s-split/%d" % (cfg[:-len("-split")], mode, payload)
    return "tcp_rx/%s-%s/%d" % (cfg, mode, payload)


def mode_times(timed, cfg):
    """Ticks per packet of configuration cfg at 1460 B in each DCA mode
    (None where not run)."""
    return {m: timed.get(rx_name(cfg, m), {}).get("tsc_per_packet")
            for m in ("flush", "inject", "prefetch")}


def recovery_rows(ctx, timed, cfgs):
    rows, met, judged = [], 0, 0
    for cfg in cfgs:
        v = mode_times(timed, cfg)
        r = recovery(v["flush"], v["inject"], v["prefetch"])
        status = "not run" if r is None else ("met" if r >= RECOVERY_GOAL else "NOT met")
        if r is not None:
            judged += 1
            met += r >= RECOVERY_GOAL
            ctx.metric("goals/dca/%s/1460/recovery" % cfg, r)
        rows.append(["`%s`" % cfg, v["flush"], v["inject"], v["prefetch"], pct(r), status])
    return rows, met, judged


# tcp_rx_mem's prefetch distances, in lines and in frames (bench_tcp.cc,
# bm_tcp_rx_mem)
MEM_DISTANCES = [0, 32, 64, 96, 128, 192]
MEM_FRAMES = [2, 4, 6, 8, 12]
# tcp_rx_ra's copy-out read-ahead distances, bytes (0: none), and the one
# bench_tcp.cc gives the offload prefetch rows (RX_PREFETCH_READAHEAD)
RA_DISTANCES = [0, 5840, 8760, 11680, 17520]
RA_PREFETCH = 17520
RA_CFGS = ["offload-mbuf", "offload-contig"]


def readahead_rows(ctx, rt):
    """The stack's read-ahead distance in each DCA mode (tcp_rx_ra, same
    run): ticks per segment, each mode's fastest distance, and the recovery
    with every mode at its fastest."""
    rows, fastest, recs = [], [], []
    for cfg in RA_CFGS:
        best = {}
        for mode in ("flush", "inject", "prefetch"):
            v = {d: rt.get("tcp_rx_ra/%s-%s-ra%d/1460" % (cfg, mode, d), {}).get("tsc_per_packet")
                 for d in RA_DISTANCES}
            got = {d: x for d, x in v.items() if x}
            if got:
                d = min(got, key=got.get)
                best[mode] = got[d]
                fastest.append("%s %s %s" % (cfg, mode, "none" if d == 0 else "%d" % d))
            rows.append(["`%s` %s" % (cfg, mode)] + [v[d] for d in RA_DISTANCES])
        r = recovery(best.get("flush"), best.get("inject"), best.get("prefetch"))
        if r is not None:
            ctx.metric("tcp_rx_ra/%s/1460/recovery_best" % cfg, r)
            recs.append("%s %s" % (cfg, pct(r)))
    if not fastest:
        return ["*The read-ahead sweep (`tcp_rx_ra/*`) was not run.*", ""]
    return ["**The stack's read-ahead distance in each mode** (`tcp_rx_ra/<cfg>-<mode>-ra<bytes>/1460`, "
            "same run; `cn_tcp_params.rx_readahead` bytes, none = `no_rx_readahead`): TSC ticks per "
            "segment. The `offload-*-prefetch` rows above run at %d bytes (bench_tcp.cc, "
            "RX_PREFETCH_READAHEAD: behind the driver's paced prefetch a longer distance paid in "
            "the sweeps), every other row at the default, 5840. Fastest distance in this run: %s. "
            "Recovery with every mode at its fastest distance: %s."
            % (RA_PREFETCH, "; ".join(fastest), "; ".join(recs) if recs else "not judged"), "",
            table(["configuration, mode"] + ["ra %d" % d if d else "none" for d in RA_DISTANCES], rows), ""]


def best_batch_rows(ctx, rt, cfgs):
    """Each DCA mode at its fastest driver batch (the plain batch-32 row or
    the -b4 one, same run) and the recovery those give: a driver tuned per
    mode. Returns the Markdown and the number of configurations meeting
    the goal that way."""
    rows, met = [], 0
    for cfg in cfgs:
        if cfg.endswith("-b4") or cfg.endswith("-split") or cfg + "-b4" not in cfgs:
            continue
        b32, b4 = mode_times(rt, cfg), mode_times(rt, cfg + "-b4")
        best, at = {}, {}
        for m in ("flush", "inject", "prefetch"):
            got = [(v, b) for v, b in ((b32[m], "32"), (b4[m], "4")) if v]
            if got:
                best[m], at[m] = min(got)
        r = recovery(best.get("flush"), best.get("inject"), best.get("prefetch"))
        if r is None:
            continue
        ctx.metric("dca/%s/1460/recovery_best_batch" % cfg, r)
        met += r >= RECOVERY_GOAL
        rows.append(["`%s`" % cfg] + ["%.0f (b%s)" % (best[m], at[m])
                                      for m in ("flush", "inject", "prefetch")] +
                    [pct(r), "met" if r >= RECOVERY_GOAL else "NOT met"])
    if not rows:
        return [], 0
    return (["**Each mode at its fastest batch** (same run: the plain row's 32 frames per poll "
             "or the `-b4` row's 4, whichever is faster in that mode; a driver tuned per mode). "
             "Small polls suit `prefetch` (the application's reads come between polls while "
             "the next frames' lines arrive); flush gains from 32-frame polls, "
             "whose long copy-outs let the stack's read-ahead hide its misses. %d of %d "
             "configurations reach 80%% this way." % (met, len(rows)), "",
             table(["configuration", "flush", "inject", "prefetch", "recovered", "status"], rows),
             ""], met)


def mem_floor(ctx, rt, cfgs):
    """Loading the frames alone (tcp_rx_mem, same run) beside the prefetch
    rows and the prefetch time their 80% goal asks for. The floor is the
    fastest of the two patterns: each line loaded with a prefetch D lines
    ahead, and each frame summed whole with frame i + F prefetched first."""
    pats = {}
    for d in MEM_DISTANCES:
        pats["%d lines ahead" % d] = rt.get("tcp_rx_mem/flush-d%d/1460" % d, {}).get("tsc_per_packet")
    for f in MEM_FRAMES:
        pats["%d frames ahead, summed" % f] = rt.get("tcp_rx_mem/flush-f%d-sum/1460" % f,
                                                      {}).get("tsc_per_packet")
    pats = {k: v for k, v in pats.items() if v}
    hot = rt.get("tcp_rx_mem/inject-d0/1460", {}).get("tsc_per_packet")
    hot_sum = rt.get("tcp_rx_mem/inject-f0-sum/1460", {}).get("tsc_per_packet")
    if not pats:
        return ["*Loading the frames alone (`tcp_rx_mem/*`) was not run.*", ""]
    best = min(pats, key=pats.get)
    load = pats[best]
    ctx.metric("tcp_rx_mem/flush-best/1460/tsc_per_packet", load)
    rows = []
    for cfg in cfgs:
        v = mode_times(rt, cfg)
        if not all(v.values()) or v["flush"] <= v["inject"]:
            continue
        target = v["inject"] + (1 - RECOVERY_GOAL) * (v["flush"] - v["inject"])
        rows.append(["`%s`" % cfg, v["inject"], target, v["prefetch"], ratio(target, load),
                     ratio(v["prefetch"], load)])
    by = "; ".join("%s: %.0f" % (k, v) for k, v in pats.items())
    cached = "; ".join(x for x in ("%.0f loaded" % hot if hot else "",
                                   "%.0f summed" % hot_sum if hot_sum else "") if x)
    return ["**Loading the frames alone** (`tcp_rx_mem/flush-d<D>/1460` and "
            "`tcp_rx_mem/flush-f<F>-sum/1460`, same run): the frames of a 1460-byte receive "
            "(1514 bytes; the same ring, pools and flush) and no protocol work, in two patterns: "
            "each line loaded once in ring order with a software prefetch D lines ahead; or each "
            "frame summed whole by the checksum kernel, as the receive path reads it, with every "
            "line of the frame F ahead prefetched first, as the driver's prefetch mode asks for "
            "them. Ticks per frame: %s; with the lines cached (the loops' own cost): %s. The "
            "best, %.0f ticks (%s, %.1f bytes a tick), is the fastest this core was seen to "
            "bring these frames in from memory. *Target*: the prefetch time the 80%% goal asks "
            "for, inject + 0.2 x (flush - inject). A row whose target is below the loop's time "
            "(ratio < 1) must receive a frame, protocol work included, faster than memory "
            "delivers one with no work at all. A batch-32 row above 1 still needs memory busy "
            "while the application reads the batch the poll left in cache; the batch-4 rows, "
            "whose reads come between small polls, get that overlap."
            % (by, cached or "not run", load, best, 1514.0 / load), "",
            table(["configuration", "inject", "target", "prefetch", "target ÷ loop",
                   "prefetch ÷ loop"], rows), ""]


def dca(ctx):
    need_tcp(ctx)
    pays = [64, 1460, 65536] if ctx.args.quick else [64, 256, 512, 1024, 1460, 4096, 16384, 65536]
    modes = ["flush", "inject", "prefetch"]
    filt = "^tcp_rx/offload-mbuf-%s/%s$" % (alt(modes), alt(pays))
    timed = results(ctx.bench("tcp", ["--benchmark_filter=" + filt] + ctx.timed_args(0.01, 0.03), "dca"))
    md = ["## 7. DCA: RX with the NIC's lines flushed, injected or prefetched (%s)" % papers.short(
              "huggahalli", "Table 1, Fig. 4, Table 4"), "", "Paper: %s." % papers.cite("huggahalli"), "",
          "`tcp_rx/offload-mbuf-<mode>/<payload>` (checksum verified by the NIC, payload kept "
          "by reference and copied out to the application). `flush`: the lines the NIC wrote "
          "are evicted (a DMA snoop); `inject`: left in cache (DCA/DDIO); `prefetch`: "
          "flushed, then the driver prefetches the next packets' header and payload.", ""]
    rows, series = [], {m: [] for m in modes}
    for p in pays:
        v = {m: timed.get("tcp_rx/offload-mbuf-%s/%d" % (m, p), {}).get("tsc_per_packet") for m in modes}
        rows.append([p] + [v[m] for m in modes] + [ratio(v["flush"], v["inject"]), ratio(v["flush"], v["prefetch"])])
        for m in modes:
            if v[m]:
                series[m].append((p, v[m]))
                ctx.metric("tcp_rx/offload-mbuf-%s/%d/tsc_per_packet" % (m, p), v[m])
    md += ["**TSC ticks per packet**:", "",
           table(["payload"] + modes + ["flush ÷ inject", "flush ÷ prefetch"], rows), "",
           ctx.figure("fig-dca", "RX TSC ticks per packet by DCA mode", "payload (bytes)",
                      "TSC ticks per packet", [{"label": m, "x": [a for a, _ in s], "y": [b for _, b in s]}
                                               for m, s in series.items()], ylog=True), ""]
    # the prefetch recovery target, every RX configuration, 1460 B, interleaved
    cfgs = RECOVERY_CFGS + [c + "-b4" for c in RECOVERY_CFGS]
    if not ctx.args.quick:
        cfgs += [c + "-split" for c in RECOVERY_CFGS]
    mem_names = (["tcp_rx_mem/flush-d%d/1460" % d for d in MEM_DISTANCES] +
                 ["tcp_rx_mem/flush-f%d-sum/1460" % f for f in MEM_FRAMES] +
                 ["tcp_rx_mem/inject-d0/1460", "tcp_rx_mem/inject-f0-sum/1460"])
    ra_names = ["tcp_rx_ra/%s-%s-ra%d/1460" % (c, m, d) for c in RA_CFGS for m in modes for d in RA_DISTANCES]
    rfilt = "^%s$" % alt([rx_name(c, m) for c in cfgs for m in modes] + mem_names + ra_names)
    reps = 3 if ctx.args.quick else 5
    rt = results(ctx.bench("tcp", ["--benchmark_filter=" + rfilt, "--benchmark_min_time=0.03",
                                   "--benchmark_repetitions=%d" % reps,
                                   "--benchmark_enable_random_interleaving=true",
                                   "--benchmark_report_aggregates_only=true"], "dca-recovery"))
    rows, met, judged = recovery_rows(ctx, rt, cfgs)
    md += ["**Prefetch recovery at 1460 B** (the target: `prefetch` wins back %s "
           "of the flush - inject gap, (flush - prefetch) / (flush - inject)); TSC ticks per "
           "packet, medians of %d interleaved repetitions. %d of %d rows meet it. Plain rows: "
           "the driver's default batch of 32 frames per poll (offload rows: paced prefetch, "
           "and the stack's read-ahead at %d bytes in prefetch mode, below); `-b4` rows: 4 "
           "frames per poll, all three modes, prefetch k 8 unpaced, the default read-ahead. "
           "At batch 32 the stack's copy-out read-ahead already hides much of flush mode's "
           "misses (flush is cheaper than at batch 4), and a 32-frame poll asks memory for more "
           "lines than it delivers in the poll; at batch 4 the driver's prefetches overlap the "
           "reads between polls." % (targets.bound(RECOVERY_TARGET), reps, met, judged, RA_PREFETCH), "",
           table(["configuration", "flush", "inject", "prefetch", "recovered", "status"], rows), ""]
    md += best_batch_rows(ctx, rt, cfgs)[0]
    md += readahead_rows(ctx, rt)
    md += mem_floor(ctx, rt, cfgs)
    # memory accesses per packet against 2N+5 (simulated LL misses)
    if not ctx.args.no_sim:
        spays = [64, 1460] if ctx.args.quick else [64, 256, 512, 1024, 1460]
        sfilt = "^tcp_rx/offload-mbuf-(flush|inject)/%s$" % alt(spays)
        sd = ctx.bench("tcp", ["--benchmark_filter=" + sfilt] + SIM_MIN, "dca-sim", sim="")
        sim = results(sd)
        rows = []
        for p in spays:
            n = math.ceil(p / 64)
            r = [p, n]
            for m in ("flush", "inject"):
                s = sim.get("tcp_rx/offload-mbuf-%s/%d" % (m, p))
                pk = (s or {}).get("packets_per_op") or 1
                r.append(((s.get("sim_llmr") or 0) + (s.get("sim_llmw") or 0)) / pk if s else None)
            r += [n + 2, 2 * n + 5, 1]
            rows.append(r)
        md += ["**Memory accesses per packet** (Table 1), **%s**: LL misses per packet, CPU side "
               "only (the NIC's own reads and writes are device work, not simulated). The paper's "
               "processor-side count is status + header + N payload lines = N+2 (TCB assumed "
               "cached), the total with the NIC's 2N+5, and 1 with DCA." % sim_label(sd), "",
               table(["payload", "N lines", "flush (ours)", "inject (ours)", "paper CPU N+2",
                      "paper total 2N+5", "paper with DCA"], rows), ""]
    # Table 4: cache occupancy of a batch
    ours = {}
    for p in pays:
        t = timed.get("tcp_rx/offload-mbuf-inject/%d" % p)
        if t and t.get("tsc_per_packet") and ctx.machine.get("tsc_hz"):
            ours[p] = float(ctx.machine["tsc_hz"]) / t["tsc_per_packet"]
    rows = []
    for size, (mpps, lines, ppi, mb, mb0) in papers.HUGGAHALLI_T4.items():
        pay = max(0, size - 58)
        rate10 = 10e9 / ((size + 20) * 8)
        rate100 = 10 * rate10
        near = min(ours, key=lambda p: abs(p - pay)) if ours else None
        core = ours.get(near) if near is not None else None
        occ = lambda r: r / 4000 * lines * 64 / 2 ** 20  # noqa: E731 MB per batch
        rows.append([size, "%.1f (paper %.1f)" % (rate10 / 1e6, mpps), lines,
                     "%.0f (paper %d)" % (rate10 / 4000, ppi), "%.2f (paper %.2f)" % (occ(rate10), mb),
                     occ(rate100), "%.2f at %d B payload" % (core / 1e6, near) if core else "—",
                     occ(core) if core else None])
    md += ["**Cache occupancy of one interrupt batch** (Table 4: 4000 interrupts/s, lines per "
           "packet as the paper counts them, with data). At 10 and 100 Gb/s line rate, and at "
           "the rate one core of this machine receives (`inject`, measured above). Compare "
           "with this machine's caches: %s." % (ctx.machine.get("cn_caches") or "?"), "",
           table(["frame", "Mpkt/s at 10G", "lines/pkt", "pkts/interrupt at 10G", "MB at 10G",
                  "MB at 100G", "Mpkt/s one core (ours)", "MB at our rate"], rows), ""]
    return "\n".join(md)
