# SPDX-License-Identifier: BSD-2-Clause
"""The machine description: CPU, caches (cn_cache_geometry, through a
benchmark's JSON context `cn_caches`), TSC frequency and how it was found,
a measured core clock, and whether counters are hardware or simulated."""
import json
import os
import platform
import shutil
import tempfile

from .util import NotMeasured, table

# A chain of dependent adds: one per core cycle on every x86 core since the
# P6 (latency 1), the loop's own increment and branch run beside it on other
# ports. Adds per TSC tick times the TSC rate is the core clock while the
# loop runs (turbo included).
CLOCK_C = r"""
#include <stdint.h>
#include <stdio.h>
static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
int main(void)
{
	/* x 16 adds: ~3.2 M cycles, ~1 ms a sample. Short samples, many of
	 * them, best taken: on a shared VM a 20 ms sample was rarely free of
	 * preemption, and 15 of them gave 1.3-2.1 GHz under load for a core
	 * that runs at 3.6. */
	const long iters = 200000;
	uint64_t best = ~0ull, x = 0;
	for (int r = 0; r < 300; r++) {
		uint64_t t0 = tsc();
		for (long i = 0; i < iters; i++)
			__asm__ volatile(
			    "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
			    "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
			    "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
			    "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
		uint64_t t = tsc() - t0;
		if (t < best)
			best = t;
	}
	printf("%.6f %llu\n", (double)iters * 16 / (double)best, (unsigned long long)x);
	return 0;
}
"""


def core_clock(ctx, tsc_hz):
    """(GHz, how) measured by the dependent-add loop, compiled here."""
    if platform.machine() not in ("x86_64", "i686", "amd64"):
        raise NotMeasured("the dependent-add probe is x86 only")
    cc = os.environ.get("CC", "cc").split()
    if not shutil.which(cc[0]):
        raise NotMeasured("no C compiler (%s) to build the probe" % cc[0])

    def produce(path):
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "clock.c"), os.path.join(d, "clock")
            with open(src, "w") as f:
                f.write(CLOCK_C)
            ctx.run(cc + ["-O2", "-o", exe, src])
            out = ctx.run(ctx.pinned([exe]))
        r = {"adds_per_tick": float(out.split()[0])}
        with open(path, "w") as f:
            json.dump(r, f)
        return r
    r = ctx.cached_run("core-clock", ["clock-probe", CLOCK_C], [], produce,
                       shown=["cc -O2 clock.c (the dependent-add loop in tools/report/cnreport/machine.py)"])
    return r["adds_per_tick"] * tsc_hz / 1e9


def describe(ctx, memsig=None):
    """Markdown for the machine, plus a dict for report.json."""
    info = {"arch": platform.machine(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((l.split(":", 1)[1].strip() for l in f
                                if l.startswith("model name")), "?")
    except OSError:
        info["cpu"] = "?"
    try:
        d = ctx.bench("memory", ["--benchmark_filter=^load-hot/c/4096$",
                                 "--benchmark_min_time=0.001"], "context")
        c = d.get("context", {})
        info.update({k: c.get(k) for k in ("cn_caches", "cn_counters", "cn_tsc_hz",
                                           "cn_tsc_source", "cn_cpu_features")})
        info["load_avg"] = c.get("load_avg")
    except (NotMeasured, RuntimeError) as e:
        info["context_error"] = str(e)
    tsc_hz = float(info.get("cn_tsc_hz") or (memsig or {}).get("tsc_hz") or 0)
    info["tsc_hz"] = tsc_hz or None
    clock_how = None
    try:
        if not tsc_hz:
            raise NotMeasured("TSC frequency unknown")
        info["core_ghz"] = core_clock(ctx, tsc_hz)
        clock_how = ("measured: a chain of dependent adds (1 per core cycle) timed "
                     "against the TSC, best of 300 x ~1 ms, pinned")
    except (NotMeasured, RuntimeError) as e:
        # no figure the machine did not give: the core-cycle columns stay
        # empty rather than assume a latency in cycles
        info["core_ghz"] = None
        clock_how = "not measured: %s" % e
    info["core_clock_how"] = clock_how
    counters = info.get("cn_counters") or "?"
    hw = "unavailable" not in counters
    info["counters_hw"] = hw
    if not info.get("cn_tsc_source") and memsig:
        info["tsc_source"] = memsig.get("tsc_source", "?")
    return machine_table(info), info


def machine_table(info):
    """The machine table's Markdown from a description (describe()'s
    dict): every value printed is one of info's, measured on this machine."""
    tsc_hz = info.get("tsc_hz") or 0
    clock_how = info.get("core_clock_how")
    counters = info.get("cn_counters") or "?"
    hw = info.get("counters_hw")
    rows = [
        ["CPU", "%s (%s, %s logical CPUs)" % (info.get("cpu", "?"), info.get("arch", "?"),
                                              info.get("cpus", "?"))],
        ["caches (cn_cache_geometry)", info.get("cn_caches") or "unknown: %s" % info.get("context_error", "?")],
        ["TSC", "%.4f GHz, %s" % (tsc_hz / 1e9, info.get("cn_tsc_source") or info.get("tsc_source", "?"))
         if tsc_hz else "unknown"],
        ["core clock", ("%.2f GHz (1 TSC tick = %.2f core cycles); %s" % (
            info["core_ghz"], info["core_ghz"] * 1e9 / tsc_hz, clock_how))
         if info.get("core_ghz") and tsc_hz else clock_how],
        ["hardware counters", ("available: " if hw else "") + counters],
        ["cache-miss figures", "hardware counters" if hw else
         "**simulated** by callgrind (`--cn_sim`); every such table says so"],
        ["ISA features", info.get("cn_cpu_features") or "?"],
        ["load average at start", ", ".join("%.2f" % x for x in info.get("load_avg") or []) or "?"],
    ]
    return "\n".join(["## Machine", "", table(["what", "value"], rows), ""])
