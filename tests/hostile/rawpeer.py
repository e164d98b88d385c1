#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The hostile peer: Linux sockets and hand-built frames written straight
onto the TAP's kernel side (AF_PACKET on cn0), run inside the test's
network namespace (ip netns exec NS python3 rawpeer.py ...). Every command
prints one JSON line with what it saw.

  rawpeer.py ping DST SIZE...          ICMP echo of each payload SIZE over a raw
                                       socket (the kernel fragments), reply checked
  rawpeer.py udp DST PORT SIZE...      one UDP datagram of each SIZE, echo checked
  rawpeer.py frags DST CASE            hand-cut ICMP echo fragments: CASE overlap |
                                       missing | dup | ok; reports whether answered
  rawpeer.py frag-flood DST N SECS     N first fragments (never completed) from
                                       addresses .100-.250 of the subnet, as fast as
                                       possible, in SECS at most
  rawpeer.py syn-flood DST PORT N      at least N SYNs from addresses .100-.250 and
                                       random ports, as fast as possible, and on
                                       until SIGUSR1 (or 300 s) once N are sent
  rawpeer.py arp-spoof DST IP N        N ARP replies to DST claiming IP, never asked
                                       for, and N gratuitous ARPs for it
  rawpeer.py wscale DST PORT WS        handshake with window scale WS from a made-up
                                       host, echo of 1,000 bytes, RST
"""
import hashlib
import os
import random
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import interop  # noqa: E402  (command_main)
from interop import csum, out, udp_echo  # noqa: E402

IFACE = "cn0"
ETH_P_ALL = 0x0003


def ip_aton(a):
    return socket.inet_aton(a)


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


class Raw:
    """AF_PACKET on the TAP's kernel side: what we send goes to cachenet,
    and we see every frame cachenet writes (whatever its destination MAC)."""

    def __init__(self):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((IFACE, 0))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        self.mymac = self.s.getsockname()[4]

    def send(self, frame):
        while True:
            try:
                return self.s.send(frame)
            except OSError as e:
                if e.errno not in (105, 11):  # ENOBUFS, EAGAIN: the TAP queue is full
                    raise
                time.sleep(0.0005)

    def recv_until(self, pred, timeout):
        """Frames written by cachenet (PACKET_OUTGOING seen from cn0's side is
        what the kernel sends; cachenet's frames come in as HOST/OTHERHOST)."""
        end = time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return None
            fr, addr = self.s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            v = pred(fr)
            if v is not None:
                return v


def eth(dst, src, etype):
    return dst + src + struct.pack("!H", etype)


def ipv4(src, dst, proto, payload, ident=0, frag=0, ttl=64):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, frag, ttl, proto, 0,
                    ip_aton(src), ip_aton(dst))
    c = csum(h)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def arp_frame(dmac, smac, op, sha, spa, tha, tpa):
    a = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, ip_aton(spa), tha, ip_aton(tpa))
    f = eth(dmac, smac, 0x0806) + a
    return f + b"\0" * (60 - len(f))


def cachenet_mac(dst):
    """cachenet-tapnet's default MAC: 02:00 then its IPv4 address."""
    return b"\x02\x00" + ip_aton(dst)


def fake_mac(i):
    return bytes([0x02, 0xee, 0, 0, (i >> 8) & 0xff, i & 0xff])


# ---------------------------------------------------------------- commands

def ping(dst, sizes):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    ident = os.getpid() & 0xffff
    res = []
    rnd = random.Random(5)
    for seq, size in enumerate(sizes):
        payload = rnd.randbytes(size)
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident, seq) + payload
        ok = False
        for attempt in range(3):
            s.sendto(pkt, (dst, 0))
            end = time.time() + 2.0
            while time.time() < end:
                r, _, _ = select.select([s], [], [], end - time.time())
                if not r:
                    break
                data, src = s.recvfrom(70000)
                ihl = (data[0] & 0xf) * 4
                icmp = data[ihl:]
                if src[0] != dst or len(icmp) < 8:
                    continue
                t, _, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
                if t == 0 and rid == ident and rseq == seq:
                    ok = icmp[8:] == payload and csum(icmp) == 0
                    break
            if ok:
                break
        res.append({"size": size, "ok": ok, "attempts": attempt + 1})
    out(cmd="ping", results=res, ok=all(r["ok"] for r in res))


def udp(dst, port, sizes):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.settimeout(2.0)
    rnd = random.Random(6)
    res = []
    for size in sizes:
        data = rnd.randbytes(size)
        back, src, attempts = udp_echo(s, data, (dst, port), 70000)
        ok = back == data and src == (dst, port)
        res.append({"size": size, "ok": ok, "attempts": attempts,
                    "sha256": hashlib.sha256(data).hexdigest()})
    out(cmd="udp", results=res, ok=all(r["ok"] for r in res))


def icmp_echo(ident, seq, payload):
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    return struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident, seq) + payload


def frags(dst, case):
    """An ICMP echo request of 4,000 bytes cut by hand into fragments of
    1,480 (and, for overlap, one more piece overlapping two of them)."""
    r = Raw()
    me = "10.77.0.1"
    dmac = cachenet_mac(dst)
    ident = 0x4242
    icmp = icmp_echo(ident, 1, bytes(range(256)) * 15 + bytes(160))
    ipid = random.randrange(1 << 16)
    pieces = [(o, icmp[o:o + 1480]) for o in range(0, len(icmp), 1480)]
    if case == "missing":
        pieces = pieces[:1] + pieces[2:]
    elif case == "overlap":
        pieces = pieces[:2] + [(1472, icmp[1472:1472 + 16])] + pieces[2:]
    elif case == "dup":
        pieces = pieces[:1] + pieces[:1] + pieces[1:2] + pieces[1:2] + pieces[2:]
    for o, p in pieces:
        mf = 0x2000 if o + len(p) < len(icmp) else 0
        r.send(eth(dmac, r.mymac, 0x0800) + ipv4(me, dst, 1, p, ident=ipid, frag=mf | (o // 8)))

    def is_reply(fr):
        if fr[12:14] != b"\x08\x00" or fr[23] != 1:
            return None
        ihl = (fr[14] & 0xf) * 4
        if struct.unpack("!H", fr[20:22])[0] & 0x1fff:
            return None  # a later fragment: the first says what it is
        icmp_ = fr[14 + ihl:]
        if icmp_[0] == 0 and struct.unpack("!H", icmp_[4:6])[0] == ident:
            return True
        return None

    answered = bool(r.recv_until(is_reply, 1.5))
    out(cmd="frags", case=case, answered=answered, sent=len(pieces))


def frag_flood(dst, n, secs):
    r = Raw()
    dmac = cachenet_mac(dst)
    payload = bytes(1480)
    t0 = time.time()
    sent = 0
    frames = []
    for i in range(256):
        src = "10.77.0.%d" % (100 + i % 151)
        frames.append((src, fake_mac(i)))
    while sent < n and time.time() - t0 < secs:
        src, smac = frames[sent % len(frames)]
        # a first fragment (MF, offset 0) of a datagram never finished
        r.send(eth(dmac, smac, 0x0800) + ipv4(src, dst, 17, payload, ident=sent & 0xffff, frag=0x2000))
        sent += 1
    dt = time.time() - t0
    out(cmd="frag-flood", sent=sent, seconds=round(dt, 3), rate=round(sent / dt) if dt else 0)


def syn_flood(dst, port, n):
    r = Raw()
    dmac = cachenet_mac(dst)
    rnd = random.Random(7)
    t0 = time.time()
    # the SYNs are prebuilt in a few templates and patched: Python's per-frame
    # cost is then the send, ~2-4 us
    opts = struct.pack("!BBH", 2, 4, 1460) + b"\x01\x03\x03\x07" + b"\x04\x02\x01\x01"
    sent = 0
    stop = []
    signal.signal(signal.SIGUSR1, lambda *_: stop.append(1))
    i = 0
    while i < n or (not stop and time.time() - t0 < 300):
        a = 100 + i % 151
        src = "10.77.0.%d" % a
        sport = 1024 + rnd.randrange(64000)
        seq = rnd.getrandbits(32)
        th = struct.pack("!HHIIBBHHH", sport, port, seq, 0, (5 + len(opts) // 4) << 4, 0x02, 64240, 0, 0) + opts
        ph = ip_aton(src) + ip_aton(dst) + struct.pack("!BBH", 0, 6, len(th))
        c = csum(ph + th)
        th = th[:16] + struct.pack("!H", c) + th[18:]
        r.send(eth(dmac, fake_mac(a), 0x0800) + ipv4(src, dst, 6, th, ident=i & 0xffff))
        sent += 1
        i += 1
    dt = time.time() - t0
    out(cmd="syn-flood", sent=sent, stopped=bool(stop), seconds=round(dt, 3), rate=round(sent / dt) if dt else 0)


def arp_spoof(dst, ip, n):
    r = Raw()
    dmac = cachenet_mac(dst)
    bad = bytes([0x02, 0xba, 0xd0, 0, 0, 1])
    for i in range(n):
        # a reply to cachenet for an address it never asked about
        r.send(arp_frame(dmac, bad, 2, bad, ip, dmac, dst))
        # a gratuitous ARP for it (sender = target, broadcast)
        r.send(arp_frame(b"\xff" * 6, bad, 2, bad, ip, b"\xff" * 6, ip))
        r.send(arp_frame(b"\xff" * 6, bad, 1, bad, ip, b"\0" * 6, ip))
    out(cmd="arp-spoof", sent=3 * n)


def tcp_seg(src, dst, sport, dport, seq, ack, flags, win, opts=b"", payload=b""):
    off = (20 + len(opts)) // 4
    th = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, win, 0, 0) + opts
    ph = ip_aton(src) + ip_aton(dst) + struct.pack("!BBH", 0, 6, len(th) + len(payload))
    c = csum(ph + th + payload)
    return ipv4(src, dst, 6, th[:16] + struct.pack("!H", c) + th[18:] + payload)


def parse_tcp(fr, src, dst, sport, dport):
    if fr[12:14] != b"\x08\x00" or fr[23] != 6:
        return None
    if fr[26:30] != ip_aton(src) or fr[30:34] != ip_aton(dst):
        return None
    ihl = (fr[14] & 0xf) * 4
    tot = struct.unpack("!H", fr[16:18])[0]
    t = fr[14 + ihl:14 + tot]
    sp, dp, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", t[:16])
    if sp != sport or dp != dport:
        return None
    hl = (off >> 4) * 4
    opts = t[20:hl]
    ws = None
    i = 0
    while i < len(opts):
        k = opts[i]
        if k == 0:
            break
        if k == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if k == 3:
            ws = opts[i + 2]
        i += opts[i + 1]
    return {"seq": seq, "ack": ack, "flags": flags, "win": win, "ws": ws, "data": t[hl:]}


def wscale(dst, port, ws):
    """A made-up host (10.77.0.60, its own MAC) opens a connection offering
    window scale ws, sends 1,000 bytes, reads the echo, and resets."""
    r = Raw()
    me, mymac = "10.77.0.60", fake_mac(60)
    dmac = cachenet_mac(dst)
    sport = 40000 + ws
    iss = 1000
    opts = struct.pack("!BBH", 2, 4, 1460) + bytes([1, 3, 3, ws])
    r.send(eth(dmac, mymac, 0x0800) + tcp_seg(me, dst, sport, port, iss, 0, 0x02, 1000, opts))
    sa = r.recv_until(lambda fr: parse_tcp(fr, dst, me, port, sport), 2.0)
    if not sa or sa["flags"] & 0x12 != 0x12:
        out(cmd="wscale", ws=ws, ok=False, why="no SYN-ACK", synack=str(sa))
        return
    irs = sa["seq"]
    data = bytes(random.Random(ws).randbytes(1000))
    r.send(eth(dmac, mymac, 0x0800) + tcp_seg(me, dst, sport, port, iss + 1, irs + 1, 0x10, 1000))
    r.send(eth(dmac, mymac, 0x0800) + tcp_seg(me, dst, sport, port, iss + 1, irs + 1, 0x18, 1000,
                                               payload=data))
    got = b""
    end = time.time() + 3
    while len(got) < len(data) and time.time() < end:
        seg = r.recv_until(lambda fr: parse_tcp(fr, dst, me, port, sport), end - time.time())
        if not seg:
            break
        if seg["data"] and seg["seq"] == irs + 1 + len(got):
            got += seg["data"]
            r.send(eth(dmac, mymac, 0x0800) + tcp_seg(me, dst, sport, port, iss + 1 + len(data),
                                                       irs + 1 + len(got), 0x10, 1000))
    r.send(eth(dmac, mymac, 0x0800) + tcp_seg(me, dst, sport, port, iss + 1 + len(data), 0, 0x04, 0))
    out(cmd="wscale", ws=ws, ok=got == data, synack_ws=sa["ws"], echoed=len(got))


COMMANDS = {
    "ping": lambda a: ping(a[0], [int(x) for x in a[1:]]),
    "udp": lambda a: udp(a[0], int(a[1]), [int(x) for x in a[2:]]),
    "frags": lambda a: frags(a[0], a[1]),
    "frag-flood": lambda a: frag_flood(a[0], int(a[1]), float(a[2])),
    "syn-flood": lambda a: syn_flood(a[0], int(a[1]), int(a[2])),
    "arp-spoof": lambda a: arp_spoof(a[0], a[1], int(a[2])),
    "wscale": lambda a: wscale(a[0], int(a[1]), int(a[2])),
}

if __name__ == "__main__":
    sys.exit(interop.command_main(__doc__, COMMANDS, sys.argv))
