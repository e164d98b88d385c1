# SPDX-License-Identifier: BSD-2-Clause
"""The core's rates, latencies and out-of-order window, measured by
ilp/probe.py (its JSON): what the overlap form and the dataflow core run
at. Everything is per core cycle; cyc_per_tick converts to TSC ticks.
"""

import math
import re

from .dfcore import WIN_OVERHEAD
from .fit import fit_sched
from .kernels import WIDTH


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
        # the development machine against 0.5 for a 64-bit word, which the
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
        # L + WIN_OVERHEAD its instructions. W grows with P on the
        # development machine (~80 at P = 20 to ~600 at P = 516, scalar), so W is
        # kept per P and interpolated (window()).
        self.ld_lat = c / probe['ld_lat'] if probe.get('ld_lat') else None
        # the vector ALU's latency in core cycles (probe.py dep_vec: a chain
        # of dependent vpxorq): 2 on the development machine. dataflow()
        # runs the compiled loops at it; the spec's chains and paths
        # (--no-loops, and the window term's P) stay in instructions of
        # latency 1, as functions.py writes them (README.md)
        self.vec_lat = c / probe['dep_vec'] if probe.get('dep_vec') else None
        # vpternlog through a source other than its destination (probe.py
        # dep_tern): 3 cycles on the development machine where through the
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
        self.use_dataflow = {'avx512': True, 'avx2': True, 'scalar': True}
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


# which later passes later_pass_extra() charges: in-place passes that
# store ('rmw'), or load-only ones too ('all')
LATER_PASSES = 'rmw'
