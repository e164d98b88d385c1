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
        for bad in ('', 'bswap32,copy', 'nosuch', 'csum,csum'):
            with self.assertRaises(ValueError, msg=bad):
                ilpgen.Pipeline(bad)

    def test_every_function_has_every_form(self):
        for f in FUNCS.values():
            for isa in ilpgen.ISAS:
                self.assertIn(isa, f.forms, f.name)
                self.assertIn('ops', f.forms[isa])


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
        self.assertIn('__builtin_prefetch', em.function(p, 'intpf', 'avx512'))

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

    def test_data_accesses(self):
        # copy,f,g,csum with W = 8: seq reads 4x, writes 3x; int reads 1, writes 1
        fns = [('copy', True), ('f', True), ('g', True), ('csum', False)]
        self.assertAlmostEqual(model.da_seq(fns, 8), 7 / 8)
        self.assertAlmostEqual(model.da_ilp(fns, 8), 2 / 8)
        # in place, checksum only: one read per word
        self.assertAlmostEqual(model.da_ilp([('csum', False)], 8), 1 / 8)


if __name__ == '__main__':
    unittest.main()
