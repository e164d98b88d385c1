# SPDX-License-Identifier: BSD-2-Clause
"""The paper's performance model (Ahlgren, Bjorkman, Gunningberg, "The
Applicability of Integrated Layer Processing", Section VI, equations
(1)-(3)), fed with
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
 - time is TSC ticks (the invariant time-stamp counter), not core cycles: CPI is TSC
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

import re

from .kernels import STATE_LEVEL, WIDTH, hot_level


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
