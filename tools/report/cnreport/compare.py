# SPDX-License-Identifier: BSD-2-Clause
"""cachenet-report compare A B: ratios B ÷ A of every number both reports
measured (their report.json `metrics`), grouped by section."""
import argparse
import json
import math
import os
import sys


def load(p):
    if os.path.isdir(p):
        p = os.path.join(p, "report.json")
    with open(p) as f:
        return json.load(f)


def main(argv):
    ap = argparse.ArgumentParser(prog="cachenet-report compare",
                                 description="ratios B / A between two reports (dirs or report.json)")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--only", help="keys starting with this prefix (e.g. kernels/csum)")
    ap.add_argument("--threshold", type=float, default=0.0,
                    help="print only ratios off 1 by more than this fraction (e.g. 0.1)")
    a = ap.parse_args(argv)
    A, B = load(a.a), load(a.b)
    ma, mb = A.get("metrics", {}), B.get("metrics", {})
    keys = sorted(k for k in set(ma) & set(mb) if not a.only or k.startswith(a.only))
    print("A: %s %s (%s)  B: %s %s (%s)" % (A.get("host"), A.get("date"), A["machine"].get("cpu"),
                                           B.get("host"), B.get("date"), B["machine"].get("cpu")))
    print("ratio = B / A; for TSC ticks, counts and latencies < 1 means B is better, "
          "for bandwidths (bw_*) > 1 does")
    print("%-70s %12s %12s %8s" % ("metric", "A", "B", "B/A"))
    logs = []
    for k in keys:
        x, y = ma[k], mb[k]
        r = y / x if x else float("nan")
        if a.threshold and (r != r or abs(r - 1) <= a.threshold):
            continue
        if r == r and r > 0:
            logs.append(math.log(r))
        print("%-70s %12.4g %12.4g %8.3f" % (k, x, y, r))
    only_a, only_b = len(set(ma) - set(mb)), len(set(mb) - set(ma))
    if logs:
        print("\n%d common metrics, geometric mean B/A %.3f; %d only in A, %d only in B" % (
            len(keys), math.exp(sum(logs) / len(logs)), only_a, only_b))
    else:
        print("\nno common metrics (%d only in A, %d only in B)" % (only_a, only_b))
    return 0 if keys else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
