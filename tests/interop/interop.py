#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cachenet against the Linux kernel's TCP/IP, through a TAP device in a
private network namespace this test creates and deletes, or (--afxdp)
through AF_XDP on a veth pair between two such namespaces, or (--dpdk)
through a DPDK port (net_af_xdp or net_af_packet) on that veth pair.

  interop.py --tapnet BUILD/tools/tapnet/cachenet-tapnet --out DIR [--mb N] [--only NAME,...]
             [--afxdp | --dpdk [--dpdk-pmd af_xdp|af_packet]]

Namespace NS: interface cn0 (TAP), the kernel at 10.77.0.1/24, cachenet at
10.77.0.2 (cachenet-tapnet, attached to cn0). Linux's side is ordinary
sockets (peer.py). Tests linux_client, cachenet_client, impaired, and
echo (only when --only names it: ping and the echo of linux_client
alone). Checks: ping; Linux client -> cachenet echo / discard /
source with SHA-256 compared both ways; 1,000 short connections; UDP echo;
cachenet client -> Linux echo / sink / source servers; 1,000 short
connections from cachenet; the same transfer under loss, reordering,
duplication and corruption (netem when the kernel has sch_netem, else the
TAP backend's own impairment, said so); after every cachenet run: no socket,
TX descriptor, mbuf or cluster left in use. Every run's capture is saved as
pcap in --out. Exit 77 (skip) only when the kernel or the user cannot
create namespaces or TAP devices.

With --afxdp: namespace NS holds the kernel's end cn0 of a veth pair
(10.77.0.1, TX checksum offload off so its frames carry whole checksums),
namespace NS-x the other end cnx, where cachenet-tapnet runs with
--afxdp cnx (AF_XDP, native XDP). The same checks, plus after every run:
no UMEM frame in use and no XDP program left on cnx (the impaired
transfer uses the AF_XDP backend's impairment where there is no netem).
Exit 77 also when the library has no AF_XDP backend or the kernel
refuses veth or AF_XDP.

With --dpdk: the same veth pair, cachenet-tapnet --dpdk on cnx through
libcachenet-dpdk: its own DPDK EAL (--no-huge --no-pci, one lcore, 512 MB,
a file prefix of its own whose runtime directory it removes at exit) with
the virtual device net_af_xdp (default) or net_af_packet on cnx. The same
checks (no capture: the adapter has no pcap hook), plus after every run:
no received rte_mbuf held by the stack, the adapter's mempools idle at
close (else cachenet-tapnet exits 1), no XDP program left on cnx. The
impaired transfer needs netem there (the adapter has no impairment of its
own): without it the test says it did not run. Exit 77 also when the build
has no DPDK adapter or the EAL or the PMD does not start here.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "peer.py")
# UDP datagrams of 1,000 bytes to HOST:PORT as fast as a socket takes them
# for SECS seconds, answers left unread.
UDP_FLOOD = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], int(sys.argv[2])))
end = time.time() + float(sys.argv[3])
b = bytes(1000)
while time.time() < end:
    try:
        s.send(b)
    except OSError:
        pass
"""
K_ADDR, C_ADDR = "10.77.0.1", "10.77.0.2"


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def sh(cmd, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise Fail("%s: exit %d: %s" % (" ".join(cmd), r.returncode, (r.stderr or r.stdout).strip()))
    return r


# struct ifreq with a pointer to struct ethtool_value {cmd, data}:
# ETHTOOL_STXCSUM (0x17) with data 0, through SIOCETHTOOL (0x8946).
TX_CSUM_OFF = (
    "import ctypes,fcntl,socket,struct,sys\n"
    "ev=ctypes.create_string_buffer(struct.pack('II',0x17,0),8)\n"
    "ifr=struct.pack('16sP',sys.argv[1].encode(),ctypes.addressof(ev)).ljust(40,b'\\0')\n"
    "s=socket.socket()\n"
    "fcntl.ioctl(s.fileno(),0x8946,ifr)\n")


class Namespace:
    def __init__(self, afxdp=False, queues=1):
        self.name = "cnio-%d%s%s" % (os.getpid(), "v" if afxdp else "", queues if queues > 1 else "")
        self.afxdp = afxdp
        self.queues = queues  # veth: RX and TX queues of each end
        # where cachenet runs: with AF_XDP, the namespace of the veth's other end
        self.dev_name = self.name + "x" if afxdp else self.name
        self.netem = None

    def __enter__(self):
        if shutil.which("ip") is None:
            raise Skip("iproute2's `ip` is not installed")
        r = sh(["ip", "netns", "add", self.name], check=False)
        if r.returncode != 0:
            raise Skip("cannot create a network namespace (needs root / CAP_SYS_ADMIN): " + r.stderr.strip())
        try:
            if self.afxdp:
                self.veth()
            else:
                r = self.run(["ip", "tuntap", "add", "dev", "cn0", "mode", "tap"], check=False)
                if r.returncode != 0:
                    raise Skip("cannot create a TAP device: " + r.stderr.strip())
            self.run(["ip", "link", "set", "lo", "up"])
            self.run(["ip", "link", "set", "cn0", "up"])
            self.run(["ip", "addr", "add", K_ADDR + "/24", "dev", "cn0"])
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def veth(self):
        sh(["ip", "netns", "add", self.dev_name])
        q = ["numtxqueues", str(self.queues), "numrxqueues", str(self.queues)]
        r = self.run(["ip", "link", "add", "cn0"] + q + ["type", "veth", "peer", "name", "cnx"] + q +
                     ["netns", self.dev_name], check=False)
        if r.returncode != 0:
            raise Skip("cannot create a veth pair: " + r.stderr.strip())
        self.run([sys.executable, "-c", TX_CSUM_OFF, "cn0"])
        if self.queues > 1:
            # The veth delivers on the RX queue numbered like the sender's
            # TX queue, which follows the socket's hash; Linux picks a new
            # hash after a retransmission timeout (sk_rethink_txhash), which
            # would move a connection to the other queue's stack. Keep it
            # (Linux 5.19 and later; older kernels: no such knob, ignored).
            self.run(["sysctl", "-qw", "net.core.txrehash=0"], check=False)
        for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "link", "set", "cnx", "up"],
                    ["sysctl", "-qw", "net.ipv6.conf.cnx.disable_ipv6=1"]):
            sh(self.dev_argv(cmd))

    def xdp_attached(self):
        """The XDP program ids on cnx, from `ip -d link` ("prog/xdp id N")."""
        out = sh(self.dev_argv(["ip", "-d", "link", "show", "dev", "cnx"])).stdout
        return [w for w in out.replace("\n", " ").split(" prog/xdp id ")[1:]]

    def __exit__(self, *a):
        sh(["ip", "netns", "del", self.name], check=False)
        if self.dev_name != self.name:
            sh(["ip", "netns", "del", self.dev_name], check=False)

    def argv(self, cmd):
        return ["ip", "netns", "exec", self.name] + cmd

    def dev_argv(self, cmd):
        return ["ip", "netns", "exec", self.dev_name] + cmd

    def run(self, cmd, check=True, timeout=900):
        return sh(self.argv(cmd), check=check, timeout=timeout)

    def popen(self, cmd, **kw):
        return subprocess.Popen(self.argv(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, **kw)

    def try_netem(self):
        r = self.run(["tc", "qdisc", "add", "dev", "cn0", "root", "netem", "delay", "1ms",
                      "loss", "1%", "reorder", "1%", "duplicate", "0.1%", "corrupt", "0.1%"],
                     check=False)
        self.netem = r.returncode == 0
        return r

    def clear_netem(self):
        if self.netem:
            self.run(["tc", "qdisc", "del", "dev", "cn0", "root"], check=False)
            self.netem = False


def lines_json(text):
    out = []
    for l in text.splitlines():
        l = l.strip()
        if l.startswith("{"):
            try:
                out.append(json.loads(l))
            except ValueError:
                pass
    return out


class Tapnet:
    """cachenet-tapnet in the namespace, stopped with SIGTERM; its JSON
    lines parsed, the leak counters of its summary checked."""

    def __init__(self, t, name, args, wait_ready=True, timeout=900):
        self.t, self.name = t, name
        self.pcap = os.path.join(t.out, name + ".pcap")
        ready = os.path.join(t.out, name + ".ready")
        if os.path.exists(ready):
            os.unlink(ready)
        if t.dpdk:
            dev = ["--dpdk", t.eal_args(name)]
        else:
            dev = (["--afxdp", "cnx"] if t.afxdp else ["--dev", "cn0"]) + ["--pcap", self.pcap]
        cmd = [t.tapnet] + dev + ["--addr", C_ADDR, "--time-wait", "200",
                                  "--ready-file", ready] + args
        # Output to files, not pipes: a pipe nobody reads fills up after
        # ~200 connection lines and blocks the stack in printf.
        self.log = os.path.join(t.out, name + ".log")
        self.fo = open(self.log, "w")
        self.p = subprocess.Popen(t.ns.dev_argv(cmd), stdout=self.fo, stderr=subprocess.STDOUT,
                                  text=True, start_new_session=True)
        self.timeout = timeout
        self.result = None
        if wait_ready:
            t0 = time.time()
            while not os.path.exists(ready):
                if self.p.poll() is not None:
                    self.fo.close()
                    se = open(self.log).read().strip()
                    if self.p.returncode == 77:
                        raise Skip("cachenet-tapnet cannot open its device: " + se)
                    raise Fail("%s exited %d before ready: %s" % (name, self.p.returncode, se))
                if time.time() - t0 > 20:
                    raise Fail("%s not ready after 20 s" % name)
                time.sleep(0.05)

    def finish(self, stop=True):
        if stop and self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
        try:
            self.p.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
            raise Fail("%s did not finish in %d s" % (self.name, self.timeout))
        finally:
            self.fo.close()
            if self.t.dpdk:
                # what the EAL leaves when the program was killed
                shutil.rmtree(os.path.join("/var/run/dpdk", self.t.eal_prefix(self.name)),
                              ignore_errors=True)
        so = open(self.log).read()
        se = "\n".join(l for l in so.splitlines() if not l.startswith("{"))
        js = lines_json(so)
        self.conns = [j for j in js if j.get("event") == "conn"]
        summ = [j for j in js if j.get("event") == "summary"]
        if not summ:
            raise Fail("%s: no summary (exit %d): %s" % (self.name, self.p.returncode, se.strip()[-500:]))
        self.summary = s = summ[0]
        if self.p.returncode != 0:
            raise Fail("%s exited %d: %s" % (self.name, self.p.returncode, se.strip()[-500:]))
        leaks = {k: s[k] for k in ("socks_live", "pkts_out", "mbufs_in_use", "clusters_in_use",
                                   "umem_in_use") if s.get(k)}
        if leaks:
            raise Fail("%s: left in use at the end: %s" % (self.name, leaks))
        if self.t.veth:
            left = self.t.ns.xdp_attached()
            if left:
                raise Fail("%s: XDP program still attached to cnx after exit: %s" % (self.name, left))
        self.t.summaries.append((self.name, s))
        return self


class Suite:
    """What the interop and hostile suites share: their options, a helper
    script run in the namespace for its last JSON line, the checks, and the
    loop that runs the named tests and writes summary.json."""

    def __init__(self, args):
        self.tapnet = os.path.abspath(args.tapnet)
        self.out = os.path.abspath(args.out)
        self.only = set(args.only.split(",")) if args.only else None
        self.afxdp = args.afxdp
        self.dpdk = getattr(args, "dpdk", False)
        self.dpdk_pmd = getattr(args, "dpdk_pmd", "af_xdp")
        self.veth = self.afxdp or self.dpdk  # cachenet on cnx, the far end of a veth pair
        self.results = []
        self.summaries = []
        os.makedirs(self.out, exist_ok=True)

    def eal_prefix(self, name):
        return "cnio%d_%s" % (os.getpid(), name.replace("-", "_"))

    def eal_args(self, name):
        """cachenet-tapnet --dpdk's EAL arguments for the run NAME: no
        hugepages, no PCI, one lcore (the last CPU this process may use),
        a file prefix of the run's own, the PMD on cnx."""
        return ("--no-huge --no-pci -l %d -m 512 --file-prefix %s --log-level lib.eal:error "
                "--vdev net_%s0,iface=cnx" % (max(os.sched_getaffinity(0)), self.eal_prefix(name),
                                               self.dpdk_pmd))

    def script(self, path, a, timeout):
        """Run python3 PATH A... in the namespace; its last JSON line."""
        r = self.ns.run([sys.executable, path] + [str(x) for x in a], check=False, timeout=timeout)
        js = lines_json(r.stdout)
        if r.returncode != 0 or not js:
            raise Fail("%s %s: exit %d: %s" % (os.path.basename(path), " ".join(map(str, a)),
                                               r.returncode, r.stderr.strip()[-800:]))
        return js[-1]

    def peer(self, *a, timeout=900):
        return self.script(PEER, a, timeout)

    def check(self, cond, what):
        if not cond:
            raise Fail(what)

    def run_tests(self, tests, report=None):
        """Run each (name, fn) of TESTS not left out by --only in one
        namespace; fn returns a message or raises Fail. REPORT() prints
        after the tests; returns the exit status (1 if any failed)."""
        with Namespace(self.veth) as ns:
            self.ns = ns
            for name, fn in tests:
                if self.only and name not in self.only:
                    continue
                t0 = time.time()
                print("== %s" % name, flush=True)
                try:
                    msg = fn()
                    self.results.append((name, True, msg))
                    print("ok %s (%.1f s): %s" % (name, time.time() - t0, msg), flush=True)
                except Fail as e:
                    self.results.append((name, False, str(e)))
                    print("FAIL %s (%.1f s): %s" % (name, time.time() - t0, e), flush=True)
        if report:
            report()
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump({"results": self.results, "summaries": self.summaries}, f, indent=1)
        bad = [r for r in self.results if not r[1]]
        print("%d passed, %d failed" % (len(self.results) - len(bad), len(bad)))
        return 1 if bad else 0


def out(**kw):
    """One JSON line on stdout: a helper script's record for the test."""
    print(json.dumps(kw), flush=True)


def csum(b):
    """The Internet checksum (RFC 1071) of the bytes B."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def udp_echo(s, data, addr, bufsize, tries=3):
    """Send DATA from the UDP socket S (with a timeout) to ADDR until an
    answer comes, at most TRIES times: (answer, its source, the sends), or
    (None, None, TRIES) when none came."""
    for attempt in range(1, tries + 1):
        s.sendto(data, addr)
        try:
            back, src = s.recvfrom(bufsize)
        except socket.timeout:
            continue
        return back, src, attempt
    return None, None, tries


def command_main(doc, commands, argv):
    """main() of a helper script (peer.py, rawpeer.py): run
    COMMANDS[argv[1]](argv[2:]) and return 0; print DOC and return 2 for
    a missing or unknown command."""
    if len(argv) < 2 or argv[1] not in commands:
        print(doc)
        return 2
    commands[argv[1]](argv[2:])
    return 0


def suite_main(suite, ap):
    """main() of a suite: --tapnet, --out, --only and --afxdp beside AP's
    own options; exit 77 (skip) without cachenet-tapnet or where the
    namespace cannot be made."""
    ap.add_argument("--tapnet", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma list of the tests to run")
    ap.add_argument("--afxdp", action="store_true",
                    help="run cachenet over AF_XDP on a veth pair instead of a TAP")
    ap.add_argument("--dpdk", action="store_true",
                    help="run cachenet over a DPDK port (--dpdk-pmd) on a veth pair instead of a TAP")
    ap.add_argument("--dpdk-pmd", default="af_xdp", choices=["af_xdp", "af_packet"],
                    help="the DPDK virtual device on cnx (net_af_xdp or net_af_packet)")
    args = ap.parse_args()
    if args.afxdp and args.dpdk:
        ap.error("--afxdp or --dpdk, not both")
    if not os.path.exists(args.tapnet):
        print("SKIP: %s not built (needs OpenSSL's libcrypto, libssl-dev)" % args.tapnet)
        return 77
    try:
        return suite(args).run()
    except Skip as e:
        print("SKIP: " + str(e))
        return 77


class Tests(Suite):
    def __init__(self, args):
        super().__init__(args)
        self.nbytes = int(args.mb * 1_000_000)
        self.short = args.short

    def conn_line(self, tn, role):
        c = [x for x in tn.conns if x["role"] == role]
        self.check(c, "%s: no %s connection reported" % (tn.name, role))
        return c

    def ping_echo(self, n):
        """Linux pings cachenet 5 times, then its echo client sends N bytes
        to cachenet's echo service on port 7 and reads them back; checked
        here, returned."""
        p = self.peer("ping", C_ADDR, 5)
        self.check(p["ok"] == 5, "ping: %d of 5 answered" % p["ok"])
        if shutil.which("ping"):
            self.ns.run(["ping", "-c", "3", "-i", "0.2", "-W", "2", C_ADDR])
        e = self.peer("echo-client", C_ADDR, 7, n)
        self.check(e["rx_bytes"] == n and e["rx_sha256"] == e["tx_sha256"],
                   "echo: sent %d, got back %d bytes, SHA-256 %s" % (
                       n, e["rx_bytes"], "equal" if e["rx_sha256"] == e["tx_sha256"] else "differs"))
        return e

    def echo_conns(self, tn, e, n):
        """cachenet's echo connections in TN's report; the N-byte one must
        have the client's SHA-256 both ways."""
        ech = self.conn_line(tn, "echo")
        big = [c for c in ech if c["rx_bytes"] == n]
        self.check(big and big[0]["rx_sha256"] == e["tx_sha256"] and big[0]["tx_sha256"] == e["tx_sha256"],
                   "echo: cachenet's SHA-256 differs from the client's")
        return ech

    # ---------------------------------------------------------------- tests

    def t_echo(self):
        """Linux client -> cachenet echo alone: ping, N bytes both ways at
        once, SHA-256 equal on both ends."""
        n = self.nbytes
        tn = Tapnet(self, "echo", ["--echo", "7"])
        try:
            e = self.ping_echo(n)
            time.sleep(0.5)
        finally:
            tn.finish()
        self.echo_conns(tn, e, n)
        return "ping 5/5; echo %d MB both ways at once %.0f Mbit/s; SHA-256 equal" % (n / 1e6, e["mbit_s"])

    def t_linux_client(self):
        """Linux clients -> cachenet servers: ping, echo (both directions at
        once), discard, source, UDP echo, 1,000 short connections."""
        n = self.nbytes
        tn = Tapnet(self, "linux-client", ["--echo", "7", "--discard", "9",
                                           "--source", "19:%d" % n, "--udp-echo", "7"])
        try:
            e = self.ping_echo(n)
            s = self.peer("send", C_ADDR, 9, n)
            r = self.peer("recv", C_ADDR, 19)
            self.check(r["rx_bytes"] == n, "source: got %d of %d bytes" % (r["rx_bytes"], n))
            u = self.peer("udp", C_ADDR, 7, 300)
            self.check(u["ok"] == 300, "udp: %s" % u)
            sh_ = self.peer("short", C_ADDR, 7, self.short, 1000)
            self.check(sh_["ok"] == self.short, "short connections: %s" % sh_)
            time.sleep(0.5)
        finally:
            tn.finish()
        ech = self.echo_conns(tn, e, n)
        d = self.conn_line(tn, "discard")[0]
        self.check(d["rx_bytes"] == n and d["rx_sha256"] == s["tx_sha256"],
                   "discard: cachenet got %d bytes, SHA-256 %s" % (d["rx_bytes"], "equal" if d["rx_sha256"] == s["tx_sha256"] else "differs"))
        src = self.conn_line(tn, "source")[0]
        self.check(src["tx_sha256"] == r["rx_sha256"], "source: SHA-256 differs")
        self.check(len([c for c in ech if c["end"] == "fin"]) == self.short + 1,
                   "echo connections ended by FIN: %d, want %d" % (
                       len([c for c in ech if c["end"] == "fin"]), self.short + 1))
        sm = tn.summary
        self.check(sm["passive_opens"] == self.short + 3, "passive opens %d" % sm["passive_opens"])
        self.check(sm["icmp_echo"][1] >= 5, "ICMP echo replies %s" % sm["icmp_echo"])
        return ("ping 5/5; echo %d MB both ways at once %.0f Mbit/s (Linux's count, both directions); "
                "discard %.0f Mbit/s; source %.0f Mbit/s; UDP 300/300; %d short connections in %.1f s; "
                "all SHA-256 equal" % (n / 1e6, e["mbit_s"], s["mbit_s"], r["mbit_s"], self.short,
                                       sh_["seconds"]))

    def t_cachenet_client(self):
        """cachenet clients -> Linux servers: echo, sink, source, and 1,000
        short connections (cachenet closes first: TIME_WAIT on our side)."""
        n = self.nbytes
        servers = [self.ns.popen([sys.executable, PEER, "server", k, str(port), str(n)])
                   for k, port in (("echo", 7007), ("sink", 9009), ("source", 1919))]
        try:
            time.sleep(0.5)
            tn = Tapnet(self, "cachenet-client-echo", ["--connect", "%s:7007" % K_ADDR,
                                                       "--send", str(n)]).finish(stop=False)
            c = tn.conns[0]
            self.check(c["end"] == "fin" and c["rx_bytes"] == n and c["rx_sha256"] == c["tx_sha256"],
                       "echo via Linux: %s" % c)
            echo_rate = c["mbit_s"]
            tn = Tapnet(self, "cachenet-client-sink", ["--connect", "%s:9009" % K_ADDR,
                                                       "--send", str(n)]).finish(stop=False)
            sink_tx = tn.conns[0]
            tn = Tapnet(self, "cachenet-client-source", ["--connect", "%s:1919" % K_ADDR,
                                                         "--send", "0"]).finish(stop=False)
            src_rx = tn.conns[0]
            self.check(src_rx["rx_bytes"] == n, "source: got %d bytes" % src_rx["rx_bytes"])
            tn = Tapnet(self, "cachenet-client-short", ["--connect", "%s:7007" % K_ADDR, "--send", "1000",
                                                        "--count", str(self.short), "--quiet"]).finish(stop=False)
            ok = [x for x in tn.conns if x["end"] == "fin" and x["rx_sha256"] == x["tx_sha256"]
                  and x["rx_bytes"] == 1000]
            self.check(len(ok) == self.short, "short connections from cachenet: %d of %d exact" % (
                len(ok), self.short))
            self.check(tn.summary["active_opens"] == self.short, "active opens %d" % tn.summary["active_opens"])
        finally:
            srv_out = []
            for p in servers:
                os.killpg(p.pid, signal.SIGTERM)
                so, _ = p.communicate()
                srv_out += lines_json(so)
        sc = [j for j in srv_out if j.get("cmd") == "server-conn"]
        sink = [j for j in sc if j["kind"] == "sink"]
        self.check(sink and sink[0]["rx_sha256"] == sink_tx["tx_sha256"] and sink[0]["rx_bytes"] == n,
                   "Linux sink's SHA-256 differs from what cachenet sent")
        srcl = [j for j in sc if j["kind"] == "source"]
        self.check(srcl and srcl[0].get("tx_sha256") == src_rx["rx_sha256"],
                   "Linux source's SHA-256 differs: %s" % (srcl[:1],))
        echos = [j for j in sc if j["kind"] == "echo" and j.get("rx_bytes") == n]
        self.check(echos and echos[0]["rx_sha256"] == c["tx_sha256"], "Linux echo server's SHA-256 differs")
        return ("echo %d MB both ways %.0f Mbit/s; sink %.0f Mbit/s; source %.0f Mbit/s; "
                "%d short connections exact; all SHA-256 equal" % (
                    n / 1e6, echo_rate, sink_tx["mbit_s"], src_rx["mbit_s"], self.short))

    def t_impaired(self):
        """The echo transfer with loss 1%, reorder 1%, duplicate 0.1%,
        corrupt 0.1%: netem on the kernel's side when available, else the
        TAP backend's impairment on cachenet's side."""
        n = max(self.nbytes // 5, 1_000_000)
        r = self.ns.try_netem()
        extra = []
        if self.ns.netem:
            how = "netem on cn0 (kernel side)"
        elif self.dpdk:
            return ("NOT RUN: netem unavailable (%s) and the DPDK adapter has no impairment of "
                    "its own" % (r.stderr.strip() or "tc failed"))
        else:
            how = ("netem unavailable (%s): the same rates applied by cachenet's %s backend, "
                   "both directions" % (r.stderr.strip() or "tc failed", "AF_XDP" if self.afxdp else "TAP"))
            extra = ["--impair", "loss=0.01,reorder=0.01,duplicate=0.001,corrupt=0.001,seed=7"]
        print("  impairment: " + how, flush=True)
        try:
            tn = Tapnet(self, "impaired", ["--echo", "7"] + extra)
            try:
                e = self.peer("echo-client", C_ADDR, 7, n)
            finally:
                tn.finish()
        finally:
            self.ns.clear_netem()
        self.check(e["rx_bytes"] == n and e["rx_sha256"] == e["tx_sha256"], "impaired echo: %s" % e)
        c = self.conn_line(tn, "echo")[0]
        self.check(c["rx_sha256"] == e["tx_sha256"], "impaired echo: cachenet's SHA-256 differs")
        it, ir = tn.summary["impair_tx"], tn.summary["impair_rx"]
        if not self.ns.netem:
            self.check(it[1] > 0 and ir[1] > 0, "impairment lost nothing: tx %s rx %s" % (it, ir))
        return ("%s; echo %d MB exact at %.0f Mbit/s; frames lost/reordered/duplicated/corrupted "
                "tx %s rx %s" % (how, n / 1e6, e["mbit_s"], it[1:], ir[1:]))

    def t_tx_multi(self):
        """AF_XDP only: UDP echo with --tx-multi, where a reply's payload,
        lying in the request's UMEM chunk, is posted in place after its
        copied headers and the stack's packet is held until the TX
        completion; then cachenet is stopped while a flood of requests is
        being answered: it must end with every frame completed (the
        stack destroyed after), exit 0, nothing left in use."""
        tn = Tapnet(self, "tx-multi", ["--udp-echo", "7", "--tx-multi"])
        flood = None
        try:
            u = self.peer("udp", C_ADDR, 7, 300)
            self.check(u["ok"] == 300, "udp: %s" % u)
            flood = self.ns.popen([sys.executable, "-c", UDP_FLOOD, C_ADDR, "7", "3"])
            time.sleep(1.0)
        finally:
            tn.finish()
            if flood:
                flood.communicate(timeout=30)
        s = tn.summary
        dev = [j for j in lines_json(open(tn.log).read()) if j.get("event") == "device"][0]
        self.check(s["tx_frames"] == s["tx_zero_copy"] + s["tx_payload_in_place"] + s["tx_copied"],
                   "TX frames %d != zero-copy %d + payload in place %d + copied %d" % (
                       s["tx_frames"], s["tx_zero_copy"], s["tx_payload_in_place"], s["tx_copied"]))
        if dev["multi_buffer"]:
            self.check(s["tx_payload_in_place"] >= 300,
                       "replies with the payload in place: %d, want >= 300" % s["tx_payload_in_place"])
        return ("UDP 300/300; %d replies during a flood; %d frames out, %d of them headers + payload "
                "in place (multi-buffer %s); stopped mid-flood: exit 0, nothing in use" % (
                    s["udp_echo"][0] - 300, s["tx_frames"], s["tx_payload_in_place"],
                    "on" if dev["multi_buffer"] else "off: kernel before 6.6"))

    def run(self):
        # echo alone (linux_client runs the same echo first) only when named
        echo = [("echo", self.t_echo)] if self.only and "echo" in self.only else []
        xdp = [("tx_multi", self.t_tx_multi)] if self.afxdp else []
        return self.run_tests(echo + [("linux_client", self.t_linux_client),
                               ("cachenet_client", self.t_cachenet_client),
                               ("impaired", self.t_impaired)] + xdp, self.print_costs)

    def print_costs(self):
        print("\nTSC ticks per frame (either direction) on this path: busy = the event loop "
              "outside poll(2);\ndevice = inside the TAP's read/write, or AF_XDP's RX burst and "
              "TX path (rings, refill, gather, sendto);\napp = the test program's SHA-256 and "
              "generator; stack = the rest; reads/writes = the device's system calls")
        print("  (cpu us/frame: user and system CPU time of the whole process, from getrusage,"
              " which leaves out preemption)")
        print("  %-24s %8s %8s %9s %7s %7s %6s %6s %9s %8s" % ("run", "frames", "busy", "device", "app",
                                                             "stack", "reads", "writes", "user us", "sys us"))
        for name, s in self.summaries:
            frames = s["rx_frames"] + s["tx_frames"]
            if not frames:
                continue
            sysc = s["tap_rx_tsc"] + s["tap_tx_tsc"]
            print("  %-24s %8d %8.0f %9.0f %7.0f %7.0f %6d %6d %9.2f %8.2f" % (
                name, frames, s["busy_tsc"] / frames, sysc / frames, s["app_tsc"] / frames,
                (s["busy_tsc"] - sysc - s["app_tsc"]) / frames, s["rx_reads"], s["tx_writes"],
                s["cpu_user_s"] * 1e6 / frames, s["cpu_sys_s"] * 1e6 / frames))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=float(os.environ.get("CN_INTEROP_MB", "100")))
    ap.add_argument("--short", type=int, default=1000)
    return suite_main(Tests, ap)


if __name__ == "__main__":
    sys.exit(main())
