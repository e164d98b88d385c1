# SPDX-License-Identifier: BSD-2-Clause
"""Studies 1-3: the memory signature, the kernels against their peers, the
packet buffers."""
import json
import os

from . import papers, targets
from .util import NotMeasured, case_key, human_bytes, ratio, results, split, table


# ------------------------------------------------------------ 1 memsig

def memsig(ctx):
    exe = ctx.paths["memsig"]
    if not os.path.exists(exe):
        raise NotMeasured("%s was not built" % exe)
    cmd = [exe] + (["--quick"] if ctx.args.quick else [])

    def produce(path):
        tmp = path + ".tmp"
        ctx.run(ctx.pinned(cmd + ["--json", tmp]))
        with open(tmp) as f:
            d = json.load(f)
        os.replace(tmp, path)
        return d
    d = ctx.cached_run("memsig", cmd, [exe], produce,
                       shown=cmd + ["--json", "memsig.json"])
    with open(os.path.join(ctx.out, "memsig.json"), "w") as f:
        json.dump(d, f, indent=1)
    ctx.memsig = d
    md = ["## 1. Memory signature (%s)" % papers.short("nahum", "Fig. 3/4; Table 1"), "",
          "Dependent loads in a random cyclic order, one per cache line, so no prefetcher "
          "helps; `page` order visits every line of a 4 KB page before the next page "
          "(TLB misses amortised), `random` crosses pages on every load. Levels are found "
          "from the curve, not from the reported cache sizes. Paper: 100 MHz R4400 SGI "
          "Challenge (%s, Sec. 2.2, Fig. 3; cycles from Table 1)." % papers.cite("nahum"), ""]
    ghz = ctx.machine.get("core_ghz")
    rows = []
    for name in ("L1", "L2", "LLC", "DRAM"):
        lv = (d.get("levels") or {}).get(name)
        pk = "L2" if name in ("L2",) else name
        paper = papers.NAHUM_MEMSIG_NS.get(pk)
        pcyc = papers.NAHUM_MEMSIG_CYCLES.get(pk)
        if not lv:
            why = (d.get("levels_not_found") or {}).get(name, "not found")
            rows.append([name, "not found: " + why, None, None, None, paper, pcyc])
            continue
        span = "%s .. %s" % (human_bytes(lv["from_bytes"]), human_bytes(lv["to_bytes"])) \
            if lv.get("from_bytes") is not None and lv.get("to_bytes") is not None else "—"
        cyc = lv["ns"] * ghz if ghz else None
        rows.append([name, span, lv["tsc"], lv["ns"], cyc, paper, pcyc])
        ctx.metric("%s_ns" % name, lv["ns"])
    md += [table(["level", "plateau (working set)", "TSC ticks/load", "ns/load",
                  "core cycles (measured clock)", "paper ns", "paper cycles (+1 issue)"], rows), ""]
    md += clock_crosscheck(d, ghz)
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
                if v:
                    ctx.metric("bw_%s_%d" % (op, s), v[0]["gb_per_s"])
            rows.append(r)
        md += ["Bandwidth (GB/s):", "", table(["working set"] + ops, rows), ""]
    series = []
    for order in ("page", "random"):
        pts = sorted((p["bytes"], p["ns_per_load"]) for p in d.get("points", [])
                     if p.get("order") == order and p.get("ns_per_load") is not None)
        if pts:
            series.append({"label": "%s order" % order, "x": [p[0] for p in pts],
                           "y": [p[1] for p in pts]})
    if series:
        md += [ctx.figure("fig-memsig", "Memory signature: dependent-load latency vs working set",
                          "working set (bytes)", "ns per load", series, xlog=True, ylog=True), ""]
    else:
        md += ["(no per-point data in memsig's JSON; figure skipped)", ""]
    return "\n".join(md)


def clock_crosscheck(d, ghz):
    """The L1 plateau in core cycles at the measured clock: both figures
    measured here (memsig's dependent loads, the dependent-add probe), so a
    load-to-use latency that is not a whole number of cycles, or beyond any
    x86 core's (3 to 7 cycles), says one of the two is off (a hypervisor
    slowing the add chain, or loads of the chase overlapping)."""
    l1 = (d.get("levels") or {}).get("L1")
    if not l1 or not ghz:
        return []
    cyc = l1["ns"] * ghz
    odd = not 3 <= cyc <= 7 or abs(cyc - round(cyc)) > 0.25
    return ["Cross-check of the core clock: memsig's L1 plateau, %.2f ns, is %.2f core cycles at "
            "the %.2f GHz the dependent-add probe measured%s." % (
                l1["ns"], cyc, ghz,
                " — **not a whole number of cycles between 3 and 7: treat core-cycle columns with "
                "caution** (a hypervisor may slow the add chain, or the pointer chase overlaps)"
                if odd else ""), ""]


# ------------------------------------------------------------ 2 kernels

KERNEL_PROGRAMS = [
    # program, quick filter, full filter (the quick one still runs every
    # size the goals below are judged at)
    ("memory", r"^(memcpy|load)-(hot|flushed)/[^/]+/(1024|65536|1048576)$",
     r"^(memcpy|load)-(hot|flushed)/"),
    ("csum", r"^(csum|csum_copy)/(cachenet|dpdk|lwip|loadsum64|loadsum512|glibc|cachenet-memcpy\+csum)(-cold)?/(20|64|576|1460|4096|9000|65536)$|^copy/(glibc|loop512)/(64|576|1460|4096|9000|65536)$",
     r"^(csum|csum_copy|copy)/[^/]+/[0-9]+$"),
    ("copy", r"^(bswap16|bswap32|pes|copy)/(cachenet|compiler|glibc|loop512)/(64|1460|65536)$"
     r"|^touch/(load512|store512)/65536$",
     r"^(bswap16|bswap32|pes|copy|touch)/[^/]+/"),
    ("crypto", r"^(chacha20|aes128ctr)/(cachenet|openssl)/(64|1460|16384|65536)$",
     r"^(chacha20|aes128ctr)/[^/]+/"),
]


def kernel_goals(ctx, got):
    """The kernels' targets (targets.py, section "kernels"), judged on this
    run's own numbers (same-run ratios). got: program -> {benchmark name ->
    result}. Returns Markdown lines."""
    def val(prog, name, metric):
        b = got.get(prog, {}).get(name)
        return b.get(metric) if b else None

    rows = []

    def goal(what, value, note=""):
        t = targets.get(what)
        rows.append([what, value, targets.bound(t), targets.verdict(t, value), note])
        if value is not None:
            ctx.metric("goals/kernels/" + what, value)

    for n in (1460, 9000):
        v = val("csum", "csum/cachenet/%d" % n, "tsc_per_byte")
        goal("csum hot %d B, TSC/B" % n, v)
        d = val("csum", "csum/dpdk/%d" % n, "tsc_per_byte")
        goal("csum hot %d B, DPDK / cachenet" % n, ratio(d, v))
    v, d = val("csum", "csum/cachenet/20", "tsc_per_op"), val("csum", "csum/dpdk/20", "tsc_per_op")
    goal("csum 20 B per call, cachenet / DPDK (inlined)", ratio(v, d))
    for n in (4096, 9000, 65536):
        r = ratio(val("csum", "csum/cachenet-cold/%d" % n, "tsc_per_op"),
                  val("csum", "csum/loadsum512-cold/%d" % n, "tsc_per_op"))
        goal("csum cold %d B, cachenet / 512-bit load loop" % n, r)
    for n in (576, 1460, 4096, 9000, 65536):
        c = val("csum", "csum_copy/cachenet/%d" % n, "tsc_per_op")
        r = ratio(c, val("csum", "copy/glibc/%d" % n, "tsc_per_op"))
        lp = val("csum", "copy/loop512/%d" % n, "tsc_per_op")
        # the same copy without the checksum: what the checksum itself costs
        note = "" if c is None or not lp else "%.2fx a bare AVX-512 copy loop (%+.1f ticks)" % (c / lp, c - lp)
        goal("copy+csum hot %d B, cachenet / memcpy" % n, r, note)
        r = ratio(c, val("csum", "csum_copy/cachenet-memcpy+csum/%d" % n, "tsc_per_op"))
        goal("copy+csum hot %d B, fused / memcpy then csum" % n, r)
    for alg in ("aes128ctr", "chacha20"):
        v = val("crypto", "%s/cachenet/16384" % alg, "tsc_per_byte")
        o = val("crypto", "%s/openssl/16384" % alg, "tsc_per_byte")
        goal("%s 16 KB, TSC/B" % alg, v,
             "OpenSSL %s" % ("%.3f" % o if o is not None else "not run"))
    for n in (64, 1460, 65536):
        b = val("copy", "bswap32/cachenet/%d" % n, "tsc_per_op")
        r = ratio(b, val("copy", "copy/glibc/%d" % n, "tsc_per_op"))
        lr = ratio(b, val("copy", "copy/loop512/%d" % n, "tsc_per_op"))
        # glibc's memcpy is rep movsb from 8 KB up, which no transforming
        # loop can use: the bare AVX-512 copy loop shows the vector ceiling.
        note = "" if lr is None else "%.2fx a bare AVX-512 copy loop" % lr
        ld = val("copy", "touch/load512/%d" % n, "tsc_per_op")
        st = val("copy", "touch/store512/%d" % n, "tsc_per_op")
        fills = ratio(ld + st, val("copy", "copy/glibc/%d" % n, "tsc_per_op")) if ld and st else None
        if fills is not None:
            # beyond L1 a loop fills every line it loads and every line it
            # stores; rep movsb does not fetch the lines it overwrites
            note += "; the loop's loads alone + its stores alone: %.2fx memcpy" % fills
        goal("bswap32 %d B, cachenet / memcpy" % n, r, note)
    met = sum(1 for r in rows if r[3] == "met")
    judged = sum(1 for r in rows if r[3] != "not run")
    caveat = (" Each figure is the median of 3 interleaved repetitions of 0.01 s: on a loaded "
              "machine a status near its bound can still flip between runs.")
    return ["### The kernels' targets on this run", "",
            "%d of %d judged goals met (ratios from this run's own medians; hot = buffer in "
            "L1/L2, cold = flushed before each op).%s" % (met, judged, caveat), "",
            table(["goal", "measured", "target", "status", "note"], rows), ""]


def family_tables(ctx, prog, d, plot_sizes=True):
    res = results(d)
    fams = {}
    for name, b in res.items():
        try:
            fam, impl, case = split(name)
        except ValueError:
            continue
        fams.setdefault(fam, {}).setdefault(case, {})[impl] = b
    md = []
    for fam in sorted(fams):
        impls = sorted({i for c in fams[fam].values() for i in c},
                       key=lambda i: (not i.startswith("cachenet"), i))
        metric = "tsc_per_byte"
        if not any(metric in b for c in fams[fam].values() for b in c.values()):
            metric = "tsc_per_op"
        ours = "cachenet" if "cachenet" in impls else None
        peers = [i for i in impls if ours and not i.startswith("cachenet")
                 and not i.endswith("-cold")]
        rows = []
        for case in sorted(fams[fam], key=case_key):
            row = fams[fam][case]
            vals = [row.get(i, {}).get(metric) for i in impls]
            for i in impls:
                v = row.get(i, {}).get(metric)
                if v is not None:
                    ctx.metric("%s/%s/%s/%s" % (fam, i, case, metric), v)
            rows.append([case] + vals + [ratio(row.get(p, {}).get(metric),
                                               row.get(ours, {}).get(metric)) for p in peers])
        # wide tables: hot and cold variants in two tables
        hot = [i for i in impls if not i.endswith("-cold")]
        cold = [i for i in impls if i.endswith("-cold")]
        for label, group in (("", hot), (" — cold (flushed before each op)", cold)):
            if not group:
                continue
            idx = [impls.index(i) for i in group]
            r2 = [[r[0]] + [r[1 + j] for j in idx] + (r[1 + len(impls):] if not label else [])
                  for r in rows]
            md += ["**%s/%s**%s — %s (TSC ticks; lower is better)" % (prog, fam, label, metric), "",
                   table(["case"] + group + (["%s ÷ cachenet" % p for p in peers] if not label else []), r2), ""]
        if plot_sizes and metric == "tsc_per_byte":
            series = []
            for i in impls:
                pts = []
                for case, row in fams[fam].items():
                    try:
                        size = int(case)
                    except ValueError:
                        continue
                    if i in row and row[i].get(metric) is not None:
                        pts.append((size, row[i][metric]))
                pts.sort()
                if len(pts) > 1:
                    series.append({"label": i, "x": [p[0] for p in pts], "y": [p[1] for p in pts],
                                   "style": "o--" if i.endswith("-cold") else "o-"})
            if series:
                md += [ctx.figure("fig-%s-%s" % (prog, fam.replace("_", "-")),
                                  "%s: TSC ticks per byte vs size" % fam, "bytes per op",
                                  "TSC ticks / byte", series, xlog=True, ylog=True), ""]
    return md


def tsc_words(ctx):
    """How the report names its time unit: the TSC at the frequency
    measured on this machine (the machine table's)."""
    hz = ctx.machine.get("tsc_hz")
    return "TSC at %.3f GHz, measured here" % (hz / 1e9) if hz else "TSC frequency not measured"


def kernels(ctx):
    md = ["## 2. Kernels: checksum, copy+checksum, byte swaps, ciphers vs every peer", "",
          "TSC ticks per byte (%s; not core cycles), median of %s; "
          "`-cold` = buffers flushed from every level before each op (untimed). "
          "`peer ÷ cachenet` > 1 means cachenet is faster. No paper has these numbers; "
          "%s and %s treat checksum and copy as the data-touching costs "
          "to beat." % (tsc_words(ctx), "3 interleaved repetitions", papers.short("ahlgren"),
                        papers.short("nahum")), ""]
    missing = []
    got = {}
    for prog, qf, ff in KERNEL_PROGRAMS:
        if not ctx.exe(prog):
            missing.append(prog)
            continue
        filt = qf if ctx.args.quick else ff
        if ctx.args.filter:
            filt = ctx.args.filter
            listed = ctx.run([ctx.exe(prog), "--benchmark_list_tests=true",
                              "--benchmark_filter=" + filt])
            if not any("/" in l and not l.startswith("cachenet:") for l in listed.splitlines()):
                continue
        # Three repetitions, interleaved, in --quick too: the goal table
        # below compares medians of one run, and one short sample per
        # benchmark on a shared machine flips verdicts.
        d = ctx.bench(prog, ["--benchmark_filter=" + filt, "--benchmark_min_time=0.01",
                             "--benchmark_repetitions=3",
                             "--benchmark_enable_random_interleaving=true",
                             "--benchmark_report_aggregates_only=true"], "kernels")
        md += ["### cachenet-bench-%s" % prog, "", "Counters: %s." % d.get("context", {}).get("cn_counters", "?"), ""]
        md += family_tables(ctx, prog, d)
        got[prog] = results(d)
    if not ctx.args.filter:
        md += kernel_goals(ctx, got)
    if missing:
        md += ["Not measured: %s (not built)." % ", ".join("cachenet-bench-" + m for m in missing), ""]
    return "\n".join(md)


# ------------------------------------------------------------ 3 buffers

def peer_cells(ctx, res, kind, case, impls, field="tsc_per_op", metric=False):
    """A table row's cells: FIELD of result KIND/impl/CASE for each impl of
    IMPLS (None where it did not run); with METRIC each one's TSC per op is
    recorded as a metric too."""
    cells = []
    for i in impls:
        b = res.get("%s/%s/%s" % (kind, i, case))
        cells.append(b.get(field) if b else None)
        if b and metric:
            ctx.metric("%s/%s/%s" % (kind, i, case), b.get("tsc_per_op"))
    return cells


def buffers(ctx):
    d = ctx.bench("buf", ["--benchmark_filter=^(mbuf|txbuf|sockbuf)/"] + ctx.timed_args(0.01, 0.03),
                  "buffers")
    res = results(d)
    md = ["## 3. Buffers: mbuf pool vs contiguous sockbuf vs DPDK vs lwIP (%s)" % papers.short("ang"),
          "", "Paper: %s." % papers.cite("ang"), "",
          "TSC ticks per op (lower is better). Context: %s" % "; ".join(
              "%s: %s" % (k, v) for k, v in d.get("context", {}).items()
              if k in ("dpdk", "lwip")), ""]
    # mbuf ops, peers side by side
    ops = sorted({split(n)[2] for n in res if n.startswith("mbuf/")})
    impls = ["cachenet", "dpdk", "lwip", "glibc"]
    rows = []
    for op in ops:
        rows.append([op] + peer_cells(ctx, res, "mbuf", op, impls, metric=True))
    md += ["**Per-buffer operations** (Ang's Table 5: MGET 290-380, MGETHDR 300-400, "
           "MCLGET 400, MFREE 360 i960 clocks at 100 MHz, i.e. ~3-4 µs per get+free pair):", "",
           table(["op"] + ["%s TSC/op" % i for i in impls], rows), ""]
    # txbuf: per-segment cost and allocations per segment
    rows = []
    cases = sorted({split(n)[2] for n in res if n.startswith("txbuf/")}, key=lambda c: int(c.replace("window", "")) if c.replace("window", "").isdigit() else 0)
    timp = ["contig", "mbuf", "mbuf4", "dpdk", "lwip"]
    for c in cases:
        rows.append([c] + peer_cells(ctx, res, "txbuf", c, timp) +
                    peer_cells(ctx, res, "txbuf", c, timp, "allocs_per_seg", metric=True))
    md += ["**Buffers per transmitted segment** (Ang, Sec. 3.4.1, counts ~5 mbuf-type "
           "allocations per packet of a large message):", "",
           table(["window"] + ["%s TSC/seg" % i for i in timp] + ["%s allocs/seg" % i for i in timp], rows), ""]
    # sockbuf growth: naive O(n) vs chain/ring O(1)
    series = []
    for op in ("append", "seg", "mcopy"):
        rows = []
        ns = sorted({int(split(n)[2].split("-")[1]) for n in res
                     if n.startswith("sockbuf/") and split(n)[2].startswith(op + "-")})
        for n in ns:
            row = [n]
            for i in ("naive", "chain", "ring"):
                b = res.get("sockbuf/%s/%s-%d" % (i, op, n))
                row.append(b.get("tsc_per_op") if b else None)
                if b:
                    ctx.metric("sockbuf/%s/%s-%d" % (i, op, n), b.get("tsc_per_op"))
            row.append(ratio(row[1], row[2]))
            rows.append(row)
        for j, i in enumerate(("naive", "chain", "ring")):
            pts = [(r[0], r[1 + j]) for r in rows if r[1 + j] is not None]
            if pts:
                series.append({"label": "%s %s" % (op, i), "x": [p[0] for p in pts],
                               "y": [p[1] for p in pts], "style": "o--" if i == "naive" else "o-"})
        if rows:
            md += ["**sockbuf %s** vs segments already queued (Ang, Sec. 3.4: BSD's sbappend "
                   "and m_copy walk the chain, O(n)):" % op, "",
                   table(["queued", "naive TSC/op", "chain TSC/op", "ring TSC/op", "naive ÷ chain"], rows), ""]
    if series:
        md += [ctx.figure("fig-sockbuf", "Socket buffer cost vs segments queued (naive BSD vs O(1))",
                          "segments already in the buffer", "TSC ticks per op", series,
                          xlog=True, ylog=True), ""]
    return "\n".join(md)
