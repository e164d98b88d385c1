#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cachenet-report: run cachenet's studies on this machine and write one
Markdown report (tables, PNG plots, the JSON of every figure) into --out DIR.

Sections (--only NAME[,NAME...]), each a study; the papers are cited by authors
and title in the report:
  memsig       1. memory signature (Nahum et al. Fig. 3/4): latency vs working set
  kernels      2. checksum, copy+checksum, byte swaps, ciphers vs every peer
  buffers      3. mbuf pool vs contiguous sockbuf vs DPDK vs lwIP (Ang)
  payload      4. per-payload TX/RX characterization (Makineni & Iyer Tables 1, 3)
  caches       5. hot, cold and idealized caches, instructions vs data (Nahum et al. T3-5, Fig. 6)
  sensitivity  6. cache size and associativity (Nahum et al. Tables 6-7)
  dca          7. RX in flush/inject/prefetch modes (Huggahalli et al. Table 1, 4)
  ilp          8. sequential vs integrated loops (Ahlgren et al. Table II)
  layout       9. code layout before/after CORD (Nahum et al. Tables 11-12)
  tap         10. against Linux's TCP through a TAP device (needs root)
  devices     11. TAP, AF_XDP and DPDK streams beside Linux's TCP on a veth (needs root)

  cachenet-report compare A B     ratios B/A between two reports' JSON

Measurements are cached in DIR/runs and reused unless --fresh. Standard
library only; PNGs need matplotlib (Debian python3-matplotlib), found in this
Python or /usr/bin/python3.
"""
import os
import sys

VERSION = "@VERSION@"
INSTALLED_LIBEXEC = "@LIBEXECDIR@"
SOURCE_ROOT = "@SOURCE_ROOT@"
DATADIR = "@DATADIR@"


def locate():
    """Programs from the build tree when this script runs from one (and the
    cnreport package from the source tree), else from the install."""
    here = os.path.dirname(os.path.realpath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    if os.path.exists(os.path.join(root, "build.ninja")):
        return os.path.join(SOURCE_ROOT, "tools", "report"), {
            "root": root, "source": SOURCE_ROOT,
            "memsig": os.path.join(root, "tools", "memsig", "memsig"),
            "bench": os.path.join(root, "bench"),
            "cord": os.path.join(SOURCE_ROOT, "tools", "cord", "cord.py"),
            "cord_paths": os.path.join(root, "tools", "cord", "cachenet-cord-paths"),
            "ilp_model": os.path.join(SOURCE_ROOT, "ilp", "model.py"),
            "cord_test": os.path.join(SOURCE_ROOT, "tests", "cord", "test_link.py"),
            "tapnet": os.path.join(root, "tools", "tapnet", "cachenet-tapnet"),
            "interop": os.path.join(SOURCE_ROOT, "tests", "interop", "interop.py"),
            "stream": os.path.join(SOURCE_ROOT, "tests", "interop", "stream.py"),
            "xsk_bare": os.path.join(root, "tools", "xskbare", "cachenet-xsk-bare"),
            "udpblast": os.path.join(root, "tests", "interop", "udpblast"),
            "memif_stream": os.path.join(root, "tests", "dpdk", "memif_stream"),
        }
    return os.path.join(DATADIR, "report"), {
        "root": None, "source": None,
        "memsig": os.path.join(here, "memsig"),
        "bench": INSTALLED_LIBEXEC,
        "cord": os.path.join(here, "cachenet-cord"),
        "cord_paths": os.path.join(INSTALLED_LIBEXEC, "cachenet-cord-paths"),
        "ilp_model": os.path.join(DATADIR, "ilp", "model.py"),
        "cord_test": None,
        "tapnet": os.path.join(here, "cachenet-tapnet"),
        "interop": None,
        "stream": None,
        "xsk_bare": None,
        "udpblast": None,
        "memif_stream": None,
    }


if __name__ == "__main__":
    pkgdir, paths = locate()
    # cnreport, and cord's cordlib beside it (the callgrind.out reader)
    sys.path[:0] = [pkgdir, os.path.join(SOURCE_ROOT, "tools", "cord") if paths["root"]
                    else os.path.join(DATADIR, "cord")]
    from cnreport import main as cnmain  # noqa: E402
    sys.exit(cnmain.main(sys.argv[1:], {"version": VERSION, "paths": paths, "doc": __doc__}))
