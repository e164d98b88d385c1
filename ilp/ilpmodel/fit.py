# SPDX-License-Identifier: BSD-2-Clause
"""What the model fits to measurements, each on rows it does not predict:
R, the registers for state (the synthetic sweep's spill knee, callgrind
data reads per block); CPI (eq. (3)) and the throughput efficiency (the
overlap form), each on one synthetic loop; the dataflow core's scheduler
size (probe.py's window loops).
"""

import math

from .dfcore import sim_win
from .equations import da, memory_term
from .kernels import WIDTH, pipeline_of
from .overlap import predict_overlap


CALIB_ROW = 'syn.n1.s8.a10'


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
    carried another task's time: avx512 int 0.064 against seq
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


def calibrate_cpi(machine, sim_ir, med, isa, size=1460):
    p = pipeline_of('syn.n1.s1.a10')
    k = (p.name, 'int', isa, size, 'hot', False)
    if k not in med or k not in sim_ir:
        return None
    ins = max(1e-9, sim_ir[k] - da(p, 'int', isa))
    return (med[k] - memory_term(machine, p, 'int', isa, size, 'hot')) / ins
