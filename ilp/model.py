#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Seed 003's performance model (Section VI, equations (1)-(3)), fed with
parameters measured on this machine, printing predicted beside measured
TSC ticks per byte.

    clocks/B = CPI * (sum_i a_i / b_i^in + LO)                       (3)
             + (H * A_C + (1 - H) * A_M) * DA + A_C * SA

    SA^ILP = 2 / b^ILP * max(0, S^ILP - R)                            (1)
    SA^SEQ = sum_i 2 / b_i^in * max(0, s_i - R)                       (2)

The paper omits the DA formulas; ours, in data words (W bytes) per byte:

    DA^SEQ = sum_i (1 + o_i) / W      every loop reads every word, and
                                      writes it back when it has output
                                      (o_i = 1; copy counts as a function)
    DA^ILP = (1 + max_i o_i) / W      one read, one write if anything is
                                      written

Units and where each parameter comes from (nothing is a constant here):
 - time is TSC ticks (2.6 GHz invariant), not core cycles: CPI is TSC
   ticks per instruction, A_* TSC ticks per word;
 - W: the register the generated loop moves data in: 8 B scalar, 64 B
   AVX-512;
 - A_C, A_M: streaming cost per word from memsig's bandwidth table
   (A = W / bytes_per_tsc), separately for reads and writes, at the
   smallest size (L1), 256 KB (L2), 4 MB (L3) and 64 MB (DRAM). A_M in the
   paper is the sequential cost per word through the caches, i.e. a
   bandwidth, not memsig's load-to-use latency. A cold 1460-byte buffer is
   too short to reach streaming speed, so a cold stream also pays one
   DRAM latency (memsig levels.DRAM, page order) per buffer: an extension,
   reported separately in the table;
 - H: generalised from one hit rate to where each access is served: the
   first touch of each buffer comes from the prepared state (hot: L1 for
   1460 B, L2 for 64 KB whose two buffers exceed L1; l2; l3; cold: DRAM),
   every later touch (the sequential loops after the first) from the hot
   level;
 - a_i: the computation instructions of each step, from functions.py
   (the ops count of the generated step);
 - LO: loop overhead per byte, from the generated loop: callgrind's
   instruction count per byte minus the steps' computation and the data
   loads and stores (L = LO * block);
 - CPI: calibrated once per ISA on a loop that is not predicted (the
   synthetic n=1, s=1, a=10 integrated loop, hot): its measured TSC/B
   minus its memory term, over its non-memory instructions;
 - R: the register-pressure probe. A single synthetic function with s
   state words reads one data word per W-byte block while its state fits
   in registers, and one more per block once a state word is spilled
   (loaded and stored every block, eq. (1)). R + 1 is the first s whose
   callgrind data reads per block reach about 2 (>= KNEE_READS); the
   sweep in pipelines.txt has every s of n = 1 up to 16 so the knee cannot
   fall into a gap.

Not the paper's (printed beside it, labelled "overlap"): an out-of-order
core overlaps computation with the memory stream, so a second prediction
takes max(compute, memory) instead of their sum:

    clocks/B (overlap) = max(CPI * (sum_i a_i / b_i^in + LO) + A_C * SA,
                             (H * A_C + (1 - H) * A_M) * DA)

Pipelines with a cipher are not modelled (the keystream is a library call
whose cost is not in a_i); they are left out of the table.
"""

import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ilpgen  # noqa: E402

WIDTH = {'scalar': 8, 'avx2': 32, 'avx512': 64}


# ------------------------------------------------------------ the formulas

def sa_ilp(states, b_ilp, R):
    """Equation (1): state word accesses per byte, integrated loop."""
    return 2.0 / b_ilp * max(0, sum(states) - R)


def sa_seq(states, blocks, R):
    """Equation (2): state word accesses per byte, sequential loops."""
    return sum(2.0 / b * max(0, s - R) for s, b in zip(states, blocks))


def da_seq(fns, W):
    """Data word accesses per byte, sequential: fns = [(name, writes)]."""
    return sum((1 + (1 if writes else 0)) / W for _, writes in fns)


def da_ilp(fns, W):
    """Data word accesses per byte, integrated."""
    return (1 + (1 if any(w for _, w in fns) else 0)) / W


def clocks(cpi, instr_pb, a_mem, sa, a_c):
    """Equation (3) with the memory term already summed (a_mem, ticks/B)."""
    return cpi * instr_pb + a_mem + a_c * sa


def clocks_overlap(cpi, instr_pb, a_mem, sa, a_c):
    """NOT the paper's model: computation (with state spills) and the data
    stream overlapped, the slower one sets the pace."""
    return max(cpi * instr_pb + a_c * sa, a_mem)


# ------------------------------------------------------------ parameters

class Machine:
    """A_* per level from a memsig JSON file."""

    def __init__(self, memsig):
        bw = {}
        for e in memsig['bandwidth']:
            bw[(e['bytes'], e['op'])] = e['bytes_per_tsc']
        sizes = sorted({b for b, _ in bw})
        pick = {'L1': sizes[0], 'L2': min(sizes, key=lambda s: abs(s - (256 << 10))),
                'L3': min(sizes, key=lambda s: abs(s - (4 << 20))), 'DRAM': sizes[-1]}
        self.bw = {lvl: (bw[(sz, 'read')], bw[(sz, 'write')]) for lvl, sz in pick.items()}
        lv = memsig.get('levels', {}).get('DRAM', {})
        self.dram_lat = lv.get('by_order', {}).get('page', {}).get('tsc', lv.get('tsc', 0.0))

    def cost(self, level, W):
        """(read, write) TSC ticks per W-byte word at a level."""
        r, w = self.bw[level]
        return W / r, W / w


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


def memory_term(m, p, form, isa, size, cache, cold_latency=True):
    """Ticks/B for message data: first touches from the prepared level,
    later ones from the hot level."""
    W = WIDTH[isa]
    hot = hot_level(size)
    first = STATE_LEVEL[cache] or hot
    rf, wf = m.cost(first, W)
    rh, wh = m.cost(hot, W)
    fns = [(f.name, f.writes) for f in p.all_fns]
    t = 0.0
    if form == 'seq':
        for k, (name, writes) in enumerate(fns):
            if k == 0:
                t += rf / W
                if writes:
                    t += (wf if p.copy else wh) / W
            else:
                t += rh / W + (wh / W if writes else 0.0)
    else:
        t += rf / W
        if p.writes():
            t += (wf if p.copy else wh) / W
    if cache == 'cold' and cold_latency:
        # each cold buffer stream starts with one full miss
        t += m.dram_lat * (2 if p.copy else 1) / size
    return t


def da(p, form, isa):
    fns = [(f.name, f.writes) for f in p.all_fns]
    W = WIDTH[isa]
    return da_seq(fns, W) if form == 'seq' else da_ilp(fns, W)


def sa(p, form, isa, R):
    states = [f.state + f.consts for f in p.fns]
    # The generated loops move one register (W bytes) per step: b = W.
    if form == 'seq':
        return sa_seq(states, [WIDTH[isa]] * len(states), R)
    return sa_ilp(states, WIDTH[isa], R)


def compute_instr(p, isa):
    """Computation instructions per byte from the step specs (sum a_i/b_i)."""
    W = WIDTH[isa]
    return sum(f.forms[isa]['ops'] for f in p.fns) / W


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


KNEE_READS = 1.8  # "about 2" data reads per block: the data word + one spill


def probe_R(sim, isa, size=1460):
    """R from syn.n1.s<s> (integrated, hot): the first s whose data reads
    per W-byte block reach about 2 spills, so R = s - 1. Returns (R, rows,
    note); note says when R is only a bound (no knee in the sweep, or the
    s just below the knee was not measured)."""
    W = WIDTH[isa]
    rows = []
    for s in range(1, 65):
        k = ('syn.n1.s%d.a10' % s, 'int', isa, size, 'hot', False)
        if k in sim:
            rows.append((s, sim[k] * W))
    if not rows:
        return 0, rows, 'no probe data'
    # Spills only grow with s: the knee is where reads reach ~2 and stay
    # there, so one inflated point below it (the first benchmark of a
    # callgrind run pays one-time costs over few iterations) is not a knee.
    knee = None
    for s, reads in reversed(rows):
        if reads < KNEE_READS:
            break
        knee = s
    if knee is None:
        return rows[-1][0], rows, 'no spill up to s=%d: R >= %d' % (rows[-1][0], rows[-1][0])
    below = [s for s, _ in rows if s < knee]
    if not below:
        return 0, rows, 'spills from the smallest s measured (%d)' % knee
    note = '' if below[-1] == knee - 1 else (
        's=%d not measured: %d <= R <= %d' % (knee - 1, below[-1], knee - 1))
    odd = [s for s, reads in rows if s < knee and reads >= KNEE_READS]
    if odd:
        note = (note + '; ' if note else '') + 'ignored outliers below the knee at s=%s' % (
            ','.join(map(str, odd)))
    return below[-1], rows, note


class Model:
    def __init__(self, machine, sim_ir, R, cpi):
        self.m, self.sim_ir, self.R, self.cpi = machine, sim_ir, R, cpi

    def instr(self, p, form, isa, size):
        """Non-memory instructions per byte: callgrind's count minus the
        data loads/stores (DA); the spec's count plus 3/64 if not simulated."""
        ir = self.sim_ir.get((p.name, form, isa, size, 'hot', False))
        if ir is None:
            # not simulated (valgrind 3.19 cannot run AVX-512): the steps'
            # computation plus 3 instructions (add, cmp, branch) per 64-byte
            # iteration of each loop; tails are not counted
            loops = len(p.all_fns) if form == 'seq' else 1
            return compute_instr(p, isa) + loops * 3.0 / 64, False
        return max(0.0, ir - da(p, form, isa)), True

    def predict(self, p, form, isa, size, cache, overlap=False):
        """Equation (3); with overlap, the max(compute, memory) variant
        (not the paper's)."""
        W = WIDTH[isa]
        ins, _ = self.instr(p, form, isa, size)
        mem = memory_term(self.m, p, form, isa, size, cache)
        a_c = self.m.cost('L1', W)[0]
        f = clocks_overlap if overlap else clocks
        return f(self.cpi[isa], ins, mem, sa(p, form, isa, self.R[isa]), a_c)


def calibrate_cpi(machine, sim_ir, med, isa, size=1460):
    p = pipeline_of('syn.n1.s1.a10')
    k = (p.name, 'int', isa, size, 'hot', False)
    if k not in med or k not in sim_ir:
        return None
    ins = max(1e-9, sim_ir[k] - da(p, 'int', isa))
    return (med[k] - memory_term(machine, p, 'int', isa, size, 'hot')) / ins


def main(argv=None):
    ap = argparse.ArgumentParser(description='seed 003 model vs measurement')
    ap.add_argument('--memsig', required=True, help='memsig --json output')
    ap.add_argument('--bench', required=True, action='append',
                    help='bench_ilp JSON (timed); may be repeated')
    ap.add_argument('--sim', required=True, help='bench_ilp --cn_sim JSON (callgrind)')
    ap.add_argument('--key', default='tsc_per_byte_med')
    ap.add_argument('--R', help='override R, e.g. scalar=12,avx512=28')
    a = ap.parse_args(argv)
    with open(a.memsig) as fh:
        m = Machine(json.load(fh))
    med = {}
    for path in a.bench:
        med.update(load_bench(path, a.key))
    sim_ir = load_bench(a.sim, 'instructions_per_byte')
    sim_dr = load_bench(a.sim, 'sim_dr_per_byte')

    R, cpi = {}, {}
    print('Architecture parameters (TSC ticks; W = register bytes)')
    for isa in ('scalar', 'avx512'):
        W = WIDTH[isa]
        R[isa], rows, note = probe_R(sim_dr, isa)
        cpi[isa] = calibrate_cpi(m, sim_ir, med, isa) or 0.25
        print('  %-6s W=%2d A_C=%.3f/%.3f (L1 r/w)  A_L2=%.3f/%.3f  A_L3=%.3f/%.3f  '
              'A_M=%.3f/%.3f  CPI=%.3f  R=%d' % (
                  isa, W, *m.cost('L1', W), *m.cost('L2', W), *m.cost('L3', W),
                  *m.cost('DRAM', W), cpi[isa], R[isa]))
        print('         probe (s: data reads per block, knee at >= %.1f): %s' % (
            KNEE_READS, '  '.join('%d:%.2f' % r for r in rows)))
        if note:
            print('         R: %s' % note)
    print('  DRAM latency (page order) %.0f ticks' % m.dram_lat)
    if a.R:
        for kv in a.R.split(','):
            k, v = kv.split('=')
            R[k] = int(v)
    model = Model(m, sim_ir, R, cpi)

    print('\nPredicted vs measured TSC/B (%s)' % a.key)
    print('model: equation (3), the paper\'s (compute + memory). overlap: NOT the paper\'s,')
    print('max(compute, memory), for an out-of-order core; err% each against measured.')
    print('%-34s %-5s %-6s %6s %-5s %8s %8s %7s %8s %7s %5s' % (
        'pipeline', 'form', 'isa', 'size', 'cache', 'measured', 'model', 'err%',
        'overlap', 'err%', 'L'))
    errs, errs_ov = [], []
    for k in sorted(med, key=lambda k: (k[0], k[2], k[3], ['hot', 'l2', 'l3', 'cold'].index(k[4]),
                                        ['seq', 'int', 'intpf'].index(k[1]))):
        pipe, form, isa, size, cache, conf = k
        if conf or form == 'intpf' or isa not in R or (pipe.startswith('syn.n') and cache != 'hot'):
            continue
        p = pipeline_of(pipe)
        if getattr(p, 'cipher', None):
            continue  # keystream cost not modelled
        pred = model.predict(p, form, isa, size, cache)
        pov = model.predict(p, form, isa, size, cache, overlap=True)
        ins, simulated = model.instr(p, form, isa, size)
        L = (ins - compute_instr(p, isa) * 1) * 64 if simulated else float('nan')
        err = 100.0 * (pred - med[k]) / med[k]
        eov = 100.0 * (pov - med[k]) / med[k]
        errs.append((k, err))
        errs_ov.append((k, eov))
        print('%-34s %-5s %-6s %6d %-5s %8.3f %8.3f %+7.1f %8.3f %+7.1f %5.1f' % (
            pipe, form, isa, size, cache, med[k], pred, err, pov, eov, L))
    if errs:
        within = sum(1 for _, e in errs if abs(e) <= 20)
        wov = sum(1 for _, e in errs_ov if abs(e) <= 20)
        print('\nmodel (paper, eq. 3): %d of %d within 20%%' % (within, len(errs)))
        print('overlap (not the paper\'s): %d of %d within 20%%' % (wov, len(errs_ov)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
