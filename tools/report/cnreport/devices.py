# SPDX-License-Identifier: BSD-2-Clause
"""Study 11: real devices. Linux's TCP streaming into and out of cachenet
over TAP, over AF_XDP and over DPDK ports (net_af_xdp, net_af_packet) on a
veth pair, beside Linux's own TCP over the same veth and a bare AF_XDP
receive loop (the device path's ceiling), and cachenet streaming to
cachenet over net_memif between two processes, in one run: throughput,
cachenet's busy TSC ticks per frame split into the device's I/O and the
stack, and CPU time per GB. Measured by tests/interop/stream.py."""
import os
import statistics
import sys

from .tap import driver_paths, json_producer
from .util import NotMeasured, fmt, table

# stream.py's modes, in the order the table shows them
TCP_ROWS = [
    ("tcp-tap", "Linux → cachenet", "TAP"),
    ("tcp-afxdp", "Linux → cachenet", "AF_XDP (veth)"),
    ("tcp-dpdk-xdp", "Linux → cachenet", "DPDK net_af_xdp (veth)"),
    ("tcp-dpdk-pkt", "Linux → cachenet", "DPDK net_af_packet (veth)"),
    ("tcp-linux", "Linux → Linux", "veth, no XDP"),
    ("tcp-tap-tx", "cachenet → Linux", "TAP"),
    ("tcp-afxdp-tx", "cachenet → Linux", "AF_XDP (veth)"),
    ("tcp-dpdk-xdp-tx", "cachenet → Linux", "DPDK net_af_xdp (veth)"),
    ("tcp-dpdk-pkt-tx", "cachenet → Linux", "DPDK net_af_packet (veth)"),
    ("tcp-linux-tx", "Linux → Linux", "veth, no XDP"),
]
# the quick run leaves out the slower DPDK rows (each starts an EAL)
QUICK_SKIP = ("tcp-dpdk-pkt", "tcp-dpdk-pkt-tx")
UDP_ROWS = [
    ("udp-bare", "bare AF_XDP loop (RX ring → count → fill ring; no stack)"),
    ("udp-afxdp", "cachenet's UDP sink over AF_XDP"),
]
MODES = [k for k, _, _ in TCP_ROWS] + [k for k, _ in UDP_ROWS] + ["memif"]


def measure(ctx):
    drv, tapnet = driver_paths(ctx, "stream")
    bare = ctx.paths.get("xsk_bare")
    blast = ctx.paths.get("udpblast")
    if not bare or not os.path.exists(bare):
        raise NotMeasured("cachenet-xsk-bare was not built (no AF_XDP backend: libxdp-dev, libbpf-dev)")
    memif = ctx.paths.get("memif_stream")
    quick = ctx.args.quick
    modes = [m for m in MODES if not (quick and m in QUICK_SKIP)]
    cmd = [sys.executable, drv, "--tapnet", tapnet, "--xsk-bare", bare,
           "--mb", "50" if quick else "200", "--reps", "1" if quick else "3",
           "--udp-s", "1.5" if quick else "3", "--stall-s", "3" if quick else "10",
           "--modes", ",".join(modes)]
    if blast and os.path.exists(blast):
        cmd += ["--blast", blast]
    deps = [tapnet, bare, drv]
    if memif and os.path.exists(memif):
        cmd += ["--memif", memif, "--memif-mb", "20" if quick else "200"]
        deps.append(memif)
    return ctx.cached_run("devices", cmd, deps, json_producer(ctx, cmd, "stream.json"))


def window_ratio(ratios):
    """Linux -> cachenet over AF_XDP against Linux -> Linux, CPU per GB
    while streaming: stream.py's per-repetition ratios."""
    q = ratios.get("tcp-afxdp", {}).get("window", [])
    if not q:
        return []
    return ["Receiving Linux's stream, cachenet over AF_XDP used **%s** of Linux → Linux's CPU "
            "time per GB while streaming (median of the repetitions' ratios, %s-%s over %d; "
            "the run figures also charge cachenet's start, its pools and UMEM, which the "
            "Linux receiver's rusage, taken from its accept, does not)."
            % (fmt(statistics.median(q), 3), fmt(min(q), 3), fmt(max(q), 3), len(q)), ""]


def render(ctx, d):
    med = d.get("medians", {})
    hz = d.get("tsc_hz")
    rows = []
    for key, way, path in TCP_ROWS:
        m = med.get(key)
        if not m:
            continue
        ours = key.startswith(("tcp-tap", "tcp-afxdp", "tcp-dpdk"))
        rows.append([way, path, fmt(m["mbit_s"], 4),
                     fmt(m["busy"], 4) if ours else "—",
                     fmt(m["device"], 4) if ours else "—",
                     fmt(m["stack"], 4) if ours else "—",
                     fmt(m["app"], 4) if ours else "—",
                     fmt(m["window"], 3) if "window" in m else "—",
                     fmt(m["cpu_total"], 3), fmt(m["ours_s_gb"], 3) if ours else "—",
                     fmt(m["cpu_p_sys"], 3), fmt(m["cpu_ksoftirqd"], 3), fmt(m["cpu_m_softirq"], 3),
                     fmt(m["cpu_m_sys"], 3) if "cpu_m_sys" in m else "—"])
        ctx.metric("%s/mbit_s" % key, m["mbit_s"])
        ctx.metric("%s/cpu_s_per_gb" % key, m["cpu_total"])
        if "window" in m:
            ctx.metric("%s/cpu_s_per_gb_streaming" % key, m["window"])
        if ours:
            ctx.metric("%s/busy_tsc_per_frame" % key, m["busy"])
    urows = []
    for key, what in UDP_ROWS:
        m = med.get(key)
        if not m:
            continue
        urows.append([what, fmt(m["sent_pps"], 4), fmt(m["rx_pps"], 4), fmt(m["mbit_s"], 4),
                      fmt(m["busy_per_frame"], 4), "%.0f%%" % (100 * m["cpu_share"]),
                      fmt(m["ours_s_gb"], 3), fmt(m["cpu_total"], 3)])
        ctx.metric("%s/rx_pps" % key, m["rx_pps"])
    md = ["## 11. Devices: TAP, AF_XDP and DPDK against Linux's own TCP", "",
          "`tests/interop/stream.py` in network namespaces it creates and deletes: a TAP `cn0` "
          "for the TAP runs; a veth pair `cn0` ↔ `cnx` across two namespaces for the others, "
          "the kernel's end with TX checksum offload off (MSS-sized frames with whole "
          "checksums). cachenet (`cachenet-tapnet`, discard or source service) runs pinned to "
          "CPU 1, the Linux peer (a Python socket program) to CPU 0; Linux → Linux puts a Linux "
          "socket in cachenet's place. %d MB per TCP stream, %d repetition(s), modes "
          "interleaved, medians. AF_XDP here is in copy mode (veth refuses zero-copy): the "
          "kernel copies each frame into the UMEM, in the sender's softirq. The DPDK rows run "
          "`cachenet-tapnet --dpdk` (libcachenet-dpdk) with its own EAL (`--no-huge --no-pci "
          "-l 1 -m 512`) and the `net_af_xdp` or `net_af_packet` virtual device on the veth's "
          "end; a poll-mode port is polled without pause while frames come, and its empty "
          "polls are not counted as busy." % (d.get("mb", 0), d.get("reps", 0)), ""]
    if rows:
        md += [table(["direction", "path", "Mbit/s", "busy TSC/frame", "device I/O", "stack",
                      "app (SHA-256)", "CPU s/GB streaming", "CPU s/GB (run)", "of which cachenet",
                      "processes' system", "ksoftirqd", "machine-wide softirq",
                      "machine-wide system"], rows), ""]
    md += window_ratio(d.get("ratios", {}))
    skipped = d.get("skipped", {})
    names = {k: "%s over %s" % (way, path) for k, way, path in TCP_ROWS}
    names["memif"] = "cachenet → cachenet over net_memif"
    for key in [k for k, _, _ in TCP_ROWS] + ["memif"]:
        if key in skipped:
            md += ["Not measured, %s: %s." % (names[key], skipped[key].rstrip(".")), ""]
    md += memif_part(ctx, med.get("memif"))
    if urows:
        md += ["The device path's ceiling: a Linux UDP sender (`udpblast`, 1472-byte datagrams, "
               "frames of the TCP stream's size) for %s s into the bare AF_XDP receive loop "
               "(`cachenet-xsk-bare`) and into cachenet's UDP sink, same sender. A raw receiver "
               "sends no ACKs, so no TCP sender can stream into it; the UDP sender's rate is "
               "what the sending kernel and the veth deliver without TCP's sender work, an "
               "upper bound for a TCP stream." % fmt(d.get("udp_s", 0)), "",
               table(["receiver", "sent pps", "received pps", "Mbit/s", "busy TSC/frame",
                      "receiver's CPU share", "receiver CPU s/GB", "CPU s/GB (run)"], urows), ""]
        b, s = med.get("udp-bare"), med.get("udp-afxdp")
        if b and s and b["rx_pps"]:
            md += ["cachenet's UDP sink / bare loop frame rate: **%s**." % fmt(s["rx_pps"] / b["rx_pps"], 3),
                   ""]
    md += ["*busy* = TSC ticks of cachenet's event loop outside `poll(2)` per frame either way "
           "(they include time the process was preempted); *device I/O* = ticks in the TAP's "
           "`read`/`write`, the AF_XDP rings, refills and wake-ups, or the DPDK adapter's "
           "`rx_burst` and transmit (copy, checksum, `tx_burst`); *stack* = the rest but the "
           "application's SHA-256. *CPU s/GB streaming* = CPU seconds per GB while the "
           "sender streamed (from its connect to its last byte), of the receiver "
           "(`/proc/PID/stat`), the sender (its rusage) and the ksoftirqd threads: the "
           "steady state, each process's start and end left out (Linux → cachenet and "
           "Linux → Linux only). *CPU s/GB (run)* = CPU seconds per GB moved, of the run's "
           "processes (rusage: their user and system time, which holds the kernel's work in "
           "their system calls and the softirqs that ran in their context) plus the ksoftirqd "
           "threads; *machine-wide softirq* and *system* from `/proc/stat`, which on a shared "
           "machine include other work. TSC at %s GHz, measured here; load average at the end of the "
           "run %s." % (fmt(hz / 1e9, 4) if hz else "?",
                        ", ".join("%.1f" % x for x in d.get("load_avg", [])) or "not recorded"), ""]
    return "\n".join(md)


def memif_part(ctx, m):
    """The memif table: cachenet to cachenet between two processes."""
    if not m:
        return []
    ctx.metric("memif/mbit_s", m["mbit_s"])
    ctx.metric("memif/cpu_s_per_gb", m["cpu_procs"])
    rows = [[side, fmt(m[p + "_busy"], 4), fmt(m[p + "_device"], 4), fmt(m[p + "_stack"], 4),
             fmt(m[p + "_cpu_s_per_gb"], 3)] for side, p in (("sender", "snd"), ("receiver", "rcv"))]
    return ["cachenet → cachenet over `net_memif` between two processes, each with its own EAL "
            "and stack (`tests/dpdk/memif_stream`: receiver on CPU 0, sender on CPU 1, 1460-byte "
            "segments, sender TX %s): **%s Mbit/s**, SHA-256 %s. CPU s/GB: both processes %s "
            "(their CPU time over the stream); from a run less a run of a tenth of the bytes, so "
            "that the EALs' start and end cancel out: the processes' kernel time (rusage "
            "system) %s, ksoftirqd %s, and machine-wide from `/proc/stat` system %s, softirq "
            "%s, user %s (on a shared machine these include other work)." % (
                "by reference (chains)" if not m.get("tx_copy") else "copied",
                fmt(m["mbit_s"], 4), "equal" if m.get("sha_equal") else "DIFFERENT",
                fmt(m["cpu_procs"], 3), fmt(m["cpu_p_sys"], 3) if "cpu_p_sys" in m else "—",
                fmt(m["cpu_ksoftirqd"], 3), fmt(m["cpu_m_sys"], 3),
                fmt(m["cpu_m_softirq"], 3), fmt(m["cpu_m_user"], 3)), "",
            table(["side", "busy TSC/segment", "device I/O", "stack", "CPU s/GB"], rows), ""]


def devices(ctx):
    return render(ctx, measure(ctx))
