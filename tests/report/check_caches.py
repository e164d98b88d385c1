#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Study 5 (hot, cold and idealized caches): the miss-cost model on counts
built from known costs, then a --quick run of the section against the
real cachenet-cord-paths: cold runs must miss and cost more than hot ones,
and the table must carry every send path.

    check_caches.py SOURCE_ROOT CACHENET_REPORT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def model(src):
    sys.path.insert(0, os.path.join(src, "tools", "report"))
    from cnreport import caches
    l2, c_d1, eff, base = 10.0, 3.0, 150.0, 500.0
    hot = {"I1mr": 0.5, "D1mr": 20.0, "ILmr": 0.1, "DLmr": 2.0}
    l1 = dict(hot, D1mr=80.0)
    cold = {"I1mr": 90.0, "D1mr": 95.0, "ILmr": 90.0, "DLmr": 95.0}

    def t(s):
        return base + s["I1mr"] * l2 + s["D1mr"] * c_d1 + (s["ILmr"] + s["DLmr"]) * eff
    got = caches.split({"hot": hot, "l1": l1, "cold": cold},
                       {"hot": t(hot), "l1": t(l1), "cold": t(cold)}, l2)
    check(abs(got[0] - c_d1) < 1e-9, "c_D1 %r != %r" % (got[0], c_d1))
    check(abs(got[1] - eff) < 1e-9, "eff %r != %r" % (got[1], eff))
    check(abs(got[2] - (0.5 * l2 + 0.1 * eff)) < 1e-9, "I-side memory time %r" % got[2])
    check(abs(got[3] - (20 * c_d1 + 2 * eff)) < 1e-9, "D-side memory time %r" % got[3])
    # a run that added no misses cannot be calibrated on: None, not a guess
    got = caches.split({"hot": hot, "l1": hot, "cold": cold},
                       {"hot": t(hot), "l1": t(hot), "cold": t(cold)}, l2)
    check(got == (None, None, None, None), "uncalibrated split %r" % (got,))
    g = caches.host_geometry(type("C", (), {"machine": {
        "cn_caches": "L1D 48K 12-way 64B, L1I 32K 8-way 64B, L2 2048K 16-way 64B, "
                     "L3 36864K 12-way 64B (sysfs)"}})())
    check(g == {"I1": "32768,8,64", "D1": "49152,12,64", "LL": "37748736,12,64"},
          "geometry %r" % g)
    print("model: c_D1, eff and the I/D split recovered from constructed counts")


def main():
    src, report = sys.argv[1], sys.argv[2]
    model(src)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(report))))
    paths = os.path.join(root, "tools", "cord", "cachenet-cord-paths")
    if not os.path.exists(paths) or not shutil.which("valgrind"):
        print("SKIP: cachenet-cord-paths or valgrind missing")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, report, "--quick", "--out", out, "--only", "caches"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        print(p.stderr[-2000:])
        check(p.returncode == 0, "report exited with %d" % p.returncode)
        js = json.load(open(os.path.join(out, "report.json")))
        check(js["sections"]["caches"]["status"] == "ok", "status %s" % js["sections"])
        m = js["metrics"]
        md = open(os.path.join(out, "report.md")).read()
        for p in ("tcp-send-off", "tcp-send-on", "udp-send-off", "udp-send-on"):
            hot, cold = m.get("caches/%s/hot_tsc_per_packet" % p), m.get("caches/%s/cold_tsc_per_packet" % p)
            check(hot and cold and cold > 2 * hot, "%s: cold %r vs hot %r ticks" % (p, cold, hot))
            hl, cl = m.get("caches/%s/hot/ll_rate" % p), m.get("caches/%s/cold/ll_rate" % p)
            check(cl is not None and hl is not None and cl > 0.5 and cl > hl,
                  "%s: LL miss rate cold %r vs hot %r" % (p, cl, hl))
            ci = m.get("caches/%s/cold/i1_rate" % p)
            check(ci and ci > m.get("caches/%s/hot/i1_rate" % p, 0), "%s: I1 rate cold %r" % (p, ci))
        for s in ("Miss rates, hot caches", "Miss rates, cold caches", "Latency per packet",
                  "TCP Send Cksum Off", "UDP Send Cksum On", "375 / 77 / 42"):
            check(s in md, "report.md lacks %r" % s)
    print("OK")


if __name__ == "__main__":
    main()
