#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The Linux side of the interop tests: ordinary kernel sockets.

Run inside the test's network namespace (ip netns exec NS python3 peer.py ...).
Every command prints one JSON line per connection (bytes and SHA-256 of each
direction) so the test can compare them with what cachenet-tapnet reports.

  peer.py echo-client HOST PORT BYTES     send BYTES, read the echo at the same time
  peer.py send HOST PORT BYTES            send BYTES, shut down, wait for the peer's FIN
  peer.py recv HOST PORT                  read until the peer's FIN
  peer.py short HOST PORT N SIZE          N connections in a row: send SIZE, read SIZE back
  peer.py udp HOST PORT N                 N datagrams of varied sizes, each echoed
  peer.py ping HOST N                     ICMP echo over a raw socket
  peer.py server KIND PORT [BYTES]        KIND echo|sink|source; runs until killed
"""
import hashlib
import os
import random
import socket
import struct
import sys
import threading
import time

import interop  # command_main
from interop import csum, out, udp_echo

CHUNK = 1 << 16


def gen_chunks(total, seed):
    rnd = random.Random(seed)
    left = total
    while left:
        k = min(CHUNK, left)
        yield rnd.randbytes(k)
        left -= k


def connect(host, port, timeout=30):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def drain(s, h):
    n = 0
    while True:
        b = s.recv(1 << 20)
        if not b:
            return n
        h.update(b)
        n += len(b)


def echo_client(host, port, total):
    s = connect(host, port, timeout=120)
    tx, rx = hashlib.sha256(), hashlib.sha256()
    got = {}

    def reader():
        got["n"] = drain(s, rx)

    t = threading.Thread(target=reader)
    t0 = time.time()
    t.start()
    for c in gen_chunks(total, 1):
        tx.update(c)
        s.sendall(c)
    s.shutdown(socket.SHUT_WR)
    t.join(600)
    dt = time.time() - t0
    s.close()
    out(cmd="echo-client", tx_bytes=total, tx_sha256=tx.hexdigest(), rx_bytes=got.get("n", -1),
        rx_sha256=rx.hexdigest(), seconds=round(dt, 3),
        mbit_s=round(2 * total * 8 / dt / 1e6, 1) if dt > 0 else 0)


def send(host, port, total):
    s = connect(host, port, timeout=120)
    tx = hashlib.sha256()
    t0 = time.time()
    for c in gen_chunks(total, 2):
        tx.update(c)
        s.sendall(c)
    s.shutdown(socket.SHUT_WR)
    rest = drain(s, hashlib.sha256())
    dt = time.time() - t0
    s.close()
    out(cmd="send", tx_bytes=total, tx_sha256=tx.hexdigest(), rx_bytes=rest, seconds=round(dt, 3),
        mbit_s=round(total * 8 / dt / 1e6, 1) if dt > 0 else 0)


def recv(host, port):
    s = connect(host, port, timeout=120)
    rx = hashlib.sha256()
    t0 = time.time()
    n = drain(s, rx)
    dt = time.time() - t0
    s.close()
    out(cmd="recv", rx_bytes=n, rx_sha256=rx.hexdigest(), seconds=round(dt, 3),
        mbit_s=round(n * 8 / dt / 1e6, 1) if dt > 0 else 0)


def short(host, port, count, size):
    rnd = random.Random(3)
    ok = bad = 0
    t0 = time.time()
    for i in range(count):
        data = rnd.randbytes(size)
        s = connect(host, port)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        back = b"".join(iter(lambda: s.recv(65536), b""))  # until EOF
        s.close()
        if back == data:
            ok += 1
        else:
            bad += 1
    out(cmd="short", ok=ok, bad=bad, seconds=round(time.time() - t0, 3))


def udp(host, port, count):
    rnd = random.Random(4)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    ok = lost = bad = 0
    for i in range(count):
        size = [0, 1, 17, 512, 1000, 1472][i % 6] if i < 12 else rnd.randrange(0, 1473)
        data = struct.pack("!I", i)[:size] + rnd.randbytes(max(0, size - 4))
        back, src, _ = udp_echo(s, data, (host, port), 65536)
        if back is None:
            lost += 1
        elif back == data and src == (host, port):
            ok += 1
        else:
            bad += 1
    out(cmd="udp", ok=ok, lost=lost, bad=bad)


def ping(host, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(1.0)
    ident = os.getpid() & 0xffff
    ok = 0
    rtts = []
    for seq in range(count):
        payload = bytes(range(56))
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        c = csum(hdr + payload)
        pkt = struct.pack("!BBHHH", 8, 0, c, ident, seq) + payload
        t0 = time.time()
        s.sendto(pkt, (host, 0))
        deadline = t0 + 1.0
        while time.time() < deadline:
            try:
                data, src = s.recvfrom(2048)
            except socket.timeout:
                break
            ihl = (data[0] & 0xf) * 4
            icmp = data[ihl:]
            if len(icmp) < 8 or src[0] != host:
                continue
            t, code, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
            if t == 0 and rid == ident and rseq == seq and icmp[8:] == payload and csum(icmp) == 0:
                ok += 1
                rtts.append((time.time() - t0) * 1e3)
                break
    out(cmd="ping", sent=count, ok=ok, rtt_ms=[round(r, 3) for r in rtts])


def server(kind, port, total=0):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(128)
    out(cmd="server", kind=kind, port=port, ready=True)
    n_conn = 0

    def handle(c, seed):
        rx, tx = hashlib.sha256(), hashlib.sha256()
        nrx = ntx = 0
        try:
            if kind == "echo":
                while True:
                    b = c.recv(1 << 20)
                    if not b:
                        break
                    rx.update(b)
                    nrx += len(b)
                    c.sendall(b)
                    tx.update(b)
                    ntx += len(b)
                c.shutdown(socket.SHUT_WR)
            elif kind == "sink":
                nrx = drain(c, rx)
                c.shutdown(socket.SHUT_WR)
            else:
                for ch in gen_chunks(total, seed):
                    c.sendall(ch)
                    tx.update(ch)
                    ntx += len(ch)
                c.shutdown(socket.SHUT_WR)
                nrx = drain(c, rx)
                # No second shutdown: writing is already shut, and once the
                # peer's FIN has been read and ours acknowledged the socket
                # may be closed, where shutdown() fails with ENOTCONN and the
                # record lost its hashes (seen once: KeyError 'tx_sha256').
        except OSError as e:
            out(cmd="server-conn", kind=kind, error=str(e), rx_bytes=nrx, tx_bytes=ntx)
            c.close()
            return
        c.close()
        out(cmd="server-conn", kind=kind, rx_bytes=nrx, rx_sha256=rx.hexdigest(), tx_bytes=ntx,
            tx_sha256=tx.hexdigest())

    while True:
        c, _ = ls.accept()
        n_conn += 1
        threading.Thread(target=handle, args=(c, 100 + n_conn), daemon=True).start()


COMMANDS = {
    "echo-client": lambda a: echo_client(a[0], int(a[1]), int(a[2])),
    "send": lambda a: send(a[0], int(a[1]), int(a[2])),
    "recv": lambda a: recv(a[0], int(a[1])),
    "short": lambda a: short(a[0], int(a[1]), int(a[2]), int(a[3])),
    "udp": lambda a: udp(a[0], int(a[1]), int(a[2])),
    "ping": lambda a: ping(a[0], int(a[1])),
    "server": lambda a: server(a[0], int(a[1]), int(a[2]) if len(a) > 2 else 0),
}

if __name__ == "__main__":
    sys.exit(interop.command_main(__doc__, COMMANDS, sys.argv))
