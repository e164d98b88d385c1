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
import collections
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
        # load-to-use latency per level (page order: what a stream's first
        # miss waits for), TSC ticks; memsig calls the last cache LLC
        self.lat = {}
        for lvl, name in (('L2', 'L2'), ('L3', 'LLC'), ('DRAM', 'DRAM')):
            lv = memsig.get('levels', {}).get(name, {})
            self.lat[lvl] = lv.get('by_order', {}).get('page', {}).get('tsc', lv.get('tsc', 0.0))
        self.dram_lat = self.lat['DRAM']
        self.cold = {}  # set_cold(): {size: (read, copy) bytes per tick}
        self.warm = {}  # set_warm(): {size: (in place, copy) bytes per tick}

    def set_cold(self, probe):
        """Flushed-buffer stream rates at the benchmark's sizes, from
        ilp/probe.py (cold_read_S, cold_copy_S: bytes per tick, first miss
        included): {size: (read, copy)}."""
        for k, v in probe.items():
            mm = re.match(r'cold_read_(\d+)$', k)
            if mm and v and probe.get('cold_copy_' + mm[1]):
                self.cold[int(mm[1])] = (v, probe['cold_copy_' + mm[1]])

    def set_warm(self, probe):
        """Rates of a loop that reads and writes a warm buffer of a size
        whose two buffers exceed L1 (64 KB: L2), from ilp/probe.py
        (warm_rmw_S in place, warm_copy_S to a second buffer: bytes per
        tick): {size: (in place, copy)}."""
        for k, v in probe.items():
            mm = re.match(r'warm_rmw_(\d+)$', k)
            if mm and v and probe.get('warm_copy_' + mm[1]):
                self.warm[int(mm[1])] = (v, probe['warm_copy_' + mm[1]])

    def stream(self, rd, wr, W, size, copy=None):
        """Ticks per byte of one loop's data stream: read at level rd,
        write at level wr (None: no output). A flushed (DRAM) source of a
        size ilp/probe.py measured takes that size's flushed rate instead
        of memsig's 64 MB stream: read only, or, with a flushed destination
        too, read and write together (copy). copy (True / False, the
        overlap form): a loop that reads and writes at L2, at a size
        probe.py measured warm (set_warm), takes that size's warm rate, in
        place or copied: the reads and writes of one pass overlap, where
        memsig's read and write rates (256 KB) are added (in place at 64
        KB: 0.013 ticks per byte measured, 0.023 added). None: memsig's."""
        if copy is not None and rd == 'L2' and wr == 'L2' and size in self.warm:
            return 1.0 / self.warm[size][1 if copy else 0]
        if rd == 'DRAM' and size in self.cold:
            r, cp = self.cold[size]
            if wr == 'DRAM':
                return 1.0 / cp
            return 1.0 / r + (self.cost(wr, W)[1] / W if wr else 0.0)
        return self.cost(rd, W)[0] / W + (self.cost(wr, W)[1] / W if wr else 0.0)

    def first_miss(self, cache, streams, size):
        """Ticks per byte of each prepared stream's first miss (one load-to-
        use latency of the level the buffer was left in, per buffer): a
        1460-byte buffer is over before the hardware prefetchers ramp up."""
        lvl = STATE_LEVEL[cache]
        if lvl == 'DRAM' and size in self.cold:
            return 0.0  # in the flushed rate measured at this size
        return self.lat.get(lvl, 0.0) * streams / size if lvl else 0.0

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
                t += m.stream(first, ((first if p.copy else hot) if writes else None), W, size)
            else:
                t += rh / W + (wh / W if writes else 0.0)
    else:
        t += m.stream(first, ((first if p.copy else hot) if p.writes() else None), W, size)
    if cold_latency:
        # each prepared (not hot) buffer stream starts with one full miss
        t += m.first_miss(cache, 2 if p.copy else 1, size)
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


# ------------------------------------------------------------ overlap form
#
# Equation (3) adds its three terms: an in-order machine of the paper's
# time issues one instruction after another and waits on each miss. An
# out-of-order core runs the terms side by side: within one loop the
# computation of every function, the loads and stores, the loop-carried
# dependencies and the memory stream overlap, and the loop runs at the
# pace of whichever resource is used up first. The overlap form keeps
# eq. (3)'s terms and parameters (a_i, b_i, LO, eq. (1)/(2)'s spilled state
# words, A_C/A_M per level) and combines them per loop by max():
#
#   t(loop) = max( I / issue,               eq. (3)'s CPI x instructions,
#                                            CPI = 1 / measured issue width
#                  sum_i a_i/b_i / alu_or_vec,   the ALU (vector) ports
#                  (DA + SA) reads / load ports, (DA + SA) writes / store ports
#                  C / b,                    the loop-carried chain: the
#                                            longest recurrence of the loop's
#                                            functions, plus the store-to-load
#                                            round trip when state spills
#                  memory )                 eq. (3)'s memory term, as a
#                                            bandwidth (A per word, memsig)
#
# A sequential composition is one loop per function, one after the other:
# the sum of each loop's max. The integrated loop is one loop: one max,
# which is why the functions' work is "hidden" in it. Rates and latencies
# come from ilp/probe.py on this core (core cycles per TSC tick, issue
# width, ports, store forwarding); chains from functions.py / synthetic.py
# (`chain`); R as in eq. (1). Remainder bytes (len mod the unrolled block)
# go through scalar steps after the loop: added, not overlapped; a cold
# buffer's first miss (DRAM latency) too, as in the additive form.

class Core:
    """Rates per core cycle and the clock, from ilp/probe.py's JSON."""

    def __init__(self, probe):
        c = probe['dep_add']                     # core cycles per TSC tick
        self.cyc_per_tick = c
        self.issue = probe['mix_issue'] / c
        # dataflow()'s front end: whole instructions per cycle
        self.sim_issue = max(1, int(round(self.issue)))
        self.alu = probe['int_add'] / c
        self.load = probe['int_load'] / c
        self.store = probe['int_store'] / c
        self.st_fwd = c / probe['st_fwd']        # cycles per store->load trip
        # the same for a zmm register (probe.py st_fwd_vec): 11 cycles on
        # this core (2026-11-24) against 0.5 for a 64-bit word, which the
        # core renames through memory; a spilled AVX-512 state word's trip
        self.st_fwd_vec = c / probe['st_fwd_vec'] if probe.get('st_fwd_vec') else self.st_fwd
        self.vec = probe.get('vec_add', 0) / c or None
        # 64-bit loads and stores per cycle, mixed (probe.py mem_mix)
        self.memops = probe.get('mem_mix', 0) / c or None
        self.vload = probe.get('vec_load', 0) / c or None
        self.vstore = probe.get('vec_store', 0) / c or None
        # measured time over the peak-rate bound of one throughput-bound
        # loop (calibrate_efficiency()); 1 = the probe's peak rates
        self.eff = {isa: 1.0 for isa in WIDTH}
        # the out-of-order window: probe.py's win_{int,vec}_L loops run
        # independent iterations of one dependent chain each (a load, L
        # adds, a store; WIN_OVERHEAD more instructions of index and loop),
        # T core cycles per iteration. Little's law: the instructions in
        # flight W = P * I / T, P = ld_lat + L the chain's latency, I =
        # L + WIN_OVERHEAD its instructions. W grows with P on this core
        # (2026-11-23: ~80 at P = 20 to ~600 at P = 516, scalar), so W is
        # kept per P and interpolated (window()).
        self.ld_lat = c / probe['ld_lat'] if probe.get('ld_lat') else None
        # the vector ALU's latency in core cycles (probe.py dep_vec: a chain
        # of dependent vpxorq): 2 on this core (2026-11-24). dataflow()
        # runs the compiled loops at it; the spec's chains and paths
        # (--no-loops, and the window term's P) stay in instructions of
        # latency 1, as functions.py writes them (README.md)
        self.vec_lat = c / probe['dep_vec'] if probe.get('dep_vec') else None
        # vpternlog through a source other than its destination (probe.py
        # dep_tern): 3 cycles on this core (2026-11-24) where through the
        # destination it is dep_vec's 2; dataflow() delays those operands
        self.tern_lat = c / probe['dep_tern'] if probe.get('dep_tern') else None
        self.win = {}
        for kind in ('int', 'vec'):
            pts = []
            for key, v in probe.items():
                mm = re.match(r'win_%s_(\d+)$' % kind, key)
                if mm and v and self.ld_lat:
                    L = int(mm[1])
                    P, I, T = self.ld_lat + L, L + WIN_OVERHEAD, c / v
                    pts.append((P, P * I / T))
            self.win[kind] = sorted(pts)
        # dataflow()'s ports: the probe's rates per cycle, whole
        # instructions (int_add 5, vec_add 4, loads 4 / 2, stores 2 / 1)
        self.sim_ports = {k: max(1, int(round(v))) for k, v in (
            ('alu', self.alu), ('load', self.load), ('store', self.store),
            ('valu', self.vec or self.alu), ('vload', self.vload or self.load),
            ('vstore', self.vstore or self.store))}
        self.df_ports = True
        self.df_min_chain = 16
        # the in-order window R beside Q: off by default (README.md: it fits
        # the window loops better but the calls' overlap worse)
        self.df_retire = False
        self.use_dataflow = {'avx512': True, 'scalar': True}
        self.df_keep_window = True
        # dataflow() runs the kernel's whole straight path (set-up, masked
        # pass, fold) where objdump_paths() has it, not the loops alone
        self.df_path = True
        # the issue term counts the AVX-512 call's instructions outside its
        # main loops (call_extra())
        self.call_code = True
        # a sequential call's first loop that fits in the window whole
        # leaves its memory stream under the later loops' work
        # (predict_overlap()); off: --no-loop-overlap
        self.loop_overlap = True
        self._probe = probe
        self.fit_dataflow()
        # probe.py's cold_lat_S: the load-to-use latency of a line of a
        # flushed buffer of S bytes, prepared as bench_ilp's cold state
        # (TSC ticks, dependent loads in scrambled order): core cycles
        self.cold_lat, self.cold_seqlat = {}, {}

        for key, v in probe.items():
            mm = re.match(r'cold_(seq)?lat_(\d+)$', key)
            if mm and v:
                (self.cold_seqlat if mm[1] else self.cold_lat)[int(mm[2])] = v * c
        # probe.py's cold_pass2_S, cold_pass3_S (cold_passr_S), warm_pass_S:
        # TSC ticks per 64-byte line of the second and third in-place rmw
        # pass (a load-only pass after one rmw pass) over the flushed
        # buffers of a call, and of a later pass over the same buffers
        # left cached; cold_cpass2_S, cold_cpass3_S: the first and second
        # rmw pass over a flushed destination after a copy into it;
        # "scalar_" keys for the 64-bit form. {(isa, size): {'2', '3',
        # 'r', 'c2', 'c3', 'warm'}}, whole entries only (later_pass_extra())
        self.cold_pass = {}
        for isa, pre in (('avx512', ''), ('scalar', 'scalar_')):
            for key, v in probe.items():
                mm = re.match(pre + r'warm_pass_(\d+)$', key)
                if not mm:
                    continue
                z = mm[1]
                e = {'warm': v}
                for x in ('2', '3', 'r'):
                    e[x] = probe.get('%scold_pass%s_%s' % (pre, x, z))
                for x in ('2', '3'):
                    e['c' + x] = probe.get('%scold_cpass%s_%s' % (pre, x, z))
                if None not in e.values():
                    self.cold_pass[(isa, int(z))] = e
        # which of those later passes later_pass_extra() charges
        # (--later-passes)
        self.later_passes = LATER_PASSES

    def fit_dataflow(self):
        """The scheduler size for dataflow(): per kind, the one whose
        simulated window loops reproduce the probe's (fit_sched)."""
        probe, c = self._probe, self.cyc_per_tick
        self.sched, self.retire = {}, {}
        for kind in ('int', 'vec'):
            lat = 1.0 if kind == 'int' else self.vec_lat
            pts = []
            for key, v in probe.items():
                mm = re.match(r'win_%s_(\d+)$' % kind, key)
                if mm and v:
                    pts.append((int(mm[1]), c / v))
            if pts and lat and self.ld_lat:
                q, r = fit_sched(sorted(pts), lat, self.ld_lat, self.sim_issue,
                                 min_chain=self.df_min_chain if self.df_ports else 32,
                                 ports=self.sim_ports if self.df_ports else None, kind=kind,
                                 retire=self.df_retire)
                if q:
                    self.sched[kind], self.retire[kind] = q, r

    def window(self, kind, P):
        """Instructions in flight for chains of latency P (core cycles):
        the probe's points, log-log interpolated, the end values beyond."""
        pts = self.win.get(kind)
        if not pts:
            return None
        if P <= pts[0][0]:
            return pts[0][1]
        for (p0, w0), (p1, w1) in zip(pts, pts[1:]):
            if P <= p1:
                f = math.log(P / p0) / math.log(p1 / p0)
                return math.exp(math.log(w0) + f * (math.log(w1) - math.log(w0)))
        return pts[-1][1]

    def ports(self, isa):
        """(compute, load, store) per cycle for the isa's data registers."""
        if isa == 'scalar' or not self.vec:
            return self.alu, self.load, self.store
        return self.vec, self.vload, self.vstore


# probe.py's window loops: besides the chain, a load, a store, the index's
# add and and, the loop counter's add and the fused compare-and-branch
WIN_OVERHEAD = 6
LINE = 64  # bytes per cache line


def fn_xpath(f, isa):
    """(dx, depth): how much later (core cycles, latency-1 instructions)
    the data register leaves f's step than it came in, and when the
    step's last instruction completes. functions.py / synthetic.py give
    `xpath` where it is not simply one instruction after another (ops)."""
    form = f.forms[isa]
    xp = form.get('xpath', form.get('ops', 0))
    dx, d = xp if isinstance(xp, tuple) else (xp, xp)
    return (dx if f.writes else 0), d


def loop_path(fns, isa):
    """Core cycles from a block's load to its last instruction through the
    loop's steps (the load latency not included): the data register's path
    through every writing step, plus the last step's own depth."""
    x, fin = 0, 0
    for f in fns:
        dx, d = fn_xpath(f, isa)
        fin = max(fin, x + d)
        x += dx
    return max(fin, x)


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


# which later passes later_pass_extra() charges: in-place passes that
# store ('rmw'), or load-only ones too ('all')
LATER_PASSES = 'rmw'


def later_pass_extra(core, p, form, isa, size, cache, which=None):
    """TSC ticks per byte a flushed call's in-place passes after the first
    over its buffer cost beyond the same passes over cached lines, from
    probe.py's cold_pass2_S / cold_pass3_S / cold_passr_S less its
    warm_pass_S (ticks per 64-byte line; Core.cold_pass), at the buffer's
    size and the kernel's isa. Only the sequential form has later passes
    (one loop per function; with copy, the copy loop is the destination's
    first pass) and only a cold call's buffer was flushed: else 0, and 0
    without the probe's keys (input sets before run 4b). Each later pass
    that stores is charged the second pass's figure, then the third's
    (after a copy, the probe's passes after its copy: cold_cpass*_S);
    `which` ('rmw' or 'all'; default core.later_passes): whether a
    load-only later pass (csum) is charged cold_passr_S too. The probe's extra is
    clipped at 0 (64 KB: none measured)."""
    e = core.cold_pass.get((isa, size))
    if cache != 'cold' or form != 'seq' or not e:
        return 0.0
    which = which or core.later_passes
    t, k = 0.0, 0
    for fns, rd, wr in loops(p, form, isa, size, cache):
        k += 1
        if k == 1:
            continue
        if wr:
            x = e[('c' if p.copy else '') + ('2' if k == 2 else '3')]
        elif which == 'all':
            x = e['r']
        else:
            continue
        t += max(0.0, x - e['warm']) / LINE
    return t


def loop_terms(core, m, fns, isa, unroll, R, rd, wr, scale=(1.0, 1.0, 1.0), size=None,
               dis=None, copy=None):
    """Per-byte core cycles of one loop's resources: {term: cycles}.
    scale multiplies (instructions, loads, stores): callgrind's counts over
    the spec's, when the kernel was simulated. size: the buffer's, for the
    flushed-stream rate (Machine.stream). dis: the compiled loop's
    loop_stats() (instructions, ALU instructions, loads, stores, chain per
    iteration of `unroll` bytes), which then replace the spec's counts,
    eq. (1)'s spills and the spec's chain."""
    W = WIDTH[isa]
    comp = sum(f.forms[isa]['ops'] for f in fns) / W          # sum a_i / b_i
    lo = 3.0 / unroll                                          # add, cmp, branch
    S = sum(f.state + f.consts for f in fns)
    spill = max(0, S - R)                                      # eq. (1) / (2)
    loads = (1 + spill) / W
    stores = ((1 if wr else 0) + spill) / W
    instr = (comp + lo + loads + stores) * scale[0]
    loads *= scale[1]
    stores *= scale[2]
    cp, lp, sp = core.ports(isa)
    chain = max([f.forms[isa].get('chain', 0) for f in fns] or [0])
    if spill and chain:
        chain += core.st_fwd if isa == 'scalar' else core.st_fwd_vec
    chain /= W
    if dis and 'instr' in dis:
        instr, comp = dis['instr'] / unroll, dis['alu'] / unroll
        loads, stores = dis['loads'] / unroll, dis['stores'] / unroll
        scale = (1.0, 1.0, 1.0)
    if dis:
        chain = dis['chain'] / unroll
    mem = m.stream(rd, wr, W, size, copy)
    e = core.eff[isa]
    terms = {
        'issue': e * instr / core.issue,
        # the ALU ports also run the loop overhead in the scalar form; in
        # the vector forms it goes to the scalar ALUs beside them
        'compute': e * ((comp + lo) * scale[0] / cp if isa == 'scalar' or not core.vec else
                        max(comp * scale[0] / cp, lo / core.alu)),
        # the efficiency factor is measured on an issue/ALU-bound loop and
        # applies to those terms only: spill-bound loops reach the probe's
        # store rate (syn.n6.s16-int scalar, 2026-11-24: 61 stores per 8
        # bytes at 2 per cycle, measured within 1%)
        'load': loads / lp,
        'store': stores / sp,
        'chain': chain,
        # loads and stores share the core's memory pipes: probe.py mem_mix
        # (3 loads and a store per group) runs 4 64-bit accesses a cycle,
        # where loads alone run 4 and stores alone 2. A read-modify-write
        # of a stack slot (`add %rax,-0x78(%rsp)`) is both, which
        # callgrind's data reads do not count: the compiled loop's
        'memops': (max(loads + stores, dis.get('mem_ops', 0.0) / unroll) / core.memops
                   if isa == 'scalar' and core.memops and dis else 0.0),
        'mem-' + (rd if not wr or wr == rd else rd + '/' + wr): mem * core.cyc_per_tick,
    }
    # the window: each iteration holds its instructions in flight for its
    # path's latency P (load, then the steps' path); with W in flight, an
    # iteration of I instructions takes at least P * I / W cycles (per
    # byte: P * instructions per byte / W)
    kind = 'int' if isa == 'scalar' else 'vec'
    if core.ld_lat and core.win.get(kind):
        P = core.ld_lat + loop_path(fns, isa)
        # register moves the renamer eliminates (compiled loops) complete at
        # rename and never wait in a scheduler: they do not hold the window
        # (W(P) from the probe, ~100-330 instructions, well under the ROB)
        wi = instr - (dis.get('moves', 0) / unroll if dis else 0.0)
        terms['window'] = P * wi / core.window(kind, P)
        # lines in flight from a flushed source. The loop's own misses:
        # each iteration holds its instructions in the window from
        # dispatch until its line arrives from DRAM and its path completes,
        # P = the flushed line's raw latency (probe.py cold_lat, scrambled
        # order, at the buffer's size) + the path; with W(P) instructions
        # in flight a loop of I instructions per line keeps W / I lines in
        # flight: P * I / W per line (Little's law). Or the hardware
        # prefetcher: a sequential stream's line, once the prefetcher runs
        # ahead, arrives cold_seqlat after its load (probe.py's in-order
        # chase through the same flushed buffers, one line in flight), and
        # the window keeps W(P) / I such lines in flight: Little's law at
        # that latency. Whichever delivers faster. A scalar loop (~100
        # instructions per line) keeps 2-3 lines in flight and runs at
        # about twice the chase's pace (64 KB, input set run 7: 15.3 ticks
        # a line measured, the chase 31.2); an AVX-512 one (~12) keeps so
        # many that the memory term binds. (Until 2026-11-24 this was one
        # line per cold_seqlat; ilp/README.md, "Lines in flight".)
        # Each buffer's first miss stays added outside (first_miss).
        if rd == 'DRAM' and size in core.cold_lat:
            path = loop_path(fns, isa)
            P = core.cold_lat[size] + path
            t = P * instr / core.window(kind, P)
            if size in core.cold_seqlat:
                Ps = core.cold_seqlat[size] + path
                t = min(t, Ps * instr / core.window(kind, Ps))
            terms['inflight'] = t
    return terms


def remainder_cycles(core, p, isa, size, nloops):
    """Cycles per byte of the bytes after the last whole block (8-byte
    granules through the scalar steps, each loop), not overlapped."""
    rem = size % unroll_bytes(p, isa)
    if isa == 'scalar' or rem < 8:
        return 0.0
    ops = sum(f.forms['scalar']['ops'] for f in p.fns) + 2 * nloops + 3 * nloops
    chain = max([f.forms['scalar'].get('chain', 0) for f in p.fns] or [0])
    g = rem // 8
    return max(g * ops / core.issue, g * chain) / size


def predict_overlap(core, m, p, form, isa, size, cache, R, sim=None, cold_latency=True,
                    dis=None, explain=None):
    """Overlap form: (TSC ticks per byte, dominating term, {term: ticks/B}
    summed over the loops). sim: (instructions, data reads, data writes) per
    byte from callgrind for this kernel at 1460 B hot, to scale the spec's
    counts (spills included), or None. dis: the compiled main loops'
    loop_stats(), one per loop (kernel_loops()), or None. explain: a list
    that gets, per loop, (functions, read level, write level, {term: TSC
    ticks per byte}), then ('overlap', ticks per byte) where
    first_loop_overlap() set the loops' total, then ('call', {term: ticks
    per byte}) for what is added outside the loops (--explain)."""
    ls = loops(p, form, isa, size, cache)
    if dis and len(dis) != len(ls):
        dis = None
    u = unroll_bytes(p, isa)
    scale = (1.0, 1.0, 1.0)
    if sim:
        # the spec's counts per byte, undoing the rates (at efficiency 1)
        save, core.eff[isa] = core.eff[isa], 1.0
        spec = [loop_terms(core, m, fns, isa, u, R, rd, wr, size=size) for fns, rd, wr in ls]
        core.eff[isa] = save
        ins = sum(t['issue'] for t in spec) * core.issue
        ld = sum(t['load'] for t in spec) * core.ports(isa)[1]
        st = sum(t['store'] for t in spec) * core.ports(isa)[2]
        scale = tuple(x / y if y else 1.0 for x, y in zip(sim, (ins, ld, st)))
    # the compiled loops' dataflow at the probe's latencies and window
    # (dataflow()) replaces the per-loop chain and window terms
    df = dataflow(core, p, form, isa, size, dis) if dis and core.use_dataflow.get(isa) else None
    # did dataflow() run the kernel's whole path (the code between and
    # after the loops)? The same test it made.
    df_path = bool(df) and whole_path(core, dis, size // u) is not None
    rem = remainder_cycles(core, p, isa, size, len(ls))
    # the instructions the call runs besides its main loops (AVX-512: the
    # compiled loops' counts leave them out; callgrind's scalar counts
    # have them): per loop, walk_call()'s
    extra = call_extra(dis, size, u) if isa != 'scalar' and core.call_code else None
    total, by_term = 0.0, {}
    per_loop = []
    for j, (fns, rd, wr) in enumerate(ls):
        # the loop copies (the seq form's first loop, or the integrated
        # loop, of a pipeline with copy) or works in place
        cp = bool(p.copy) and (form != 'seq' or j == 0)
        t = loop_terms(core, m, fns, isa, u, R, rd, wr, scale, size, dis[j] if dis else None,
                       cp)
        if extra:
            t['issue'] += core.eff[isa] * extra[j] / size / core.issue
        if df:
            t.pop('chain', None)
            if not core.df_keep_window:
                t.pop('window', None)
            if df_path:
                # the simulated call ran the masked pass itself: the
                # remainder goes on the other terms, not beside dataflow
                t = {kk: v + rem / len(ls) for kk, v in t.items()}
            t['dataflow'] = df[j]
        if explain is not None:
            explain.append(('+'.join(f.name for f in fns) or 'copy', rd, wr,
                            {kk: v / core.cyc_per_tick for kk, v in t.items()}))
        per_loop.append(t)
        total += add_largest(by_term, t)
    # the first loop's stores into a destination not in L1 (a copy's, in
    # a prepared state) wait for their lines' ownership: they stay added
    wr1 = ls[0][2]
    keep = (m.cost(wr1, WIDTH[isa])[1] / WIDTH[isa] * core.cyc_per_tick
            if wr1 and wr1 != hot_level(size) else 0.0)
    lo = first_loop_overlap(core, per_loop, form, isa, size, keep)
    if lo:
        total, by_term = lo
        if explain is not None:
            explain.append(('overlap', total / core.cyc_per_tick))
    if not df_path:
        total += rem
    ticks = total / core.cyc_per_tick
    outside = {'remainder': rem / core.cyc_per_tick if not df_path else 0.0}
    if cold_latency:
        fm = m.first_miss(cache, 2 if p.copy else 1, size)
        ticks += fm
        outside['first_miss'] = fm
        # later in-place passes over the flushed lines (probe.py cold_pass)
        later = later_pass_extra(core, p, form, isa, size, cache)
        outside['later'] = later
        if later:
            ticks += later
            by_term['later'] = later * core.cyc_per_tick
    if explain is not None:
        explain.append(('call', outside))
    dom = max(by_term, key=by_term.get)
    return ticks, dom, {k: v / core.cyc_per_tick for k, v in by_term.items()}


def add_largest(by_term, t):
    """A loop's cost in the overlap form: the largest of its terms t
    ({term: cycles per byte}), added to by_term under the term's kind
    ('mem-L2/L1' counts as 'mem'); returns it."""
    k = max(t, key=t.get)
    by_term[k.split('-')[0]] = by_term.get(k.split('-')[0], 0.0) + t[k]
    return t[k]


def first_loop_overlap(core, per_loop, form, isa, size, keep=0.0):
    """A sequential call's first loop, when its instructions for the
    whole call fit in the window (its capacity: probe.py's largest W(P)):
    the core dispatches the next loop's instructions while the first
    loop's lines are still arriving (the later loops work in the cache
    level the first one filled), so the first loop's memory term overlaps
    the later loops' work: the call costs max(m1, o1 + A), m1 the first
    loop's memory term, o1 the largest of its other terms, A the later
    loops' (each its largest term), where loops one after the other cost
    max(m1, o1) + A. per_loop: each loop's terms (core cycles per byte).
    keep: the part of m1 that does not overlap (the first loop's stores
    into a destination outside L1, which wait for their lines), added to
    the call and left out of m1.
    Returns (total, {term: cycles per byte}) or None where it does not
    apply (the integrated form, one loop, no memory term, no window probe,
    or a first loop too long: at 1460 B a scalar loop's ~2300
    instructions, at 64 KB any)."""
    if form != 'seq' or len(per_loop) < 2 or not core.loop_overlap:
        return None
    cap = max((w for _, w in core.win.get('int' if isa == 'scalar' else 'vec') or []),
              default=0.0)
    t1 = per_loop[0]
    mk = [k for k in t1 if k.startswith('mem-')]
    if not cap or not mk or not core.eff[isa]:
        return None
    if t1['issue'] * core.issue / core.eff[isa] * size > cap:
        return None
    m1 = max(0.0, t1[mk[0]] - keep)
    o = {k: v for k, v in t1.items() if k != mk[0]}
    by_term = {}
    for t in [o] + per_loop[1:]:
        add_largest(by_term, t)
    rest = sum(by_term.values())
    if m1 >= rest:
        return m1 + keep, {'mem': m1 + keep}
    if keep:
        by_term['mem'] = by_term.get('mem', 0.0) + keep
    return rest + keep, by_term


CALIB_ROW = 'syn.n1.s8.a10'


def call_extra(dis, size, step):
    """Per main loop of a kernel (dis: kernel_loops(), the first carrying
    the function's body as 'fn'), the instructions a call of `size` bytes
    runs outside the main loops (walk_call(): the set-up, the remainder,
    the byte tail, the fold and the exit; each piece counted to the main
    loop before it); None without the body or where the walk fails or
    finds another count of main loops."""
    body = dis[0].get('fn') if dis else None
    if not body:
        return None
    w = walk_call(body, size, step)
    if not w or len(w[2]) != len(dis):
        return None
    return [w[2][k] for k in sorted(w[2])]


def whole_path(core, loops_dis, N):
    """The kernel's compiled path (objdump_paths(), attached by
    kernel_loops()) when dataflow() simulates it whole for calls of N main-
    loop iterations, else None (the main loops alone, the remainder added
    outside by predict_overlap()): the path must be on (core.df_path, off
    with --no-path), hold exactly the loops of loops_dis, and the call be
    short (N <= 64; longer calls run each loop in its steady state)."""
    path = loops_dis[0].get('path') if core.df_path and loops_dis else None
    if not path or N > 64:
        return None
    if sum(1 for kd, _ in path if kd == 'loop') != len(loops_dis):
        return None
    return path


def calibrate_efficiency(core, m, med, sim, isa, R, size=1460, dis=None):
    """How close a real loop comes to the probe's peak rates: the synthetic
    n=1, s=8, a=10 integrated loop, hot (its recurrence is one add per
    block, its state fits in registers, its data in L1, so only the
    throughput terms can bound it), measured cycles over its larger of
    the issue and ALU terms at peak rates (the factor scales those two:
    the load and store ports keep the probe's rates). The paper calibrates its CPI the same
    way, on one loop. With one function and no copy, the sequential form is
    the same loop as the integrated one, measured separately: the faster
    of the two medians is taken (on this shared machine one median of three
    carried another task's time: 2026-11-23, avx512 int 0.064 against seq
    0.041 TSC/B, which made every AVX-512 throughput term 1.6x too slow).
    Returns the factor (>= 1) or None (not measured)."""
    p = pipeline_of(CALIB_ROW)
    k = (p.name, 'int', isa, size, 'hot', False)
    if k not in med:
        return None
    ks = (p.name, 'seq', isa, size, 'hot', False)
    meas = min(med[k], med.get(ks, med[k]))
    save, core.eff[isa] = core.eff[isa], 1.0
    # the issue and compute terms at the peak rates (dataflow() off: its
    # ports would stand in for them)
    save_df, core.use_dataflow = core.use_dataflow, {}
    sk = (sim[0].get(k), sim[1].get(k), sim[2].get(k))
    t, _, terms = predict_overlap(core, m, p, 'int', isa, size, 'hot', R,
                                  sk if None not in sk else None, cold_latency=False,
                                  dis=dis(p, 'int', isa) if dis else None)
    core.eff[isa], core.use_dataflow = save, save_df
    tp = max(v for key, v in terms.items() if key in ('issue', 'compute'))
    return max(1.0, meas / tp)


def probe_R_objdump(text, prefix='cn_ilp_syn_', form='int', isa='avx512'):
    """R from the disassembly (objdump -d) of the synthetic sweep: the
    first total state S = n * s whose integrated kernel's main loop (up to
    its first backward branch) reads or writes the stack, so R = S - 1.
    For AVX-512, which valgrind cannot run. Returns (R or None, rows
    [(S, n, s, stack references in the loop)])."""
    fn = re.compile(r'^[0-9a-f]+ <%sn(\d+)_s(\d+)_a10_%s_%s>:' % (prefix, form, isa))
    ins = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')
    rows, cur, body = [], None, []

    def close():
        if cur is None:
            return
        loop = None
        for addr, op, args in body:
            mm = re.match(r'([0-9a-f]+) <', args)
            if op.startswith('j') and mm and body[0][0] <= int(mm[1], 16) < addr:
                loop = (int(mm[1], 16), addr)
                break
        if loop:
            refs = sum(1 for addr, op, args in body
                       if loop[0] <= addr <= loop[1] and op != 'lea'
                       and re.search(r'\(%r[sb]p\)', args))
            rows.append((cur[0] * cur[1], cur[0], cur[1], refs))

    for line in text.splitlines():
        mf = fn.match(line)
        if mf:
            close()
            cur, body = (int(mf[1]), int(mf[2])), []
            continue
        if cur is None:
            continue
        if not line.strip():
            close()
            cur, body = None, []
            continue
        mi = ins.match(line)
        if mi:
            body.append((int(mi[1], 16), mi[2], mi[3]))
    close()
    rows.sort()
    spilling = [S for S, _, _, refs in rows if refs]
    if not spilling:
        return None, rows
    return min(spilling) - 1, rows


# ------------------------------------------------------------ disassembly
#
# valgrind cannot run AVX-512, so the scalar form's instruction, load and
# store counts come from callgrind and the AVX-512 form's from the spec
# (ops per function). The compiler does not emit the spec one for one: it
# merges x ^= s_j; x ^= s_k into one vpternlogd, reassociates XORs of
# state words off the data register's path, adds register moves, and
# spills what does not fit. The main loops' own instructions, read from
# objdump -d, give the AVX-512 form what callgrind gives the scalar one
# (and the loop-carried recurrence as compiled, not as specified).

_REG = re.compile(r'%([a-z0-9]+)')
_FLAGS_W = ('add', 'sub', 'adc', 'sbb', 'cmp', 'test', 'and', 'or', 'xor', 'inc', 'dec',
            'neg', 'shl', 'shr', 'sar', 'rol', 'ror')
_FLAGS_R = ('adc', 'sbb', 'cmov', 'set')
# register moves the renamer eliminates (latency 0): reg-to-reg only
_MOVES = ('mov', 'movq', 'vmovdqa32', 'vmovdqa64', 'vmovdqu8', 'vmovdqu32', 'vmovdqu64',
          'vmovdqa', 'vmovdqu', 'vmovaps', 'vmovups')


def _canon(r):
    """Architectural register of an operand name (xmm/ymm/zmm N -> zN;
    eax/ax/al -> rax; r8d -> r8)."""
    mm = re.match(r'[xyz]mm(\d+)$', r)
    if mm:
        return 'z' + mm[1]
    mm = re.match(r'(r\d+)[dwb]?$', r)
    if mm:
        return mm[1]
    mm = re.match(r'[re]?([a-d])[xlh]$', r)
    if mm:
        return 'r%sx' % mm[1]
    mm = re.match(r'[re]?(si|di|bp|sp)l?$', r)
    if mm:
        return 'r' + mm[1]
    return r


def _operands(args):
    """AT&T operand list, commas inside parentheses kept; masks dropped."""
    args = args.split('#')[0].split('<')[0].strip()
    out, depth, cur = [], 0, ''
    for ch in args:
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
            continue
        depth += ch == '('
        depth -= ch == ')'
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_insn(op, args):
    """(srcs, addr, dsts, kind, mem_in, mem_out) of one AT&T instruction:
    register sources, the memory operand's address registers, register
    destinations, kind 'move' (register to register), 'load', 'store',
    'alu', 'branch' or 'other'; mem_in / mem_out the memory operand text
    read / written."""
    ops = _operands(args)
    srcs, addr, dsts, mem_in, mem_out = [], [], [], None, None
    if op.startswith('j') or op in ('nop', 'nopl', 'nopw', 'xchg') or op.startswith('nop'):
        return (['flags'] if op.startswith('j') and op != 'jmp' else [], [], [], 'branch',
                None, None)
    last = ops[-1] if ops else ''
    masked = '{%k' in last and '{z}' not in last
    dst_is_mem = '(' in last
    for o in ops[:-1]:
        if '(' in o:
            mem_in = o
            addr += [_canon(r) for r in _REG.findall(o)]
        elif o.startswith('%'):
            srcs.append(_canon(o[1:].split('{')[0]))
    if dst_is_mem:
        mem_out = last
        addr += [_canon(r) for r in _REG.findall(last)]
    elif last.startswith('%'):
        d = _canon(last[1:].split('{')[0])
        dsts.append(d)
        # two-operand scalar ALU ops, ternary logic, dot products and merge
        # masking read their destination too
        if (not op.startswith('v') and len(ops) == 2 and not op.startswith(('mov', 'lea', 'bswap')))\
                or op.startswith(('vpternlog', 'vpdp', 'vfmadd', 'vpmadd52')) or masked \
                or op.startswith('bswap') or len(ops) == 1:
            srcs.append(d)
    if op.startswith('lea') and ops:    # not `leave`
        srcs, addr = [_canon(r) for r in _REG.findall(ops[0])], []
        mem_in = None
    if not op.startswith('v') and op.startswith(_FLAGS_R):
        srcs.append('flags')
    if not op.startswith('v') and op.startswith(_FLAGS_W) and not op.startswith('lea'):
        dsts.append('flags')
    if op.startswith(('cmp', 'test')):
        dsts = ['flags']
    if mem_out and not op.startswith(('mov', 'vmov')):
        mem_in = mem_out   # read-modify-write: add %rax,0x10(%rsp) loads too
    if mem_out and op.startswith(('mov', 'vmov')):
        kind = 'store'
    elif mem_in and op.startswith(('mov', 'vmov', 'vpbroadcast', 'vbroadcast')):
        kind = 'load'
    elif (op in _MOVES or op.startswith('vmovdq')) and len(ops) == 2 and not mem_in \
            and not mem_out and ops[0].startswith('%') and '{' not in last:
        kind = 'move'
    elif op.startswith(('lea', 'cmp', 'test')):
        kind = 'other'
    else:
        kind = 'alu'
    return srcs, addr, dsts, kind, mem_in, mem_out


def loop_stats(body, ld_lat=4.0, st_fwd=5.0, iters=40, st_fwd_vec=None):
    """Counts and the loop-carried recurrence of one loop body [(op, args)]:
    {instr, alu (vector ALU instructions, or scalar ones in a loop without
    vector registers), loads, stores, stack (stack references), moves
    (register-to-register moves, eliminated at rename), chain
    (core cycles per iteration of the longest recurrence with unlimited
    ports: ALU 1 (functions.py's unit, see Core.vec_lat), eliminated
    moves 0, loads ld_lat, a store and the load of the same stack slot
    st_fwd, or st_fwd_vec when the stored register is a vector one)}.
    The recurrence is found by running
    the body's dependencies for `iters` iterations and taking the growth
    of the latest result over the second half."""
    parsed = [(op,) + parse_insn(op, args) for op, args in body]
    vec = any(r.startswith('z') for _, srcs, _a, dsts, *_ in parsed for r in srcs + dsts)
    st = dict(instr=0, alu=0, loads=0, stores=0, stack=0, moves=0)
    for op, srcs, addr, dsts, kind, mi, mo in parsed:
        if kind == 'branch' and op == 'jmp':
            continue
        st['instr'] += 1
        st['loads'] += 1 if mi else 0
        st['stores'] += 1 if mo else 0
        st['stack'] += sum(1 for x in (mi, mo) if x and re.search(r'\(%r[sb]p\)', x))
        if kind == 'alu' and (not vec or any(r.startswith('z') for r in dsts)):
            st['alu'] += 1
        st['moves'] += kind == 'move'
    ready, mem, ends = {}, {}, []
    for _ in range(iters):
        for op, srcs, addr, dsts, kind, mi, mo in parsed:
            t = max([ready.get(r, 0.0) for r in srcs] or [0.0])
            if mi:  # the loaded operand: its address, then the load
                tm = max([ready.get(r, 0.0) for r in addr] or [0.0]) + ld_lat
                if mi in mem:   # a stack slot stored in this loop: forwarded
                    tm = max(tm, mem[mi])
                t = max(t, tm)
            # message data moves on every iteration (its address changes);
            # only a stack slot is the same memory on the next iteration
            lat = 0.0 if kind in ('move', 'load') else 1.0
            if mo and re.search(r'\(%r[sb]p\)', mo):
                vs = st_fwd_vec is not None and any(r.startswith('z') for r in srcs)
                mem[mo] = t + (st_fwd_vec if vs else st_fwd)
            for d in dsts:
                ready[d] = t + lat
        ends.append(max(list(ready.values()) + list(mem.values()) + [0.0]))
    h = iters // 2
    st['chain'] = (ends[-1] - ends[h - 1]) / (iters - h)
    return st


def _objdump_functions(text):
    """An objdump -d listing's functions in address order, [(symbol,
    [(address, op, args)])], and {symbol: the symbol it jumps to} for each
    function that is one jmp to another (n = 1 int is the seq kernel)."""
    head = re.compile(r'^[0-9a-f]+ <([^>]+)>:')
    ins = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')
    fns, alias = [], {}
    for line in text.splitlines():
        mh = head.match(line)
        if mh:
            fns.append((mh[1], []))
            continue
        mi = ins.match(line)
        if fns and mi:
            fns[-1][1].append((int(mi[1], 16), mi[2], mi[3]))
    for sym, body in fns:
        if body and body[0][1] == 'jmp':
            mm = re.search(r'<([^>+]+)>', body[0][2])
            if mm:
                alias[sym] = mm[1]
    return fns, alias


def _with_aliases(out, alias):
    """out, each function that jumps to another given that one's entry."""
    for a, b in alias.items():
        if b in out:
            out[a] = out[b]
    return out


def objdump_loops(text):
    """{symbol: [loop bodies [(op, args)]]} for every function of an objdump
    -d listing: the loops are the spans from a backward branch's target to
    the branch, in address order, inner loops only (no other backward
    branch inside). A function that is one jmp to another (n = 1 int is
    the seq kernel) takes that function's loops."""
    fns, alias = _objdump_functions(text)
    out = {}
    for sym, body in fns:
        loops = []
        for addr, op, args in body:
            mm = re.match(r'([0-9a-f]+) <', args)
            # a backward branch within the function (not a tail call)
            if op.startswith('j') and mm and body[0][0] <= int(mm[1], 16) < addr:
                tgt = int(mm[1], 16)
                span = [(o, a) for ad, o, a in body if tgt <= ad <= addr]
                inner = not any(o.startswith('j') and re.match(r'([0-9a-f]+) <', a)
                                and tgt <= int(re.match(r'([0-9a-f]+)', a)[1], 16) < ad
                                for ad, o, a in body if tgt <= ad < addr)
                if inner and span:
                    loops.append(span)
        out[sym] = loops
    return _with_aliases(out, alias)


def _straight_path(body):
    """objdump_paths()'s pieces of one function's body, or None if its
    code up to the first `ret` is not one straight path."""
    end = next((i for i, (_, op, _a) in enumerate(body) if op.startswith('ret')), None)
    if end is None:
        return None
    code = body[:end + 1]
    if any(op.startswith('call') for _, op, _a in code):
        return None
    start, last = code[0][0], code[-1][0]
    tgt_re = re.compile(r'([0-9a-f]+) <')
    loops = []
    for ad, op, args in code:
        mm = tgt_re.match(args)
        if op.startswith('j') and mm and start <= int(mm[1], 16) < ad:
            loops.append((int(mm[1], 16), ad))
        elif op == 'jmp':
            return None     # code skipped on the way: not one straight path
    # inner loops only, none overlapping another
    for (a0, a1), (b0, b1) in zip(loops, loops[1:]):
        if b0 <= a1:
            return None
    out, i = [], 0
    for a0, a1 in loops:
        seg = [(op, args) for ad, op, args in code if i <= ad < a0 and not op.startswith('j')]
        if seg:
            out.append(('code', seg))
        out.append(('loop', [(op, args) for ad, op, args in code if a0 <= ad <= a1]))
        i = a1 + 1
    seg = [(op, args) for ad, op, args in code if i <= ad <= last and not op.startswith('j')]
    if seg:
        out.append(('code', seg))
    return out


def objdump_paths(text):
    """{symbol: [(kind, body)]} for every function of an objdump -d listing
    whose code from its first instruction to its first `ret` runs straight
    through but for its inner loops (no call, every backward branch there
    the end of an inner loop): that code in address order, cut into
    ('code', [(op, args)]) and ('loop', body) pieces, jumps left out. The
    synthetic AVX-512 kernels are laid out so: set-up, main loop, the
    masked pass over the last whole words, the fold into the result, per
    function of a `seq`; their other paths (buffers under one block) sit
    after the `ret`. A function that is one jmp to another takes its path."""
    fns, alias = _objdump_functions(text)
    out = {}
    for sym, body in fns:
        path = _straight_path(body) if body and sym not in alias else None
        if path is not None:
            out[sym] = path
    return _with_aliases(out, alias)


def objdump_bodies(text):
    """{symbol: [(address, op, args)]}: every function of an objdump -d
    listing (walk_call()'s input); one that is one jmp to another takes
    that one's body."""
    fns, alias = _objdump_functions(text)
    return _with_aliases({sym: body for sym, body in fns if sym not in alias}, alias)


def kernel_loops(dis, p, form, isa, ld_lat=4.0, st_fwd=5.0, st_fwd_vec=None, paths=None,
                 fns=None):
    """loop_stats() of the kernel's main loops, one per loop of loops()
    (seq: the copy loop, then one per function; int: one), taken as the
    kernel's first inner loops in address order; None when the listing
    does not have the kernel or has fewer loops. paths: objdump_paths();
    where the kernel's straight path holds exactly these loops, the first
    loop's entry carries it as 'path' (dataflow() then runs the code
    between the loops too)."""
    sym = ilpgen.fn_symbol(p, 'seq' if form == 'seq' else form, isa)
    step = unroll_bytes(p, isa)
    # main loops advance their index by the unrolled block (remainder
    # loops by 8-byte granules)
    inc = re.compile(r'^(?:add\s+\$0x%x,%%r|lea\s+0x%x\(%%r)' % (step, step))
    bodies = [b for b in dis.get(sym) or []
              if any(inc.match('%s %s' % (op, args)) for op, args in b)]
    k = (len(p.fns) + (1 if p.copy else 0)) if form == 'seq' else 1
    if len(bodies) < k:
        return None
    out = []
    for b in bodies[:k]:
        st = loop_stats(b, ld_lat, st_fwd, st_fwd_vec=st_fwd_vec)
        st['body'] = b
        out.append(st)
    path = (paths or {}).get(sym)
    if path and [b for kd, b in path if kd == 'loop'] == bodies[:k]:
        out[0]['path'] = path
    if fns and fns.get(sym):
        out[0]['fn'] = fns[sym]
    return out


# ------------------------------------------------------------ the call's instructions

_MASK64 = (1 << 64) - 1
_WALKS = {}


def walk_call(body, size, step, base=(0x10000000, 0x20000000), limit=2000000, trace=None):
    """The instructions one call of a compiled kernel executes on a buffer
    of `size` bytes: body [(address, op, args)] (_objdump_functions()),
    run from its entry on the general registers only (rdi, rsi the
    destination and source, rdx the size; vector registers, memory and
    what calls return unknown), every branch decided by the registers
    it tests. Returns (instructions executed, of them in main loops: the
    inner loops whose index advances by `step` bytes, {main loop's first
    address: instructions of the rest of the call attributed to it (the
    code after a main loop up to the next, the set-up to the first)}),
    or None where a branch tests an unknown value, the path leaves the
    function or runs over `limit` steps. A `call` counts as one
    instruction (the callee's own are not in the listing: the real
    kernels' byte tails call memcpy). trace: a list, given the index in
    body of every instruction executed, in order."""
    if not body:
        return None
    if trace is not None:
        return _walk_call(body, size, step, base, limit, trace)
    key = (tuple(body), size, step, base, limit)
    if key not in _WALKS:
        _WALKS[key] = _walk_call(body, size, step, base, limit)
    return _WALKS[key]


def _walk_call(body, size, step, base, limit, trace=None):
    at = {a: i for i, (a, _o, _r) in enumerate(body)}
    tgt_re = re.compile(r'([0-9a-f]+) <')
    inc = re.compile(r'^(?:add\s+\$0x%x,%%r|lea\s+0x%x\(%%r)' % (step, step))

    def target(args):
        mm = tgt_re.match(args)
        return int(mm[1], 16) if mm else None
    # main loops: inner loops (a conditional backward branch, no other
    # backward branch inside) whose index advances by `step`
    mains = []
    for ad, op, args in body:
        t0 = target(args)
        if op.startswith('j') and op != 'jmp' and t0 is not None and body[0][0] <= t0 < ad:
            span = [(x, o, a) for x, o, a in body if t0 <= x <= ad]
            inner = not any(o.startswith('j') and target(a) is not None and t0 <= target(a) < x
                            for x, o, a in span[:-1])
            if inner and any(inc.match('%s %s' % (o, a)) for _x, o, a in span):
                mains.append((t0, ad))
    if not mains:
        return None
    reg = {'rdi': base[0], 'rsi': base[1], 'rdx': size, 'rsp': 0x7fff0000}
    # the last flag-setting instruction: ('cmp', a, b) for `cmp a,b` (b - a)
    # or ('res', result) for an arithmetic one; None: unknown
    flags = None

    def val(x):
        if x.startswith('$'):
            return int(x[1:], 0) & _MASK64
        if x.startswith('%') and not x.startswith(('%xmm', '%ymm', '%zmm', '%k')):
            return reg.get(_canon(x[1:]))
        return None

    def w32(x):
        return re.match(r'%(e..|r\d+d)$', x) is not None

    def put(x, v):
        if v is not None:
            v &= 0xffffffff if w32(x) else _MASK64
        reg[_canon(x[1:])] = v

    def lea(x):
        mm = re.match(r'^(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)$', x)
        if not mm:
            return None
        b = val(mm[2]) if mm[2] else 0
        ix = val(mm[3]) if mm[3] else 0
        if b is None or ix is None:
            return None
        return int(mm[1], 0) + b + ix * int(mm[4] or 1) if mm[1] else b + ix * int(mm[4] or 1)

    def taken(cc):
        if flags is None:
            return None
        if flags[0] == 'cmp':
            a, b = flags[1], flags[2]
            if a is None or b is None:
                return None
            sa = a - (1 << 64) if a >> 63 else a
            sb = b - (1 << 64) if b >> 63 else b
            return {'jb': b < a, 'jae': b >= a, 'jbe': b <= a, 'ja': b > a, 'je': b == a,
                    'jne': b != a, 'jl': sb < sa, 'jge': sb >= sa, 'jle': sb <= sa,
                    'jg': sb > sa}.get(cc)
        r = flags[1]
        if r is None:
            return None
        return {'je': r == 0, 'jne': r != 0, 'js': r >> 63 == 1, 'jns': r >> 63 == 0}.get(cc)
    arith = {'add': lambda b, a: b + a, 'sub': lambda b, a: b - a, 'and': lambda b, a: b & a,
             'or': lambda b, a: b | a, 'xor': lambda b, a: b ^ a,
             'shl': lambda b, a: b << (a & 63), 'shr': lambda b, a: b >> (a & 63),
             'imul': lambda b, a: b * a}
    n, in_main, i = 0, 0, 0
    rest = {m[0]: 0 for m in mains}
    owner = mains[0][0]
    while True:
        if n >= limit or i >= len(body):
            return None
        ad, op, args = body[i]
        n += 1
        if trace is not None:
            trace.append(i)
        main = next((m for m in mains if m[0] <= ad <= m[1]), None)
        if main:
            in_main += 1
            owner = main[0]
        else:
            rest[owner] += 1
        ops = _operands(args)
        nxt = i + 1
        base_op = re.sub(r'[qlwb]$', '', op) if op not in arith else op
        if op.startswith('ret'):
            return n, in_main, rest
        if op.startswith('j'):
            t = target(args)
            go = True if op == 'jmp' else taken(op)
            if t not in at or go is None:
                return None
            if go:
                nxt = at[t]
        elif op.startswith('call'):
            # the callee's result and the caller-saved registers: unknown
            for r in ('rax', 'rcx', 'rdx', 'rsi', 'rdi', 'r8', 'r9', 'r10', 'r11'):
                reg[r] = None
            flags = None
        elif base_op in ('cmp', 'test') and len(ops) == 2:
            a, b = val(ops[0]), val(ops[1])
            if base_op == 'cmp':
                flags = ('cmp', a, b)
            else:
                flags = ('res', a & b if a is not None and b is not None else None)
        elif base_op in ('mov', 'movabs', 'lea') and len(ops) == 2 and ops[1].startswith('%') \
                and not ops[1].startswith(('%xmm', '%ymm', '%zmm', '%k')):
            put(ops[1], lea(ops[0]) if base_op == 'lea' else
                None if '(' in ops[0] else val(ops[0]))
        elif op.startswith('movz') and len(ops) == 2:
            v = val(ops[0])
            put(ops[1], None if v is None else v & (0xff if op.startswith('movzb') else 0xffff))
        elif base_op in arith and len(ops) == 2 and ops[1].startswith('%') \
                and not ops[1].startswith(('%xmm', '%ymm', '%zmm')):
            a, b = val(ops[0]), val(ops[1])
            if base_op == 'xor' and ops[0] == ops[1]:
                v = 0
            else:
                v = None if a is None or b is None else arith[base_op](b, a)
            put(ops[1], v)
            flags = ('res', reg[_canon(ops[1][1:])])
        elif op == 'shlx' and len(ops) == 3:
            c, x = val(ops[0]), val(ops[1])
            put(ops[2], None if c is None or x is None else
                x << (c & (31 if w32(ops[2]) else 63)))
        elif op.startswith('popcnt') and len(ops) == 2:
            v = val(ops[0])
            put(ops[1], None if v is None else bin(v).count('1'))
            flags = None
        else:
            # anything else: the general registers and flags it writes
            # become unknown
            for d in parse_insn(op, args)[2]:
                if d == 'flags':
                    flags = None
                elif not d.startswith(('z', 'k')):
                    reg[d] = None
        i = nxt

# ------------------------------------------------------------ dataflow
#
# The chain and window terms above take one loop at a time and a latency
# per instruction of 1 (functions.py's unit). The vector ALU's latency is
# 2 cycles on this core (probe.py dep_vec), and a chain-bound AVX-512 loop
# of 1460 B does not run at its chain's 2-cycle latency either: its state
# restarts at every call, so the next call's chain (and in `seq` the next
# loop's) starts while this one's is still running, as far as the out-of-
# order window lets the front end run ahead. Instead of a closed form for
# that overlap, dataflow() runs the compiled main loops' instructions, call
# after call as bench_ilp calls them, through a core with: in-order
# dispatch of `issue` instructions per cycle (probe.py mix_issue), each
# instruction waiting in a scheduler of Q entries from dispatch until its
# operands are ready (eliminated register moves take no entry and no
# time), latencies measured by probe.py (scalar ALU 1, vector ALU dep_vec,
# loads ld_lat; a stack slot stored and reloaded st_fwd or, from a vector
# register, st_fwd_vec; a message word
# stored by one loop and loaded by the next, or by the next call in place,
# after the store's data plus ld_lat), unlimited ports (the throughput
# terms stay max()ed beside it). Q is not a free parameter: it is the one
# scheduler size for which the same simulation reproduces probe.py's
# window loops (win_vec_L / win_int_L: chains of L dependent instructions
# per iteration, fit_sched()).

def sim_dispatch(stream, issue, Q, ports=None, R=None):
    """Dispatch cycle of every instruction of `stream` [(srcs, msrcs, dsts,
    ld, sched[, op_port, mem_port])] on an in-order front end of `issue`
    instructions per cycle with Q scheduler entries. srcs: registers the
    instruction waits for; msrcs: what its memory operand waits for (the
    address registers, the stored word it reloads), then ld cycles more;
    dsts: [(name, latency)]; late (optional 8th): {source: cycles} an
    operand is needed that much after it is ready (vpternlog's sources
    other than its destination). It issues one cycle after dispatch or
    when its operands are ready, whichever is later, and holds a scheduler
    entry (sched) until then; a load (no register sources) holds it until
    its address is ready, its data arriving ld later. ports: {class:
    instructions per cycle}; an operation (op_port) or memory access
    (mem_port) of a class issues in the first cycle from then on with a
    slot of its class left, older instructions first (None: unlimited).
    R: instructions in flight from dispatch until they and every older
    one have completed (in-order retirement: a reorder buffer or the
    physical registers behind it), None: unlimited. Returns [dispatch
    cycle]."""
    import heapq
    ready, held, out, used = {}, [], [], {}

    def slot(cls, t0):
        cap = ports.get(cls) if ports and cls else None
        if not cap:
            return t0
        c = math.floor(t0)
        while used.get((cls, c), 0) >= cap:
            c += 1
        used[(cls, c)] = used.get((cls, c), 0) + 1
        return max(t0, float(c))
    t, n = 0.0, 0
    rob, last = collections.deque(), 0.0
    for e in stream:
        srcs, msrcs, dsts, ld, sq = e[:5]
        while R and len(rob) >= R:
            while rob and rob[0] <= t:
                rob.popleft()
            if len(rob) >= R:
                t, n = max(t, rob[0]), 0
        op_port, mem_port = e[5:7] if len(e) > 5 else (None, None)
        late = e[7] if len(e) > 7 else None
        while True:
            while held and held[0] <= t:
                heapq.heappop(held)
            if n >= issue:
                t, n = math.floor(t) + 1.0, 0
                continue
            if sq and len(held) >= Q:
                t, n = max(t, held[0]), 0
                continue
            break
        n += 1
        go = max([t + 1.0] + [ready.get(r, 0.0) + (late.get(r, 0.0) if late else 0.0)
                              for r in srcs])
        hold = None
        if msrcs is not None:
            mem = max([t + 1.0] + [ready.get(r, 0.0) for r in msrcs])
            if srcs:    # an operation on a loaded operand waits for the data
                mem = slot(mem_port, mem)
                go = max(go, mem + ld)
            else:       # a load leaves the scheduler with its address
                hold = slot(mem_port, mem)
                go = hold + ld
        if hold is None:
            go = hold = slot(op_port, go)
        done = go
        for d, lat in dsts:
            ready[d] = go + lat
            done = max(done, go + lat)
        if sq and hold > t:
            heapq.heappush(held, hold)
        if R:
            last = max(last, done)
            rob.append(last)
        out.append(t)
    return out


def win_stream(L, iters, lat, ld_lat, kind='vec'):
    """probe.py's WIN_INT / WIN_VEC loop: a load, L dependent instructions,
    the store, the index's add and and, the counter and the fused branch."""
    v = 'v' if kind == 'vec' else ''
    for _ in range(iters):
        yield ([], ['i'], [('x', 0.0)], ld_lat, True, None, v + 'load')
        for _ in range(L):
            yield (['x'], None, [('x', lat)], 0.0, True, v + 'alu', None)
        yield (['x'], ['i'], [], 0.0, True, v + 'store', None)
        yield (['i'], None, [('i', 1.0)], 0.0, True, 'alu', None)
        yield (['i'], None, [('i', 1.0)], 0.0, True, 'alu', None)
        yield (['n'], None, [('n', 1.0)], 0.0, True, 'alu', None)
        yield (['n'], None, [], 0.0, True, 'alu', None)


def sim_win(L, lat, ld_lat, issue, Q, ports=None, kind='vec', R=None):
    """Simulated cycles per iteration of the window loop of chain L."""
    it = max(6, 2400 // (L + WIN_OVERHEAD))
    n = L + WIN_OVERHEAD
    d = sim_dispatch(win_stream(L, it, lat, ld_lat, kind), issue, Q, ports, R)
    h = it // 2
    return (d[(it - 1) * n] - d[h * n]) / (it - 1 - h)


SCHED_GRID = tuple(range(24, 321, 8))
RETIRE_GRID = (None,) + tuple(range(96, 449, 32))


def fit_sched(points, lat, ld_lat, issue, min_chain=32, ports=None, kind='vec', retire=True):
    """The scheduler size Q and in-order window R (None: unlimited) whose
    simulated window loops come closest to the probe's (sum of
    |log(simulated / measured)|) over the points [(L, cycles per
    iteration)] with L >= min_chain (without ports, shorter chains are
    bound by the ALU ports, not the window: win_vec_16 runs 22
    instructions in 5.2 cycles, the vector ALU's rate). Q on SCHED_GRID,
    R on RETIRE_GRID (ties: the smaller Q, no R; retire=False: no R).
    (None, None) without points."""
    pts = [(L, T) for L, T in points if L >= min_chain]
    if not pts:
        return None, None
    best = None
    for R in (RETIRE_GRID if retire else (None,)):
        for Q in SCHED_GRID:
            if R and Q >= R:
                break
            e = sum(abs(math.log(sim_win(L, lat, ld_lat, issue, Q, ports, kind, R) / T))
                    for L, T in pts)
            if best is None or e < best[0] - 1e-9:
                best = (e, Q, R)
    return best[1], best[2]


_DISP = re.compile(r'^(-?0x[0-9a-f]+|-?\d+)?\(')


def _df_insns(body, lat_alu, ld_lat, vec, tern_extra=0.0):
    """Per instruction of a compiled loop body: (srcs, addr, dsts, kind,
    mem_in, mem_out, lat, sched, op_port, mem_port, late), message-data
    operands as ('data', rank of the displacement among the body's loads
    / stores); late: {source register: cycles it is needed later than
    ready}, tern_extra for a vector vpternlog's sources other than its
    destination (probe.py dep_tern: 3 cycles through them, 2 through the
    destination, on this core)."""
    parsed = [(op,) + parse_insn(op, args) for op, args in body
              if not (op == 'jmp')]
    stack = re.compile(r'\(%r[sb]p\)')

    def disp(x):
        mm = _DISP.match(x)
        return int(mm[1], 0) if mm and mm[1] else 0
    lds = sorted({disp(mi) for _, _, _, _, _, mi, _ in parsed if mi and not stack.search(mi)})
    sts = sorted({disp(mo) for _, _, _, _, _, _, mo in parsed if mo and not stack.search(mo)})
    out = []
    for op, srcs, addr, dsts, kind, mi, mo in parsed:
        def key(x, ranks):
            if x is None:
                return None
            return ('stack', x) if stack.search(x) else ('data', ranks.index(disp(x)))
        isvec = any(r.startswith('z') for r in srcs + dsts)
        lat = 0.0 if kind in ('move', 'load') else (lat_alu if isvec and vec else 1.0)
        v = 'v' if isvec and vec else ''
        op_port = {'move': None, 'load': None, 'store': v + 'store'}.get(kind, v + 'alu')
        mem_port = (v + 'load') if mi else None
        late = {}
        if tern_extra and vec and isvec and op.startswith('vpternlog'):
            late = {r: tern_extra for r in srcs if r not in dsts}
        out.append((srcs, addr, dsts, kind, key(mi, lds), key(mo, sts), lat, kind != 'move',
                    op_port, mem_port, late))
    return out


def dataflow(core, p, form, isa, size, loops_dis, calls=16):
    """Core cycles per byte of the kernel's main loops (loops_dis: its
    kernel_loops(), with 'body'), simulated (sim_dispatch) call after call
    on the benchmark's hot buffer: per loop, its share of a call's
    dispatch span in the steady state ([cycles per byte] per loop). At
    1460 B: `calls` calls of all the loops, the last half measured (the
    source of a copy is never written: its loads wait for nothing; the
    destination's words wait for the store of the same word by the loop
    or call before). Longer buffers (one call per stretch, calls cannot
    overlap enough to matter): each loop on its own for 256 iterations,
    its steady rate times the iterations. None without the bodies."""
    kind = 'int' if isa == 'scalar' else 'vec'
    Q = core.sched.get(kind)
    if not Q or not loops_dis or any('body' not in d for d in loops_dis):
        return None
    u = unroll_bytes(p, isa)
    N = size // u
    if N < 1:
        return None
    vec = isa != 'scalar'
    lat = core.vec_lat if vec and core.vec_lat else 1.0
    ld = core.ld_lat or 4.0
    tx = (core.tern_lat - lat) if vec and core.tern_lat else 0.0
    bodies = [_df_insns(d['body'], lat, ld, vec, tx) for d in loops_dis]
    ports = core.sim_ports if core.df_ports else None
    R = core.retire.get(kind)
    src_loop = 0 if p.copy else None   # the loop whose loads read the source
    # a reloaded stack slot is ready st_fwd (st_fwd_vec for a vector
    # register) after its store's data; a message word ld_lat after (the
    # ld added at the load)
    fwd = {'store': core.st_fwd - ld, 'vstore': core.st_fwd_vec - ld}

    def stream(ncalls, iters, which):
        # every loop of every call starts its state from constants: its
        # registers carry nothing over from the loop before (names per loop
        # instance); the message words in memory do
        inst = 0
        for _ in range(ncalls):
            for li in which:
                inst += 1
                for e in stream_body(inst, li, iters):
                    yield e

    def stream_body(inst, li, iters):
        # loop li's iterations, its registers named by inst
        for j in range(iters):
            for srcs, addr, dsts, kd, mi, mo, lt, sq, opp, mp, late in bodies[li]:
                late = {(inst, r): x for r, x in late.items()}
                srcs = [(inst, r) for r in srcs]
                addr = [(inst, r) for r in addr]
                dsts = [(inst, r) for r in dsts]
                ms = None
                if mi:
                    ms = list(addr)
                    if mi[0] == 'stack':
                        ms.append((inst,) + mi)
                    elif li != src_loop:
                        ms.append((j, mi[1]))
                elif addr:
                    ms = list(addr)
                dd = [(r, lt) for r in dsts]
                if mo:
                    k = (inst,) + mo if mo[0] == 'stack' else (j, mo[1])
                    dd.append((k, fwd.get(opp, fwd['store']) if mo[0] == 'stack'
                               else 0.0))
                yield (srcs, ms, dd, ld if mi else 0.0, sq, opp, mp, late)

    path = whole_path(core, loops_dis, N)
    if path:
        # the whole call as compiled: set-up, loops, the masked pass and
        # the fold, registers named per call; a piece of code belongs to
        # the loop before it (the set-up to the first loop)
        segs, li = [], 0
        for kd, b in path:
            if kd == 'loop':
                segs.append((li, None))
                li += 1
            else:
                segs.append((max(li - 1, 0), _df_insns(b, lat, ld, vec, tx)))
        def pstream(ncalls):
            for c in range(ncalls):
                inst = ('call', c)
                li = 0
                for owner, code in segs:
                    if code is None:
                        for e in stream_body(inst, li, N):
                            yield e
                        li += 1
                        continue
                    for srcs, addr, dsts, kd, mi, mo, lt, sq, opp, mp, late in code:
                        late = {(inst, r): x for r, x in late.items()}
                        srcs = [(inst, r) for r in srcs]
                        addr = [(inst, r) for r in addr]
                        dd = [((inst, r), lt) for r in dsts]
                        ms = None
                        if mi or addr:
                            ms = list(addr)
                            if mi and mi[0] == 'stack':
                                ms.append((inst,) + mi)
                        if mo and mo[0] == 'stack':
                            dd.append(((inst,) + mo, fwd.get(opp, fwd['store'])))
                        yield (srcs, ms, dd, ld if mi else 0.0, sq, opp, mp, late)
        marks, owners, i = [], [], 0
        for _ in range(calls):
            li = 0
            for owner, code in segs:
                marks.append(i)
                owners.append(owner)
                if code is None:
                    i += N * len(bodies[li])
                    li += 1
                else:
                    i += len(code)
        marks.append(i)
        d = sim_dispatch(pstream(calls), core.sim_issue, Q, ports, R)
        d.append(d[-1])
        k, h = len(segs), calls // 2
        spans = [0.0] * len(bodies)
        for c in range(h, calls - 1):
            for s in range(k):
                spans[owners[c * k + s]] += d[marks[c * k + s + 1]] - d[marks[c * k + s]]
        return [s_ / (calls - 1 - h) / size for s_ in spans]
    if N <= 64:
        which = list(range(len(bodies)))
        marks, i = [], 0
        for _ in range(calls):
            for li in which:
                marks.append(i)
                i += N * len(bodies[li])
        marks.append(i)
        d = sim_dispatch(stream(calls, N, which), core.sim_issue, Q, ports, R)
        d.append(d[-1])
        k, h = len(which), calls // 2
        spans = [0.0] * k
        for c in range(h, calls - 1):
            for li in range(k):
                spans[li] += d[marks[c * k + li + 1]] - d[marks[c * k + li]]
        return [s / (calls - 1 - h) / size for s in spans]
    out = []
    for li in range(len(bodies)):
        it, per = 256, len(bodies[li])
        d = sim_dispatch(stream(1, it, [li]), core.sim_issue, Q, ports, R)
        out.append((d[(it - 1) * per] - d[(it // 2) * per]) / (it - 1 - it // 2) * N / size)
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

    def predict(self, p, form, isa, size, cache):
        """Equation (3)."""
        W = WIDTH[isa]
        ins, _ = self.instr(p, form, isa, size)
        mem = memory_term(self.m, p, form, isa, size, cache)
        a_c = self.m.cost('L1', W)[0]
        return clocks(self.cpi[isa], ins, mem, sa(p, form, isa, self.R[isa]), a_c)


def calibrate_cpi(machine, sim_ir, med, isa, size=1460):
    p = pipeline_of('syn.n1.s1.a10')
    k = (p.name, 'int', isa, size, 'hot', False)
    if k not in med or k not in sim_ir:
        return None
    ins = max(1e-9, sim_ir[k] - da(p, 'int', isa))
    return (med[k] - memory_term(machine, p, 'int', isa, size, 'hot')) / ins


def read_objdump(path):
    """objdump -d text: a file, or run on a static library / object."""
    if path.endswith(('.a', '.o')):
        import subprocess
        return subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], check=True,
                              capture_output=True, text=True).stdout
    with open(path) as fh:
        return fh.read()


def main(argv=None):
    ap = argparse.ArgumentParser(description='seed 003 model vs measurement')
    ap.add_argument('--memsig', required=True, help='memsig --json output')
    ap.add_argument('--bench', required=True, action='append',
                    help='bench_ilp JSON (timed); may be repeated')
    ap.add_argument('--sim', required=True, help='bench_ilp --cn_sim JSON (callgrind)')
    ap.add_argument('--probe', help='ilp/probe.py JSON: enables the overlap form')
    ap.add_argument('--objdump', action='append',
                    help='libcn_ilp_avx512.a (or its objdump -d text): R for AVX-512 from the '
                         'synthetic sweep\'s spills, and the compiled main loops (AVX-512: '
                         'counts and chains; scalar, libcn_ilp_scalar.a: chains, callgrind '
                         'counting the rest); may be repeated')
    ap.add_argument('--key', default='tsc_per_byte_med')
    ap.add_argument('--R', help='override R, e.g. scalar=12,avx512=28')
    ap.add_argument('--cold-probe', action='store_true',
                    help='flushed buffers at probe.py\'s flushed rate at the buffer\'s size '
                         '(cold_read/copy_S) instead of memsig\'s DRAM stream rate (64 MB) plus '
                         'one DRAM latency per stream; off by default: on the 2026-11-23 runs it '
                         'matched fewer rows (README.md)')
    ap.add_argument('--no-warm', action='store_true',
                    help='loops reading and writing at L2 at memsig\'s read and write rates '
                         'added, not probe.py\'s warm in-place / copy rate at the buffer\'s '
                         'size (warm_rmw_S, warm_copy_S; README.md)')
    ap.add_argument('--no-window', action='store_true',
                    help='leave out the out-of-order window term')
    ap.add_argument('--no-inflight', action='store_true',
                    help='leave out the flushed-source lines-in-flight term (probe cold_lat)')
    ap.add_argument('--no-dataflow', default='',
                    help='comma list of isas (scalar,avx512) whose chain and window terms stay '
                         'per loop in latency-1 instructions instead of dataflow()\'s simulation '
                         'of the compiled loops; "all" for both')
    ap.add_argument('--dataflow-only', action='store_true',
                    help='dataflow() replaces the window term too (by default the window '
                         'term stays beside it: README.md)')
    ap.add_argument('--retire', action='store_true',
                    help='dataflow()\'s core with an in-order window R beside the scheduler Q, '
                         'both fitted to the window loops (README.md)')
    ap.add_argument('--no-path', action='store_true',
                    help='dataflow() runs the main loops alone, with the remainder added '
                         'outside, not the kernel\'s whole path (objdump_paths(); README.md)')
    ap.add_argument('--no-call', action='store_true',
                    help='the AVX-512 issue term counts the compiled main loops\' instructions '
                         'only, not the rest of the call (walk_call(): set-up, remainder, byte '
                         'tail, fold; README.md)')
    ap.add_argument('--later-passes', choices=('rmw', 'all', 'none'), default=LATER_PASSES,
                    help='a flushed sequential call\'s later in-place passes (probe.py '
                         'cold_pass*_S, where the probe has them): charge those that store '
                         '(rmw), load-only ones too (all), or none (README.md)')
    ap.add_argument('--explain', metavar='REGEX',
                    help='for each row whose "pipeline form isa size cache" matches REGEX, '
                         'print every loop\'s terms (TSC ticks per byte; the largest is the '
                         'loop\'s) and what the call adds outside its loops')
    ap.add_argument('--no-loop-overlap', action='store_true',
                    help='a sequential call\'s first loop alone, even where it fits in the '
                         'window and its memory stream could run under the later loops')
    ap.add_argument('--no-loops', action='store_true',
                    help='AVX-512 counts and chains from the spec, not from --objdump\'s '
                         'compiled main loops')
    a = ap.parse_args(argv)
    with open(a.memsig) as fh:
        m = Machine(json.load(fh))
    med = {}
    for path in a.bench:
        med.update(load_bench(path, a.key))
    sim_ir = load_bench(a.sim, 'instructions_per_byte')
    sim_dr = load_bench(a.sim, 'sim_dr_per_byte')
    sim_dw = load_bench(a.sim, 'sim_dw_per_byte')
    core = None
    if a.probe:
        with open(a.probe) as fh:
            pr = json.load(fh)
        core = Core(pr)
        if a.no_window:
            core.win = {}
        if a.cold_probe:
            m.set_cold(pr)
        if not a.no_warm:
            m.set_warm(pr)
        if a.no_inflight:
            core.cold_lat = {}
        for isa in (('scalar', 'avx512') if a.no_dataflow == 'all' else
                    [x for x in a.no_dataflow.split(',') if x]):
            core.use_dataflow[isa] = False
        if a.dataflow_only:
            core.df_keep_window = False
        if a.no_path:
            core.df_path = False
        if a.no_call:
            core.call_code = False
        if a.no_loop_overlap:
            core.loop_overlap = False
        if a.later_passes == 'none':
            core.cold_pass = {}
        else:
            core.later_passes = a.later_passes
        if a.retire:
            core.df_retire = True
            core.fit_dataflow()
    # the AVX-512 kernels' compiled main loops (valgrind cannot count them)
    loops_by_sym, paths_by_sym, fns_by_sym = {}, {}, {}
    if a.objdump and core and not a.no_loops:
        for x in a.objdump:
            text = read_objdump(x)
            loops_by_sym.update(objdump_loops(text))
            paths_by_sym.update(objdump_paths(text))
            fns_by_sym.update(objdump_bodies(text))

    def dis_of(p, form, isa):
        if not loops_by_sym:
            return None
        ls = kernel_loops(loops_by_sym, p, form, isa, core.ld_lat or 4.0, core.st_fwd,
                          core.st_fwd_vec, paths_by_sym, fns_by_sym)
        if ls and isa == 'scalar':
            # callgrind counts the scalar kernels (tails included): only the
            # compiled recurrence (and body, for dataflow()) from the
            # disassembly
            ls = [dict(chain=x['chain'], moves=x['moves'], body=x['body'],
                       mem_ops=x['loads'] + x['stores']) for x in ls]
        return ls

    R, cpi = {}, {}
    print('Architecture parameters (TSC ticks; W = register bytes)')
    for isa in ('scalar', 'avx512'):
        W = WIDTH[isa]
        R[isa], rows, note = probe_R(sim_dr, isa)
        if not rows and isa == 'avx512' and a.objdump:
            r, orows = probe_R_objdump('\n'.join(read_objdump(x) for x in a.objdump))
            rows = []
            if r is not None:
                R[isa], note = r, ('from the sweep\'s disassembly: first spilling S = n*s '
                                   '(stack refs in the int loop): ' + '  '.join(
                                       'S%d(n%d s%d):%d' % x for x in orows if x[3])[:200])
            else:
                note = 'no int loop of the sweep spills: R >= %d' % max(x[0] for x in orows)
                R[isa] = max(x[0] for x in orows)
        cpi[isa] = calibrate_cpi(m, sim_ir, med, isa) or 0.25
        print('  %-6s W=%2d A_C=%.3f/%.3f (L1 r/w)  A_L2=%.3f/%.3f  A_L3=%.3f/%.3f  '
              'A_M=%.3f/%.3f  CPI=%.3f  R=%d' % (
                  isa, W, *m.cost('L1', W), *m.cost('L2', W), *m.cost('L3', W),
                  *m.cost('DRAM', W), cpi[isa], R[isa]))
        if rows:
            print('         probe (s: data reads per block, knee at >= %.1f): %s' % (
                KNEE_READS, '  '.join('%d:%.2f' % r for r in rows)))
        if note:
            print('         R: %s' % note)
    print('  DRAM latency (page order) %.0f ticks' % m.dram_lat)
    if core:
        print('  core (ilp/probe.py, per core cycle): %.3f cycles per TSC tick; issue %.1f, '
              'ALU %.1f, loads %.1f, stores %.1f%s; store->load %.1f cycles' % (
                  core.cyc_per_tick, core.issue, core.alu, core.load, core.store,
                  '; vector ALU %.1f, loads %.1f, stores %.1f' % (core.vec, core.vload, core.vstore)
                  if core.vec else '', core.st_fwd) +
              ' (vector register %.1f)' % core.st_fwd_vec +
              ('; 64-bit loads and stores together %.1f' % core.memops if core.memops else ''))
        print('  dataflow: issue %d, scheduler %s%s (fitted to the window loops), ports %s' % (
            core.sim_issue, core.sched, ', in-order window %s' % core.retire
            if core.df_retire else '', core.sim_ports))
        print('  latency: load %.1f, vector ALU %s cycles (dep_vec)%s%s' % (
            core.ld_lat or 0, '%.1f' % core.vec_lat if core.vec_lat else '-',
            ', vpternlog through a source %.1f (dep_tern)' % core.tern_lat if core.tern_lat else '',
            ''.join(
                '; flushed %d-B line %.0f (in order %.0f)' % (
                    z, core.cold_lat[z], core.cold_seqlat.get(z, float('nan')))
                for z in sorted(core.cold_lat))))
    if core and core.cold_pass:
        print('  later passes over a flushed buffer (probe.py cold_pass*_S, ticks a line beyond '
              'warm_pass_S; %s charged): %s' % (
                  'none' if a.later_passes == 'none' else 'stores' if a.later_passes == 'rmw'
                  else 'all', '  '.join(
                      '%s %d: 2nd %+.1f 3rd %+.1f load-only %+.1f after copy %+.1f %+.1f' % (
                          isa, z, e['2'] - e['warm'], e['3'] - e['warm'], e['r'] - e['warm'],
                          e['c2'] - e['warm'], e['c3'] - e['warm'])
                      for (isa, z), e in sorted(core.cold_pass.items()))))
    if a.R:
        for kv in a.R.split(','):
            k, v = kv.split('=')
            R[k] = int(v)
    if core:
        for isa in ('scalar', 'avx512'):
            e = calibrate_efficiency(core, m, med, (sim_ir, sim_dr, sim_dw), isa, R[isa],
                                     dis=dis_of)
            if e:
                core.eff[isa] = e
            print('  %-6s throughput terms x %.2f (%s int hot: measured over its peak-rate '
                  'bound%s)' % (isa, core.eff[isa], CALIB_ROW, '' if e else '; not measured'))
    model = Model(m, sim_ir, R, cpi)

    print('\nPredicted vs measured TSC/B (%s)' % a.key)
    print('model: equation (3), the paper\'s (compute + memory + spills, added).')
    print('overlap: the same terms per loop combined by max() (out-of-order core), loops of a')
    print('sequential composition added; bound = the term that dominates (summed over loops).')
    print('%-34s %-5s %-6s %6s %-5s %8s %8s %7s %8s %7s %-8s %5s' % (
        'pipeline', 'form', 'isa', 'size', 'cache', 'measured', 'model', 'err%',
        'overlap', 'err%', 'bound', 'L'))
    errs, errs_ov, bounds = [], [], {}
    for k in sorted(med, key=lambda k: (k[0], k[2], k[3], ['hot', 'l2', 'l3', 'cold'].index(k[4]),
                                        ['seq', 'int', 'intpf'].index(k[1]))):
        pipe, form, isa, size, cache, conf = k
        if conf or form == 'intpf' or isa not in R or (pipe.startswith('syn.n') and cache != 'hot'):
            continue
        p = pipeline_of(pipe)
        if getattr(p, 'cipher', None):
            continue  # keystream cost not modelled
        pred = model.predict(p, form, isa, size, cache)
        ins, simulated = model.instr(p, form, isa, size)
        L = (ins - compute_instr(p, isa) * 1) * 64 if simulated else float('nan')
        err = 100.0 * (pred - med[k]) / med[k]
        errs.append((k, err))
        pov, dom, eov = float('nan'), '-', float('nan')
        if core:
            sk = (pipe, form, isa, 1460, 'hot', False)
            sim = (sim_ir[sk], sim_dr[sk], sim_dw[sk]) if sk in sim_ir and sk in sim_dw else None
            xl = None
            if a.explain and re.search(a.explain, '%s %s %s %d %s' % (pipe, form, isa, size,
                                                                     cache)):
                xl = []
            pov, dom, _ = predict_overlap(core, m, p, form, isa, size, cache, R[isa], sim,
                                          dis=dis_of(p, form, isa), explain=xl)
            eov = 100.0 * (pov - med[k]) / med[k]
            errs_ov.append((k, eov))
            bounds[dom] = bounds.get(dom, 0) + 1
        print('%-34s %-5s %-6s %6d %-5s %8.3f %8.3f %+7.1f %8.3f %+7.1f %-8s %5.1f' % (
            pipe, form, isa, size, cache, med[k], pred, err, pov, eov, dom, L))
        for x in xl or []:
            if x[0] == 'overlap':
                print('    loops together, the first under the later ones '
                      '(first_loop_overlap): %.4f' % x[1])
            elif x[0] == 'call':
                print('    outside the loops: %s' % '  '.join(
                    '%s %.4f' % kv for kv in x[1].items()))
            else:
                print('    loop %-22s %s -> %-5s %s' % (x[0], x[1], x[2] or '-', '  '.join(
                    '%s%s %.4f' % ('*' if v == max(x[3].values()) else '', kk, v)
                    for kk, v in sorted(x[3].items()))))
    if errs:
        within = sum(1 for _, e in errs if abs(e) <= 20)
        print('\nmodel (paper, eq. 3): %d of %d within 20%%' % (within, len(errs)))
        if errs_ov:
            wov = sum(1 for _, e in errs_ov if abs(e) <= 20)
            print('overlap (eq. 3 terms, max per loop): %d of %d within 20%%' % (wov, len(errs_ov)))
            for sub, pred_ in (('real loops', lambda k: not k[0].startswith(('syn', 'copy+syn'))),
                               ('synthetic twins', lambda k: 'o110' in k[0]),
                               ('state sweep', lambda k: k[0].startswith('syn.n') and 'o110' not in k[0])):
                es = [e for kk, e in errs_ov if pred_(kk)]
                ep = [e for kk, e in errs if pred_(kk)]
                if es:
                    print('  %-16s overlap %d of %d, paper %d of %d within 20%%' % (
                        sub, sum(1 for e in es if abs(e) <= 20), len(es),
                        sum(1 for e in ep if abs(e) <= 20), len(ep)))
            print('  bound: %s' % ', '.join('%s %d' % kv for kv in sorted(bounds.items())))
        else:
            print('overlap: not run (no --probe)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
