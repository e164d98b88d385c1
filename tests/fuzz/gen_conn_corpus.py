#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes the seed inputs of fuzz_conn (tests/fuzz/corpus/conn/): an ARP
request, a ping, a SYN with every option to the listener, a handshake
attempt, a SYN-ACK and a RST for the active open, a FIN, a SYN flood past
the backlog (cookies) and SACK blocks. Checksums are
left 0: the seeds set flag bit 0 (fuzz_conn fixes them)."""
import os
import struct
import sys

US, PEER = bytes([192, 168, 0, 1]), bytes([192, 168, 0, 2])
MAC_US, MAC_PEER = bytes([2, 0, 0, 0, 0, 1]), bytes([2, 0, 0, 0, 0, 2])


def eth(t, payload, dst=MAC_US):
    return dst + MAC_PEER + struct.pack("!H", t) + payload


def ip(proto, l4):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, proto, 0, PEER, US) + l4


def tcp(sport, dport, seq, ack, flags, opts=b"", data=b""):
    off = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, 65535, 0, 0) + opts + data


SYN, ACK, FIN, RST, PSH = 2, 16, 1, 4, 8
ALL_OPTS = (struct.pack("!BBH", 2, 4, 1460) + bytes([1, 3, 3, 7]) + bytes([4, 2]) +
            struct.pack("!BBII", 8, 10, 12345, 0))


def frames(*fs):
    return bytes([1]) + b"".join(struct.pack("!H", len(f)) + f for f in fs)


seeds = {
    "arp-request": frames(eth(0x0806, struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, MAC_PEER, PEER,
                                                   bytes(6), US), dst=b"\xff" * 6)),
    "ping": frames(eth(0x0800, ip(1, struct.pack("!BBHHH", 8, 0, 0, 7, 1) + bytes(range(56))))),
    "syn-all-options": frames(eth(0x0800, ip(6, tcp(40000, 80, 1000, 0, SYN, ALL_OPTS)))),
    "handshake-data-fin": frames(eth(0x0800, ip(6, tcp(40001, 80, 5000, 0, SYN, ALL_OPTS))),
                                 eth(0x0800, ip(6, tcp(40001, 80, 5001, 1, ACK))),
                                 eth(0x0800, ip(6, tcp(40001, 80, 5001, 1, ACK | PSH, data=b"abcdef"))),
                                 eth(0x0800, ip(6, tcp(40001, 80, 5007, 1, ACK | FIN)))),
    "active-synack-rst": frames(eth(0x0800, ip(6, tcp(5555, 49152, 9000, 1, SYN | ACK, ALL_OPTS))),
                                eth(0x0800, ip(6, tcp(5555, 49152, 9001, 0, RST)))),
    "closed-port": frames(eth(0x0800, ip(6, tcp(1234, 81, 1, 0, SYN)))),
    # past the backlog (8): SYN cookies, then ACKs no cookie validates
    "syn-flood-cookies": frames(*([eth(0x0800, ip(6, tcp(41000 + i, 80, 7000 * i, 0, SYN, ALL_OPTS)))
                                   for i in range(12)] +
                                  [eth(0x0800, ip(6, tcp(41011, 80, 7000 * 11 + 1, 12345, ACK)))])),
    # SACK blocks on the active open's connection (SYN-ACK, then an ACK
    # with a SACK option: NOP NOP SACK 2 blocks)
    "synack-sack": frames(eth(0x0800, ip(6, tcp(5555, 49152, 9000, 1, SYN | ACK, ALL_OPTS))),
                          eth(0x0800, ip(6, tcp(5555, 49152, 9001, 1, ACK,
                                                bytes([1, 1, 5, 18]) + struct.pack("!IIII", 100, 200, 300, 400))))),
}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "conn")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
