#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tools/cord/fastpath.py on one protocol path at one geometry.

    test_fastpath.py SOURCE_ROOT WORK_DIR [PATH]

Builds libcachenet + cachenet-cord-paths once in WORK_DIR (release, one
section per function, -Dlink_order; incremental on later runs), profiles
PATH (default tcp-send-off), orders it with C3, relinks and requires:
`cachenet-cord verify` passed (every ordered function in place, at
increasing addresses), the hot span did not grow, the simulated run
(16 KB direct-mapped I1) executed exactly the same instructions with the
same output before and after, and missed no more than the baseline did
(by over 5%, the safety net of `verify --simulate`).  Exit 77 (skip) only when valgrind, meson,
ninja or readelf is missing (fastpath.py says which).
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
PATH = sys.argv[3] if len(sys.argv) > 3 else 'tcp-send-off'


def main():
    out = os.path.join(WORK, 'result.json')
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, os.path.join(ROOT, 'tools', 'cord', 'fastpath.py'), ROOT, WORK,
           '--paths', PATH, '--geometries', '16384,1,64', '--icache', 'warm',
           '--algos', 'c3', '--packets', '300', '--profile-packets', '2000', '--reps', '0',
           '--json', out]
    print('+ ' + ' '.join(cmd), flush=True)
    r = subprocess.run(cmd)
    if r.returncode == 77:
        sys.exit(77)
    if r.returncode:
        raise SystemExit(f'FAILED: fastpath.py exited with {r.returncode}')
    with open(out) as f:
        d = json.load(f)
    v = d['verify']['c3']
    row = d['sim']['warm'][PATH]['16384,1,64']
    problems = []
    if not v['ok']:
        problems.append('verify failed:\n' + v['output'])
    if not d['order']['c3']['functions']:
        problems.append('the order is empty')
    # gaps the placement for the I-cache left count as no growth (verify
    # prints them)
    m = re.search(r'of the span after, (\d+) bytes are gaps', v['output'])
    gaps = int(m.group(1)) if m else 0
    if v['after']['span'] - gaps > v['before']['span']:
        problems.append(f'hot span grew: {v["before"]["span"]} -> {v["after"]["span"]} '
                        f'({gaps} bytes of gaps)')
    if row['base']['raw']['Ir'] != row['c3']['raw']['Ir'] or not d['identical_instructions']:
        problems.append(f'instructions differ: {row["base"]["raw"]["Ir"]} vs {row["c3"]["raw"]["Ir"]}')
    if d['safety']['c3']:
        # the safety net of verify --simulate: the default layout must not
        # miss more than the baseline (by over 5%) on the geometry it was
        # placed for
        problems.append(f'the C3 layout misses more than the baseline: {d["safety"]["c3"]}')
    if row['base']['ir'] < 50:
        problems.append(f'{row["base"]["ir"]} instructions per packet: the region is not measured')
    print(f'{PATH}: {d["order"]["c3"]["functions"]} functions ordered, hot span '
          f'{v["before"]["span"]} -> {v["after"]["span"]} bytes; {row["base"]["ir"]:.0f} '
          f'instructions per packet in both; I1 misses per packet (16 KB direct-mapped) '
          f'{row["base"]["i1"]:.2f} -> {row["c3"]["i1"]:.2f}')
    for p in problems:
        print('FAILED: ' + p)
    if problems:
        sys.exit(1)


if __name__ == '__main__':
    main()
