#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run Doxygen over the public headers and fail on any warning it logs
(an undocumented public symbol, a wrong parameter name, a broken link).

  check_docs.py DOXYGEN DOXYFILE WARNINGS_LOG
"""
import subprocess
import sys

doxygen, doxyfile, log = sys.argv[1:4]
r = subprocess.run([doxygen, doxyfile], capture_output=True, text=True)
if r.returncode != 0:
    print(r.stdout, r.stderr)
    sys.exit("doxygen failed (exit %d)" % r.returncode)
warnings = [l for l in open(log).read().splitlines() if l.strip()]
if warnings:
    print("\n".join(warnings))
    sys.exit("%d lines of Doxygen warnings: document every public symbol" % len(warnings))
print("the public headers are fully documented")
