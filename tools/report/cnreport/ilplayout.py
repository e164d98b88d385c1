# SPDX-License-Identifier: BSD-2-Clause
"""Studies 8 and 9: integrated layer processing (Ahlgren, Björkman,
Gunningberg, "The Applicability of Integrated Layer Processing"; through
ilp/model.py, not a copy of it) and code layout (Nahum, Yates, Kurose,
Towsley, "Cache Behavior of Network Protocols", Tables 11-12; through
tools/cord)."""
import concurrent.futures
import json
import os
import re
import shutil
import sys
import tempfile

from . import papers, targets
from .net import SIM_MIN, get_memsig
from .util import NotMeasured, fmt, ratio, results, table

PIPES = ["bswap32+pes+csum", "copy+bswap32+pes+csum"]

# The vector forms of the generated kernels, best first: the benchmark's
# name suffix (bench/bench_ilp.cc: none for AVX-512), the name shown, and
# the CPU features (cn_cpu_features) the form needs.
VECTOR_FORMS = [("avx512", "", "AVX-512", ("avx512f", "avx512bw")),
                ("avx2", "-avx2", "AVX2", ("avx2",))]
SUFFIX = {f: sfx for f, sfx, _, _ in VECTOR_FORMS}
SHOWN = {f: name for f, _, name, _ in VECTOR_FORMS}


def forms_to_run(features):
    """The vector forms worth running on a CPU whose cn_cpu_features is
    features: the best one it has; both when the features are unknown
    (vector_form() then picks from the rows that came back)."""
    if not features:
        return [f for f, _, _, _ in VECTOR_FORMS]
    have = set(features.lower().split())
    for f, _, _, need in VECTOR_FORMS:
        if all(n in have for n in need):
            return [f]
    return []


def vector_form(res):
    """The best vector form with rows in res (name → entry): "avx512",
    "avx2", or None (the scalar rows only). The benchmark registers a form
    only where the CPU has it (and CACHENET_CPU_DISABLE leaves it), so the
    rows say what this CPU runs."""
    for f, sfx, _, _ in VECTOR_FORMS:
        pat = re.compile(r"^ilp/[^/]+-(seq|int|intpf)%s/" % re.escape(sfx))
        if any(pat.match(n) for n in res):
            return f
    return None


def ilp(ctx):
    if not ctx.exe("ilp"):
        raise NotMeasured("cachenet-bench-ilp was not built (the ILP generator needs it)")
    sizes = ["1460"] if ctx.args.quick else ["1460", "65536"]
    states = ["hot", "cold"] if ctx.args.quick else ["hot", "l2", "l3", "cold"]
    forms = "(seq|int)" if ctx.args.quick else "(seq|int|intpf)"
    run = forms_to_run(ctx.machine.get("cn_cpu_features"))
    isas = "|".join(["-scalar"] + [SUFFIX[f] for f in run if SUFFIX[f]])
    isas = "(%s)%s" % (isas, "?" if "avx512" in run else "")
    filt = r"^ilp/(copy\+)?bswap32\+pes\+csum-%s%s/(%s)-(%s)(-conflict)?(/|$)" % (
        forms, isas, "|".join(sizes), "|".join(states))
    d = ctx.bench("ilp", ["--benchmark_filter=" + filt] + ctx.timed_args(0.01, 0.02), "table")
    res = results(d)
    form = vector_form(res)
    vec = SUFFIX.get(form, "")
    if not ctx.machine.get("tsc_hz"):
        raise NotMeasured("the TSC frequency was not measured (ns per byte need it)")
    tsc_ghz = float(ctx.machine["tsc_hz"]) / 1e9
    key = "tsc_per_byte_med"
    md = ["## 8. ILP: sequential vs integrated loops (%s)" % papers.short(
              "ahlgren", "Table II, Fig. 6-12"), "",
          "Paper: %s." % papers.cite("ahlgren"), "",
          "`seq` = one loop per function, `int` = one integrated loop (the best vector form "
          "the CPU has: AVX-512, else AVX2 in rows named `-avx2`; `-scalar` = 64-bit registers "
          "like the paper's machines); vector form in this run: **%s**; cache state of "
          "the buffers before each op: hot, l2, l3, cold (flushed); `-conflict` places source "
          "and destination at the same cache colour (Fig. 6). Counter `%s` (median timed "
          "stretch; on a shared machine the mean includes time slices lost to other tasks). ns/B = TSC/B ÷ "
          "%.3f. Paper ns/B, real implementation: HP 9000-735/99 cold %d/%d warm %d/%d "
          "(seq/ILP); SPARCstation 20/71 cold %d/%d warm %d/%d." % (
              "%s (%s)" % (SHOWN[form], "rows named `%s`" % vec if vec else "rows without a suffix")
              if form else
              "none (no vector rows: scalar only)", key, tsc_ghz, *papers.AHLGREN_T2["HP 9000-735/99"]["real"],
              *papers.AHLGREN_T2["SPARCstation 20/71"]["real"]), ""]
    bars = {}
    for size in sizes:
        rows = []
        for pipe in PIPES:
            for isa in ([vec] if form else []) + ["-scalar"]:
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
    if not ctx.args.quick:
        md += goals(ctx, res, key, form)
    # register knee: the state sweep (hot, 1460 B)
    sweep = {}
    if not ctx.args.quick:
        sweep = ctx.bench("ilp", [r"--benchmark_filter=^ilp/syn\.n[0-9]\.s[0-9]+\.a10-(seq|int)"
                                  r"(-scalar%s)?/1460-hot$" % ("|" + vec if vec else "")]
                          + ctx.timed_args(0.01, 0.02), "sweep")
        sw = results(sweep)
        ser = {}
        for name, b in sw.items():
            m = re.match(r"ilp/syn\.n(\d+)\.s(\d+)\.a10-(seq|int)(-scalar|-avx2)?/", name)
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
        # two simulations at once, one per CPU, the state sweep's even and
        # odd s apart: counts do not care about the load, and this was the
        # section's longest wait (under valgrind only the scalar and AVX2
        # forms exist: valgrind has no AVX-512; the AVX2 rows only where
        # AVX2 is the form the section uses)
        tail = r")-(seq|int)(-scalar%s)?/1460-hot$" % ("|-avx2" if form == "avx2" else "")
        halves = {
            "model-sim-a": r"^ilp/((copy\+)?bswap32\+pes\+csum|syn\.n[0-9]\.s[0-9]*[02468]\.a10" + tail,
            "model-sim-b": r"^ilp/((copy\+)?syn\.n3\.s0_1_1[^-]*|syn\.n[0-9]\.s[0-9]*[13579]\.a10" + tail,
        }
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futs = [pool.submit(ctx.bench, "ilp", ["--benchmark_filter=" + f] + SIM_MIN, tag, sim="",
                                cpu=ctx.other_cpu() if k else None)
                    for k, (tag, f) in enumerate(halves.items())]
            parts = [f.result() for f in futs]
        sim = dict(parts[0], benchmarks=parts[0].get("benchmarks", []) + parts[1].get("benchmarks", []))
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for n, obj in (("memsig", ms), ("table", d), ("sweep", sweep), ("sim", sim)):
                paths[n] = os.path.join(tmp, n + ".json")
                with open(paths[n], "w") as f:
                    json.dump(obj, f)
            extra, shown = [], ""
            if sweep.get("benchmarks"):
                extra += ["--bench", paths["sweep"]]
                shown += " --bench <ilp-sweep>"
            # the overlap form's core rates (ilp/probe.py, pinned like the
            # benchmarks) and AVX-512's R from the sweep's disassembly
            probe = os.path.join(os.path.dirname(model), "probe.py")
            try:
                paths["probe"] = os.path.join(tmp, "probe.json")
                ctx.run(ctx.pinned([sys.executable, probe, "--json", paths["probe"]]))
                extra += ["--probe", paths["probe"]]
                shown += " --probe probe.json"
            except (RuntimeError, OSError) as e:
                md += ["Overlap form not run: ilp/probe.py failed (%s)." % e, ""]
            # the compiled loops: the vector form's counts and chains,
            # scalar chains
            for lf in ([form] if form else []) + ["scalar"]:
                lib = os.path.join(ctx.paths["root"], "ilp", "libcn_ilp_%s.a" % lf) \
                    if ctx.paths.get("root") else None
                if lib and os.path.exists(lib) and shutil.which("objdump"):
                    extra += ["--objdump", lib]
                    shown += " --objdump build/ilp/libcn_ilp_%s.a" % lf
            try:
                out = ctx.run([sys.executable, model, "--memsig", paths["memsig"], "--bench",
                               paths["table"], "--sim", paths["sim"]] + extra)
                ctx.commands.append((ctx.section, "taskset -c 0 python3 ilp/probe.py --json "
                                     "probe.json; python3 ilp/model.py --memsig memsig.json "
                                     "--bench <ilp-table> --sim <ilp-model-sim>" + shown, False))
                md += ["**Model (equations (1)-(3)) vs measurement**, `ilp/model.py` on this run's "
                       "memsig, timed table, state sweep and callgrind counts, and the core's "
                       "rates from `ilp/probe.py` (parameters measured here, see ilp/README.md). "
                       "`model` is eq. (3) as the paper adds it; `overlap` combines the same "
                       "terms per loop by max() (an out-of-order core), `bound` names the term "
                       "that sets the pace:", "", "```", out.strip(), "```", ""]
                m = re.search(r"(\d+) of (\d+) within 20%", out)
                if m:
                    ctx.metric("model_within_20pct", int(m.group(1)) / int(m.group(2)))
                m = re.search(r"overlap \(eq\. 3 terms, max per loop\): (\d+) of (\d+) within", out)
                if m:
                    ctx.metric("overlap_model_within_20pct", int(m.group(1)) / int(m.group(2)))
            except RuntimeError as e:
                md += ["Model vs measurement: FAILED: %s" % e, ""]
    return "\n".join(md)


# The section's targets (targets.py): the prefetching integrated loop
# against the sequential one, and the cipher pipelines' integrated loop
# against the cipher alone, at these (size, cache state)s.
PF_TARGETS = [t for t in targets.of("ilp") if "pipe" in t.params]
CIPHER_TARGETS = [t for t in targets.of("ilp") if "cipher" in t.params]
CIPHER_GOALS = sorted({(t.params["size"], t.params["state"]) for t in CIPHER_TARGETS},
                      key=lambda x: (int(x[0]), x[1] != "hot"))


def ratio3(r):
    """A goal's ratio to three decimals: fmt()'s three significant digits
    print 1.103 as "1.1", beside a "NOT met" for a bound of 1.1."""
    return "%.3f" % r if r else None


def goals(ctx, res, key, form="avx512"):
    """The section's targets for vector form `form` ("avx512", "avx2")
    from the table just run (intpf) and a cipher run; none without a
    vector form."""
    if form is None:
        return ["**The integrated loops' targets**: not judged (no vector form on this CPU; "
                "the targets are set for AVX-512 and AVX2).", ""]
    vec = SUFFIX[form]
    rows = []
    for t in PF_TARGETS:
        if t.params["form"] != form:
            continue
        pipe, size, st = t.params["pipe"], t.params["size"], t.params["state"]
        s = res.get("ilp/%s-seq%s/%s-%s" % (pipe, vec, size, st), {}).get(key)
        f = res.get("ilp/%s-intpf%s/%s-%s" % (pipe, vec, size, st), {}).get(key)
        r = ratio(s, f)
        if r:
            ctx.metric("goal/intpf%s/%s-%s/seq_over_intpf" % (vec, size, st), r)
        rows.append([t.key, targets.shown(t), ratio3(r), targets.verdict(t, r, "not measured")])
    mine = [t for t in CIPHER_TARGETS if t.params["form"] == form]
    ciphers = "|".join(sorted({t.params["cipher"] for t in mine}))
    filt = r"^ilp/(copy\+(%s)\+csum-int%s|(%s)-seq%s)/(1460|65536)-(hot|l2)(/|$)" % (
        ciphers, vec, ciphers, vec)
    # (timed_args() interleaves the repetitions at random)
    cres = results(ctx.bench("ilp", ["--benchmark_filter=" + filt]
                             + ctx.timed_args(0.01, 0.02, reps=5), "ciphers"))
    for t in mine:
        c, size, st = t.params["cipher"], t.params["size"], t.params["state"]
        i = cres.get("ilp/copy+%s+csum-int%s/%s-%s" % (c, vec, size, st), {}).get(key)
        a = cres.get("ilp/%s-seq%s/%s-%s" % (c, vec, size, st), {}).get(key)
        r = ratio(i, a)
        if r:
            ctx.metric("goal/%s%s/%s-%s/int_over_alone" % (c, vec, size, st), r)
        rows.append([t.key, targets.shown(t), ratio3(r), targets.verdict(t, r, "not measured")])
    return ["**The integrated loops' targets, %s form** (same-run medians of `%s`; the cipher "
            "alone is the library's whole-buffer kernel, `ilp/<cipher>-seq%s`):" % (
                SHOWN[form], key, vec), "",
            table(["kernel", "goal", "measured", "verdict"], rows), ""]


# Nahum et al., Table 11: latency (µs) of the original and the CORDed x-kernel
# (100 MHz R4400, 16 KB direct-mapped L1 I and D, 1 MB L2).
GEOM_NAMES = {"16384,1,64": "16 KB direct-mapped", "32768,8,64": "32 KB 8-way",
              "8192,2,64": "8 KB 2-way"}


def paper_label(path):
    proto, way, on = path.split("-")
    return "%s %s Cksum %s" % (proto.upper(), "Send" if way == "send" else "Recv", on.capitalize())


def chg(a, b, floor=0.0):
    """b vs a in percent; "—" when a is (near) zero, where a ratio says nothing."""
    return "%+.0f%%" % (100.0 * (b - a) / a) if a and a > floor else "—"


# Below this many I1 misses per packet a change in percent is noise (a few
# misses in thousands of packets).
MISS_FLOOR = 0.05


def fastpath(ctx):
    """The protocol paths before/after CORD (tools/cord/fastpath.py):
    Markdown lines, or raises NotMeasured."""
    src = ctx.paths.get("source")
    fp = os.path.join(src, "tools", "cord", "fastpath.py") if src else None
    if not fp or not os.path.exists(fp):
        raise NotMeasured("tools/cord/fastpath.py builds cachenet from the source tree, "
                          "which this installed report does not have")
    work = os.path.join(ctx.out, "cord-fastpath")
    # The default run: every order, three I1 geometries, native timing
    # twice and cachenet-bench-tcp with the order; --quick: the per-path
    # C3 order at 16 KB direct-mapped only, simulated, no native timing
    # (a one-run timing on a shared VM says nothing; the build alone is
    # ~20 s of the quick budget).
    args = ["--reps", "2", "--bench-tcp"]
    if ctx.args.quick:
        args = ["--reps", "0", "--algos", "c3-path", "--geometries", "16384,1,64",
                "--packets", "1000", "--cold-packets", "30"]
    if ctx.args.cpu is not None:
        args += ["--cpu", str(ctx.args.cpu)]
    ms = None
    try:
        ms = get_memsig(ctx)
    except (NotMeasured, RuntimeError):
        pass
    cmd = [sys.executable, fp, src, work] + args
    # Any source change rebuilds (ninja is incremental) and re-measures.
    inputs = [fp]
    for sub in ("src", "include", os.path.join("tools", "cord")):
        for root, _dirs, files in os.walk(os.path.join(src, sub)):
            inputs += [os.path.join(root, f) for f in sorted(files)
                       if f.endswith((".c", ".h", ".py", ".build"))]

    def produce(path):
        extra = []
        if ms:
            mpath = os.path.join(ctx.out, "cord-fastpath-memsig.json")
            with open(mpath, "w") as f:
                json.dump(ms, f)
            extra = ["--memsig", mpath]
        tmp = path + ".tmp"
        ctx.run(cmd + extra + ["--json", tmp], timeout=1800)
        with open(tmp) as f:
            d = json.load(f)
        os.replace(tmp, path)
        return d
    shown = ["python3", "tools/cord/fastpath.py", "SOURCE", "OUT/cord-fastpath"] + args + \
        (["--memsig", "memsig.json"] if ms else [])
    d = ctx.cached_run("cord-fastpath", cmd, inputs, produce, shown=shown)
    algos = d["algos"]
    pen = d["penalties"]
    md = ["### The protocol paths (Tables 11 and 12 for this machine)", "",
          "`tools/cord/fastpath.py`: one release build (%s) of libcachenet and "
          "`cachenet-cord-paths` (the TCP/UDP send/receive loops of `cachenet-bench-tcp` with "
          "a fixed packet count, linked statically against libcachenet.a so that one order "
          "spans library and program) with `-Dlink_order`; the baseline is linked with a "
          "script that orders nothing, the CORD builds relink the same objects with GNU ld "
          "scripts from `cachenet-cord order/emit` on callgrind profiles of the baseline: "
          "C3-PATH = C3 on each path's own profile, one program per path (as Nahum et al. CORDed "
          "each benchmark), C3 and PH = C3 and Pettis-Hansen on the eight profiles with "
          "equal weight, each a phase (one order for the library); every order placed for "
          "the 16 KB direct-mapped I1 (`order --icache`, -PACKED: clustering only); each "
          "checked by "
          "`cachenet-cord verify`. Per packet, "
          "**simulated** by callgrind (only the host's per-packet work; D1 32 KB 8-way, LL 8 MB "
          "16-way), %d packets after 200 warm-up packets; *cold*: the I-cache emptied "
          "(`cn_cache_evict_icache`) before each of %d packets. TCP: one 1460-byte segment "
          "a packet (checksum on = computed in software in a separate pass, off = offloaded); "
          "UDP: 1472-byte datagrams." % (d.get("compiler", "?"), d["packets"]["warm"],
                                         d["packets"]["cold"]), ""]
    per = {k: v for k, v in d["verify"].items() if "/" in k}
    for algo, v in d["verify"].items():
        if "/" in algo:
            continue
        b, a = v.get("before", {}), v.get("after", {})
        md.append("- %s, one order for all eight paths (what a library ships): %s functions, "
                  "%s bytes; hot span %s → %s bytes, %s → %s pages of 4 KB; verify %s." % (
                      algo.upper(), d["order"][algo]["functions"], fmt(d["order"][algo]["bytes"]),
                      fmt(b.get("span")), fmt(a.get("span")), b.get("pages"), a.get("pages"),
                      "OK" if v["ok"] else "FAILED"))
    if per:
        algo = sorted(per)[0].split("/")[0]
        md.append("- %s, one order and one program per path (Nahum et al. CORDed each benchmark "
                  "program): %s; verify %s." % (
                      algo.upper(), "; ".join(
                          "%s %s functions, span %s → %s B" % (
                              k.split("/")[1], d["order"][k]["functions"],
                              fmt(v.get("before", {}).get("span")), fmt(v.get("after", {}).get("span")))
                          for k, v in sorted(per.items())),
                      "OK" if all(v["ok"] for v in per.values()) else "FAILED"))
    md += ["- Instructions per packet identical in every layout (and the program's output): "
           "**%s**." % ("yes" if d["identical_instructions"] else "NO"), ""]
    # Table 12 analogue: I1 misses per packet
    for mode, bypath in d["sim"].items():
        rows = []
        for p, byg in bypath.items():
            for g, row in byg.items():
                b = row["base"]
                r = [paper_label(p), fmt(d["hot"][p]["bytes"]), GEOM_NAMES.get(g, g),
                     round(b["ir"]), "%.2f" % b["i1"]]
                for a in algos:
                    r += ["%.2f" % row[a]["i1"], chg(b["i1"], row[a]["i1"], MISS_FLOOR)]
                    ctx.metric("%s/%s/%s/%s_i1_per_packet" % (mode, p, g, a), row[a]["i1"])
                ctx.metric("%s/%s/%s/base_i1_per_packet" % (mode, p, g), b["i1"])
                r += ["%.2f%% → %.2f%%" % (100 * b["i1"] / b["ir"], 100 * row[algos[0]]["i1"] / b["ir"])
                      if b["ir"] else "—"]
                pt = papers.NAHUM_T3.get(paper_label(p))
                p12 = papers.NAHUM_T12.get(paper_label(p))
                r += ["%s → %.1f%%" % ("%.1f%%" % (100 * pt[0]) if pt else "—", 100 * p12[0])
                      if p12 and g == "16384,1,64" and mode == "warm" else ""]
                rows.append(r)
        hdr = ["path", "hot code B", "I1", "instr./packet", "I1 miss/packet base"]
        for a in algos:
            hdr += [a.upper(), "%s vs base" % a.upper()]
        hdr += ["I1 miss rate base → %s" % algos[0].upper(), "paper I1 miss rate (T3 → T12)"]
        md += ["**Table 12 for this machine, %s I-cache**: simulated I1 misses per packet "
               "('hot code B': the functions carrying 99.9%% of the path's instructions)." % mode, "",
               table(hdr, rows), ""]
    # Table 11 analogue: latency estimate and native timing
    rows = []
    for p in d["paths"]:
        for mode in d["sim"]:
            row = d["sim"][mode][p].get("16384,1,64")
            t = d.get("timing", {}).get(mode, {}).get(p)
            r = [paper_label(p), mode]
            if row:
                r += [round(row["base"]["est"])]
                for a in algos:
                    r += [round(row[a]["est"]), chg(row["base"]["est"], row[a]["est"])]
            else:
                r += ["—"] + ["—", "—"] * len(algos)
            if t:
                m = t["median"]
                r += ["%.0f" % m["base"]] + ["%.0f (%.3f)" % (m[a], m[a] / m["base"]) for a in algos]
                r += ["%.3f" % (m["base-again"] / m["base"]) if m.get("base-again") else "—"]
                for a in algos:
                    ctx.metric("%s/%s/%s_native_ratio" % (mode, p, a), m[a] / m["base"])
            else:
                r += ["—"] * (2 + len(algos))
            pt = papers.NAHUM_T11.get(paper_label(p))
            r += ["%.2f → %.2f (%+.0f%%)" % (pt[0], pt[1], 100 * (pt[1] - pt[0]) / pt[0])
                  if pt and mode == "warm" else ""]
            rows.append(r)
    hdr = ["path", "I-cache", "est. base"]
    for a in algos:
        hdr += ["est. " + a.upper(), "vs base"]
    hdr += ["native base"] + ["native %s (ratio)" % a.upper() for a in algos] + \
        ["noise: base again ÷ base", "paper µs orig → CORD"]
    md += ["**Table 11 for this machine**: latency per packet. *est.*: simulated, 16 KB "
           "direct-mapped I1: instructions + (I1 + D1 misses) × %.1f + LL misses × %.1f TSC "
           "ticks (L2 and memory latency %s). *native*: median TSC ticks per packet on this "
           "machine's own caches, %s (ratio = after ÷ before, same run; the baseline's "
           "second series, *base again*, shows what two runs of one program differ by "
           "on this shared 2-core VM)." % (
               pen["l2_tsc"], pen["mem_tsc"], pen["source"],
               "`%s`" % d.get("timing_command", "?") if any(d.get("timing", {}).values())
               else "not run in this mode"), "",
           table(hdr, rows), ""]
    if not any(d.get("timing", {}).values()):
        md += ["Native timing: not run in this mode (`--quick` runs the simulations only).", ""]
    bt = d.get("bench_tcp")
    if bt and "error" in bt:
        md += ["`cachenet-bench-tcp` with the order: not built (%s)." % bt["error"], ""]
    elif bt:
        rows = []
        for p, c in bt["cases"].items():
            x = bt["median"]["base"].get(c)
            y = bt["median"]["c3"].get(c)
            z = bt["median"].get("base-again", {}).get(c)
            rows.append([paper_label(p), "`%s`" % c, "%.1f" % x if x else "—",
                         "%.1f" % y if y else "—", "%.3f" % (y / x) if x and y else "—",
                         "%.3f" % (z / x) if x and z else "—"])
            if x and y:
                ctx.metric("bench-tcp/%s/c3_native_ratio" % p, y / x)
        v = bt["verify"]
        md += ["**`cachenet-bench-tcp` with `-Dlink_order`**: the benchmark program links "
               "libcachenet.a too, so the library's part of the shared %s order (%d of its "
               "functions) applies to it: verify %s, hot span %s → %s bytes. Native "
               "`tsc_per_packet`, medians of %s:" % (
                   d.get("build_algo", "c3").upper(), v.get("after", {}).get("functions", 0),
                   "OK" if v["ok"] else "FAILED", fmt(v.get("before", {}).get("span")),
                   fmt(v.get("after", {}).get("span")), "`%s`" % bt.get("command", "?")), "",
               table(["path", "case", "base", d.get("build_algo", "c3").upper(), "ratio",
                      "noise: base again ÷ base"], rows), ""]
    # what the tables say, counted
    g16 = "16384,1,64"
    warm = d["sim"].get("warm", {})
    big = [p for p in d["paths"] if (d["hot"][p]["bytes"] or 0) > 16384]
    cut_t = targets.get("I1 misses cut where the hot code exceeds 16 KB")
    for a in algos:
        cut = [p for p in d["paths"] if g16 in warm.get(p, {}) and
               warm[p][g16]["base"]["i1"] > MISS_FLOOR and
               targets.met(cut_t, 1 - warm[p][g16][a]["i1"] / warm[p][g16]["base"]["i1"])]
        had = [p for p in d["paths"] if g16 in warm.get(p, {}) and
               warm[p][g16]["base"]["i1"] > MISS_FLOOR]
        md.append("- %s: %s fewer 16 KB direct-mapped I1 misses per packet on %d of the "
                  "%d paths that had any (%s)." % (a.upper(), targets.bound(cut_t), len(cut), len(had),
                                                   ", ".join(cut) or "none"))
        ctx.metric("paths_cut_30pct/%s" % a, len(cut))
    for a, worse in d.get("safety", {}).items():
        md.append("- Safety net (the comparison of `cachenet-cord verify --simulate`: I1 %s, "
                  "warned when > 5%% worse than the baseline), %s: %s." % (
                      d.get("target", g16), a.upper(),
                      "no path worse" if not worse else "**worse** on " + ", ".join(
                          "%s (%s → %s misses)" % (w["path"], fmt(w["base"]), fmt(w["new"]))
                          for w in worse)))
        ctx.metric("safety_worse_paths/%s" % a, len(worse))
    md += ["- Hot code larger than 16 KB: %s (the target \"%s fewer misses where the hot "
           "code exceeds the cache\" applies to %s)." % (
               ", ".join(big) or "no path (%.1f-%.1f KB)" % (
                   min(d["hot"][p]["bytes"] or 0 for p in d["paths"]) / 1024,
                   max(d["hot"][p]["bytes"] or 0 for p in d["paths"]) / 1024),
               targets.bound(cut_t), "those" if big else "none; the default layout still conflicts in a "
               "direct-mapped cache, which is what the orders remove"), ""]
    md += ["Whole procedure: %.0f s in this run (%s; the first run also compiles "
           "libcachenet)." % (d.get("seconds", 0), ", ".join(
               "%s %.0f s" % (k, v) for k, v in d.get("phases", {}).items())), ""]
    return md


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
    rows, hdr = [], None
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
    md = ["## 9. Code layout before and after CORD (%s)" % papers.short("nahum", "Tables 11-12"),
          "", "Paper: %s." % papers.cite("nahum"), ""]
    try:
        md += fastpath(ctx)
    except (NotMeasured, RuntimeError) as e:
        md += ["Protocol paths before/after CORD: **not measured** (%s)." % e, ""]
    md += ["### The CORD test program", "",
           "`tests/cord/prog`: 19 hot functions (~12 KB) each between ~12 KB of cold code, "
           "2000 \"packets\"; profiled with callgrind, ordered by `cachenet-cord` (C3, "
           "Pettis-Hansen, hotness), relinked with GNU ld, verified, and run under callgrind's "
           "cache simulator: **simulated** I1 misses (D1 32 KB 8-way, LL 8 MB 16-way).", "",
           table(["I1 geometry"] + (hdr or []) + ["%s vs base" % h for h in (hdr or [])[1:]], rows), "",
           "Instructions per run, identical in every layout: %s. Hot code: %s." % (
               fmt(int(ins.group(1))) if ins else "?", "; ".join(span) or "?"), "",
           "Paper (Table 12, CORDed x-kernel, 16 KB direct-mapped): TCP send cksum off I/D/L2 "
           "%.1f%% / %.1f%% / %.1f%%; Table 11: CORD cut latency by 0-40%% (UDP send cksum off "
           "20.92 → 12.53 µs)." % tuple(100 * x for x in papers.NAHUM_T12["TCP Send Cksum Off"]), ""]
    if rows and hdr:
        md += [ctx.figure("fig-cord", "CORD test program: simulated I1 misses by layout",
                          "I1 geometry", "I1 misses per run",
                          [{"label": h, "x": [r[0] for r in rows], "y": [r[1 + j] for r in rows]}
                           for j, h in enumerate(hdr)], xlog=False, ylog=True, kind="bar",
                          xticks=[r[0] for r in rows]), ""]
    return "\n".join(md)
