#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""One stack per queue, one queue per core: cachenet on 2 AF_XDP queues.

  multiq.py --tapnet BUILD/tools/tapnet/cachenet-tapnet --out DIR
            [--conns N] [--mb M] [--bench REPS]

In namespaces this program creates and deletes, a veth pair with 2 RX and
2 TX queues on each end (the kernel's end cn0, TX checksum offload off;
cnx where cachenet runs): cachenet-tapnet --afxdp cnx:2 --threads, two
stacks on two threads pinned to CPUs 0 and 1, each with its own AF_XDP
socket and connections. The XDP program redirects queue i's frames to
queue i's socket; the veth puts a frame on the RX queue numbered like the
TX queue the Linux socket picked (its flow hash), so each connection stays
on one queue and one stack.

Test (default): N Linux echo clients at once (peer.py echo-client, M MB
each): every client gets back what it sent (SHA-256 both ways), cachenet
reports N echo connections with the same digests, both stacks carried
connections, and at exit no socket, mbuf, cluster or UMEM frame is in use
and no XDP program is left on cnx.

--bench R: N Linux TCP senders at once (M MB each) into cachenet's discard
service, 1 queue and 1 stack on CPU 1 against 2 queues and 2 stacks on
CPUs 0 and 1, R repetitions interleaved: aggregate Mbit/s (all bytes over
the time from the first connect to the last sender's end), medians.
The senders are not pinned: on a 2-core machine they share the cores
with cachenet.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import interop  # noqa: E402
import stream  # noqa: E402

C_ADDR = interop.C_ADDR


def start(ns, tapnet, out, name, queues, extra):
    ready = os.path.join(out, name + ".ready")
    if os.path.exists(ready):
        os.unlink(ready)
    dev = ["--afxdp", "cnx:%d" % queues] + (["--threads"] if queues > 1 else [])
    cpus = "0,1" if queues > 1 else "1"
    cmd = ["taskset", "-c", cpus, tapnet] + dev + ["--addr", C_ADDR, "--time-wait", "200",
                                                   "--ready-file", ready] + extra
    log = open(os.path.join(out, name + ".log"), "w")
    p = subprocess.Popen(ns.dev_argv(cmd), stdout=log, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    t0 = time.time()
    while not os.path.exists(ready):
        if p.poll() is not None:
            why = open(log.name).read()[-800:]
            if p.returncode == 77:  # no AF_XDP backend, or not allowed
                raise interop.Skip(why.strip())
            raise interop.Fail("%s exited %d: %s" % (name, p.returncode, why))
        if time.time() - t0 > 20:
            raise interop.Fail(name + " not ready")
        time.sleep(0.05)
    return p, log


def stop(p, log):
    if p.poll() is None:
        os.killpg(p.pid, 15)
    p.wait(timeout=120)
    log.close()
    text = open(log.name).read()
    js = interop.lines_json(text)
    summ = [j for j in js if j.get("event") == "summary"]
    if not summ or p.returncode != 0:
        raise interop.Fail("%s: exit %d, %s" % (log.name, p.returncode, text[-800:]))
    return js, summ[0]


def clean(ns, s, fails, what):
    for k in ("socks_live", "mbufs_in_use", "clusters_in_use", "umem_in_use", "pkts_out"):
        if s.get(k, 0) != 0:
            fails.append("%s: %s = %s at exit" % (what, k, s[k]))
    left = ns.xdp_attached()
    if left:
        fails.append("%s: XDP program(s) %s left on cnx" % (what, left))


def test(args, ns):
    fails = []
    p, log = start(ns, args.tapnet, args.out, "multiq-echo", 2, ["--echo", "7"])
    nbytes = int(args.mb * 1e6)
    try:
        cl = [ns.popen([sys.executable, interop.PEER, "echo-client", C_ADDR, "7", str(nbytes)])
              for _ in range(args.conns)]
        res = []
        for c in cl:
            o, e = c.communicate(timeout=900)
            j = interop.lines_json(o)
            if c.returncode != 0 or not j:
                fails.append("echo client exit %d: %s" % (c.returncode, e.strip()[-300:]))
                continue
            res.append(j[-1])
        time.sleep(0.5)
    finally:
        js, s = stop(p, log)
    conns = [j for j in js if j.get("event") == "conn" and j.get("role") == "echo"]
    threads = [j for j in js if j.get("event") == "thread"]
    for r in res:
        if r["rx_bytes"] != nbytes or r["rx_sha256"] != r["tx_sha256"]:
            fails.append("client got %d bytes back, SHA-256 %s, sent %s" % (
                r["rx_bytes"], r["rx_sha256"][:12], r["tx_sha256"][:12]))
    want = res[0]["tx_sha256"] if res else None
    good = [c for c in conns if c["end"] == "fin" and c["rx_bytes"] == nbytes and
            c["rx_sha256"] == want and c["tx_sha256"] == want]
    if len(good) != args.conns:
        fails.append("cachenet reports %d of %d echo connections whole and equal (%d in all)" % (
            len(good), args.conns, len(conns)))
    per = [t["passive_opens"] for t in threads]
    if len(threads) != 2 or min(per) == 0:
        fails.append("connections per stack %s: both stacks must carry some" % per)
    clean(ns, s, fails, "echo run")
    print("multiq: %d echo connections of %d MB over 2 queues, per stack %s, per-stack frames "
          "rx %s tx %s, CPUs %s" % (len(good), args.mb, per, [t["rx_frames"] for t in threads],
                                   [t["tx_frames"] for t in threads], [t["cpu"] for t in threads]))
    return fails


def bench_once(args, ns, queues, rep, fails):
    name = "multiq-bench-%dq-%d" % (queues, rep)
    p, log = start(ns, args.tapnet, args.out, name, queues, ["--discard", "9", "--quiet", "--no-hash"])
    nbytes = int(args.mb * 1e6)
    try:
        t0 = time.time()
        snd = [ns.popen([sys.executable, "-c", stream.TCP_SEND, C_ADDR, "9", str(nbytes)])
               for _ in range(args.conns)]
        for c in snd:
            c.communicate(timeout=900)
            if c.returncode != 0:
                fails.append("%s: a sender exited %d" % (name, c.returncode))
        dt = time.time() - t0
        time.sleep(0.3)
    finally:
        js, s = stop(p, log)
    clean(ns, s, fails, name)
    threads = [j for j in js if j.get("event") == "thread"]
    mbit = args.conns * nbytes * 8 / dt / 1e6
    print("  %d queue(s): %6.0f Mbit/s aggregate (%d x %g MB in %.2f s), connections per stack %s, "
          "cachenet CPU %.2f s" % (queues, mbit, args.conns, args.mb, dt,
                                   [t["passive_opens"] for t in threads] or [args.conns],
                                   s["cpu_user_s"] + s["cpu_sys_s"]), flush=True)
    return mbit


def main():
    ap = stream.arg_parser(__doc__, 20)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--bench", type=int, default=0, metavar="REPS")
    args = ap.parse_args()
    args.tapnet = os.path.abspath(args.tapnet)
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    if (os.cpu_count() or 1) < 2:
        print("SKIP: needs 2 CPUs")
        return 77
    fails = []
    try:
        with interop.Namespace(True, queues=2) as ns2:
            if not args.bench:
                fails = test(args, ns2)
            else:
                with interop.Namespace(True) as ns1:
                    got = {1: [], 2: []}
                    for rep in range(args.bench):
                        for q, ns in ((1, ns1), (2, ns2)):
                            got[q].append(bench_once(args, ns, q, rep, fails))
                    m1, m2 = statistics.median(got[1]), statistics.median(got[2])
                    print("medians over %d repetitions: 1 queue %.0f Mbit/s, 2 queues %.0f Mbit/s, "
                          "ratio %.2f" % (args.bench, m1, m2, m2 / m1))
                    with open(os.path.join(args.out, "multiq.json"), "w") as f:
                        json.dump({"1": got[1], "2": got[2]}, f)
    except interop.Skip as e:
        print("SKIP: " + str(e))
        return 77
    except interop.Fail as e:
        fails.append(str(e))
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
