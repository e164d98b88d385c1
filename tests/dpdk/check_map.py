#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""libcachenet-dpdk exports exactly the names its version map lists, and
the map lists exactly the functions cachenet/dpdk.h declares (static
inline ones excepted). Usage: check_map.py NM LIB.so MAP HEADER"""
import re
import subprocess
import sys


def main():
    nm, lib, mapfile, header = sys.argv[1:5]
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    exported = {l.split()[-1].split("@")[0] for l in out.splitlines()
                if len(l.split()) >= 3 and l.split()[1] in "TtDdBbRr"}
    exported = {n for n in exported if not n.startswith("CACHENET")}
    text = re.sub(r"/\*.*?\*/", "", open(mapfile).read(), flags=re.S)
    listed = set(re.findall(r"^\s*(cn_\w+);", text, flags=re.M))
    h = re.sub(r"/\*.*?\*/", "", open(header).read(), flags=re.S)
    h = re.sub(r"static inline[^{]*\{.*?\n\}", "", h, flags=re.S)
    declared = set(re.findall(r"\b(cn_dpdk_\w+)\s*\(", h))
    bad = 0
    for what, a, b in (("exported, not in the map", exported, listed),
                       ("in the map, not exported", listed, exported),
                       ("in the map, not declared in the header", listed, declared),
                       ("declared in the header, not in the map", declared, listed)):
        for n in sorted(a - b):
            print("%s: %s" % (what, n))
            bad += 1
    print("%d exported, %d listed, %d declared, %d mismatches"
          % (len(exported), len(listed), len(declared), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
