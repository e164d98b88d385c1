#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the ILP model's equations and overlap form, and its
output on the stored input set (run by `meson test ilpgen`)."""

import math
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ilpmodel as model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class TestModel(unittest.TestCase):
    def test_state_accesses(self):
        # equation (1): 2/b * (S - R) beyond R, else 0
        self.assertEqual(model.sa_ilp([4, 4, 4], 8, 16), 0)
        self.assertAlmostEqual(model.sa_ilp([8, 8, 8], 8, 16), 2 / 8 * 8)
        # equation (2): per function
        self.assertEqual(model.sa_seq([8, 8, 8], [8, 8, 8], 16), 0)
        self.assertAlmostEqual(model.sa_seq([20, 1], [8, 8], 16), 2 / 8 * 4)

    def test_probe_R_knee(self):
        # data reads per byte, W = 8: ~1 per block until s = 10, ~2 from 11
        sim = {}
        for s, reads in [(1, 1.06), (2, 1.2), (8, 1.22), (9, 1.2), (10, 1.23),
                         (11, 2.1), (12, 2.2)]:
            sim[('syn.n1.s%d.a10' % s, 'int', 'scalar', 1460, 'hot', False)] = reads / 8
        R, rows, note = model.probe_R(sim, 'scalar')
        self.assertEqual((R, note), (10, ''))
        self.assertEqual(len(rows), 7)
        # an inflated first point is not the knee
        sim[('syn.n1.s1.a10', 'int', 'scalar', 1460, 'hot', False)] = 2.0 / 8
        R, _, note = model.probe_R(sim, 'scalar')
        self.assertEqual(R, 10)
        self.assertIn('outliers below the knee at s=1', note)
        sim[('syn.n1.s1.a10', 'int', 'scalar', 1460, 'hot', False)] = 1.06 / 8
        # a gap below the knee is reported, not hidden
        del sim[('syn.n1.s10.a10', 'int', 'scalar', 1460, 'hot', False)]
        R, _, note = model.probe_R(sim, 'scalar')
        self.assertEqual(R, 9)
        self.assertIn('9 <= R <= 10', note)

    def test_data_accesses(self):
        # copy,f,g,csum with W = 8: seq reads 4x, writes 3x; int reads 1, writes 1
        fns = [('copy', True), ('f', True), ('g', True), ('csum', False)]
        self.assertAlmostEqual(model.da_seq(fns, 8), 7 / 8)
        self.assertAlmostEqual(model.da_ilp(fns, 8), 2 / 8)
        # in place, checksum only: one read per word
        self.assertAlmostEqual(model.da_ilp([('csum', False)], 8), 1 / 8)


def _machine(bw_read=64.0, bw_write=32.0, dram_read=8.0, dram_write=8.0):
    """A memsig result with round numbers: bytes per TSC tick per level."""
    rows = []
    for size, r, w in ((16 << 10, bw_read, bw_write), (256 << 10, bw_read, bw_write),
                       (4 << 20, bw_read, bw_write), (64 << 20, dram_read, dram_write)):
        rows += [dict(bytes=size, op='read', bytes_per_tsc=r),
                 dict(bytes=size, op='write', bytes_per_tsc=w)]
    lv = {k: dict(tsc=t, by_order=dict(page=dict(tsc=t)))
          for k, t in (('L2', 10.0), ('LLC', 20.0), ('DRAM', 200.0))}
    return model.Machine(dict(bandwidth=rows, levels=lv))


# A core with round numbers (per TSC tick; 2 core cycles per tick): issue 8,
# ALU 4, loads 2 and stores 1 per cycle, vector ALU 4, vector loads 2,
# vector stores 1, store->load round trip 3 cycles.
PROBE = dict(dep_add=2.0, mix_issue=16.0, int_add=8.0, int_load=4.0, int_store=2.0,
             st_fwd=2.0 / 3.0, vec_add=8.0, vec_load=4.0, vec_store=2.0, avx512=1)


class _F:
    """A function spec for the model only: ops/chain per form."""

    def __init__(self, name, ops, chain=0, state=0, writes=True):
        self.name, self.state, self.consts, self.writes = name, state, 0, writes
        self.block = 8
        self.cipher = None
        self.forms = {isa: dict(ops=ops, chain=chain) for isa in ('scalar', 'avx2', 'avx512')}


class _P:
    """A pipeline for the model only."""

    def __init__(self, fns, copy=False):
        self.fns, self.copy, self.synthetic = fns, copy, False
        self.all_fns = fns
        self.name = '+'.join(f.name for f in fns)

    def block(self):
        return 8

    def writes(self):
        return self.copy or any(f.writes for f in self.fns)


class TestOverlapModel(unittest.TestCase):
    """The overlap form on constructed machines and functions, answers
    worked out by hand."""

    def setUp(self):
        self.core = model.Core(PROBE)
        self.m = _machine()

    def test_core_rates(self):
        c = self.core
        self.assertEqual(c.cyc_per_tick, 2.0)
        self.assertEqual((c.issue, c.alu, c.load, c.store), (8.0, 4.0, 2.0, 1.0))
        self.assertAlmostEqual(c.st_fwd, 3.0)
        self.assertEqual(c.ports('scalar'), (4.0, 2.0, 1.0))
        self.assertEqual(c.ports('avx512'), (4.0, 2.0, 1.0))
        self.assertEqual(c.eff, {'scalar': 1.0, 'avx2': 1.0, 'avx512': 1.0})

    def test_loop_terms_compute_bound(self):
        # scalar, 8-byte words, 64-byte iterations; one function with 20 ops
        # per word, hot in L1: ALU (20 + 3/8) / 8 per byte / 4 ALUs
        f = _F('f', ops=20)
        t = model.loop_terms(self.core, self.m, [f], 'scalar', 64, 11, 'L1', 'L1')
        self.assertAlmostEqual(t['compute'], (20 / 8 + 3 / 64) / 4)
        self.assertAlmostEqual(t['issue'], (20 / 8 + 3 / 64 + 1 / 8 + 1 / 8) / 8)
        self.assertAlmostEqual(t['load'], 1 / 8 / 2)
        self.assertAlmostEqual(t['store'], 1 / 8 / 1)
        self.assertEqual(t['chain'], 0)
        # memory: a 64 B/tick read and a 32 B/tick write, 2 cycles per tick
        self.assertAlmostEqual(t['mem-L1'], (1 / 64 + 1 / 32) * 2)
        # nor the load and store ports (1 load, 1 store per 8 bytes: 2 and 1 per cycle)
        self.assertAlmostEqual(t['load'], 1 / 8 / 2)
        self.assertAlmostEqual(t['store'], 1 / 8 / 1)
        self.assertEqual(max(t, key=t.get), 'compute')

    def test_loop_terms_memops(self):
        # a scalar loop of 20 read-modify-writes of stack slots (callgrind
        # counts them as writes only) and the message load: 21 loads and
        # 20 stores per 8-byte iteration through memory pipes that run 3
        # (mem_mix / dep_add) accesses a cycle, loads and stores together
        f = _F('f', ops=2, state=20)
        body = [('mov', '-0x8(%r14,%rdx,1),%rax')] + \
            [('add', '%%rax,%s(%%rsp)' % hex(8 * k)) for k in range(20)] + \
            [('add', '$0x8,%rdx'), ('cmp', '%rdx,%rsi'), ('jae', '0 <f>')]
        st = model.loop_stats(body)
        self.assertEqual((st['loads'], st['stores']), (21, 20))
        dis = dict(chain=st['chain'], moves=0, body=body, mem_ops=41)
        core = model.Core(dict(PROBE, mem_mix=6.0))
        t = model.loop_terms(core, self.m, [f], 'scalar', 8, 11, 'L1', 'L1', dis=dis)
        self.assertAlmostEqual(t['memops'], 41 / 8 / 3)
        # the spec's counts when they are more (no compiled loop: none)
        self.assertAlmostEqual(model.loop_terms(core, self.m, [f], 'scalar', 8, 11, 'L1', 'L1',
                                                dis=dict(dis, mem_ops=1))['memops'],
                               (t['load'] * core.load + t['store'] * core.store) / 3)
        self.assertEqual(model.loop_terms(core, self.m, [f], 'scalar', 8, 11, 'L1', 'L1')
                         ['memops'], 0.0)
        # without the probe, or for a vector loop, no term
        self.assertEqual(model.loop_terms(self.core, self.m, [f], 'scalar', 8, 11, 'L1', 'L1',
                                          dis=dis)['memops'], 0.0)
        self.assertEqual(model.loop_terms(core, self.m, [f], 'avx512', 64, 11, 'L1', 'L1',
                                          dis=dis)['memops'], 0.0)

    def test_loop_terms_chain_and_spill(self):
        # a 6-cycle recurrence per 8-byte word: 0.75 cycles per byte
        f = _F('f', ops=2, chain=6, state=4)
        t = model.loop_terms(self.core, self.m, [f], 'scalar', 64, 11, 'L1', None)
        self.assertAlmostEqual(t['chain'], 6 / 8)
        self.assertEqual(max(t, key=t.get), 'chain')
        self.assertAlmostEqual(t['store'], 0.0)  # no output, no spill
        # R = 1: 3 words spill (eq. 1): a load and a store each per word,
        # and the recurrence goes through memory once (3 more cycles)
        t = model.loop_terms(self.core, self.m, [f], 'scalar', 64, 1, 'L1', None)
        self.assertAlmostEqual(t['load'], (1 + 3) / 8 / 2)
        self.assertAlmostEqual(t['store'], 3 / 8 / 1)
        self.assertAlmostEqual(t['chain'], (6 + 3) / 8)

    def test_integrated_is_max_sequential_is_sum(self):
        # two compute-bound functions: the integrated loop overlaps them
        # (one max over the summed work), the sequential runs two loops
        f, g = _F('f', ops=12), _F('g', ops=12)
        p = _P([f, g])
        seq, dom_s, terms_s = model.predict_overlap(self.core, self.m, p, 'seq', 'scalar',
                                                     65536, 'hot', 11)
        integ, dom_i, _ = model.predict_overlap(self.core, self.m, p, 'int', 'scalar',
                                                65536, 'hot', 11)
        one = (12 / 8 + 3 / 64) / 4                     # cycles/B of one loop
        both = (24 / 8 + 3 / 64) / 4                    # the integrated loop
        self.assertEqual((dom_s, dom_i), ('compute', 'compute'))
        self.assertAlmostEqual(seq, 2 * one / 2.0)      # TSC ticks: / 2 cycles per tick
        self.assertAlmostEqual(integ, both / 2.0)
        self.assertAlmostEqual(terms_s['compute'], seq)
        # a chain-bound function and a compute-bound one: the integrated
        # loop takes the larger, the sequential pays both
        h = _F('h', ops=1, chain=16)
        p = _P([f, h])
        seq, _, terms = model.predict_overlap(self.core, self.m, p, 'seq', 'scalar',
                                              65536, 'hot', 11)
        integ, dom, _ = model.predict_overlap(self.core, self.m, p, 'int', 'scalar',
                                              65536, 'hot', 11)
        self.assertEqual(dom, 'chain')
        self.assertAlmostEqual(integ, 16 / 8 / 2.0)
        self.assertAlmostEqual(seq, (one + 16 / 8) / 2.0)
        self.assertEqual(sorted(terms), ['chain', 'compute'])

    def test_memory_bound_and_first_miss(self):
        # a flushed 64 KB buffer read at 8 B/tick: memory dominates; the
        # first miss adds one DRAM latency (200 ticks) per stream
        f = _F('f', ops=1, writes=False)
        p = _P([f])
        t, dom, _ = model.predict_overlap(self.core, self.m, p, 'int', 'scalar', 65536, 'cold', 11)
        self.assertEqual(dom, 'mem')
        self.assertAlmostEqual(t, 1 / 8 + 200 / 65536)
        t2, _, _ = model.predict_overlap(self.core, self.m, p, 'int', 'scalar', 65536, 'cold', 11,
                                         cold_latency=False)
        self.assertAlmostEqual(t - t2, 200 / 65536)

    def test_efficiency_scales_throughput_only(self):
        f = _F('f', ops=20, chain=1)
        self.core.eff['scalar'] = 2.0
        t = model.loop_terms(self.core, self.m, [f], 'scalar', 64, 11, 'L1', 'L1')
        self.assertAlmostEqual(t['compute'], 2 * (20 / 8 + 3 / 64) / 4)
        self.assertAlmostEqual(t['chain'], 1 / 8)
        self.assertAlmostEqual(t['mem-L1'], (1 / 64 + 1 / 32) * 2)

    def test_calibrate_efficiency(self):
        # the calibration row measured at 1.5x its peak-rate bound -> 1.5
        p = model.pipeline_of(model.CALIB_ROW)
        t, _, terms = model.predict_overlap(self.core, self.m, p, 'int', 'scalar', 1460, 'hot',
                                            11, cold_latency=False)
        bound = max(v for k, v in terms.items() if k in ('issue', 'compute', 'load', 'store'))
        k = (p.name, 'int', 'scalar', 1460, 'hot', False)
        e = model.calibrate_efficiency(self.core, self.m, {k: 1.5 * bound}, ({}, {}, {}),
                                       'scalar', 11)
        self.assertAlmostEqual(e, 1.5)
        self.assertIsNone(model.calibrate_efficiency(self.core, self.m, {}, ({}, {}, {}),
                                                     'scalar', 11))

    def test_flushed_stream_rates(self):
        # probe.py's flushed rates replace memsig's DRAM stream at their size
        # (and the first miss, which they include); other sizes keep it
        self.m.set_cold({'cold_read_65536': 4.0, 'cold_copy_65536': 2.0, 'other': 1.0})
        self.assertEqual(self.m.cold, {65536: (4.0, 2.0)})
        self.assertAlmostEqual(self.m.stream('DRAM', 'DRAM', 8, 65536), 1 / 2.0)
        self.assertAlmostEqual(self.m.stream('DRAM', None, 8, 65536), 1 / 4.0)
        self.assertAlmostEqual(self.m.stream('DRAM', 'L1', 8, 65536), 1 / 4.0 + 1 / 32)
        self.assertAlmostEqual(self.m.stream('DRAM', 'DRAM', 8, 1460), 1 / 8 + 1 / 8)
        self.assertAlmostEqual(self.m.stream('L1', 'L1', 8, 65536), 1 / 64 + 1 / 32)
        f = _F('f', ops=1, writes=False)
        t, dom, _ = model.predict_overlap(self.core, self.m, _P([f]), 'int', 'scalar', 65536,
                                          'cold', 11)
        self.assertEqual(dom, 'mem')
        self.assertAlmostEqual(t, 1 / 4.0)
        self.assertEqual(self.m.first_miss('cold', 1, 65536), 0.0)
        self.assertAlmostEqual(self.m.first_miss('cold', 1, 1460), 200 / 1460)
        self.assertAlmostEqual(self.m.first_miss('l2', 1, 65536), 10 / 65536)

    def test_later_pass_extra(self):
        # probe.py's cold_pass*_S: a flushed sequential call's later passes
        # that store cost the probe's figure per 64-byte line beyond its
        # warm_pass_S (clipped at 0); load-only later passes only with
        # 'all'; after a copy the cpass figures; no keys, no term
        keys = dict(cold_pass2_1460=5.0, cold_pass3_1460=9.0, cold_passr_1460=3.0,
                    cold_cpass2_1460=6.0, cold_cpass3_1460=8.0, warm_pass_1460=1.0,
                    cold_pass2_65536=0.5, cold_pass3_65536=0.5, cold_passr_65536=0.5,
                    cold_cpass2_65536=0.5, cold_cpass3_65536=0.5, warm_pass_65536=1.0,
                    scalar_cold_pass2_1460=12.0, scalar_cold_pass3_1460=9.0,
                    scalar_cold_passr_1460=10.0, scalar_cold_cpass2_1460=11.0,
                    scalar_cold_cpass3_1460=7.0, scalar_warm_pass_1460=8.0)
        core = model.Core(dict(PROBE, **keys))
        self.assertEqual(core.cold_pass[('avx512', 1460)],
                         {'2': 5.0, '3': 9.0, 'r': 3.0, 'c2': 6.0, 'c3': 8.0, 'warm': 1.0})
        self.assertNotIn(('scalar', 65536), core.cold_pass)
        a, b, c = _F('a', 1), _F('b', 1), _F('c', 1, writes=False)
        p = _P([a, b, c])
        ex = model.later_pass_extra
        # passes: a (first), b (second, stores: 5 - 1), c (load-only)
        self.assertAlmostEqual(ex(core, p, 'seq', 'avx512', 1460, 'cold'), 4.0 / 64)
        self.assertAlmostEqual(ex(core, p, 'seq', 'avx512', 1460, 'cold', 'all'),
                               (4.0 + 2.0) / 64)
        # with copy: copy (first), a (6 - 1), b (8 - 1), c not charged
        self.assertAlmostEqual(ex(core, _P([a, b, c], copy=True), 'seq', 'avx512', 1460,
                                  'cold'), (5.0 + 7.0) / 64)
        # the third store pass and on: cold_pass3 (a, b, b, b: 4 + 8 + 8)
        self.assertAlmostEqual(ex(core, _P([a, b, b, b]), 'seq', 'avx512', 1460, 'cold'),
                               20.0 / 64)
        self.assertAlmostEqual(ex(core, p, 'seq', 'scalar', 1460, 'cold'), 4.0 / 64)
        self.assertEqual(ex(core, p, 'seq', 'avx512', 65536, 'cold'), 0.0)   # clipped
        self.assertEqual(ex(core, p, 'int', 'avx512', 1460, 'cold'), 0.0)
        self.assertEqual(ex(core, p, 'seq', 'avx512', 1460, 'l3'), 0.0)
        self.assertEqual(ex(self.core, p, 'seq', 'avx512', 1460, 'cold'), 0.0)  # no keys
        # predict_overlap adds it to a cold seq call, nothing else changes
        t0 = model.predict_overlap(self.core, self.m, p, 'seq', 'avx512', 1460, 'cold', 11)
        t1 = model.predict_overlap(core, self.m, p, 'seq', 'avx512', 1460, 'cold', 11)
        self.assertAlmostEqual(t1[0] - t0[0], 4.0 / 64)
        self.assertAlmostEqual(t1[2]['later'], 4.0 / 64)
        self.assertEqual(model.predict_overlap(core, self.m, p, 'int', 'avx512', 1460, 'cold',
                                               11)[0],
                         model.predict_overlap(self.core, self.m, p, 'int', 'avx512', 1460,
                                               'cold', 11)[0])

    def test_explain_lists_each_loop_and_the_call(self):
        # --explain: one entry per loop (functions, read level, write level,
        # terms in ticks per byte) and then the call's own additions; the
        # prediction is the sum of each loop's largest term and those
        f, g = _F('f', ops=12), _F('g', ops=1, chain=16, writes=False)
        p = _P([f, g])
        xl = []
        t, dom, _ = model.predict_overlap(self.core, self.m, p, 'seq', 'scalar', 1460, 'cold',
                                          11, explain=xl)
        self.assertEqual([x[0] for x in xl], ['f', 'g', 'call'])
        self.assertEqual(xl[0][1:3], ('DRAM', 'L1'))
        self.assertEqual(xl[1][1:3], ('L1', None))
        self.assertEqual(xl[1][3]['chain'], max(xl[1][3].values()))
        self.assertGreater(xl[2][1]['first_miss'], 0.0)
        self.assertAlmostEqual(t, sum(max(x[3].values()) for x in xl[:2]) +
                               sum(xl[2][1].values()))
        # without the list nothing changes
        self.assertEqual(model.predict_overlap(self.core, self.m, p, 'seq', 'scalar', 1460,
                                               'cold', 11)[0], t)

    def test_first_loop_overlap(self):
        # a seq call's first loop that fits in the window: its memory term
        # runs under the later loops' work, max(m1, o1 + A); a first loop
        # too long for the window, the integrated form, one loop: None
        core = model.Core(PROBE)
        core.win = {'vec': [(20.0, 300.0)], 'int': [(20.0, 100.0)]}
        self.assertEqual(core.issue, 8.0)
        t1 = {'issue': 0.2, 'compute': 0.1, 'mem-L2/L1': 0.5}
        lo = model.first_loop_overlap
        # 0.2 x 8 x 100 B = 160 instructions <= 300: A = 0.3, m1 wins
        self.assertEqual(lo(core, [t1, {'issue': 0.3}], 'seq', 'avx512', 100),
                         (0.5, {'mem': 0.5}))
        # A = 0.4: the work wins, each loop's largest term added
        total, terms = lo(core, [t1, {'issue': 0.4, 'mem-L1': 0.1}], 'seq', 'avx512', 100)
        self.assertAlmostEqual(total, 0.6)
        self.assertEqual(set(terms), {'issue'})
        # the first loop's stores outside L1 (keep) stay added
        total, terms = lo(core, [t1, {'issue': 0.4}], 'seq', 'avx512', 100, keep=0.1)
        self.assertAlmostEqual(total, 0.7)
        self.assertAlmostEqual(terms['mem'], 0.1)
        self.assertIsNone(lo(core, [t1, {'issue': 0.4}], 'seq', 'avx512', 1000))  # 1600 > 300
        self.assertIsNone(lo(core, [t1, {'issue': 0.4}], 'seq', 'scalar', 100))   # 160 > 100
        self.assertIsNone(lo(core, [t1, {'issue': 0.4}], 'int', 'avx512', 100))
        self.assertIsNone(lo(core, [t1], 'seq', 'avx512', 100))
        core.loop_overlap = False
        self.assertIsNone(lo(core, [t1, {'issue': 0.4}], 'seq', 'avx512', 100))
        # without a window probe nothing changes
        self.assertIsNone(lo(self.core, [t1, {'issue': 0.4}], 'seq', 'avx512', 100))

    def test_warm_stream_rates(self):
        # probe.py's warm rates (a 64 KB buffer in L2, in place or copied)
        # replace memsig's L2 read and write rates, added, for a loop that
        # reads and writes at L2 at that size, in the overlap form only
        # (copy given); reads alone, other sizes and levels keep memsig's
        self.m.set_warm({'warm_rmw_65536': 4.0, 'warm_copy_65536': 2.0, 'other': 1.0})
        self.assertEqual(self.m.warm, {65536: (4.0, 2.0)})
        self.assertAlmostEqual(self.m.stream('L2', 'L2', 64, 65536, False), 1 / 4.0)
        self.assertAlmostEqual(self.m.stream('L2', 'L2', 64, 65536, True), 1 / 2.0)
        self.assertAlmostEqual(self.m.stream('L2', 'L2', 64, 65536), 1 / 64 + 1 / 32)
        self.assertAlmostEqual(self.m.stream('L2', None, 64, 65536, False), 1 / 64)
        self.assertAlmostEqual(self.m.stream('L3', 'L2', 64, 65536, False), 1 / 64 + 1 / 32)
        self.assertAlmostEqual(self.m.stream('L2', 'L2', 64, 1460, False), 1 / 64 + 1 / 32)
        # an in-place loop bound by its stream: 64 KB hot is L2 (two
        # buffers exceed L1), the warm in-place rate
        f = _F('f', ops=1, writes=True)
        t, dom, _ = model.predict_overlap(self.core, self.m, _P([f]), 'int', 'scalar', 65536,
                                          'hot', 11)
        self.assertEqual(dom, 'mem')
        self.assertAlmostEqual(t, 1 / 4.0)

    def test_window(self):
        # ld_lat 4 cycles (0.5 loads per tick at 2 cycles per tick); chains
        # of L = 16 and 116 at 10 and 100 cycles per iteration: W = P I / T
        # = 20 * 22 / 10 = 44 and 120 * 122 / 100 = 146.4
        pr = dict(PROBE, ld_lat=0.5, win_int_16=0.2, win_int_116=0.02)
        core = model.Core(pr)
        self.assertAlmostEqual(core.ld_lat, 4.0)
        self.assertEqual([p for p, _ in core.win['int']], [20.0, 120.0])
        self.assertAlmostEqual(core.window('int', 20), 44.0)
        self.assertAlmostEqual(core.window('int', 120), 146.4)
        self.assertAlmostEqual(core.window('int', 5), 44.0)        # the end values beyond
        self.assertAlmostEqual(core.window('int', 999), 146.4)
        w = core.window('int', math.sqrt(20 * 120))                # log-log: the geometric mean
        self.assertAlmostEqual(w, math.sqrt(44.0 * 146.4))
        self.assertIsNone(core.window('vec', 20))
        # a loop whose steps chain 16 instructions on the data register:
        # P = 4 + 16 = 20 cycles, window = 20 * instructions per byte / 44
        f = _F('f', ops=16)
        t = model.loop_terms(core, self.m, [f], 'scalar', 64, 11, 'L1', 'L1')
        self.assertAlmostEqual(t['window'], 20 * (t['issue'] * core.issue) / 44.0)
        self.assertNotIn('window', model.loop_terms(self.core, self.m, [f], 'scalar', 64, 11,
                                                    'L1', 'L1'))

    def test_inflight(self):
        # a flushed 1460-byte source whose line arrives 60 ticks (120 cycles)
        # after its load: P = 120 + the step's path 4 = 124 cycles, beyond the
        # window's last point (146.4 instructions): P * instructions / 146.4
        pr = dict(PROBE, ld_lat=0.5, win_int_16=0.2, win_int_116=0.02, cold_lat_1460=60.0)
        core = model.Core(pr)
        self.assertEqual(core.cold_lat, {1460: 120.0})
        self.assertEqual(core.cold_seqlat, {})
        f = _F('f', ops=4)
        t = model.loop_terms(core, self.m, [f], 'scalar', 64, 11, 'DRAM', 'DRAM', size=1460)
        instr = t['issue'] * core.issue
        self.assertAlmostEqual(t['inflight'], 124 * instr / 146.4)
        # lines the prefetcher brought: Little's law again, at the in-order
        # chase's latency, 10 ticks (20 cycles) a line: P = 20 + 4 = 24
        # cycles, the window log-log between its points; the faster of the
        # two forms counts
        core = model.Core(dict(pr, cold_seqlat_1460=10.0))
        self.assertEqual((core.cold_lat, core.cold_seqlat), ({1460: 120.0}, {1460: 20.0}))
        t = model.loop_terms(core, self.m, [f], 'scalar', 64, 11, 'DRAM', 'DRAM', size=1460)
        self.assertAlmostEqual(t['inflight'], 24 * instr / core.window('int', 24))
        self.assertLess(t['inflight'], 124 * instr / 146.4)
        # a chase slower than the raw latency (not seen on a machine): own
        # misses count
        core = model.Core(dict(pr, cold_seqlat_1460=80.0))
        t = model.loop_terms(core, self.m, [f], 'scalar', 64, 11, 'DRAM', 'DRAM', size=1460)
        self.assertAlmostEqual(t['inflight'], 124 * instr / 146.4)
        f = _F('f', ops=400)
        # only from a flushed source, only at a size the probe measured
        self.assertNotIn('inflight', model.loop_terms(core, self.m, [f], 'scalar', 64, 11,
                                                      'L2', 'L2', size=1460))
        self.assertNotIn('inflight', model.loop_terms(core, self.m, [f], 'scalar', 64, 11,
                                                      'DRAM', 'DRAM', size=65536))

    def test_compiled_loop_counts(self):
        # a compiled loop's counts replace the spec's: 64 bytes an iteration,
        # 16 instructions (issue 8 per cycle: 2 cycles), 12 vector ALU ops (4
        # ports: 3 cycles), chain 5 cycles per iteration
        f = _F('f', ops=2, chain=1)
        dis = dict(instr=16, alu=12, loads=1, stores=1, stack=0, chain=5.0)
        t = model.loop_terms(self.core, self.m, [f], 'avx512', 64, 28, 'L1', 'L1', dis=dis)
        self.assertAlmostEqual(t['issue'], 16 / 64 / 8)
        self.assertAlmostEqual(t['compute'], 12 / 64 / 4)
        self.assertAlmostEqual(t['chain'], 5 / 64)
        self.assertAlmostEqual(t['load'], 1 / 64 / 2)
        # the window holds the loop's instructions but its eliminated moves:
        # probe window 44 for P = 4 + 16 (a step path of 16), 4 of 16 moves
        pr = dict(PROBE, ld_lat=0.5, win_vec_16=0.2)
        core = model.Core(pr)
        dis = dict(instr=16, alu=12, loads=1, stores=1, stack=0, moves=4, chain=5.0)
        t = model.loop_terms(core, self.m, [_F('f', ops=16)], 'avx512', 64, 28, 'L1', 'L1',
                             dis=dis)
        self.assertAlmostEqual(t['window'], 20 * 12 / 64 / 44.0)

    def test_loop_path(self):
        import synthetic
        # writing steps add up along the data register; a step without
        # output hangs off it (its depth counts, it passes x on unchanged)
        f, g, h = _F('f', ops=3), _F('g', ops=5, writes=False), _F('h', ops=2)
        self.assertEqual(model.loop_path([f, g, h], 'scalar'), 8)   # max(3 + 5, 3 + 2)
        self.assertEqual(model.loop_path([f, h], 'scalar'), 5)
        self.assertEqual(model.loop_path([], 'scalar'), 0)
        # synthetic: s=1, a=10 alternates s0 += x, x ^= s0: x leaves 10 later;
        # s=10, a=10: ten s_j += x, x unchanged, done one instruction later
        self.assertEqual(synthetic.xpath(synthetic._ops(10, 1, True)), (10, 10))
        self.assertEqual(synthetic.xpath(synthetic._ops(10, 10, True)), (0, 1))
        self.assertEqual(synthetic.xpath(synthetic._ops(10, 4, True)), (5, 6))
        self.assertEqual(synthetic.xpath(synthetic._ops(3, 0, True)), (3, 3))
        p = model.pipeline_of('syn.n3.s4.a10')
        self.assertEqual(model.loop_path(p.fns, 'avx512'), 5 + 5 + 6)

    def test_synthetic_chain(self):
        import synthetic
        # s=1, a=10: s0 += x; x ^= s0; ... five adds, the last at depth 9
        self.assertEqual(synthetic.chain(synthetic._ops(10, 1, True)), 9)
        # s=5, a=10: five independent s_j += x, then the xors feed no state
        self.assertEqual(synthetic.chain(synthetic._ops(10, 5, True)), 1)
        self.assertEqual(synthetic.chain(synthetic._ops(4, 0, True)), 0)
        self.assertEqual(synthetic.chain([('add', 0), ('xor', 0), ('add', 0), ('add', 1)]), 3)


class TestStoredInputs(unittest.TestCase):
    """The model's output on the input set stored in testdata/ (measured on
    one machine by collect.py --small, objdumps cut to the kernels the model
    reads) is the stored output, byte for byte: a change of the model that
    moves any figure shows here, and must come with a new expected.txt
    (python3 ilp/model.py --inputs ilp/testdata > ilp/testdata/expected.txt)
    and a reason."""

    def test_output_unchanged(self):
        data = os.path.join(HERE, 'testdata')
        out = subprocess.run([sys.executable, os.path.join(HERE, 'model.py'), '--inputs', data],
                             check=True, capture_output=True, text=True).stdout
        with open(os.path.join(data, 'expected.txt')) as fh:
            want = fh.read()
        self.assertEqual(out, want)
        # the set exercises the overlap form, the fits and the disassembly
        self.assertIn('R: from the sweep\'s disassembly', out)
        self.assertRegex(out, r'overlap \(eq\. 3 terms, max per loop\): \d+ of 12 within 20%')

    def test_inputs_option_is_the_files(self):
        # --inputs DIR: the same as naming the files (order of --objdump:
        # AVX-512 first, as collect.py's documentation gives it)
        d = os.path.join(HERE, 'testdata')
        a = model.cli
        ns = type('A', (), dict(inputs=d, memsig=None, bench=[], sim=None, probe=None,
                                objdump=None))()
        a.inputs_of(ns)
        self.assertEqual(ns.memsig, os.path.join(d, 'memsig.json'))
        self.assertEqual(ns.bench, [os.path.join(d, 'table.json'), os.path.join(d, 'sweep.json')])
        self.assertEqual(ns.sim, os.path.join(d, 'sim.json'))
        self.assertEqual(ns.probe, os.path.join(d, 'probe.json'))
        self.assertEqual(ns.objdump, [os.path.join(d, 'objdump-avx512.txt'),
                                      os.path.join(d, 'objdump-scalar.txt')])
        # an input set with the AVX2 library's disassembly names it too
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for f in ('objdump-avx512.txt', 'objdump-scalar.txt'):
                shutil.copy(os.path.join(d, f), tmp)
            with open(os.path.join(tmp, 'objdump-avx2.txt'), 'w') as fh:
                fh.write('')
            ns.inputs, ns.objdump, ns.bench = tmp, None, []
            a.inputs_of(ns)
            self.assertEqual(ns.objdump, [os.path.join(tmp, 'objdump-%s.txt' % x)
                                          for x in ('avx512', 'avx2', 'scalar')])

    def test_avx2_rows(self):
        # AVX2 rows (a CPU without AVX-512; here the stored scalar rows
        # renamed -avx2, so that the rows exist, not what AVX2 measures):
        # the model fits R and CPI for AVX2 from its sweep and predicts its
        # rows; every line about the other isas stays as it was
        import json
        import tempfile
        d = os.path.join(HERE, 'testdata')
        with tempfile.TemporaryDirectory() as tmp:
            for name in ('table', 'sweep', 'sim'):
                with open(os.path.join(d, name + '.json')) as fh:
                    js = json.load(fh)
                extra = []
                for b in js['benchmarks']:
                    if '-scalar/' in b['name']:
                        c = dict(b)
                        for k in ('name', 'run_name'):
                            if k in c:
                                c[k] = c[k].replace('-scalar/', '-avx2/')
                        # data accesses per 32-byte block as many as per
                        # 8-byte word before: the same knee
                        for k in ('sim_dr_per_byte', 'sim_dw_per_byte'):
                            if k in c:
                                c[k] = c[k] * 8 / 32
                        extra.append(c)
                self.assertTrue(extra, name)
                js['benchmarks'] += extra
                with open(os.path.join(tmp, name + '.json'), 'w') as fh:
                    json.dump(js, fh)
            args = ['--memsig', os.path.join(d, 'memsig.json'),
                    '--bench', os.path.join(tmp, 'table.json'),
                    '--bench', os.path.join(tmp, 'sweep.json'),
                    '--sim', os.path.join(tmp, 'sim.json'),
                    '--probe', os.path.join(d, 'probe.json'),
                    '--objdump', os.path.join(d, 'objdump-avx512.txt'),
                    '--objdump', os.path.join(d, 'objdump-scalar.txt')]
            out = subprocess.run([sys.executable, os.path.join(HERE, 'model.py')] + args,
                                 check=True, capture_output=True, text=True).stdout
        with open(os.path.join(d, 'expected.txt')) as fh:
            want = fh.read()
        lines = out.splitlines()
        # the parameters: R probed on the sweep (the scalar one's knee),
        # a CPI, a throughput calibration
        sc = [l for l in lines if l.startswith('  scalar W= 8 ')]
        av = [l for l in lines if l.startswith('  avx2   W=32 ')]
        self.assertEqual(len(sc), 1)
        self.assertEqual(len(av), 1, out)
        self.assertEqual(sc[0].split()[-1], av[0].split()[-1])   # R=...
        self.assertRegex(av[0], r'CPI=\d+\.\d+')
        self.assertTrue(any(l.startswith('  avx2   throughput terms x ') for l in lines))
        # every row predicted, with a model and an overlap figure
        rows = [l for l in lines if l.split()[2:3] == ['avx2'] and len(l.split()) >= 11]
        srows = [l for l in want.splitlines() if l.split()[2:3] == ['scalar']
                 and len(l.split()) >= 11]
        self.assertEqual(len(rows), len(srows))
        for l in rows:
            self.assertRegex(l.split()[6], r'^\d+\.\d+$', l)   # model
            self.assertRegex(l.split()[8], r'^\d+\.\d+$', l)   # overlap
        # the other isas' lines as before (the counts at the end aside)
        for l in want.splitlines():
            if ' of ' not in l and not l.startswith('  bound:'):
                self.assertIn(l, lines)

    def test_objdump_without_the_sweep(self):
        # only the scalar library's disassembly: AVX-512's R is not measured
        # (said so), the rest of the run as with both
        d = os.path.join(HERE, 'testdata')
        args = ['--memsig', os.path.join(d, 'memsig.json'), '--bench', os.path.join(d, 'table.json'),
                '--bench', os.path.join(d, 'sweep.json'), '--sim', os.path.join(d, 'sim.json'),
                '--probe', os.path.join(d, 'probe.json'),
                '--objdump', os.path.join(d, 'objdump-scalar.txt')]
        out = subprocess.run([sys.executable, os.path.join(HERE, 'model.py')] + args,
                             check=True, capture_output=True, text=True).stdout
        self.assertIn('R: not measured: no avx512 synthetic sweep in --objdump', out)
        with open(os.path.join(d, 'expected.txt')) as fh:
            want = fh.read()
        # the scalar rows do not depend on AVX-512's R
        rows = [l for l in want.splitlines() if ' scalar ' in l and '%' not in l]
        self.assertTrue(rows)
        for line in rows:
            self.assertIn(line, out)
