#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The symbols of libcachenet.a or libcachenet-lab.a: every exported cn_*
function name names one function. A header's static inline function of an
exported name (such as cn_csum_partial, inline in csum.h and exported for
old binaries) that the compiler leaves out of line somewhere becomes a second, local symbol of that
name: the program still works, but tools that find functions by name (the
profiler's output read by cachenet-cord, gdb, perf) cannot tell the two
apart. Usage: check_symbols.py NM LIBRARY_A"""
import subprocess
import sys


def main():
    nm, lib = sys.argv[1], sys.argv[2]
    out = subprocess.run([nm, "-A", lib], check=True, capture_output=True, text=True).stdout
    glob, local = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        where, kind, name = parts[0].rsplit(":", 1)[0], parts[-2], parts[-1]
        if kind == "T":
            glob.setdefault(name, []).append(where)
        elif kind == "t":
            local.setdefault(name, []).append(where)
    exported = [n for n in glob if n.startswith("cn_") and not n.startswith("cn__")]
    if not exported:
        print("no exported cn_* functions found in %s" % lib)
        return 1
    bad = 0
    for n in sorted(exported):
        if len(glob[n]) > 1:
            print("%s defined globally %d times: %s" % (n, len(glob[n]), ", ".join(glob[n])))
            bad += 1
        if n in local:
            print("%s exported and also a local function in %s" % (n, ", ".join(local[n])))
            bad += 1
    print("%d exported functions, %d clashes" % (len(exported), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
