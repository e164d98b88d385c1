# SPDX-License-Identifier: BSD-2-Clause
"""The generated kernels as the model sees them: the register width each
instruction set moves data in, the loops a kernel runs and the cache level
each of its buffers is in, bytes per main-loop iteration, and the pipeline
behind a benchmark's name (ilpgen.Pipeline).
"""

import json
import math
import re

import ilpgen  # ilp/ is on sys.path (model.py, test_ilpgen.py)

WIDTH = {'scalar': 8, 'avx2': 32, 'avx512': 64}
# The instruction sets valgrind runs, so callgrind counts their kernels
# (calls, tails and spills included); AVX-512's counts come from the
# disassembly.
COUNTED = ('scalar', 'avx2')


def isas_of(*keyed):
    """The instruction sets the model fits and predicts, in print order:
    scalar and AVX-512 always (their lines say "not measured" without
    data), AVX2 where any of the {(pipe, form, isa, ...): value} dicts
    keyed has a row of it."""
    avx2 = any(k[2] == 'avx2' for d in keyed for k in d)
    return ('scalar', 'avx2', 'avx512') if avx2 else ('scalar', 'avx512')


def pipeline_fns(p):
    """[(name, writes, state+consts, ops per register, block)] incl. copy."""
    out = []
    for f in p.all_fns:
        out.append((f.name, f.writes, f.state + f.consts, f.forms, f.block))
    return out


def hot_level(size):
    # two buffers of the size (source, destination) against a 32 KB L1
    return 'L1' if 2 * size <= (24 << 10) else 'L2'


STATE_LEVEL = {'hot': None, 'l2': 'L2', 'l3': 'L3', 'cold': 'DRAM'}


def unroll_bytes(p, isa, unroll=64):
    """Bytes per main-loop iteration, as ilpgen.Emitter._body builds it."""
    W = WIDTH[isa]
    base = W * p.block() // math.gcd(W, p.block())
    u = base if p.synthetic else unroll
    return base * max(1, u // base)


def loops(p, form, isa, size, cache):
    """The loops a kernel runs, in order: [(fns, read level, write level
    or None)], fns the functions whose steps the loop applies (copy: [])."""
    hot = hot_level(size)
    first = STATE_LEVEL[cache] or hot
    if form != 'seq':
        return [(list(p.fns), first, (first if p.copy else hot) if p.writes() else None)]
    out = []
    if p.copy:
        out.append(([], first, first))
    for k, f in enumerate(p.fns):
        rd = hot if out else first
        out.append(([f], rd, hot if f.writes else None))
    return out


# ------------------------------------------------------------ measurements

NAME = re.compile(r'^ilp/(?P<pipe>.+)-(?P<form>seq|int|intpf)(?:-(?P<isa>scalar|avx2))?/'
                  r'(?P<size>\d+)-(?P<cache>hot|l2|l3|cold)(?P<conf>-conflict)?')


def load_bench(path, key):
    """{(pipe, form, isa, size, cache, conflict): value} from google-
    benchmark JSON (medians when repetitions were run)."""
    out = {}
    if not path:
        return out
    with open(path) as fh:
        d = json.load(fh)
    for b in d['benchmarks']:
        if b.get('aggregate_name') not in (None, 'median'):
            continue
        mm = NAME.match(b.get('run_name', b['name']))
        if not mm or key not in b:
            continue
        k = (mm['pipe'], mm['form'], mm['isa'] or 'avx512', int(mm['size']), mm['cache'],
             bool(mm['conf']))
        out[k] = b[key]
    return out


def pipeline_of(name):
    m = re.match(r'^(copy\+)?syn\.n(\d+)\.s([\d_]+)\.a([\d_]+)(?:\.o(\d+))?$', name)
    if not m:
        return ilpgen.Pipeline(name.replace('+', ','))
    spec = 'syn:n=%s,s=%s,a=%s' % (m[2], m[3].replace('_', '/'), m[4].replace('_', '/'))
    if m[5]:
        spec += ',out=' + m[5]
    if m[1]:
        spec += ',copy=1'
    return ilpgen.Pipeline(spec)
