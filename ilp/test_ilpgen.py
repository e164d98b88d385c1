#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the ILP generator (run by `meson test ilpgen`)."""

import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ilpgen  # noqa: E402
import model  # noqa: E402
from functions import FUNCS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class TestPipeline(unittest.TestCase):
    def test_block_is_lcm(self):
        self.assertEqual(ilpgen.Pipeline('copy,bswap32,pes,csum').block(), 8)
        self.assertEqual(ilpgen.Pipeline('bswap32,csum').block(), 4)
        self.assertEqual(ilpgen.Pipeline('copy,csum').block(), 2)

    def test_names(self):
        p = ilpgen.Pipeline('copy, bswap32 ,pes,csum')
        self.assertEqual(p.name, 'copy+bswap32+pes+csum')
        self.assertTrue(p.copy)
        self.assertFalse(ilpgen.Pipeline('bswap32,pes,csum').copy)

    def test_errors(self):
        for bad in ('', 'bswap32,copy', 'nosuch', 'csum,csum', 'chacha20,aes128ctr'):
            with self.assertRaises(ValueError, msg=bad):
                ilpgen.Pipeline(bad)

    def test_every_function_has_every_form(self):
        for f in FUNCS.values():
            for isa in ilpgen.ISAS:
                self.assertIn(isa, f.forms, f.name)
                self.assertIn('ops', f.forms[isa])


class TestCipher(unittest.TestCase):
    def test_aes_expansion_fips197(self):
        # FIPS-197 appendix A.1: w[4..7] and w[40..43] of the SP 800-38A key
        import functions
        rk = functions.aes128_expand(functions.STUDY_AES_KEY)
        self.assertEqual(len(rk), 176)
        self.assertEqual(rk[16:32].hex(), 'a0fafe1788542cb123a339392a6c7605')
        self.assertEqual(rk[160:].hex(), 'd014f9a8c9ee2589e13f0cc8b6630ca6')

    def test_integrated_uses_keystream_chunks(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('copy,chacha20,csum')
        self.assertEqual(p.cipher.name, 'chacha20')
        integ = em.function(p, 'int', 'avx512')
        # keystream per chunk and for an uncovered tail; one load, one store
        self.assertEqual(integ.count('cn_chacha20_keystream('), 2)
        self.assertIn('CN_ILP_KS_BYTES', integ)
        self.assertEqual(integ.count('_mm512_loadu_si512'), 1)
        self.assertEqual(integ.count('_mm512_storeu_si512'), 1)
        self.assertNotIn('cn_chacha20_xor(', integ)
        seq = em.function(p, 'seq', 'avx512')
        self.assertIn('cn_chacha20_xor(', seq)
        self.assertNotIn('cn_chacha20_keystream(', seq)
        aes = em.function(ilpgen.Pipeline('aes128ctr,csum'), 'intpf', 'scalar')
        self.assertIn('cn_aes128ctr_keystream(', aes)

    def test_aes_inline_round_major(self):
        import functions
        em = ilpgen.Emitter()
        text = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        main = text[text.index('for (; i + %d <= len' % ilpgen.INLINE_BYTES):]
        main = main[:main.index('\n\t}\n')]
        n = ilpgen.INLINE_BYTES // 64
        # every round issued across all n registers before the next round
        for rnd in range(1, 10):
            line = [ln for ln in main.split('\n') if 'aes_rk%d)' % rnd in ln]
            self.assertEqual(len(line), 1)
            self.assertEqual(line[0].count('_mm512_aesenc_epi128'), n)
        # the keystream before the block's loads, no carry compare per register
        self.assertLess(main.index('aes_rk10'), main.index('_mm512_loadu_si512'))
        self.assertNotIn('cmplt', text)
        # the no-carry contract is checked against the IV
        functions.aes_no_wrap_check(functions.STUDY_AES_IV)
        with self.assertRaises(ValueError):
            functions.aes_no_wrap_check(bytes(8) + (2**64 - 1000).to_bytes(8, 'big'))

    def test_masked_remainder(self):
        em = ilpgen.Emitter()
        # zero-padding pipelines (copy, csum, ciphers) end in byte-masked
        # registers on AVX-512: no scalar granules, no byte tail, no ks buffer
        for text in ('copy,aes128ctr,csum', 'copy,chacha20,csum', 'copy,csum', 'csum'):
            p = ilpgen.Pipeline(text)
            self.assertTrue(em.masked_rem(p, p.fns, 'avx512'), text)
            body = em.function(p, 'int', 'avx512')
            self.assertIn('_mm512_maskz_loadu_epi8(m, ', body)
            self.assertNotIn('8-byte granules', body)
            self.assertNotIn('size_t n = len - i;\n', body)
            # one masked register per pass (its last): AES passes of 1, 2, 4
            self.assertEqual(body.count('_mm512_mask_storeu_epi8('), 0 if text == 'csum' else
                             (3 if 'aes' in text else 1))
            # the other isas keep the scalar remainder
            self.assertIn('8-byte granules', em.function(p, 'int', 'scalar'))
        aes = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        self.assertNotIn('ks[', aes)
        # after the cipher, the bytes past the message are zeroed again for
        # the checksum; after the checksum (the last function) nothing is
        self.assertEqual(aes.count('_mm512_maskz_mov_epi8(m, '), 3)
        self.assertEqual(aes.count('_mm512_maskz_loadu_epi8(m, '), 3)
        # passes of 4, 2 and 1 registers after the 8-register loop, each
        # taken by its bit of the number of registers left
        self.assertEqual(aes.count('while (((len - i + 63) >> 6) >= 4) {'), 1)
        for b in (2, 1):
            self.assertEqual(aes.count('if (((len - i + 63) >> 6) & %d) {' % b), 1)
        # bswap/pes do not pad with zeros: their tails stay scalar
        p = ilpgen.Pipeline('copy,bswap32,pes,csum')
        self.assertFalse(em.masked_rem(p, p.fns, 'avx512'))
        self.assertIn('8-byte granules', em.function(p, 'int', 'avx512'))

    def test_vnni_checksum_two_accumulators(self):
        em = ilpgen.Emitter()
        aes = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        main = aes[aes.index('for (; i + %d <= len' % ilpgen.INLINE_BYTES):]
        main = main[:main.index('\n\t}\n')]
        # registers alternate between csum_d0 and csum_d1: two chains of
        # four VPDPWSSD per iteration instead of one of eight
        self.assertEqual(main.count('csum_d0 = _mm512_dpwssd_epi32(csum_d0'), 4)
        self.assertEqual(main.count('csum_d1 = _mm512_dpwssd_epi32(csum_d1'), 4)
        self.assertNotIn('{a}', aes)

    def test_ks_bytes_checked(self):
        with self.assertRaises(ValueError):
            ilpgen.Emitter(ks_bytes=100)


class TestEmit(unittest.TestCase):
    def gen(self, **kw):
        em = ilpgen.Emitter(**kw)
        pipes = [ilpgen.Pipeline(t) for t in ilpgen.read_pipelines(os.path.join(HERE, 'pipelines.txt'))]
        return em.files(pipes)

    def test_deterministic(self):
        self.assertEqual(self.gen(), self.gen())

    def test_outputs_and_symbols(self):
        files = self.gen()
        self.assertEqual(sorted(files), ['cn_ilp.h', 'cn_ilp_avx2.c', 'cn_ilp_avx512.c',
                                         'cn_ilp_scalar.c', 'cn_ilp_table.c'])
        for form in ilpgen.FORMS:
            for isa in ilpgen.ISAS:
                sym = 'cn_ilp_copy_bswap32_pes_csum_%s_%s(' % (form, isa)
                self.assertIn(sym, files['cn_ilp.h'])
                self.assertIn(sym, files['cn_ilp_%s.c' % isa])
        for text in files.values():
            self.assertTrue(text.startswith('/* SPDX-License-Identifier: BSD-2-Clause */'))

    def test_seq_has_one_loop_per_function_int_one(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('copy,bswap32,pes,csum')
        seq = em.function(p, 'seq', 'avx512')
        integ = em.function(p, 'int', 'avx512')
        # main loops run over 64-byte blocks; seq has copy + 3 of them
        self.assertEqual(len(re.findall(r'i \+ 64 <= len', seq)), 4)
        self.assertEqual(len(re.findall(r'i \+ 64 <= len', integ)), 1)
        self.assertEqual(integ.count('_mm512_loadu_si512'), 1)
        self.assertEqual(integ.count('_mm512_storeu_si512'), 1)
        self.assertNotIn('cn_ilp_pf_', integ)
        pf = em.function(p, 'intpf', 'avx512')
        self.assertIn('cn_ilp_pf_read(', pf)
        # the head the loop's prefetches never reach, before the loop
        self.assertLess(pf.index('cn_ilp_pf_head(src, len);'), pf.index('for (; i + 64'))

    def test_pf_dst_inside_the_guard(self):
        em = ilpgen.Emitter(pf_dst=True)
        text = em.function(ilpgen.Pipeline('copy,bswap32,pes,csum'), 'intpf', 'avx512')
        guard = text[text.index('if (i + 64 <= pf_end) {'):]
        guard = guard[:guard.index('}')]
        self.assertIn('cn_ilp_pf_read(src + i + CN_ILP_PF_DIST);', guard)
        self.assertIn('cn_ilp_pf_write(dst + i + CN_ILP_PF_DIST);', guard)
        self.assertIn('cn_ilp_pf_write(', em.prelude('avx512'))
        self.assertNotIn('cn_ilp_pf_write(', ilpgen.Emitter().prelude('avx512'))

    def test_pf_dist_in_header(self):
        self.assertIn('#define CN_ILP_PF_DIST 512', self.gen(pf_dist=512)['cn_ilp.h'])

    def test_synthetic_state_live(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('syn:n=3,s=4,a=10')
        text = em.function(p, 'int', 'scalar')
        for f in range(3):
            for j in range(4):
                # declared, updated in the loop, folded into the result
                self.assertIn('syn%d_s%d = 0x' % (f, j), text)
                self.assertIn('syn%d_s%d += ' % (f, j), text)
                self.assertIn('(syn%d_s%d * 0x' % (f, j), text)

    def test_synthetic_per_function_params(self):
        p = ilpgen.Pipeline('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1')
        self.assertEqual([f.state for f in p.fns], [0, 1, 1])
        self.assertEqual([f.forms['scalar']['ops'] for f in p.fns], [2, 3, 2])
        self.assertEqual([f.writes for f in p.fns], [True, True, False])
        self.assertTrue(p.copy)


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

    def test_R_from_disassembly(self):
        def fn(n, s, stack_in_loop):
            body = ['%08x <cn_ilp_syn_n%d_s%d_a10_int_avx512>:' % (0x1000 * n + s, n, s),
                    '    10:\tvmovdqa64 %zmm1,0x40(%rsp)',        # before the loop
                    '    20:\tvpaddq %zmm0,%zmm1,%zmm1']
            if stack_in_loop:
                body.append('    24:\tvpaddq 0x40(%rsp),%zmm1,%zmm1')
            body += ['    28:\tlea    0x40(%rsp),%rax',           # not an access
                     '    30:\tjae    20 <cn_ilp_syn_n%d_s%d_a10_int_avx512+0x20>' % (n, s),
                     '    34:\tvmovdqa64 0x40(%rsp),%zmm1', '']
            return '\n'.join(body)
        text = fn(2, 4, False) + fn(2, 8, False) + fn(3, 6, True) + fn(4, 6, True)
        R, rows = model.probe_R_objdump(text)
        self.assertEqual(R, 17)
        self.assertEqual(rows, [(8, 2, 4, 0), (16, 2, 8, 0), (18, 3, 6, 1), (24, 4, 6, 1)])
        R, _ = model.probe_R_objdump(fn(2, 4, False))
        self.assertIsNone(R)

    def test_parse_insn(self):
        # AT&T: the destination last; a two-operand scalar ALU op and vpternlogd
        # read it too; a folded load's address registers are kept apart
        self.assertEqual(model.parse_insn('vpaddq', '%zmm3,%zmm0,%zmm1'),
                         (['z3', 'z0'], [], ['z1'], 'alu', None, None))
        self.assertEqual(model.parse_insn('vpternlogd', '$0x96,%zmm6,%zmm1,%zmm2')[0],
                         ['z6', 'z1', 'z2'])
        self.assertEqual(model.parse_insn('add', '%rax,%rbx'),
                         (['rax', 'rbx'], [], ['rbx', 'flags'], 'alu', None, None))
        self.assertEqual(model.parse_insn('adc', '$0x0,%rbx')[0], ['rbx', 'flags'])
        srcs, addr, dsts, kind, mi, mo = model.parse_insn('vprorq', '$0x1,-0x40(%rdi,%rcx,1),%zmm0')
        self.assertEqual((srcs, addr, dsts, kind, mi), ([], ['rdi', 'rcx'], ['z0'], 'alu',
                                                        '-0x40(%rdi,%rcx,1)'))
        self.assertEqual(model.parse_insn('vmovdqu64', '%zmm0,-0x40(%rsi,%rax,1)')[3:],
                         ('store', None, '-0x40(%rsi,%rax,1)'))
        self.assertEqual(model.parse_insn('vmovdqu64', '-0x40(%rsi,%rax,1),%zmm6')[3], 'load')
        self.assertEqual(model.parse_insn('vmovdqa64', '%zmm1,%zmm4')[3], 'move')
        self.assertEqual(model.parse_insn('vmovdqa64', '%zmm0,%zmm1{%k1}{z}')[3], 'alu')
        self.assertEqual(model.parse_insn('mov', '%ecx,%r8d')[:3], (['rcx'], [], ['r8']))

    def test_loop_stats(self):
        # s0 += x; x ^= s0; s0 += x: the recurrence on zmm0 is add, xor, add =
        # 3 cycles an iteration (the index's lea is 1; the move is free)
        body = [('vmovdqu64', '-0x40(%rdi,%rcx,1),%zmm3'), ('vpaddq', '%zmm3,%zmm0,%zmm0'),
                ('vpxord', '%zmm0,%zmm3,%zmm3'), ('vpaddq', '%zmm3,%zmm0,%zmm0'),
                ('vmovdqa64', '%zmm0,%zmm5'), ('vmovdqu64', '%zmm3,-0x40(%rdi,%rcx,1)'),
                ('lea', '0x40(%rcx),%rcx'), ('cmp', '%rcx,%rdx'), ('jae', '20 <f+0x20>')]
        st = model.loop_stats(body, ld_lat=4, st_fwd=5)
        self.assertEqual((st['instr'], st['alu'], st['loads'], st['stores'], st['stack'],
                          st['moves']), (9, 3, 1, 1, 0, 1))
        self.assertAlmostEqual(st['chain'], 3.0)
        # the same data address stored and loaded again is not a recurrence
        # (it moves every iteration); a spilled state word is: store, then
        # the next iteration's load of the slot forwards (st_fwd) into the add
        body = [('vmovdqu64', '(%rdi,%rcx,1),%zmm1'), ('vpaddq', '0x40(%rsp),%zmm1,%zmm2'),
                ('vmovdqa64', '%zmm2,0x40(%rsp)'), ('lea', '0x40(%rcx),%rcx'),
                ('jae', '0 <f>')]
        st = model.loop_stats(body, ld_lat=4, st_fwd=5)
        self.assertEqual((st['loads'], st['stores'], st['stack']), (2, 1, 2))
        self.assertAlmostEqual(st['chain'], 5 + 1)
        # scalar: add then adc carries the flags: add (1) + adc (1) on rbx
        body = [('mov', '(%rsi,%rcx,1),%rdi'), ('add', '%rdi,%rbx'), ('adc', '$0x0,%rbx'),
                ('add', '$0x8,%rcx'), ('cmp', '%rcx,%rdx'), ('jae', '0 <f>')]
        st = model.loop_stats(body, ld_lat=4, st_fwd=5)
        self.assertEqual((st['instr'], st['alu']), (6, 3))   # cmp and the branch are not ALU work
        self.assertAlmostEqual(st['chain'], 2.0)

    def test_objdump_loops(self):
        text = '\n'.join([
            '0000000000001000 <cn_ilp_a_seq_avx512>:',
            '    1000:\tmov    %rdi,%rsi',
            '    1004:\tvpaddq %zmm1,%zmm0,%zmm0',          # loop 1
            '    1008:\tjae    1004 <cn_ilp_a_seq_avx512+0x4>',
            '    100c:\tvpxord %zmm1,%zmm0,%zmm0',          # loop 2
            '    1010:\tvpxord %zmm1,%zmm0,%zmm0',
            '    1014:\tjb     100c <cn_ilp_a_seq_avx512+0xc>',
            '    1018:\tjmp    1000 <cn_ilp_a_seq_avx512>',  # an outer loop: not inner
            '    101c:\tret',
            '',
            '0000000000001040 <cn_ilp_a_int_avx512>:',
            '    1040:\tjmp    1000 <cn_ilp_a_seq_avx512>',
            ''])
        d = model.objdump_loops(text)
        self.assertEqual([len(b) for b in d['cn_ilp_a_seq_avx512']], [2, 3])
        self.assertEqual(d['cn_ilp_a_int_avx512'], d['cn_ilp_a_seq_avx512'])

    def test_kernel_loops(self):
        # the main loops are the ones advancing by the unrolled block (64 B
        # for a real AVX-512 pipeline), not the 8-byte remainder loops; one
        # per function in seq (csum: no store), one in int
        p = model.pipeline_of('bswap32+pes+csum')
        sym = ilpgen.fn_symbol(p, 'seq', 'avx512')

        def loop(alu, store, step=0x40):
            body = [('vmovdqu64', '(%rdi,%rax,1),%zmm0')]
            body += [('vpaddq', '%zmm1,%zmm0,%zmm0')] * alu
            if store:
                body.append(('vmovdqu64', '%zmm0,(%rdi,%rax,1)'))
            return body + [('add', '$0x%x,%%rax' % step), ('cmp', '%rax,%rdx'),
                           ('jae', '0 <f>')]
        dis = {sym: [loop(1, True), loop(1, True, 8), loop(3, True), loop(2, False)]}
        ls = model.kernel_loops(dis, p, 'seq', 'avx512')
        self.assertEqual([(x['alu'], x['stores']) for x in ls], [(1, 1), (3, 1), (2, 0)])
        self.assertIsNone(model.kernel_loops(dis, p, 'int', 'avx512'))     # not listed
        dis[sym] = dis[sym][:2]
        self.assertIsNone(model.kernel_loops(dis, p, 'seq', 'avx512'))     # too few
        # a read-modify-write of a spilled slot is a load and a store
        st = model.loop_stats([('add', '%rax,0x10(%rsp)'), ('jae', '0 <f>')])
        self.assertEqual((st['loads'], st['stores'], st['stack'], st['alu']), (1, 1, 2, 1))


    def test_sim_dispatch_scheduler(self):
        # independent instructions: issue-wide groups, one cycle apart
        ind = [([], None, [('r%d' % k, 1.0)], 0.0, True) for k in range(10)]
        self.assertEqual(model.sim_dispatch(ind, 4, 64),
                         [0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
        # a chain of latency 2 with 3 scheduler entries: the first three
        # dispatch at once and issue at 1, 3, 5; the fourth waits for the
        # first entry to free (cycle 1), the fifth for the second (3), ...
        chain = [(['x'], None, [('x', 2.0)], 0.0, True) for _ in range(6)]
        self.assertEqual(model.sim_dispatch(chain, 8, 3), [0, 0, 0, 1, 3, 5])
        # a large scheduler: all dispatch in the first cycle
        self.assertEqual(model.sim_dispatch(chain, 8, 64), [0] * 6)
        # eliminated moves (no entry) never wait for one
        mv = chain[:3] + [([], None, [('y', 0.0)], 0.0, False)] * 2
        self.assertEqual(model.sim_dispatch(mv, 8, 3), [0] * 5)
        # a memory operand: ready ld cycles after its address and stored word
        ld = [([], None, [('a', 1.0)], 0.0, True),            # address at 2
              ([], ['a'], [('v', 0.0)], 4.0, True),           # load: 6
              (['v'], None, [('w', 1.0)], 0.0, True),         # w at 7
              ([], ['w'], [('u', 0.0)], 4.0, True),           # waits for w + 4 = 11
              (['u'], None, [], 0.0, True)]
        # with 2 entries: i2 waits for i0's entry (1), i3 for the load's,
        # freed with its address (2), i4 for i2's (6)
        self.assertEqual(model.sim_dispatch(ld, 8, 2), [0, 0, 1, 2, 6])

    def test_fit_sched_recovers_the_window(self):
        # window loops simulated on a core with 40 scheduler entries and no
        # in-order limit are fitted back to (40, None); 16-instruction
        # chains left out (port bound without ports)
        pts = [(L, model.sim_win(L, 2.0, 4.0, 6, 40)) for L in (16, 32, 64, 128)]
        self.assertEqual(model.fit_sched(pts, 2.0, 4.0, 6), (40, None))
        self.assertEqual(model.fit_sched(pts[:1], 2.0, 4.0, 6), (None, None))
        # a long chain holds its iteration's instructions: chains of 128
        # at latency 2 overlap only as far as 40 entries let the next start
        T = pts[-1][1]
        self.assertGreater(T, 128 * 2 * 0.5)
        self.assertLess(T, 128 * 2 + 4)
        # and with an in-order window of 160 (ports as probe.py's): both back
        # (the grids cut to the neighbours, to keep the test short)
        ports = dict(alu=5, load=4, store=2, valu=4, vload=2, vstore=1)
        pts = [(L, model.sim_win(L, 2.0, 4.0, 7, 104, ports, 'vec', 160))
               for L in (16, 32, 64, 128, 256, 512)]
        grids = model.SCHED_GRID, model.RETIRE_GRID
        try:
            model.SCHED_GRID, model.RETIRE_GRID = (88, 96, 104, 112, 120), (None, 128, 160, 192)
            self.assertEqual(model.fit_sched(pts, 2.0, 4.0, 7, 16, ports, 'vec'), (104, 160))
        finally:
            model.SCHED_GRID, model.RETIRE_GRID = grids

    def test_sim_dispatch_in_order_window(self):
        # one long-latency instruction, then independent ones: with R = 4
        # the fifth waits until the first (and so every older one) is done
        st = [([], None, [('a', 10.0)], 0.0, True)] + \
            [([], None, [('b%d' % k, 1.0)], 0.0, True) for k in range(5)]
        self.assertEqual(model.sim_dispatch(st, 8, 64), [0] * 6)
        self.assertEqual(model.sim_dispatch(st, 8, 64, R=4), [0, 0, 0, 0, 11, 11])

    @staticmethod
    def _syn_loop():
        # an in-place AVX-512 loop body: load, 6 vector instructions
        # alternating s += x and x ^= s, store, loop control
        body = [('vmovdqu64', '(%rdi,%rcx,1),%zmm0')]
        for k in range(6):
            body.append(('vpaddq', '%zmm0,%zmm1,%zmm1') if k % 2 == 0 else
                        ('vpxord', '%zmm1,%zmm0,%zmm0'))
        return body + [('vmovdqu64', '%zmm0,(%rdi,%rcx,1)'), ('add', '$0x40,%rcx'),
                       ('cmp', '%rcx,%rdx'), ('jae', '0 <f>')]

    def _df_core(self, Q=64):
        core = model.Core(dict(PROBE, ld_lat=0.5, dep_vec=1.0))   # ld 4, vector ALU 2 cycles
        core.sched = {'vec': Q, 'int': Q}
        return core

    def test_dataflow_chain_overlaps_calls(self):
        # an in-place AVX-512 loop of 6 vector instructions alternating
        # s += x, x ^= s: the state's recurrence is 5 of them (the last x
        # is stored, not carried), 10 cycles per 64-byte block, the state
        # restarting at every call: at 64 KB one call is 1024 blocks, the
        # chain's latency bounds it, 10 cycles per 64 bytes; at 1460 B (22 blocks)
        # the next call's chain starts while this one's is still running:
        # faster than 10 per block, not faster than the issue width (8 per
        # cycle, 10 instructions per block) and the loop never takes less
        # than half the chain (Q = 64 entries hold ~7 blocks of 22).
        p = model.pipeline_of('syn.n1.s1.a10')
        body = self._syn_loop()
        dis = [dict(model.loop_stats(body), body=body)]
        core = self._df_core()
        big = model.dataflow(core, p, 'int', 'avx512', 65536, dis)
        self.assertEqual(len(big), 1)
        self.assertAlmostEqual(big[0] * 64, 10.0, places=3)
        small = model.dataflow(core, p, 'int', 'avx512', 1460, dis)[0] * 1460 / 22
        self.assertLess(small, 9.0)
        self.assertGreater(small, 5.0)
        self.assertGreater(small, 11 / 8)
        # a smaller window overlaps less
        small8 = model.dataflow(self._df_core(8), p, 'int', 'avx512', 1460, dis)[0] * 1460 / 22
        self.assertGreater(small8, small)
        # the same chain carried from call to call (no restart) could not
        # overlap: a loop that reloads its state from a stack slot it
        # stores back is bound by the chain plus the slot's round trip
        spill = [('vmovdqu64', '0x40(%rsp),%zmm1')] + body[:-3] + \
            [('vmovdqu64', '%zmm1,0x40(%rsp)')] + body[-3:]
        st = model.dataflow(core, p, 'int', 'avx512', 65536,
                            [dict(model.loop_stats(spill), body=spill)])[0] * 64
        self.assertGreaterEqual(st, 10.0)

    def test_dataflow_seq_loops_wait_for_the_stored_words(self):
        # seq: the second loop's loads read the words the first stored.
        # With no chain carried in either loop, a block's path is load 4 +
        # 1 op (2) + store; the second loop cannot get ahead of the first
        # by more than the window lets the first run ahead. Both loops'
        # spans are positive and add up to the call.
        p = model.pipeline_of('syn.n2.s1.a10')
        body = [('vmovdqu64', '(%rdi,%rcx,1),%zmm0'), ('vpaddq', '%zmm2,%zmm0,%zmm0'),
                ('vmovdqu64', '%zmm0,(%rdi,%rcx,1)'), ('add', '$0x40,%rcx'),
                ('cmp', '%rcx,%rdx'), ('jae', '0 <f>')]
        d = dict(model.loop_stats(body), body=body)
        df = model.dataflow(self._df_core(), p, 'seq', 'avx512', 1460, [d, d])
        self.assertEqual(len(df), 2)
        self.assertTrue(all(x > 0 for x in df))
        # 6 instructions per block at 8 per cycle: at least 22 * 6 / 8 cycles
        # per loop, and nowhere near serial latency (22 * (4 + 2 + 1))
        for x in df:
            self.assertGreaterEqual(x * 1460, 22 * 6 / 8 - 1)
            self.assertLess(x * 1460, 22 * 7 / 2)


    def test_objdump_paths(self):
        # set-up, the main loop, a masked pass and the fold up to the first
        # ret, in address order; the short-buffer path after the ret left
        # out, jumps dropped; an alias takes the path; a call or a forward
        # jmp on the way (code skipped) gives none
        lines = ['0000000000001000 <cn_ilp_a_seq_avx512>:',
                 '    1000:\tcmp    $0x3f,%rdx',
                 '    1004:\tjbe    1040 <cn_ilp_a_seq_avx512+0x40>',
                 '    1006:\tvpbroadcastq %rax,%zmm1',
                 '    1010:\tvpaddq (%rdi,%rcx,1),%zmm1,%zmm1',
                 '    1018:\tlea    0x40(%rcx),%rcx',
                 '    101c:\tcmp    %rcx,%rdx',
                 '    101f:\tjae    1010 <cn_ilp_a_seq_avx512+0x10>',
                 '    1021:\tvmovdqu64 (%rdi),%zmm0{%k1}{z}',
                 '    1028:\tvpaddq %zmm0,%zmm1,%zmm1',
                 '    1030:\tvmovq  %xmm1,%rax',
                 '    1035:\tret',
                 '    1040:\txor    %eax,%eax',
                 '    1042:\tret',
                 '',
                 '0000000000001050 <cn_ilp_a_int_avx512>:',
                 '    1050:\tjmp    1000 <cn_ilp_a_seq_avx512>',
                 '']
        d = model.objdump_paths('\n'.join(lines))
        path = d['cn_ilp_a_seq_avx512']
        self.assertEqual([k for k, _ in path], ['code', 'loop', 'code'])
        self.assertEqual([op for op, _ in path[0][1]], ['cmp', 'vpbroadcastq'])
        self.assertEqual(path[1][1], model.objdump_loops('\n'.join(lines))
                         ['cn_ilp_a_seq_avx512'][0])
        self.assertEqual([op for op, _ in path[2][1]], ['vmovdqu64', 'vpaddq', 'vmovq', 'ret'])
        self.assertEqual(d['cn_ilp_a_int_avx512'], path)
        for bad in ('    1021:\tcall   2000 <memcpy>', '    1021:\tjmp    1030 <x+0x30>'):
            self.assertNotIn('cn_ilp_a_seq_avx512',
                             model.objdump_paths('\n'.join(lines[:8] + [bad] + lines[9:14])))

    # a kernel laid out as gcc compiles the real ones: a short-buffer path
    # (size < 64) after the ret, the main loop (64 bytes an iteration), the
    # fold, an 8-byte remainder loop, a byte tail that calls memcpy and
    # returns through a second ret
    _CALL_LISTING = [
        '0000000000001000 <cn_ilp_k_int_avx512>:',
        '    1000:\tpush   %rbx',
        '    1001:\tcmp    $0x3f,%rdx',
        '    1005:\tjbe    1100 <cn_ilp_k_int_avx512+0x100>',
        '    1007:\tmov    $0x40,%eax',
        '    100c:\tvmovdqu64 -0x40(%rdi,%rax,1),%zmm0',
        '    1014:\tmov    %rax,%rcx',
        '    1017:\tvpaddq %zmm0,%zmm1,%zmm1',
        '    101d:\tlea    0x40(%rax),%rax',
        '    1021:\tcmp    %rax,%rdx',
        '    1024:\tjae    100c <cn_ilp_k_int_avx512+0xc>',
        '    1026:\tlea    0x8(%rcx),%r8',
        '    102a:\tvmovq  %xmm1,%rbx',
        '    102f:\tcmp    %r8,%rdx',
        '    1032:\tjb     1048 <cn_ilp_k_int_avx512+0x48>',
        '    1034:\tadd    (%rdi,%rcx,1),%rbx',
        '    1038:\tmov    %r8,%rcx',
        '    103b:\tadd    $0x8,%r8',
        '    103f:\tcmp    %r8,%rdx',
        '    1042:\tjae    1034 <cn_ilp_k_int_avx512+0x34>',
        '    1048:\tcmp    %rdx,%rcx',
        '    104b:\tjb     1060 <cn_ilp_k_int_avx512+0x60>',
        '    104d:\tmov    %rbx,%rax',
        '    1050:\tpop    %rbx',
        '    1051:\tret',
        '    1060:\tsub    %rcx,%rdx',
        '    1063:\tcall   1068 <cn_ilp_k_int_avx512+0x68>',
        '    1068:\tadd    %rax,%rbx',
        '    106b:\tmov    %rbx,%rax',
        '    106e:\tpop    %rbx',
        '    106f:\tret',
        '    1100:\txor    %ecx,%ecx',
        '    1102:\tmov    $0x8,%r8d',
        '    1108:\tjmp    102f <cn_ilp_k_int_avx512+0x2f>',
        '']

    def test_walk_call(self):
        # 1460 B: 22 iterations of the 6-instruction main loop (132); the
        # rest: 4 before it, the fold's 4, 6 remainder iterations of 5,
        # the tail test (2), the tail's 6 (the call counts as one) = 46
        body = model.objdump_bodies('\n'.join(self._CALL_LISTING))['cn_ilp_k_int_avx512']
        self.assertEqual(model.walk_call(body, 1460, 64), (178, 132, {0x100c: 46}))
        # 1408 B: no remainder iteration, no tail: 4 + 4 + 2 + 3 (the first
        # ret) = 13
        self.assertEqual(model.walk_call(body, 1408, 64), (145, 132, {0x100c: 13}))
        # 1456 B: the remainder, no tail
        self.assertEqual(model.walk_call(body, 1456, 64)[2], {0x100c: 4 + 4 + 6 * 5 + 2 + 3})
        # under one block: the short path (3 + 3, its jmp back into the
        # fold's compare), the compare (2), 2 remainder iterations, the
        # tail test (no tail) and the first ret's 3: no main-loop instruction
        w = model.walk_call(body, 16, 64)
        self.assertEqual(w[:2], (3 + 3 + 2 + 2 * 5 + 2 + 3, 0))
        # the trace: the instructions in the order run
        tr = []
        self.assertEqual(model.walk_call(body, 1408, 64, trace=tr)[0], len(tr))
        self.assertEqual([body[i][1] for i in tr[:5]], ['push', 'cmp', 'jbe', 'mov', 'vmovdqu64'])
        self.assertEqual(body[tr[-1]][0], 0x1051)
        # the main loops are the ones advancing by the step: none by 128
        self.assertIsNone(model.walk_call(body, 1460, 128))
        # a branch on a value the walk cannot know (loaded) ends it
        bad = [(a, o, r) for a, o, r in body]
        bad[2] = (0x1005, 'jbe', '1100 <cn_ilp_k_int_avx512+0x100>')
        bad.insert(1, (0x1000, 'mov', '(%rsi),%rdx'))
        self.assertIsNone(model.walk_call(bad, 1460, 64))

    def test_call_extra_in_the_issue_term(self):
        # the AVX-512 issue term counts the call's instructions besides its
        # main loops (call_extra()), spread per byte; the other terms keep
        # the loop's counts; off with core.call_code, and for the scalar
        # form (callgrind counts the whole call)
        p = _P([_F('f', ops=2)])
        body = model.objdump_bodies('\n'.join(self._CALL_LISTING))['cn_ilp_k_int_avx512']
        loop = [(op, a) for ad, op, a in body if 0x100c <= ad <= 0x1024]
        dis = [dict(model.loop_stats(loop), body=loop, fn=body)]
        self.assertEqual(model.call_extra(dis, 1460, 64), [46])
        self.assertIsNone(model.call_extra([dict(dis[0], fn=None)], 1460, 64))
        self.assertIsNone(model.call_extra(dis + dis, 1460, 64))
        core = self.core
        core.use_dataflow = {}
        core.eff['avx512'] = 1.25
        core.issue = 0.05      # issue-bound with and without
        _, _, on = model.predict_overlap(core, self.m, p, 'int', 'avx512', 1460, 'hot', 28,
                                         cold_latency=False, dis=dis)
        core.call_code = False
        _, _, off = model.predict_overlap(core, self.m, p, 'int', 'avx512', 1460, 'hot', 28,
                                          cold_latency=False, dis=dis)
        self.assertAlmostEqual((on['issue'] - off['issue']) * core.cyc_per_tick,
                               1.25 * 46 / 1460 / core.issue)
        core.call_code = True
        _, _, sc = model.predict_overlap(core, self.m, p, 'int', 'scalar', 1460, 'hot', 11,
                                         cold_latency=False, dis=dis)
        core.call_code = False
        self.assertEqual(model.predict_overlap(core, self.m, p, 'int', 'scalar', 1460, 'hot', 11,
                                               cold_latency=False, dis=dis)[2], sc)

    def test_dataflow_runs_the_path(self):
        # the loop of test_dataflow_chain_overlaps_calls, with the code a
        # kernel runs around it: a set-up that starts the state from a
        # constant and a fold that waits for the chain's end (4 dependent
        # vector instructions, then to a general register). At 1460 B the
        # path costs more than the loop alone (the fold's waiting
        # instructions hold entries the next call's chain would take, and
        # are dispatched besides); at 64 KB (one call) the path is not run.
        # kernel_loops() attaches the path only where its loops are the
        # kernel's main loops; predict_overlap() then adds the remainder to
        # the other terms, not beside dataflow.
        p = model.pipeline_of('syn.n1.s1.a10')
        body = self._syn_loop()
        setup = [('movabs', '$0x9e3779b97f4a7c15,%rax'), ('vpbroadcastq', '%rax,%zmm1')]
        fold = [('vextracti64x4', '$0x1,%zmm1,%ymm2'), ('vpaddq', '%ymm1,%ymm2,%ymm2'),
                ('vextracti64x2', '$0x1,%ymm2,%xmm1'), ('vpaddq', '%xmm2,%xmm1,%xmm1'),
                ('vmovq', '%xmm1,%rax'), ('vzeroupper', ''), ('ret', '')]
        path = [('code', setup), ('loop', body), ('code', fold)]
        core = self._df_core()
        alone = [dict(model.loop_stats(body), body=body)]
        withp = [dict(alone[0], path=path)]
        a = model.dataflow(core, p, 'int', 'avx512', 1460, alone)[0]
        b = model.dataflow(core, p, 'int', 'avx512', 1460, withp)[0]
        self.assertGreater(b, a)
        # 9 more instructions per call at 8 per cycle at least; and no more
        # than the fold's latency on top of the loop alone
        self.assertGreaterEqual((b - a) * 1460, 9 / 8 - 0.01)
        self.assertLess((b - a) * 1460, 2 + 4 * 2 + 2 + 2)
        core.df_path = False
        self.assertEqual(model.dataflow(core, p, 'int', 'avx512', 1460, withp)[0], a)
        core.df_path = True
        self.assertEqual(model.dataflow(core, p, 'int', 'avx512', 65536, withp),
                         model.dataflow(core, p, 'int', 'avx512', 65536, alone))
        # whole_path() is the one decision dataflow() and predict_overlap()
        # share: a path with a loop the simulation does not have is not run
        self.assertEqual(model.whole_path(core, withp, 22), path)
        self.assertIsNone(model.whole_path(core, withp, 1024))
        self.assertIsNone(model.whole_path(core, alone, 22))
        two = [dict(withp[0], path=path + [('loop', body)])]
        self.assertIsNone(model.whole_path(core, two, 22))
        self.assertEqual(model.dataflow(core, p, 'int', 'avx512', 1460, two)[0], a)
        core.df_path = False
        self.assertIsNone(model.whole_path(core, withp, 22))
        core.df_path = True
        sym = ilpgen.fn_symbol(p, 'int', 'avx512')
        ls = model.kernel_loops({sym: [body]}, p, 'int', 'avx512', paths={sym: path})
        self.assertEqual(ls[0]['path'], path)
        other = [('code', setup), ('loop', body[:-1] + [('jb', '0 <f>')])]
        ls = model.kernel_loops({sym: [body]}, p, 'int', 'avx512', paths={sym: other})
        self.assertNotIn('path', ls[0])

    def test_dataflow_tern_source_latency(self):
        # a recurrence through vpternlogd: via a source operand it takes
        # probe.py dep_tern's latency (3 cycles), via the destination
        # (which the instruction also reads) the vector ALU's (2)
        p = model.pipeline_of('syn.n1.s1.a10')
        tail = [('vmovdqu64', '%zmm2,(%rdi,%rcx,1)'), ('add', '$0x40,%rcx'),
                ('cmp', '%rcx,%rdx'), ('jae', '0 <f>')]
        via_src = [('vmovdqu64', '(%rdi,%rcx,1),%zmm0'),
                   ('vpternlogd', '$0x96,%zmm1,%zmm0,%zmm2'),
                   ('vmovdqa64', '%zmm2,%zmm1')] + tail
        via_dst = [('vmovdqu64', '(%rdi,%rcx,1),%zmm0'),
                   ('vpternlogd', '$0x96,%zmm3,%zmm0,%zmm2')] + tail
        ins = model._df_insns(via_src, 2.0, 4.0, True, 1.0)
        self.assertEqual(ins[1][-1], {'z1': 1.0, 'z0': 1.0})
        self.assertEqual(model._df_insns(via_src, 2.0, 4.0, True)[1][-1], {})
        core = self._df_core()

        def per_block(body):
            dis = [dict(model.loop_stats(body), body=body)]
            return model.dataflow(core, p, 'int', 'avx512', 65536, dis)[0] * 64
        self.assertAlmostEqual(per_block(via_src), 2.0, places=3)   # no dep_tern
        self.assertAlmostEqual(per_block(via_dst), 2.0, places=3)
        core.tern_lat = 3.0
        self.assertAlmostEqual(per_block(via_src), 3.0, places=3)
        self.assertAlmostEqual(per_block(via_dst), 2.0, places=3)
        # sim_dispatch: an operand needed `late` cycles after it is ready
        # (one scheduler entry: the third instruction waits for the
        # second's issue, at a's 3 + 1 with it, at 3 without)
        st = [([], None, [('a', 2.0)], 0.0, True),
              (['a'], None, [('b', 2.0)], 0.0, True, None, None, {'a': 1.0}),
              ([], None, [('c', 1.0)], 0.0, True)]
        self.assertEqual(model.sim_dispatch(st, 8, 1), [0, 1, 4])
        st[1] = st[1][:7]
        self.assertEqual(model.sim_dispatch(st, 8, 1), [0, 1, 3])

    def test_vector_spill_round_trip(self):
        # a state word spilled from a zmm register: reloaded, one add,
        # stored back every iteration; the recurrence is the add plus the
        # slot's round trip, st_fwd for a 64-bit register, st_fwd_vec for
        # a vector one
        body = [('vmovdqu64', '0x40(%rsp),%zmm1'), ('vpaddq', '%zmm0,%zmm1,%zmm1'),
                ('vmovdqu64', '%zmm1,0x40(%rsp)'), ('add', '$0x40,%rcx'), ('jae', '0 <f>')]
        self.assertAlmostEqual(model.loop_stats(body, 4, 0.5)['chain'], 1.5)
        self.assertAlmostEqual(model.loop_stats(body, 4, 0.5, st_fwd_vec=11.0)['chain'], 12.0)
        sbody = [('mov', '0x40(%rsp),%rax'), ('add', '%rdx,%rax'), ('mov', '%rax,0x40(%rsp)'),
                 ('add', '$0x8,%rcx'), ('jae', '0 <f>')]
        self.assertAlmostEqual(model.loop_stats(sbody, 4, 0.5, st_fwd_vec=11.0)['chain'], 1.5)
        core = model.Core(dict(PROBE, st_fwd_vec=2.0 / 11.0))
        self.assertAlmostEqual(core.st_fwd_vec, 11.0)
        self.assertAlmostEqual(model.Core(PROBE).st_fwd_vec, model.Core(PROBE).st_fwd)


def _cpu_flags():
    try:
        with open('/proc/cpuinfo') as fh:
            for line in fh:
                if line.startswith('flags'):
                    return set(line.split(':', 1)[1].split())
    except OSError:
        pass
    return set()


AVX512_FLAGS = ['-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mavx2', '-mbmi',
                '-mbmi2', '-maes', '-mvaes']

# A harness around one generated intpf kernel: CN_ILP_PF_TRACE records every
# prefetch address; main() runs every length 0..LEN_MAX at four source
# alignments and prints each prefetch outside the source (or into a line
# prefetched before in the same call), and the lines it should have reached
# but did not; exit status 1 if any.
TRACE_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const unsigned char *tr_addr[4096];
static int tr_n;
#define CN_ILP_PF_TRACE(p, write) \
	((void)(write), tr_n < 4096 ? (void)(tr_addr[tr_n++] = (p)) : (void)0)
%(code)s
int main(void)
{
	enum { LEN_MAX = %(len_max)d, PFD = CN_ILP_PF_DIST };
	unsigned char *src = aligned_alloc(64, LEN_MAX + 256);
	unsigned char *dst = aligned_alloc(64, LEN_MAX + 256);
	int bad = 0;
	memset(src, 0x5a, LEN_MAX + 256);
	for (size_t al = 0; al < 64; al += 21) {
		for (size_t len = 0; len <= LEN_MAX; len++) {
			const unsigned char *s = src + al;
			static unsigned char seen[LEN_MAX / 64 + 4];
			memset(seen, 0, sizeof(seen));
			tr_n = 0;
			(void)%(fn)s(%(args)s, len);
			for (int k = 0; k < tr_n; k++) {
				const unsigned char *p = tr_addr[k];
				size_t line = ((size_t)(uintptr_t)p >> 6) - ((size_t)(uintptr_t)s >> 6);
				if (p < s || p >= s + len) {
					printf("len %%zu al %%zu: prefetch at offset %%td, outside\n",
					       len, al, p - s);
					bad = 1;
				} else if (seen[line]++) {
					printf("len %%zu al %%zu: line %%zu prefetched twice\n", len, al, line);
					bad = 1;
				}
			}
			/* every line holding a byte of the first len - 2 blocks - 64 */
			size_t want = len > 3 * 64 ? len - 3 * 64 : 0;
			for (size_t o = 0; o < want; o += 64) {
				size_t line = ((size_t)(uintptr_t)(s + o) >> 6) - ((size_t)(uintptr_t)s >> 6);
				if (!seen[line]) {
					printf("len %%zu al %%zu: line %%zu never prefetched\n", len, al, line);
					bad = 1;
				}
			}
			if (bad)
				return 1;
		}
	}
	return 0;
}
"""


@unittest.skipUnless(shutil.which(os.environ.get('CC', 'cc')) and platform.machine() in
                     ('x86_64', 'amd64'), 'no C compiler, or not x86-64')
class TestLoopOffsetProbe(unittest.TestCase):
    """hand_probes/gen_loop_offset.py: the C it writes compiles, runs, prints
    one positive figure per offset, and places each loop head the given
    number of bytes after a 64-byte boundary (checked in the disassembly
    where objdump is found)."""

    def test_offsets(self):
        gen = os.path.join(HERE, 'hand_probes', 'gen_loop_offset.py')
        text = subprocess.run([sys.executable, gen, '--offsets', '0,24,40'], check=True,
                              capture_output=True, text=True).stdout
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, 'lo.c'), os.path.join(tmp, 'lo')
            with open(src, 'w') as fh:
                fh.write(text)
            subprocess.run([os.environ.get('CC', 'cc'), '-O2', src, '-o', exe], check=True)
            out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
            got = re.findall(r'offset +(\d+): ([0-9.]+) TSC/B', out)
            self.assertEqual([int(o) for o, _ in got], [0, 24, 40])
            self.assertTrue(all(float(v) > 0 for _, v in got), out)
            if shutil.which('objdump'):
                dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', exe], check=True,
                                     capture_output=True, text=True).stdout
                # each loop: its first instruction, the 5-byte load, then the
                # index add
                heads = sorted(int(a, 16) - 5 for a in
                               re.findall(r'^ *([0-9a-f]+):\s+add +\$0x8,%rdx', dis, re.M))
                self.assertEqual(sorted(h % 64 for h in heads), [0, 24, 40])
        with self.assertRaises(subprocess.CalledProcessError):
            subprocess.run([sys.executable, gen, '--bound', 'reg'], check=True,
                           capture_output=True)


class TestAesTailProbe(unittest.TestCase):
    """hand_probes/gen_aes_tail.py: every edit it makes of the generated
    copy+aes128ctr+csum loop takes effect (a generator change that moved the
    text it edits must fail here, not leave a variant equal to the loop),
    and the program compiles."""

    @classmethod
    def setUpClass(cls):
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            'gen_aes_tail', os.path.join(HERE, 'hand_probes', 'gen_aes_tail.py'))
        cls.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cls.mod)
        em = ilpgen.Emitter()
        cls.fn = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        cls.v = {n: (c, t) for n, c, t in cls.mod.variants(cls.fn)}

    def test_edits(self):
        v = self.v
        self.assertEqual(sorted(v), ['alladd', 'biask', 'exact', 'gen', 'nocsum', 'nocsum421',
                                     'nofold', 'notail', 'order421'])
        self.assertEqual(v['gen'][1], self.fn)
        # the floors are not checked against the loop, the others are
        self.assertEqual(sorted(n for n, (c, _) in v.items() if c),
                         ['biask', 'exact', 'gen', 'order421'])
        # order421: the same three passes, largest first
        for n in ('order421', 'nocsum421'):
            at = [v[n][1].index(h) for h in self.mod.PASS_HEADS]
            self.assertTrue(at[2] < at[1] < at[0], n)
        nsum = len(self.mod.DPW.findall(self.fn))
        self.assertEqual(nsum, 8 + 1 + 2 + 4)  # main loop, passes of 1, 2, 4
        head, tail, fold = self.mod.split(self.fn)
        self.assertEqual(len(self.mod.DPW.findall(head)), 8)
        # exact / biask: the passes of 1, 2, 4 replaced by one switch
        for n in ('exact', 'biask'):
            self.assertNotIn(self.mod.TAIL_MARK, v[n][1])
            self.assertEqual(v[n][1].count('CN_AT_PASS('), 8)
        # biask: no biased sum left in the main loop; the last round key and
        # the eight stores carry the bias
        self.assertEqual(len(self.mod.DPW.findall(v['biask'][1])), 0)
        self.assertEqual(v['biask'][1].count('_mm512_aesenclast_epi128(k'), 8)
        self.assertEqual(v['biask'][1].count(', aes_rk10b)'), 8)
        self.assertEqual(v['biask'][1].count('_mm512_xor_si512(x'), 8 + 8)
        self.assertEqual(len(self.mod.DPW.findall(v['notail'][1])), 8)
        self.assertNotIn('dpwssd', v['alladd'][1])
        self.assertEqual(v['alladd'][1].count('_mm512_add_epi64(csum_d'), nsum)
        self.assertNotIn('dpwssd', v['nocsum'][1])
        self.assertNotIn('dpwssd', v['nocsum421'][1])
        self.assertEqual(len(self.mod.DPW.findall(v['order421'][1])), nsum)
        self.assertNotIn('cn_ilp_hsum512', v['nofold'][1])
        self.assertIn('cn_ilp_hsum512', v['exact'][1])

    @unittest.skipUnless(shutil.which(os.environ.get('CC', 'cc')) and platform.machine() in
                         ('x86_64', 'amd64'), 'no C compiler, or not x86-64')
    def test_compiles(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'cn_ilp.h'), 'w') as fh:
                fh.write(ilpgen.Emitter().header([ilpgen.Pipeline('copy,aes128ctr,csum')]))
            src = os.path.join(tmp, 'at.c')
            with open(src, 'w') as fh:
                fh.write(self.mod.program())
            # the floors leave variables and the prelude's helpers unused
            cmd = [os.environ.get('CC', 'cc'), '-O1', '-std=gnu11', '-Wall', '-Werror',
                   '-Wno-unused-variable', '-Wno-unused-function',
                   '-Wno-unused-but-set-variable', '-c',
                   '-I', tmp, '-I', os.path.join(HERE, '..', 'include'), src,
                   '-o', os.path.join(tmp, 'at.o')] + AVX512_FLAGS + ['-mavx512vnni']
            r = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])


@unittest.skipUnless(shutil.which(os.environ.get('CC', 'cc')), 'no C compiler')
class TestPrefetchBounds(unittest.TestCase):
    """intpf prefetches stay inside the source buffer, one per line: the
    generated kernel, compiled with CN_ILP_PF_TRACE, at every length and
    four alignments (a prefetch never faults, so a guard page or ASan
    could not see one that strays)."""

    def run_kernel(self, text, isa, pf_dist, len_max=1500):
        em = ilpgen.Emitter(pf_dist=pf_dist)
        p = ilpgen.Pipeline(text)
        fn = ilpgen.fn_symbol(p, 'intpf', isa)
        code = em.prelude(isa) + '\n' + em.function(p, 'intpf', isa)
        # in place, the kernel works on (and prefetches) the traced buffer
        args = 'dst + 3, s' if p.copy else '(void *)s, NULL'
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'cn_ilp.h'), 'w') as fh:
                fh.write(em.header([p]))
            src = os.path.join(tmp, 't.c')
            with open(src, 'w') as fh:
                fh.write(TRACE_MAIN % dict(code=code, fn=fn, args=args, len_max=len_max))
            exe = os.path.join(tmp, 't')
            cc = os.environ.get('CC', 'cc')
            cmd = [cc, '-O2', '-std=gnu11', '-I', tmp, '-I', os.path.join(HERE, '..', 'include'),
                   src, '-o', exe] + (AVX512_FLAGS if isa == 'avx512' else [])
            subprocess.run(cmd, check=True)
            r = subprocess.run([exe], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, '%s %s: %s' % (text, isa, r.stdout[:2000]))

    def test_copy_pipeline_scalar(self):
        for d in (256, 1024):
            self.run_kernel('copy,bswap32,pes,csum', 'scalar', d)

    def test_in_place_scalar(self):
        self.run_kernel('bswap32,pes,csum', 'scalar', 256)

    @unittest.skipUnless({'avx512f', 'avx512bw'} <= _cpu_flags(), 'no AVX-512')
    def test_copy_pipeline_avx512(self):
        for d in (64, 256, 1024):
            self.run_kernel('copy,bswap32,pes,csum', 'avx512', d)

    @unittest.skipUnless({'avx512f', 'avx512bw'} <= _cpu_flags(), 'no AVX-512')
    def test_synthetic_avx512(self):
        self.run_kernel('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1', 'avx512', 256)


if __name__ == '__main__':
    unittest.main()
