#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cord without a compiler or valgrind: the orders on hand-checked graphs
(tests/cord/README.md derives them step by step), the three profile
readers on hand-written inputs, merging, the LTO refusal, the emitters.

Usage: test_unit.py SOURCE_ROOT
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
sys.path.insert(0, os.path.join(ROOT, 'tools', 'cord'))
DATA = os.path.join(ROOT, 'tests', 'cord', 'data')
CORD = os.path.join(ROOT, 'tools', 'cord', 'cord.py')

from cordlib import emit, order, profile   # noqa: E402
from cordlib.profile import EXTERNAL      # noqa: E402


def run_order(path, algo, coverage=0.999):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'o')
        r = subprocess.run([sys.executable, CORD, 'order', path, '--algo', algo,
                            '--coverage', str(coverage), '-o', out],
                           capture_output=True, text=True)
        if r.returncode:
            raise AssertionError(r.stderr)
        return [line.strip() for line in open(out) if not line.startswith('#')]


class Orders(unittest.TestCase):
    def test_c3(self):
        # G alone (its only caller gives 10 < 10% of 200); B and C join A;
        # D joins E, its hottest caller; H would dilute A's cluster > 8x;
        # P+Q would pass 1 MiB.  Clusters by density: G, ABC, ED, H, P, Q.
        self.assertEqual(run_order(os.path.join(DATA, 'c3.prof'), 'c3'),
                         ['G', 'A', 'B', 'C', 'E', 'D', 'H', 'P', 'Q'])

    def test_c3_coverage(self):
        # 90% of 3825 calls is reached with A B D C G; E is then not placed,
        # so D's hottest remaining caller is B with 50 < 10% of 1000: D stays
        # alone, and at density 10 it goes before cluster ABC (2400/400 = 6).
        self.assertEqual(run_order(os.path.join(DATA, 'c3.prof'), 'c3', 0.9),
                         ['G', 'D', 'A', 'B', 'C'])

    def test_pettis_hansen(self):
        # a-b, then c-d, then b-c joins ab+cd as a b c d; a-e puts e next to
        # a by reversing: d c b a e.  Chain x y is lighter and comes last.
        self.assertEqual(run_order(os.path.join(DATA, 'ph.prof'), 'ph'),
                         ['d', 'c', 'b', 'a', 'e', 'x', 'y'])

    def test_hotness(self):
        self.assertEqual(run_order(os.path.join(DATA, 'c3.prof'), 'hotness'),
                         ['A', 'B', 'D', 'C', 'G', 'P', 'Q', 'H', 'E'])

    def test_c3_limits_are_the_papers(self):
        self.assertEqual(order.C3_MAX_CLUSTER, 1 << 20)
        self.assertEqual(order.C3_MAX_DENSITY_DROP, 8)
        self.assertEqual(order.C3_MIN_EDGE_FRACTION, 0.10)


class Readers(unittest.TestCase):
    def test_callgrind(self):
        p = profile.read_callgrind(os.path.join(DATA, 'small.callgrind'))
        a = ('/src/a.c', 'step')
        b = ('/src/b.c', 'step')
        main = ('/src/a.c', 'main')
        self.assertEqual(p.edges, {
            (main, a): 7, (main, b): 2, (main, ('/src/a.c', 'helper')): 1,
            (b, a): 3, (EXTERNAL, main): 1})
        # Inlined lines count for main; a call's inclusive cost does not.
        self.assertEqual(p.cost, {main: 7, a: 10, b: 6, ('/src/a.c', 'helper'): 4})

    def test_callgrind_object_filter(self):
        p = profile.read_callgrind(os.path.join(DATA, 'small.callgrind'), ['prog'])
        self.assertEqual(len(p.edges), 5)
        p = profile.read_callgrind(os.path.join(DATA, 'small.callgrind'), ['libc.so.6'])
        self.assertEqual(p.edges, {})

    def test_perf(self):
        p = profile.read_perf_script(os.path.join(DATA, 'small.perf'), ['prog'])
        self.assertEqual(p.edges, {(('', 'rx_csum'), ('', 'step')): 2,
                                   (('', 'main'), ('', 'rx_csum')): 1})
        self.assertEqual(p.cost, {('', 'step'): 2, ('', 'rx_csum'): 1})
        p = profile.read_perf_script(os.path.join(DATA, 'small.perf'))
        self.assertEqual(p.edges[(('', 'rx_csum'), ('', 'memcpy'))], 1)

    def test_round_trip_and_merge(self):
        cg = profile.read_callgrind(os.path.join(DATA, 'small.callgrind'))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'p')
            cg.write(path)
            back = profile.read_profile(path)
        self.assertEqual(back.edges, cg.edges)
        self.assertEqual(back.cost, cg.cost)
        pf = profile.read_perf_script(os.path.join(DATA, 'small.perf'), ['prog'])
        m = profile.merge([cg, pf], [2, 3])
        self.assertEqual(m.edges[(('', 'rx_csum'), ('', 'step'))], 6)
        self.assertEqual(m.edges[(('/src/a.c', 'main'), ('/src/a.c', 'step'))], 14)
        # Normalised: each profile first scaled to the larger total (14 calls).
        m = profile.merge([cg, pf], [1, 1], normalize=True)
        self.assertAlmostEqual(m.edges[(('', 'rx_csum'), ('', 'step'))], 2 * 14 / 3)


class Lto(unittest.TestCase):
    def test_refused_then_dropped(self):
        with tempfile.TemporaryDirectory() as tmp:
            prof = os.path.join(tmp, 'p')
            with open(prof, 'w') as f:
                f.write('edge <external> main 1\nedge main hot.lto_priv.0 50\n'
                        'edge main hot2 40\n')
            r = subprocess.run([sys.executable, CORD, 'order', prof, '-o',
                                os.path.join(tmp, 'o')], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn('LTO', r.stderr)
            r = subprocess.run([sys.executable, CORD, 'order', prof, '--lto=drop', '-o',
                                os.path.join(tmp, 'o')], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual([x.strip() for x in open(os.path.join(tmp, 'o'))][1:],
                             ['main', 'hot2'])


class Emitters(unittest.TestCase):
    ORDER = [('', 'ct_packet'), ('hot_a.c', 'step'), ('hot_b.c', 'step'), ('', 'main')]

    def test_ld(self):
        with redirect_stderr(io.StringIO()):
            text = emit.emit_ld(self.ORDER)
        self.assertIn('INSERT BEFORE .text;', text)
        lines = [x.strip() for x in text.splitlines()]
        # A static is selected by its object file, a global anywhere.
        self.assertIn('*hot_a.c.o(.text.step .text.hot.step .text.startup.step '
                      '.text.unlikely.step .text.exit.step)', lines)
        self.assertLess(lines.index(next(x for x in lines if x.startswith('*hot_a.c.o'))),
                        lines.index(next(x for x in lines if x.startswith('*hot_b.c.o'))))
        self.assertIn('*(.text.main .text.hot.main .text.startup.main .text.unlikely.main '
                      '.text.exit.main)', lines)

    def test_lld_and_gold_are_by_name(self):
        self.assertEqual(emit.emit_lld(self.ORDER), 'ct_packet\nstep\nmain\n')
        gold = emit.emit_gold(self.ORDER).split()
        self.assertEqual(gold.count('.text.step'), 1)
        self.assertLess(gold.index('.text.ct_packet'), gold.index('.text.step'))
        self.assertEqual(emit.guess_sections('f.cold'), ['.text.unlikely.f'])

    def test_archive_pattern(self):
        self.assertEqual(emit.object_pattern('src/libcachenet.a(csum.c.o)'),
                         '*libcachenet.a:csum.c.o')
        self.assertEqual(emit.object_pattern('build/x.p/hot_a.c.o'), '*hot_a.c.o')


if __name__ == '__main__':
    unittest.main(argv=[sys.argv[0], '-v'])
