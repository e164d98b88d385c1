# SPDX-License-Identifier: BSD-2-Clause
"""The papers' numbers, printed beside ours, and how the report cites each
paper (by authors and title). Transcribed from the papers' text."""

# key -> (authors, title, short form for headings)
PAPERS = {
    "nahum": ("Nahum, Yates, Kurose, Towsley", "Cache Behavior of Network Protocols",
              "Nahum et al."),
    "makineni": ("Makineni, Iyer",
                 "Measurement-based Analysis of TCP/IP Processing Requirements",
                 "Makineni & Iyer"),
    "huggahalli": ("Huggahalli, Iyer, Tetrick", "Direct Cache Access for High Bandwidth "
                   "Network I/O", "Huggahalli et al."),
    "ahlgren": ("Ahlgren, Björkman, Gunningberg",
                "The Applicability of Integrated Layer Processing", "Ahlgren et al."),
    "ang": ("Ang", "An Evaluation of an Attempt at Offloading TCP/IP Protocol Processing "
            "on to an i960RN-based iNIC", "Ang"),
    "clark": ("Clark, Jacobson, Romkey, Salwen", "An Analysis of TCP Processing Overhead",
              "Clark et al."),
}


def cite(key, where=""):
    """A paper by authors and title, e.g. for a section's first line:
    'Nahum, Yates, Kurose, Towsley, "Cache Behavior of Network Protocols"'
    (plus ', ' + where: a table or figure of it)."""
    authors, title, _ = PAPERS[key]
    return '%s, "%s"%s' % (authors, title, ", " + where if where else "")


def short(key, where=""):
    """The short form for headings: 'Nahum et al., Tables 3-5'."""
    return PAPERS[key][2] + (", " + where if where else "")


# Nahum et al. (PAPERS['nahum']), 100 MHz R4400 SGI Challenge, Sec. 2 / Fig. 3:
# memory signature read times.
NAHUM_MEMSIG_NS = {"L1": 20, "L2": 134, "DRAM": 1440}
NAHUM_MEMSIG_CYCLES = {"L1": 0, "L2": 11, "DRAM": 141}   # Table 1, read

# Table 3: hot-cache miss rates (L1 I, L1 D, L2 unified). Only the rows
# that survive in the text copy of the paper.
NAHUM_T3 = {
    "TCP Recv Cksum On": (0.028, 0.156, 0.057),
    "UDP Send Cksum Off": (0.040, 0.003, 0.067),
    "UDP Send Cksum On": (0.011, 0.011, 0.025),
    "UDP Recv Cksum Off": (0.047, 0.016, 0.026),
    "UDP Recv Cksum On": (0.015, 0.178, 0.092),
}
# Table 4: latencies (µs) cold / hot / ideal.
NAHUM_T4 = {
    "TCP Send Cksum Off": (375, 77, 42),
    "TCP Send Cksum On": (517, 147, 96),
    "UDP Send Cksum Off": (123, 18, 12),
    "UDP Send Cksum On": (262, 71, 12),
}
# Table 5: cold-cache miss rates.
NAHUM_T5 = {
    "TCP Send Cksum Off": (0.209, 0.185, 0.213),
    "TCP Send Cksum On": (0.083, 0.217, 0.179),
    "UDP Send Cksum Off": (0.231, 0.199, 0.286),
    "UDP Send Cksum On": (0.043, 0.232, 0.195),
}
# Table 6: TCP send, cksum off: miss rates vs L1 size (direct-mapped, L2 1 MB).
NAHUM_T6 = {8: (0.144, 0.071, 0.0), 16: (0.083, 0.059, 0.0), 32: (0.041, 0.019, 0.0),
            64: (0.019, 0.015, 0.0), 128: (0.002, 0.008, 0.0)}
# Table 7: TCP send, cksum off: miss rates vs associativity (16 KB L1).
NAHUM_T7 = {1: (0.083, 0.059, 0.0), 2: (0.053, 0.004, 0.0), 4: (0.017, 0.0, 0.0),
            8: (0.005, 0.0, 0.0)}
# Table 11: latency per packet in microseconds, (original, CORDed).
NAHUM_T11 = {
    "TCP Send Cksum Off": (76.61, 72.61), "TCP Send Cksum On": (147.80, 148.38),
    "TCP Recv Cksum Off": (58.04, 54.33), "TCP Recv Cksum On": (190.42, 186.61),
    "UDP Send Cksum Off": (20.92, 12.53), "UDP Send Cksum On": (77.45, 65.59),
    "UDP Recv Cksum Off": (33.46, 27.03), "UDP Recv Cksum On": (160.15, 148.76),
}
# Table 12: CORDed protocols, miss rates.
NAHUM_T12 = {
    "TCP Send Cksum Off": (0.061, 0.060, 0.007),
    "TCP Send Cksum On": (0.031, 0.076, 0.008),
    "TCP Recv Cksum Off": (0.047, 0.025, 0.014),
    "TCP Recv Cksum On": (0.017, 0.157, 0.073),
    "UDP Send Cksum Off": (0.0, 0.0, 0.222),
    "UDP Send Cksum On": (0.001, 0.012, 0.077),
    "UDP Recv Cksum Off": (0.006, 0.016, 0.092),
    "UDP Recv Cksum On": (0.002, 0.178, 0.108),
}

# Makineni & Iyer, Table 1, per payload: instructions, branches,
# memory accesses, TLB misses, I-cache misses, D-cache misses; (TX, RX).
# Clark, Jacobson, Romkey, Salwen (1989), as summarized in Ang's Table 11:
# instructions per segment counted by hand on an i386, TCP + IP + buffering
# + TCB lookup + timers, no driver, checksum or copy. Data sender: Tx(data)
# and Rx(ack); the Rx(ack) range is their 191-213 for TCP plus the rest.
CLARK_TX_DATA = 371
CLARK_RX_ACK = (320, 366)

MAKINENI_T1 = {
    64: ((4536, 3759), (843.6, 768.1), (1.0, 3.1), (9.0, 6.2), (5.9, 9.1), (39.2, 17.9)),
    128: ((4305, 3892), (863.0, 788.3), (1.6, 6.5), (7.2, 6.3), (7.2, 9.6), (40.9, 28.2)),
    256: ((4600, 4134), (918.9, 844.2), (3.5, 13.1), (10.4, 6.8), (9.4, 11.2), (48.0, 46.0)),
    512: ((5088, 4607), (1026.4, 947.6), (4.5, 25.9), (8.3, 7.7), (15.3, 14.2), (62.1, 82.3)),
    1024: ((5597, 5608), (1128.9, 1142.5), (5.7, 50.9), (9.7, 10.1), (21.6, 21.5), (80.6, 153.1)),
    1460: ((6713, 6473), (1359.6, 1329.6), (7.7, 73.0), (11.7, 11.0), (34.2, 25.8), (102.1, 202.3)),
    2048: ((7978, 9779), (1590.1, 2023.3), (7.7, 101.5), (24.4, 13.5), (54.8, 39.7), (158.3, 304.6)),
    4096: ((8540, 21547), (1765.7, 4515.3), (9.2, 219.1), (25.7, 43.9), (56.1, 109.1), (179.0, 791.5)),
    8192: ((10675, 31955), (2167.8, 6436.0), (12.6, 474.6), (31.5, 56.6), (83.9, 135.2), (217.2, 1600.7)),
    16384: ((14766, 56225), (3028.8, 11754.8), (20.9, 1079.5), (45.5, 97.0), (140.7, 227.7), (299.7, 3330.2)),
    32768: ((22320, 130440), (4604.7, 22680.7), (34.0, 2286.7), (64.6, 176.1), (196.0, 409.4), (426.9, 7196.8)),
    65536: ((55597, 245148), (11172.9, 51144.1), (114.0, 4758.8), (96.0, 331.5), (296.7, 751.2), (958.4, 14415.3)),
}
# Table 3: share of (RX) cache misses caused by copies.
MAKINENI_T3_COPY = {1024: 0.63, 1460: 0.63, 2048: 0.63, 4096: 0.58, 8192: 0.54,
                    16384: 0.47, 32768: 0.45, 65536: 0.43}

# Huggahalli et al., Table 4: 10 Gb/s, 4000 interrupts/s:
# size → (Mpkt/s, lines/pkt, pkts/interrupt, MB with data, MB without).
HUGGAHALLI_T4 = {64: (14.9, 3, 3720, 0.28, 0.26), 256: (4.5, 6, 1132, 0.29, 0.08),
                 512: (2.4, 10, 587, 0.30, 0.04), 1024: (1.2, 18, 299, 0.30, 0.02),
                 1518: (0.8, 25, 203, 0.30, 0.01)}

# Ahlgren et al., Table II, BSWAP/PES/CKSUM, ns/byte:
# system → (cold seq, cold ILP, warm seq, warm ILP) for real / modeled.
AHLGREN_T2 = {
    "HP 9000-735/99": {"real": (95, 49, 54, 37), "modeled": (87, 52, 49, 37)},
    "SPARCstation 2": {"real": (344, 174, 230, 125), "modeled": (372, 178, 247, 128)},
    "SPARCstation 20/71": {"real": (78, 39, 54, 32), "modeled": (81, 40, 58, 31)},
}

# Ang, Table 5: mbuf costs in i960 processor clocks (100 MHz).
ANG_T5 = {"MGET": "290-380", "MGETHDR": "300-400", "MCLGET": "400", "MFREE": "360"}
