#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Linux <-> cachenet streams over TAP, AF_XDP and DPDK, in one run.

  stream.py --tapnet BUILD/tools/tapnet/cachenet-tapnet --out DIR [--mb N] [--reps R]
            [--udp-s S] [--blast UDPBLAST] [--xsk-bare XSKBARE] [--memif MEMIF_STREAM]
            [--modes M,...]

In namespaces this program creates and deletes (those of interop.py: a TAP
cn0 for the TAP runs; a veth pair cn0 <-> cnx across two namespaces for
the AF_XDP runs, native XDP, copy mode), for each repetition and in
interleaved order:
  tcp-tap     Linux TCP sends N MB into cachenet's discard service on the TAP
  tcp-afxdp   the same over AF_XDP
  tcp-dpdk-xdp the same over DPDK: cachenet-tapnet --dpdk on cnx through
              libcachenet-dpdk and the net_af_xdp virtual device (its own
              EAL: --no-huge --no-pci -l 1 -m 512); a stream that stops
              moving for --stall-s seconds is given up and said so (with
              the frames cachenet had received), not measured
  tcp-dpdk-pkt the same over the net_af_packet virtual device
  tcp-linux   the same sender into a Linux TCP receiver on the veth's other
              end (no XDP program; cnx addressed for the run): what the
              sender and the veth achieve without cachenet
  tcp-tap-tx, tcp-afxdp-tx, tcp-dpdk-xdp-tx, tcp-dpdk-pkt-tx, tcp-linux-tx: the other way,
              cachenet's TCP source (or a Linux sender on cnx) into a Linux
              receiver
  memif       cachenet -> cachenet over net_memif between two processes
              (tests/dpdk/memif_stream --json, given by --memif: receiver on
              CPU 0, sender on CPU 1), no kernel in the data path; run
              twice, with --memif-mb (default N) MB and a tenth of that,
              so that the kernel's time per GB (machine-wide system and
              softirq deltas of /proc/stat) is the difference of the two
              runs over the difference of their bytes: the EALs' start and
              end, the same in both, cancel out
  udp-afxdp   a Linux UDP sender (one socket, 1472-byte datagrams, as fast
              as it can for S seconds: udpblast, sendmmsg in batches of 64;
              a Python loop without --blast) into cachenet's UDP sink over
              AF_XDP
  udp-bare    the same sender into a bare AF_XDP receive loop with no
              stack and no mbufs (cachenet-xsk-bare with --xsk-bare: RX
              ring -> count bytes -> fill ring; else cachenet-tapnet
              --bare: the backend's burst, each frame freed at once)
  udp-backend cachenet-tapnet --bare (with --xsk-bare given too)
  tcp-afxdp-base tcp-afxdp with the cachenet-tapnet of --tapnet-base (the
              build before a change), interleaved with tcp-afxdp
--perf: a system-wide CPU profile of each Linux -> receiver run (perf
record -g -e cpu-clock, DIR/NAME.perf), its samples between the sender's
connect and the end of its stream charged to the innermost kernel path of
their call chain (PERF_PATHS: the copy into the UMEM, veth's NAPI poll and
the XDP program, GSO, TCP input and output, ...) or to the user time of
the receiver and the sender, in CPU seconds per GB; unlike the rusage
figures these leave out each process's start and end. perf's own CPU time
is taken out of the run's figures. --strace: cachenet's system calls
counted (strace -c -f, DIR/NAME.strace; ptrace slows each, so the run's
other figures are not comparable).
Per process (Linux -> receiver runs): the receiver's user and system time
(cachenet's getrusage; the Linux receiver's own from its accept on), the
sender's from its connect on, and "all but the receiver" = sender +
ksoftirqd. "window": the run's CPU time while the sender ran, without any
process's start and end (cachenet's start, its pools and UMEM faulted in,
costs ~0.09 s, 0.45 s/GB of a 200 MB run): the receiver's
/proc/PID/stat from the sender's start to its end, the sender's own from
its connect, ksoftirqd over the same span.
The ceiling of a TCP stream: a raw receiver sends no ACKs, so a TCP
sender cannot be pointed at it. The UDP sender's frame rate into the bare
loop, with frames of the TCP stream's size (1514 bytes), is what the
sending kernel and the veth deliver per frame without any receiver work
and without TCP's own sender work (ACK processing, congestion control):
an upper bound for any TCP stream over the same path. cachenet's UDP sink
against it (same sender) shows what the stack costs where the sender
bounds; cachenet's TCP receive against Linux's own TCP receive (tcp-linux)
shows it for TCP.
CPU time per GB, every run: the processes of the run (cachenet or the
Linux receiver, and the sender: the rusage of this script's children,
which holds the kernel work done in their system calls and in softirqs
that ran in their context; the kernel accounts by ticks, so a softirq
counts in the task it interrupted), the ksoftirqd threads (softirqs run
outside any task of the run), and, for reference, /proc/stat's
machine-wide deltas of user, system and softirq time (on a shared
machine these include other users' work).
For the TCP runs: Linux's throughput (bytes / time from connect to the
peer's FIN), cachenet's busy TSC ticks per frame (RX + TX frames) and their
split into the device (TAP read/write; AF_XDP rings, refill, gather,
sendto; DPDK: the adapter's rx_burst and xmit/tx_burst, in the rounds that
moved a frame: a poll-mode port's empty polls are counted apart), the
application and the stack, and CPU time. For the UDP runs:
frames per second that cachenet received over the sender's active time.
cachenet runs pinned to CPU 1, the Linux sender to CPU 0 (the kernel's
softirq work runs where the frame is sent: the sender's for its data,
cachenet's system calls for cachenet's ACKs). Medians over the
repetitions are printed, and written to DIR/stream.json.
The machine's other load shows in the spread; quote ratios of one run.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import interop  # noqa: E402  (Namespace, sh, lines_json, Skip)

K_ADDR, C_ADDR = interop.K_ADDR, interop.C_ADDR

# Linux's sending side, run inside the kernel's namespace.
TCP_SEND = r"""
import socket, sys, time, json, resource, os
host, port, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
buf = bytes(range(256)) * 4096
s = socket.create_connection((host, port), timeout=float(sys.argv[4]) if len(sys.argv) > 4 else 60)
ru0 = resource.getrusage(resource.RUSAGE_SELF)
m0 = time.monotonic()
t0 = time.time()
left = total
while left:
    k = min(left, len(buf))
    s.sendall(buf[:k])
    left -= k
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
dt = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"bytes": total, "seconds": dt, "mbit_s": total * 8 / dt / 1e6,
                  "user_s": ru.ru_utime - ru0.ru_utime, "sys_s": ru.ru_stime - ru0.ru_stime,
                  "pid": os.getpid(), "mono": [m0, time.monotonic()]}))
"""

# Linux's receiving side of cachenet -> Linux: connect, read to the FIN.
TCP_RECV = r"""
import socket, sys, time, json
s = socket.create_connection((sys.argv[1], int(sys.argv[2])),
                             timeout=float(sys.argv[3]) if len(sys.argv) > 3 else 60)
buf = bytearray(1 << 20)
n = 0
t0 = time.time()
while True:
    k = s.recv_into(buf)
    if not k:
        break
    n += k
dt = time.time() - t0
s.close()
print(json.dumps({"bytes": n, "seconds": dt, "mbit_s": n * 8 / dt / 1e6}))
"""

TCP_SINK = r"""
import socket, sys, json, resource, os
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
open(sys.argv[3], "w").close()
c, _ = s.accept()
ru0 = resource.getrusage(resource.RUSAGE_SELF)
buf = bytearray(1 << 20)
n = 0
while True:
    k = c.recv_into(buf)
    if not k:
        break
    n += k
c.close()
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"bytes": n, "user_s": ru.ru_utime - ru0.ru_utime, "sys_s": ru.ru_stime - ru0.ru_stime,
                  "pid": os.getpid()}))
"""

UDP_SEND = r"""
import socket, sys, time, json
host, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
s.connect((host, port))
b = bytes(1472)
n = 0
t0 = time.time()
end = t0 + secs
while True:
    for _ in range(256):
        try:
            s.send(b)
            n += 1
        except (BlockingIOError, OSError):
            pass
    if time.time() >= end:
        break
dt = time.time() - t0
print(json.dumps({"sent": n, "seconds": dt, "pps": n / dt}))
"""


TICK = os.sysconf("SC_CLK_TCK")

# --perf: the kernel path a CPU sample belongs to is the innermost frame of
# its call chain that names one (a softirq runs nested in whatever it
# interrupted, e.g. the sender's new segments inside the tcp_v4_rcv of an
# ACK inside cachenet's sendto, so the innermost path is the work itself).
PERF_PATHS = (
    ("wakeups", ("try_to_wake_up",)),
    ("copy into the UMEM", ("__xsk_rcv", "__xsk_map_redirect", "xsk_map_redirect", "__xsk_map_flush")),
    ("veth NAPI + XDP program", ("veth_poll", "veth_xdp_rcv", "veth_xdp_rcv_skb", "veth_xdp_rcv_one",
                                 "veth_xdp_rcv_bulk_skb.isra.0", "xdp_do_redirect", "xdp_do_flush",
                                 "veth_xdp_flush_bq", "bpf_prog_run_generic_xdp")),
    ("GSO segmentation", ("skb_segment", "skb_segment.cold", "tcp_gso_segment", "__skb_gso_segment")),
    ("veth transmit", ("veth_xmit", "veth_xmit.cold", "__netif_rx", "netif_rx_internal", "netif_rx")),
    ("TCP/IP input", ("tcp_v4_rcv", "ip_rcv", "ip_local_deliver", "process_backlog", "gro_receive_skb",
                      "__netif_receive_skb_one_core", "__netif_receive_skb_core")),
    ("TCP output", ("tcp_write_xmit", "__tcp_transmit_skb", "tcp_sendmsg_locked", "tcp_sendmsg",
                    "tcp_push", "tcp_cleanup_rbuf")),
    ("recv: copy to user", ("skb_copy_datagram_iter", "tcp_recvmsg", "tcp_recvmsg_locked")),
    ("AF_XDP TX (sendto)", ("__xsk_generic_xmit", "xsk_sendmsg", "xsk_construct_skb",
                            "xsk_destruct_skb", "xsk_tx_peek_desc")),
    ("poll/recvfrom", ("do_sys_poll", "xsk_poll", "__x64_sys_poll", "__x64_sys_ppoll", "xsk_recvmsg")),
    ("scheduler", ("__schedule", "schedule", "schedule_hrtimeout_range_clock")),
)
PERF_SYM = {sym: name for name, syms in PERF_PATHS for sym in syms}


def perf_split(data, pids, nbytes, window):
    """CPU seconds per GB of a system-wide `perf record -g -e cpu-clock`
    by kernel path (PERF_PATHS), user time of the run's processes (PIDS:
    pid -> label), the rest of their kernel time ("kernel, other") and the
    ksoftirqd threads'. Samples of other processes count only in a
    network path (a softirq that interrupted them); idle is left out; only
    samples inside WINDOW (CLOCK_MONOTONIC seconds: the sender's time
    from its connection to the receiver's FIN) count."""
    out = interop.sh(["perf", "script", "-i", data, "-F", "comm,pid,time,period,ip,sym,dso"],
                     check=False, timeout=600).stdout
    acc = {}
    for block in out.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        head = lines[0].split()
        try:
            period = int(head[-1])
            t = float(head[-2].rstrip(":"))
            pid = int(head[-3])
        except (ValueError, IndexError):
            continue
        if not window[0] <= t <= window[1]:
            continue
        comm = " ".join(head[:-3])
        frames = [l.split() for l in lines[1:]]
        user = bool(frames) and "kernel" not in frames[0][-1]
        path = None
        for f in frames:
            sym = f[1].split("+")[0] if len(f) > 1 else ""
            if sym in PERF_SYM:
                path = PERF_SYM[sym]
                break
        if pid in pids:
            key = "user: " + pids[pid] if user else (path or "kernel, other")
        elif comm.startswith("ksoftirqd"):
            key = path or "kernel, other"
        elif path and not user and path not in ("scheduler", "poll/recvfrom"):
            key = path
        else:
            continue
        acc[key] = acc.get(key, 0) + period
    return {k: v * 1e-9 / (nbytes / 1e9) for k, v in acc.items()}


class PerfRec:
    """A system-wide CPU-clock profile with call chains while the block
    runs (--perf), written to PATH."""
    def __init__(self, path, on):
        self.path, self.on, self.p, self.ru = path, on, None, None

    def __enter__(self):
        if self.on:
            self.p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "997", "-a",
                                       "-g", "-k", "CLOCK_MONOTONIC", "-o", self.path], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        return self

    def __exit__(self, *a):
        if self.p:
            self.p.send_signal(2)
            self.ru = os.wait4(self.p.pid, 0)[2]
            self.p.returncode = 0

    def uncount(self, cpu, nbytes):
        """Take perf's own CPU time (a child of this script, like the
        run's processes) out of a cpu_per_gb() result."""
        if self.ru:
            cpu["p_user"] -= self.ru.ru_utime / (nbytes / 1e9)
            cpu["p_sys"] -= self.ru.ru_stime / (nbytes / 1e9)
            cpu["procs"] = cpu["p_user"] + cpu["p_sys"]
            cpu["total"] = cpu["procs"] + cpu["ksoftirqd"]


def proc_cpu_s(pid):
    """User + system seconds of process PID so far (/proc/PID/stat), or
    None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return None
    f = st[st.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def ksoftirqd_s():
    """User + system seconds of the ksoftirqd threads."""
    t = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        if name.startswith("ksoftirqd/"):
            f = st[st.rindex(")") + 2:].split()
            t += (int(f[11]) + int(f[12])) / TICK
    return t


def cpu_snap():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"m_user": (v[0] + v[1]) / TICK, "m_sys": v[2] / TICK, "m_irq": v[5] / TICK,
            "m_softirq": v[6] / TICK, "p_user": ch.ru_utime, "p_sys": ch.ru_stime,
            "ksoftirqd": ksoftirqd_s()}


def cpu_per_gb(a, b, nbytes):
    """CPU seconds per GB between two cpu_snap()s."""
    gb = nbytes / 1e9
    d = {k: (b[k] - a[k]) / gb for k in a}
    d["procs"] = d["p_user"] + d["p_sys"]
    d["total"] = d["procs"] + d["ksoftirqd"]
    return d


def tcp_segs(argv):
    """(InSegs, OutSegs) of the TCP MIB in the namespace argv() runs in."""
    out = interop.sh(argv(["cat", "/proc/net/snmp"])).stdout.splitlines()
    tcp = [l.split()[1:] for l in out if l.startswith("Tcp:")]
    d = dict(zip(tcp[0], tcp[1]))
    return int(d["InSegs"]), int(d["OutSegs"])


class Run:
    def __init__(self, args):
        self.tapnet = os.path.abspath(args.tapnet)
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        self.nbytes = int(args.mb * 1e6)
        self.udp_s = args.udp_s
        self.blast = os.path.abspath(args.blast) if args.blast else None
        self.xsk_bare = os.path.abspath(args.xsk_bare) if args.xsk_bare else None
        self.extra = args.tool_args.split() if args.tool_args else []
        self.memif_prog = os.path.abspath(args.memif) if args.memif else None
        self.stall_s = args.stall_s
        self.memif_bytes = int(args.memif_mb * 1e6)
        self.tapnet_base = os.path.abspath(args.tapnet_base) if args.tapnet_base else None
        self.base_args = args.base_args.split()
        self.perf = args.perf
        self.strace = args.strace
        self.last = {}
        self.skipped = {}
        self.rows = {}
        self.tsc_hz = None

    def tool(self, ns, dev, name, extra):
        ready = os.path.join(self.out, name + ".ready")
        if os.path.exists(ready):
            os.unlink(ready)
        if dev == "xsk-bare":
            cmd = [self.xsk_bare, "--dev", "cnx", "--ready-file", ready] + extra
        else:
            devargs = {"afxdp": ["--afxdp", "cnx"], "afxdp-base": ["--afxdp", "cnx"], "tap": ["--dev", "cn0"],
                       "dpdk-xdp": self.eal(name, "net_af_xdp0"),
                       "dpdk-pkt": self.eal(name, "net_af_packet0")}[dev]
            cmd = [self.tapnet_base if dev == "afxdp-base" else self.tapnet] + devargs + [
                "--addr", C_ADDR, "--time-wait", "200", "--ready-file", ready, "--quiet"] + self.extra + extra
            if dev == "afxdp-base":
                cmd += self.base_args
            if self.strace and dev.startswith("afxdp"):
                # the system calls cachenet makes: counts, not times (ptrace slows each)
                cmd = ["strace", "-c", "-f", "-o", os.path.join(self.out, name + ".strace")] + cmd
        log = open(os.path.join(self.out, name + ".log"), "w")
        p = subprocess.Popen(ns.dev_argv(["taskset", "-c", "1"] + cmd), stdout=log, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        t0 = time.time()
        while not os.path.exists(ready):
            rc = p.poll()
            if rc == 77 and dev.startswith("dpdk"):
                raise interop.Skip(open(log.name).read().strip()[-300:])
            if rc is not None:
                raise interop.Fail("%s exited %d: %s" % (name, p.returncode,
                                                         open(log.name).read()[-500:]))
            if time.time() - t0 > 20:
                raise interop.Fail("%s not ready" % name)
            time.sleep(0.05)
        return p, log

    def eal(self, name, vdev):
        """cachenet-tapnet --dpdk for the run NAME: its EAL on CPU 1 (where
        taskset puts it), a file prefix of its own, VDEV on cnx."""
        return ["--dpdk", "--no-huge --no-pci -l 1 -m 512 --file-prefix cnst%d_%s --log-level "
                "lib.eal:error --vdev %s,iface=cnx" % (os.getpid(), name.replace("-", "_"), vdev)]

    def stop(self, p, log):
        if p.poll() is None:
            os.killpg(p.pid, 15)
        p.wait(timeout=120)
        log.close()
        js = interop.lines_json(open(log.name).read())
        summ = [j for j in js if j.get("event") == "summary"]
        if not summ or p.returncode != 0:
            raise interop.Fail("%s: exit %d, %s" % (log.name, p.returncode, open(log.name).read()[-500:]))
        self.tsc_hz = summ[0].get("tsc_hz", self.tsc_hz)
        self.last = summ[0]
        return summ[0]

    def add(self, key, row):
        if "perf" in row:
            row["perf_total"] = sum(row["perf"].values())
        self.rows.setdefault(key, []).append(row)

    def tcp(self, ns, dev, rep, tx=False):
        key = "tcp-%s%s" % (dev, "-tx" if tx else "")
        name = "%s-%d" % (key, rep)
        # no SHA-256: the Linux receiver and sender do not hash either
        svc = (["--source", "9:%d" % self.nbytes] if tx else ["--discard", "9"]) + ["--no-hash"]
        p, log = self.tool(ns, dev, name, svc)
        perf = os.path.join(self.out, name + ".perf")
        c0 = cpu_snap()
        w0 = proc_cpu_s(p.pid)
        try:
            peer = [TCP_RECV, C_ADDR, "9"] if tx else [TCP_SEND, C_ADDR, "9", str(self.nbytes)]
            if dev.startswith("dpdk"):
                peer.append(str(self.stall_s))
            with PerfRec(perf, self.perf and not tx) as rec:
                r = ns.run(["taskset", "-c", "0", sys.executable, "-c"] + peer, timeout=600)
            win = (proc_cpu_s(p.pid) - w0, ksoftirqd_s() - c0["ksoftirqd"])
            lin = interop.lines_json(r.stdout)[-1]
            if tx and lin["bytes"] != self.nbytes:
                raise interop.Fail("linux receiver got %d of %d bytes" % (lin["bytes"], self.nbytes))
            time.sleep(0.3)
        finally:
            s = self.stop(p, log)
        cpu = cpu_per_gb(c0, cpu_snap(), self.nbytes)
        rec.uncount(cpu, self.nbytes)
        frames = s["rx_frames"] + s["tx_frames"]
        dev_t = s["tap_rx_tsc"] + s["tap_tx_tsc"]
        row = {"mbit_s": lin["mbit_s"], "frames": frames, "busy": s["busy_tsc"] / frames,
               "device": dev_t / frames, "app": s["app_tsc"] / frames,
               "stack": (s["busy_tsc"] - dev_t - s["app_tsc"]) / frames,
               "cpu_us": (s["cpu_user_s"] + s["cpu_sys_s"]) * 1e6 / frames,
               "sys_us": s["cpu_sys_s"] * 1e6 / frames, "kdrops": s.get("dev_kernel_drops", 0),
               "cpu_share": (s["cpu_user_s"] + s["cpu_sys_s"]) / s["wall_s"],
               "ours_s_gb": (s["cpu_user_s"] + s["cpu_sys_s"]) / (self.nbytes / 1e9),
               "out_per_in": s["tx_frames"] / max(1, s["rx_frames"]),
               "kicks_per_frame": s["tx_writes"] / max(1, frames),
               "frames_per_loop": frames / max(1, s["loops"]),
               "user_us": s["cpu_user_s"] * 1e6 / frames}
        row.update(("cpu_" + k, v) for k, v in cpu.items())
        if not tx:
            if self.perf:
                row["perf"] = perf_split(perf, {p.pid: "cachenet", lin["pid"]: "sender"}, self.nbytes,
                                         lin["mono"])
            self.split(row, s["cpu_user_s"], s["cpu_sys_s"], lin, win)
        self.add(key, row)
        print("  %-10s %8.0f Mbit/s  busy %6.0f  device %6.0f  stack %5.0f  app %5.0f ticks/frame, "
              "cpu %.2f us/frame, cachenet used %.0f%% of its CPU" % (
                  key, row["mbit_s"], row["busy"], row["device"], row["stack"], row["app"],
                  row["cpu_us"], 100 * row["cpu_share"]), flush=True)
        print("  %10s frames out per frame in %.3f, TX kicks per frame %.4f, frames per loop %.1f, "
              "user CPU %.2f us/frame" % ("", row["out_per_in"], row["kicks_per_frame"],
                                         row["frames_per_loop"], row["user_us"]), flush=True)
        self.print_cpu(row)

    def split(self, row, rcv_user, rcv_sys, snd, win):
        """The run's CPU per process, s/GB: the receiver (cachenet or
        Linux's), the sender (its own rusage: its system calls and the
        softirqs that ran in its context), and outside_rcv, the sender and
        the ksoftirqd threads: all the run's CPU time but the receiver's.
        WIN: the receiver's CPU seconds (/proc/PID/stat) and ksoftirqd's
        while the sender ran, for "window", the run's CPU without any
        process's start and end: receiver + sender + ksoftirqd."""
        gb = self.nbytes / 1e9
        row.update({"rcv_user": rcv_user / gb, "rcv_sys": rcv_sys / gb,
                    "snd_user": snd["user_s"] / gb, "snd_sys": snd["sys_s"] / gb,
                    "win_rcv": win[0] / gb, "win_ksoftirqd": win[1] / gb})
        row["outside_rcv"] = row["snd_user"] + row["snd_sys"] + row["cpu_ksoftirqd"]
        row["window"] = row["win_rcv"] + row["snd_user"] + row["snd_sys"] + row["win_ksoftirqd"]
        print("  %10s per process, s/GB: receiver user %.2f, system %.2f; sender user %.2f, "
              "system %.2f; ksoftirqd %.2f; all but the receiver %.2f; window %.2f (receiver "
              "%.2f)" % ("", row["rcv_user"], row["rcv_sys"], row["snd_user"], row["snd_sys"],
                         row["cpu_ksoftirqd"], row["outside_rcv"], row["window"], row["win_rcv"]),
              flush=True)
        if "perf" in row:
            print("  %10s perf: %s" % ("", ", ".join("%s %.2f" % kv for kv in sorted(
                row["perf"].items(), key=lambda kv: -kv[1]))), flush=True)

    def print_cpu(self, row):
        print("  %10s CPU s/GB: run %.2f = processes %.2f (user %.2f, system %.2f) + ksoftirqd %.2f%s; "
              "machine-wide user %.2f, system %.2f, softirq %.2f" % (
                  "", row["cpu_total"], row["cpu_procs"], row["cpu_p_user"], row["cpu_p_sys"],
                  row["cpu_ksoftirqd"],
                  ", of which cachenet %.2f" % row["ours_s_gb"] if "ours_s_gb" in row else "",
                  row["cpu_m_user"], row["cpu_m_sys"], row["cpu_m_softirq"]), flush=True)

    def tcp_linux(self, ns, rep, tx=False):
        """Linux -> Linux over the same veth: the sender in the kernel's
        namespace and the receiver on cnx (in cachenet's place), or with
        tx the other way round; cachenet's side on CPU 1."""
        key = "tcp-linux-tx" if tx else "tcp-linux"
        ready = os.path.join(self.out, "linux-sink.ready")
        if os.path.exists(ready):
            os.unlink(ready)
        # the kernel's neighbour entry for C_ADDR may still hold cachenet's MAC
        ns.run(["ip", "neigh", "flush", "dev", "cn0"], check=False)
        interop.sh(ns.dev_argv(["ip", "addr", "add", C_ADDR + "/24", "dev", "cnx"]))
        sink_argv, send_argv = (ns.argv, ns.dev_argv) if tx else (ns.dev_argv, ns.argv)
        sink_addr = K_ADDR if tx else C_ADDR
        p = None
        try:
            p = subprocess.Popen(sink_argv(["taskset", "-c", "0" if tx else "1", sys.executable, "-c",
                                            TCP_SINK, sink_addr, "9", ready]),
                                 stdout=subprocess.PIPE, text=True, start_new_session=True)
            t0 = time.time()
            while not os.path.exists(ready) and time.time() - t0 < 20:
                time.sleep(0.05)
            c0 = cpu_snap()
            w0 = proc_cpu_s(p.pid)
            seg0 = tcp_segs(sink_argv)
            perf = os.path.join(self.out, "%s-%d.perf" % (key, rep))
            with PerfRec(perf, self.perf and not tx) as rec:
                r = interop.sh(send_argv(["taskset", "-c", "1" if tx else "0", sys.executable, "-c",
                                          TCP_SEND, sink_addr, "9", str(self.nbytes)]), timeout=600)
            w1 = proc_cpu_s(p.pid)
            win = ((w1 if w1 is not None else w0) - w0, ksoftirqd_s() - c0["ksoftirqd"])
            lin = interop.lines_json(r.stdout)[-1]
            sink = interop.lines_json(p.communicate(timeout=60)[0])[-1]
            got = sink["bytes"]
            cpu = cpu_per_gb(c0, cpu_snap(), self.nbytes)
            rec.uncount(cpu, self.nbytes)
            seg1 = tcp_segs(sink_argv)
        finally:
            if p is not None and p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
            interop.sh(ns.dev_argv(["ip", "addr", "del", C_ADDR + "/24", "dev", "cnx"]), check=False)
            ns.run(["ip", "neigh", "flush", "dev", "cn0"], check=False)
        if got != self.nbytes:
            raise interop.Fail("linux sink got %d of %d bytes" % (got, self.nbytes))
        # the receiver's segments out (ACKs) per segment in
        row = {"mbit_s": lin["mbit_s"], "out_per_in": (seg1[1] - seg0[1]) / max(1, seg1[0] - seg0[0])}
        row.update(("cpu_" + k, v) for k, v in cpu.items())
        if not tx:
            if self.perf:
                row["perf"] = perf_split(perf, {sink["pid"]: "receiver", lin["pid"]: "sender"},
                                         self.nbytes, lin["mono"])
            self.split(row, sink["user_s"], sink["sys_s"], lin, win)
        self.add(key, row)
        print("  %-10s %8.0f Mbit/s, receiver's segments out per segment in %.3f" % (
            key, lin["mbit_s"], row["out_per_in"]), flush=True)
        self.print_cpu(row)

    def udp(self, ns, key, rep):
        name = "%s-%d" % (key, rep)
        if key == "udp-bare" and self.xsk_bare:
            dev, extra = "xsk-bare", []
            # no stack answers ARP: the kernel end learns cnx's address by hand
            mac = interop.sh(ns.dev_argv(["cat", "/sys/class/net/cnx/address"])).stdout.strip()
            ns.run(["ip", "neigh", "replace", C_ADDR, "lladdr", mac, "dev", "cn0"])
        elif key in ("udp-bare", "udp-backend"):
            dev, extra = "afxdp", ["--bare"]
        else:
            dev, extra = "afxdp", ["--udp-sink", "9"]
        p, log = self.tool(ns, dev, name, extra)
        c0 = cpu_snap()
        try:
            sender = [self.blast] if self.blast else [sys.executable, "-c", UDP_SEND]
            r = ns.run(["taskset", "-c", "0"] + sender + [C_ADDR, "9", str(self.udp_s)], timeout=120)
            snd = interop.lines_json(r.stdout)[-1]
            time.sleep(0.3)
        finally:
            s = self.stop(p, log)
            if dev == "xsk-bare":
                ns.run(["ip", "neigh", "flush", "dev", "cn0"], check=False)
        got = s["rx_frames"] - s.get("rx_other", 0)
        cpu = cpu_per_gb(c0, cpu_snap(), max(1, s["rx_bytes"]))
        row = {"sent_pps": snd["pps"], "rx_pps": got / snd["seconds"], "rx_frames": got,
               "mbit_s": got * 1472 * 8 / snd["seconds"] / 1e6,
               "sent": snd["sent"], "kdrops": s.get("dev_kernel_drops", 0),
               "busy_per_frame": s["busy_tsc"] / max(1, s["rx_frames"]),
               "cpu_share": (s["cpu_user_s"] + s["cpu_sys_s"]) / s["wall_s"],
               "ours_s_gb": (s["cpu_user_s"] + s["cpu_sys_s"]) / (max(1, s["rx_bytes"]) / 1e9)}
        row.update(("cpu_" + k, v) for k, v in cpu.items())
        self.add(key, row)
        print("  %-10s sender %8.0f pps, received %8.0f pps (%d of %d; kernel drops %d), busy %5.0f "
              "ticks/frame, receiver used %.0f%% of its CPU" % (
                  key, row["sent_pps"], row["rx_pps"], got, snd["sent"], row["kdrops"],
                  row["busy_per_frame"], 100 * row["cpu_share"]), flush=True)
        self.print_cpu(row)

    def dpdk_tcp(self, ns, dev, rep, tx):
        """tcp() over DPDK (DEV dpdk-xdp or dpdk-pkt), or in self.skipped
        why it was not measured: the build has no adapter, the EAL or the
        PMD does not start, or the stream stalled."""
        key = "tcp-%s%s" % (dev, "-tx" if tx else "")
        if key in self.skipped:
            return
        self.last = {}
        try:
            self.tcp(ns, dev, rep, tx)
        except interop.Skip as e:
            self.skipped[key] = str(e)
        except interop.Fail as e:
            if "timed out" not in str(e):
                raise
            self.skipped[key] = (
                "the stream stalled: no progress for %g s (the Linux peer's socket timed out), "
                "after cachenet had received %d frames and sent %d" % (
                    self.stall_s, self.last.get("rx_frames", 0), self.last.get("tx_frames", 0)))
        if key in self.skipped:
            print("  %-10s not measured: %s" % (key, self.skipped[key]), flush=True)

    def memif_once(self, nbytes):
        """memif_stream --json of NBYTES: its JSON line and the CPU
        snapshots around it; None (the reason in self.skipped) on a skip."""
        c0 = cpu_snap()
        r = interop.sh(["timeout", "300", self.memif_prog, "--bytes", str(nbytes), "--json", "--cores", "0,1",
                        "--timeout", "120"], check=False)
        c1 = cpu_snap()
        js = [j for j in interop.lines_json(r.stdout) if "sender" in j]
        if r.returncode == 77:
            self.skipped["memif"] = r.stdout.strip().splitlines()[-1]
            return None
        if r.returncode != 0 or not js:
            raise interop.Fail("memif_stream --bytes %d: exit %d: %s" % (
                nbytes, r.returncode, (r.stdout + r.stderr)[-500:]))
        return js[-1], c0, c1

    def memif(self, rep):
        """cachenet -> cachenet over net_memif (see the module's text)."""
        big = self.memif_bytes or self.nbytes
        small = big // 10
        a = self.memif_once(small)
        b = a and self.memif_once(big)
        if not b:
            return
        (ja, a0, a1), (jb, b0, b1) = a, b
        gb = (big - small) / 1e9
        kern = {k: ((b1[k] - b0[k]) - (a1[k] - a0[k])) / gb
                for k in ("m_user", "m_sys", "m_softirq", "ksoftirqd", "p_user", "p_sys")}
        snd, rcv = jb["sender"], jb["receiver"]
        procs = (snd["cpu_s"] + rcv["cpu_s"]) / (big / 1e9)
        row = {"mbit_s": jb["mbit_s"], "sha_equal": jb["sha_equal"], "tx_copy": jb["tx_copy"],
               "cpu_procs": procs, "cpu_total": procs + kern["ksoftirqd"]}
        for side, j in (("snd", snd), ("rcv", rcv)):
            row.update(("%s_%s" % (side, f), j[f]) for f in ("busy", "device", "stack", "app",
                                                            "cpu_s_per_gb", "kept_cpu"))
        row.update(("cpu_" + k, v) for k, v in kern.items())
        self.add("memif", row)
        print("  %-10s %8.0f Mbit/s  sender busy %5.0f (I/O %5.0f, stack %5.0f), receiver busy "
              "%5.0f (I/O %5.0f, stack %5.0f) ticks/segment" % (
                  "memif", row["mbit_s"], row["snd_busy"], row["snd_device"], row["snd_stack"],
                  row["rcv_busy"], row["rcv_device"], row["rcv_stack"]), flush=True)
        print("  %10s CPU s/GB: processes %.2f (sender %.2f, receiver %.2f) + ksoftirqd %.2f; "
              "the processes' user %.2f, system %.2f; machine-wide user %.2f, system %.2f, "
              "softirq %.2f (%d MB run less %d MB run)" % (
                  "", row["cpu_procs"], row["snd_cpu_s_per_gb"], row["rcv_cpu_s_per_gb"],
                  row["cpu_ksoftirqd"], row["cpu_p_user"], row["cpu_p_sys"], row["cpu_m_user"],
                  row["cpu_m_sys"], row["cpu_m_softirq"], big // 1000000, small // 1000000),
              flush=True)

    def median(self, key, field):
        return statistics.median(r[field] for r in self.rows[key])

    def ratios(self, key, base, field):
        """key's field over base's, repetition by repetition (the rows of
        one repetition were measured minutes apart at most)."""
        return [a[field] / b[field] for a, b in zip(self.rows[key], self.rows[base])
                if field in a and field in b and b[field] > 0]


def arg_parser(doc, mb):
    """The options every stream measurement takes: --tapnet, --out, --mb."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tapnet", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mb", type=float, default=mb)
    return ap


def main():
    ap = arg_parser(__doc__, 200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--udp-s", type=float, default=3.0)
    ap.add_argument("--blast", default="", help="the C UDP sender (udpblast); default a Python loop")
    ap.add_argument("--xsk-bare", default="", help="the bare AF_XDP loop (cachenet-xsk-bare)")
    ap.add_argument("--tool-args", default="", help="more cachenet-tapnet options for every run")
    ap.add_argument("--memif", default="", help="tests/dpdk/memif_stream, for the memif mode")
    ap.add_argument("--memif-mb", type=float, default=0, help="the memif mode's MB (default --mb)")
    ap.add_argument("--tapnet-base", default="", help="the build before a change: tcp-afxdp-base")
    ap.add_argument("--base-args", default="", help="more options for tcp-afxdp-base's runs")
    ap.add_argument("--perf", action="store_true", help="a CPU profile of each receive run")
    ap.add_argument("--strace", action="store_true", help="count cachenet's system calls (AF_XDP)")
    ap.add_argument("--stall-s", type=float, default=10.0,
                    help="DPDK modes: give a stream up after this long without progress")
    ap.add_argument("--modes", default="tcp-tap,tcp-afxdp,tcp-linux,udp-afxdp,udp-bare",
                    help="also tcp-tap-tx, tcp-afxdp-tx, tcp-linux-tx (cachenet or Linux sends to "
                         "Linux), udp-backend, tcp-dpdk-xdp, tcp-dpdk-pkt (and -tx), memif (with --memif)")
    args = ap.parse_args()
    modes = args.modes.split(",")
    r = Run(args)
    if "memif" in modes and not r.memif_prog:
        r.skipped["memif"] = "no --memif (tests/dpdk/memif_stream is built only with the DPDK adapter)"
    try:
        with interop.Namespace(False) as tap_ns, interop.Namespace(True) as x_ns:
            for rep in range(args.reps):
                print("== repetition %d" % (rep + 1), flush=True)
                for tx in (False, True):
                    t = "-tx" if tx else ""
                    runs = []
                    if "tcp-tap" + t in modes:
                        runs.append(lambda: r.tcp(tap_ns, "tap", rep, tx))
                    if "tcp-afxdp" + t in modes:
                        runs.append(lambda: r.tcp(x_ns, "afxdp", rep, tx))
                    if not tx and "tcp-afxdp-base" in modes and r.tapnet_base:
                        runs.append(lambda: r.tcp(x_ns, "afxdp-base", rep))
                    for dev in ("dpdk-xdp", "dpdk-pkt"):
                        if "tcp-%s%s" % (dev, t) in modes:
                            runs.append(lambda dev=dev: r.dpdk_tcp(x_ns, dev, rep, tx))
                    if "tcp-linux" + t in modes:
                        runs.append(lambda: r.tcp_linux(x_ns, rep, tx))
                    # each mode takes each place in turn: the first run
                    # after another's pays for what that one left behind
                    # (memory to compact for huge pages, cold caches)
                    for i in range(len(runs)):
                        runs[(i + rep) % len(runs)]()
                for k in ("udp-afxdp", "udp-bare", "udp-backend"):
                    if k in modes:
                        r.udp(x_ns, k, rep)
                if "memif" in modes and r.memif_prog and "memif" not in r.skipped:
                    r.memif(rep)
    except interop.Skip as e:
        print("SKIP: " + str(e))
        return 77
    print("\nmedians over %d repetitions" % args.reps)
    for k in ("tcp-tap", "tcp-afxdp", "tcp-afxdp-base", "tcp-dpdk-xdp", "tcp-dpdk-pkt", "tcp-tap-tx",
              "tcp-afxdp-tx", "tcp-dpdk-xdp-tx", "tcp-dpdk-pkt-tx"):
        if k in r.rows:
            print("  %-10s %8.0f Mbit/s  busy %6.0f ticks/frame (device %6.0f, stack %5.0f, app %5.0f)  "
                  "cpu %.2f us/frame (sys %.2f), cachenet used %.0f%% of its CPU" % (
                      k, r.median(k, "mbit_s"), r.median(k, "busy"), r.median(k, "device"),
                      r.median(k, "stack"), r.median(k, "app"), r.median(k, "cpu_us"), r.median(k, "sys_us"),
                      100 * r.median(k, "cpu_share")))
    for k in ("tcp-linux", "tcp-linux-tx"):
        if k in r.rows:
            print("  %-12s %8.0f Mbit/s (Linux -> Linux, the same programs and veth)" % (
                k, r.median(k, "mbit_s")))
    print("  CPU seconds per GB received (run = processes + ksoftirqd; machine-wide softirq apart):")
    for k in ("tcp-tap", "tcp-afxdp", "tcp-afxdp-base", "tcp-dpdk-xdp", "tcp-dpdk-pkt", "tcp-linux",
              "tcp-tap-tx",
              "tcp-afxdp-tx", "tcp-dpdk-xdp-tx", "tcp-dpdk-pkt-tx", "tcp-linux-tx", "udp-afxdp",
              "udp-bare", "udp-backend"):
        if k in r.rows:
            print("  %-12s run %.2f = processes %.2f (user %.2f, system %.2f) + ksoftirqd %.2f%s; "
                  "machine-wide softirq %.2f" % (
                      k, r.median(k, "cpu_total"), r.median(k, "cpu_procs"), r.median(k, "cpu_p_user"),
                      r.median(k, "cpu_p_sys"), r.median(k, "cpu_ksoftirqd"),
                      ", cachenet (or the bare loop) %.2f" % r.median(k, "ours_s_gb") if "ours_s_gb" in r.rows[k][0] else "",
                      r.median(k, "cpu_m_softirq")))
    print("  per process, s/GB (receiver: cachenet or Linux's; all but the receiver: the sender "
          "and ksoftirqd):")
    for k in ("tcp-tap", "tcp-afxdp", "tcp-afxdp-base", "tcp-linux"):
        if k in r.rows and "rcv_user" in r.rows[k][0]:
            print("  %-14s receiver user %.2f, system %.2f; sender user %.2f, system %.2f; "
                  "ksoftirqd %.2f; all but the receiver %.2f; window %.2f (receiver %.2f)" % (
                      k, r.median(k, "rcv_user"), r.median(k, "rcv_sys"), r.median(k, "snd_user"),
                      r.median(k, "snd_sys"), r.median(k, "cpu_ksoftirqd"), r.median(k, "outside_rcv"),
                      r.median(k, "window"), r.median(k, "win_rcv")))
    for k in ("tcp-tap", "tcp-afxdp", "tcp-afxdp-base", "tcp-linux"):
        if k in r.rows and "perf" in r.rows[k][0]:
            names = sorted({n for row in r.rows[k] for n in row["perf"]})
            med = {n: statistics.median(row["perf"].get(n, 0.0) for row in r.rows[k]) for n in names}
            print("  %-14s perf, s/GB (medians): total %.2f; %s" % (
                k, sum(med.values()), ", ".join("%s %.2f" % (n, med[n]) for n in sorted(
                    names, key=lambda n: -med[n]))))
    # per mode and field, its per-repetition ratios to Linux -> Linux's
    # (stream.json's "ratios", which the report's devices section shows)
    ratios = {}
    for k in ("tcp-afxdp", "tcp-afxdp-base", "tcp-dpdk-xdp", "tcp-dpdk-pkt"):
        if k not in r.rows or "tcp-linux" not in r.rows:
            continue
        parts = []
        for f, what in (("perf_total", "perf in the window"), ("window", "processes in the window"),
                        ("cpu_total", "whole run")):
            q = r.ratios(k, "tcp-linux", f)
            if q:
                ratios.setdefault(k, {})[f] = q
                parts.append("%s %.2f (%.2f-%.2f)" % (what, statistics.median(q), min(q), max(q)))
        if parts:
            print("  %-14s CPU s/GB over Linux -> Linux's, per repetition, median (range): %s" % (
                k, "; ".join(parts)))
    if "tcp-tap" in r.rows and "tcp-afxdp" in r.rows:
        print("  AF_XDP / TAP throughput %.2fx; busy ticks per frame TAP / AF_XDP %.2fx" % (
            r.median("tcp-afxdp", "mbit_s") / r.median("tcp-tap", "mbit_s"),
            r.median("tcp-tap", "busy") / r.median("tcp-afxdp", "busy")))
    for k in ("udp-afxdp", "udp-bare", "udp-backend"):
        if k in r.rows:
            print("  %-10s sender %8.0f pps, received %8.0f pps (%.0f Mbit/s), receiver used %.0f%% of its CPU" % (
                k, r.median(k, "sent_pps"), r.median(k, "rx_pps"), r.median(k, "mbit_s"),
                100 * r.median(k, "cpu_share")))
    if "memif" in r.rows:
        print("  %-12s %8.0f Mbit/s cachenet -> cachenet; CPU s/GB processes %.2f, machine-wide "
              "system %.2f, softirq %.2f" % ("memif", r.median("memif", "mbit_s"),
                                             r.median("memif", "cpu_procs"), r.median("memif", "cpu_m_sys"),
                                             r.median("memif", "cpu_m_softirq")))
    for k, why in sorted(r.skipped.items()):
        print("  %-12s not measured: %s" % (k, why))
    if "udp-afxdp" in r.rows and "udp-bare" in r.rows:
        print("  stack / bare loop frame rate %.3f" % (
            r.median("udp-afxdp", "rx_pps") / r.median("udp-bare", "rx_pps")))
    med = {k: {f: statistics.median(row[f] for row in v) for f in v[0] if f != "perf"}
           for k, v in r.rows.items()}
    with open(os.path.join(r.out, "stream.json"), "w") as f:
        json.dump({"rows": r.rows, "medians": med, "ratios": ratios, "tsc_hz": r.tsc_hz, "reps": args.reps,
                   "skipped": r.skipped,
                   "mb": args.mb, "udp_s": args.udp_s, "load_avg": os.getloadavg()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
