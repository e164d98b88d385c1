#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Measure one input set of the ILP model into a directory.

    python3 ilp/collect.py --build BUILD --out DIR [--cpu N] [--small]
    python3 ilp/model.py --inputs DIR

BUILD is a release build directory of this tree (its bench/ and tools/memsig/
programs and ilp/ libraries); DIR receives:

  memsig.json        tools/memsig --quick --json: bandwidths and latencies
  table.json         the ILP benchmark timed (medians of 3, interleaved): the
                     real pipelines and the synthetic twins at 1460 and 65536
                     bytes, hot, l2, l3 and cold
  sweep.json         the synthetic state sweep, timed, 1460 bytes hot
  sim.json           the same kernels counted under callgrind (--cn_sim)
  probe.json         ilp/probe.py: the core's rates, latencies and window
  objdump-*.txt      objdump -d of libcn_ilp_scalar.a, libcn_ilp_avx2.a and
                     libcn_ilp_avx512.a (the vector forms: both where the CPU
                     has AVX-512 and AVX2, whose rows end in -avx2)

--small measures the subset the stored input set in ilp/testdata holds (the
bswap/PES/checksum pipelines at 1460 bytes hot and cold, and the synthetic
rows the model calibrates on; testdata's objdumps are then cut to the
kernels the model reads): a few minutes instead of the better part of an
hour. Every program runs pinned to --cpu (default 0).
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

FULL = {
    'table': r'ilp/(copy\+bswap32\+pes\+csum|bswap32\+pes\+csum|copy\+syn[^/]*o110|syn[^/]*o110)'
             r'-(seq|int)(-scalar|-avx2)?/(1460|65536)-(hot|l2|l3|cold)(/|$)',
    'sweep': r'ilp/syn\.n[0-9]\.s[0-9]+\.a10-(seq|int)(-scalar|-avx2)?/1460-hot$',
    'sim': r'ilp/((copy\+)?(bswap32\+pes\+csum|syn\.n3\.s0_1_1[^-]*)|syn\.n[0-9]\.s[0-9]+\.a10)'
           r'-(seq|int)(-scalar|-avx2)?/1460-hot$',
}
SMALL = {
    'table': r'ilp/(copy\+)?bswap32\+pes\+csum-(seq|int)(-scalar|-avx2)?/1460-(hot|cold)(/|$)',
    'sweep': r'ilp/syn\.n1\.s(1|8)\.a10-(seq|int)(-scalar|-avx2)?/1460-hot$',
    'sim': r'ilp/((copy\+)?bswap32\+pes\+csum|syn\.n1\.s[0-9]+\.a10)-(seq|int)(-scalar|-avx2)?'
           r'/1460-hot$',
}
TIMED = ['--benchmark_repetitions=3', '--benchmark_enable_random_interleaving=true',
         '--benchmark_report_aggregates_only=true']
LIBS = ('scalar', 'avx2', 'avx512')


def pinned(cpu, cmd):
    return ['taskset', '-c', str(cpu)] + cmd


def collect(build, out, cpu=0, small=False, log=sys.stderr):
    """Run every measurement of one input set; returns the files written."""
    filt = SMALL if small else FULL
    bench = os.path.join(build, 'bench', 'cachenet-bench-ilp')
    memsig = os.path.join(build, 'tools', 'memsig', 'memsig')
    for prog in (bench, memsig):
        if not os.access(prog, os.X_OK):
            raise RuntimeError('%s not built (a release build with benchmarks)' % prog)
    os.makedirs(out, exist_ok=True)
    path = {n: os.path.join(out, n + '.json') for n in ('memsig', 'table', 'sweep', 'sim',
                                                        'probe')}
    steps = [
        ('memsig', [memsig, '--quick', '--json', path['memsig']], None),
        ('table', [bench, '--benchmark_filter=' + filt['table']] + TIMED, None),
        ('sweep', [bench, '--benchmark_filter=' + filt['sweep']] + TIMED, None),
        # callgrind's counts; LD_BIND_NOW keeps the dynamic linker's lazy
        # binding out of the first call's count
        ('sim', [bench, '--cn_sim', '--benchmark_filter=' + filt['sim'],
                 '--benchmark_min_time=0.0005'], dict(os.environ, LD_BIND_NOW='1')),
        ('probe', [sys.executable, os.path.join(HERE, 'probe.py'), '--json', path['probe']],
         None),
    ]
    for name, cmd, env in steps:
        if cmd[0] == bench:
            cmd += ['--benchmark_format=json', '--benchmark_out=' + path[name]]
        log.write('collect: %s\n' % name)
        subprocess.run(pinned(cpu, cmd), check=True, env=env, stdout=subprocess.DEVNULL)
    for isa in LIBS:
        lib = os.path.join(build, 'ilp', 'libcn_ilp_%s.a' % isa)
        text = subprocess.run(['objdump', '-d', '--no-show-raw-insn', lib], check=True,
                              capture_output=True, text=True).stdout
        path['objdump-' + isa] = os.path.join(out, 'objdump-%s.txt' % isa)
        with open(path['objdump-' + isa], 'w') as fh:
            fh.write(text)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True, help='a release build directory of this tree')
    ap.add_argument('--out', required=True, help='the input set\'s directory (created)')
    ap.add_argument('--cpu', type=int, default=0, help='the CPU every program runs on')
    ap.add_argument('--small', action='store_true',
                    help='the subset ilp/testdata holds (minutes, not most of an hour)')
    a = ap.parse_args(argv)
    try:
        collect(a.build, a.out, a.cpu, a.small)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write('collect: %s\n' % e)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
