#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the ILP generator (run by `meson test ilpgen`)."""

import os
import re
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
        self.assertNotIn('__builtin_prefetch', integ)
        pf = em.function(p, 'intpf', 'avx512')
        self.assertIn('__builtin_prefetch', pf)
        # the head the loop's prefetches never reach, before the loop
        self.assertLess(pf.index('cn_ilp_pf_head(src, len);'), pf.index('for (; i + 64'))

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

    def test_overlap_variant(self):
        # max(compute + spills, memory), never more than the additive model
        self.assertAlmostEqual(model.clocks_overlap(0.5, 2.0, 0.3, 0.0, 1.0), 1.0)
        self.assertAlmostEqual(model.clocks_overlap(0.1, 1.0, 0.3, 0.0, 1.0), 0.3)
        self.assertLessEqual(model.clocks_overlap(0.5, 2.0, 0.3, 0.1, 1.0),
                             model.clocks(0.5, 2.0, 0.3, 0.1, 1.0))

    def test_data_accesses(self):
        # copy,f,g,csum with W = 8: seq reads 4x, writes 3x; int reads 1, writes 1
        fns = [('copy', True), ('f', True), ('g', True), ('csum', False)]
        self.assertAlmostEqual(model.da_seq(fns, 8), 7 / 8)
        self.assertAlmostEqual(model.da_ilp(fns, 8), 2 / 8)
        # in place, checksum only: one read per word
        self.assertAlmostEqual(model.da_ilp([('csum', False)], 8), 1 / 8)


if __name__ == '__main__':
    unittest.main()
