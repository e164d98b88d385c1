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

from cordlib import elf, emit, order, place, profile, verify   # noqa: E402
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

    def test_cut_per_phase(self):
        # C carries 0.05% of the two phases' instructions together, under
        # the cut at 99.9%, but all of its own phase's: placed when the
        # phases are given apart, not when merged into one profile first.
        with tempfile.TemporaryDirectory() as tmp:
            one, two, both = (os.path.join(tmp, n) for n in ('1.prof', '2.prof', 'm.prof'))
            with open(one, 'w') as f:
                f.write('edge <external> A 1\nedge A B 10\ncost A 1000000\n'
                        'cost B 1000000\nsize A 100\nsize B 100\n')
            with open(two, 'w') as f:
                # 1000 bytes: not one of the small functions placed by calls
                f.write('edge <external> C 5\ncost C 1000\nsize C 1000\n')
            subprocess.run([sys.executable, CORD, 'merge', one, two, '-o', both], check=True)

            def placed(*profs):
                out = os.path.join(tmp, 'o')
                subprocess.run([sys.executable, CORD, 'order', *profs, '--icache', 'none',
                                '-o', out], check=True, capture_output=True)
                return {line.split()[0] for line in open(out) if not line.startswith('#')}
            self.assertEqual(placed(both), {'A', 'B'})
            self.assertEqual(placed(one, two), {'A', 'B', 'C'})
        self.assertEqual(order.coverage_cut({'a', 'b', 'c'}, {'a': 9, 'b': 1, 'c': 0}, 0.5,
                                            [{'b': 5, 'c': 0}]), {'a', 'b'})

    def test_small_and_frequent(self):
        # W and B carry 0.01% of the instructions each, under the cut, but
        # half the calls: the small W is placed, the 5000-byte B is not,
        # nor the small C, called once.
        with tempfile.TemporaryDirectory() as tmp:
            prof, out = os.path.join(tmp, 'p.prof'), os.path.join(tmp, 'o')
            with open(prof, 'w') as f:
                f.write('edge <external> A 10\nedge A W 1000\nedge A B 1000\n'
                        'edge A C 1\ncost A 1000000\ncost W 100\ncost B 100\n'
                        'cost C 5\nsize A 1000\nsize W 20\nsize B 5000\nsize C 10\n')
            r = subprocess.run([sys.executable, CORD, 'order', prof, '--icache', 'none',
                                '-o', out], check=True, capture_output=True, text=True)
            self.assertEqual({line.split()[0] for line in open(out)
                              if not line.startswith('#')}, {'A', 'W'})
            self.assertIn('1 small functions called as often as the hot ones', r.stderr)

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


def fake_elf(funcs):
    """An ElfFunctions of hand-made symbols (no readelf)."""
    e = elf.ElfFunctions.__new__(elf.ElfFunctions)
    e.path, e.funcs, e.by_name, e.file_symbols = 'prog', funcs, {}, []
    for f in funcs:
        e.by_name.setdefault(f.name, []).append(f)
    return e


class Symbols(unittest.TestCase):
    # What a static link makes of a library built with -fvisibility=hidden:
    # its internal functions are LOCAL, after an empty STT_FILE entry.
    HIDDEN = elf.Func('inflate', '', 0x2000, 500, True, '.text', 'prog')
    STEP_A = elf.Func('step', 'hot_a.c', 0x1000, 100, True, '.text', 'prog')
    STEP_LIB = elf.Func('step', '', 0x3000, 100, True, '.text', 'prog')

    def test_hidden_found_by_file_and_name(self):
        e = fake_elf([self.HIDDEN, self.STEP_A, self.STEP_LIB])
        # callgrind names the file; the symbol table has none for it
        self.assertEqual(e.lookup('inflate', '/src/lib/inflate.c'), [self.HIDDEN])
        self.assertEqual(e.lookup('step', '/src/lib/deflate.c'), [self.STEP_LIB])
        self.assertEqual(e.lookup('step', '/src/hot_a.c'), [self.STEP_A])
        # the key an order gives it, and back
        self.assertEqual(e.key(self.STEP_LIB), ('', 'step'))
        self.assertEqual(e.lookup('step', ''), [self.STEP_LIB])
        # a static of another file is not taken for a unique name
        e = fake_elf([self.STEP_A])
        self.assertEqual(e.lookup('step', '/src/hot_b.c'), [])

    def test_by_address(self):
        import cord
        e = fake_elf([self.HIDDEN, self.STEP_A, self.STEP_LIB])
        p = profile.Profile()
        p.add_edge(EXTERNAL, ('/src/x.c', 'inflate'), 3)
        p.add_edge(('/src/x.c', 'inflate'), ('/src/lib/z.c', 'step'), 5)
        # run addresses at a load bias of 0x100000; the file names say
        # nothing the symbol table knows
        p.add_addr(('/src/x.c', 'inflate'), 0x102000)
        p.add_addr(('/src/lib/z.c', 'step'), 0x103010)
        p.add_hot(('/src/x.c', 'inflate'), {0x102000: 4, 0x102040: 4, 0x103000: 1})
        with redirect_stderr(io.StringIO()):
            out, sizes = cord.canonical(p, e, 'refuse')
        self.assertEqual(out.edges, {(EXTERNAL, ('', 'inflate')): 3,
                                     (('', 'inflate'), ('', 'step')): 5})
        self.assertEqual(sizes, {('', 'inflate'): 500, ('', 'step'): 100})
        # executed blocks as offsets into the function (0x103000 is not in it)
        self.assertEqual(out.hot_offsets[('', 'inflate')], {0: 4, 0x40: 4})


class Placement(unittest.TestCase):
    GEOM = (1024, 1, 64)          # 16 sets of 64 bytes, direct-mapped

    @staticmethod
    def lines(n, size, times):
        return {b: times for b in range(0, size, 16)}

    def test_phase_heat(self):
        p = profile.Profile()
        p.add_edge(EXTERNAL, ('', 'a'), 5)
        p.add_edge(('', 'a'), ('', 'b'), 7)
        a, b = ('', 'a'), ('', 'b')
        # b has executed blocks; a has none: all of it, as often as called
        h = place.phase_heat(p, [a, b], {a: 130, b: 64}, {b: {16: 9}})
        self.assertEqual(h, {a: {0: 5, 64: 5, 128: 5}, b: {16: 9}})

    def test_place_avoids_lines_of_one_phase(self):
        # a and c run in one phase, b in another.  Packed, c wraps onto
        # a's sets 0-7; placed, it goes to sets 8-15, which only b uses.
        a, b, c = ('', 'a'), ('', 'b'), ('', 'c')
        size = {a: 512, b: 512, c: 512}
        heat = [{a: self.lines(0, 512, 100), c: self.lines(0, 512, 10)},
                {b: self.lines(0, 512, 1000)}]
        off, gaps, left = place.place([a, b, c], size, heat, self.GEOM)
        self.assertEqual((off, gaps, left), ({a: 0, b: 0x200, c: 0x600}, 0x200, 0))
        # packed: 8 pairs of lines, each 2 x min(100, 10) misses
        off, gaps, left = place.place([a, b, c], size, heat, self.GEOM, pack=True)
        self.assertEqual((off[c], gaps, left), (0x400, 0, 8 * 2 * 10))

    def test_only_hot_lines_count(self):
        # c is as large as the cache, but only its last 64 bytes run: at
        # the packed offset 0x3c0 they fall in set 14, b's (another
        # phase) -- no gap, no conflict.
        a, b, c = ('', 'a'), ('', 'b'), ('', 'c')
        size = {a: 512, b: 448, c: 1024}
        heat = [{a: self.lines(0, 512, 100), c: {960: 50, 976: 50}},
                {b: self.lines(0, 448, 100)}]
        off, gaps, left = place.place([a, b, c], size, heat, self.GEOM)
        self.assertEqual((off[c], gaps, left), (0x3c0, 0, 0))

    def test_associativity(self):
        # two ways: a line conflicts only where two others of its phase are
        a, b, c = ('', 'a'), ('', 'b'), ('', 'c')
        size = {a: 512, b: 512, c: 512}
        heat = [{f: self.lines(0, 512, 10) for f in (a, b, c)}]
        _o, _g, left = place.place([a, b, c], size, heat, (1024, 2, 64), pack=True)
        self.assertEqual(left, 8 * 2 * (10 + 10))    # c's 8 lines meet a's and b's
        _o, _g, left = place.place([a, b], size, heat, (1024, 2, 64), pack=True)
        self.assertEqual(left, 0)

    def test_geometry(self):
        self.assertEqual(place.parse_geometry('16384,1,64'), (16384, 1, 64))
        self.assertRaises(ValueError, place.parse_geometry, '16384,1,48')


class Runs(unittest.TestCase):
    def test_workload_file(self):
        import argparse
        import cord
        with tempfile.TemporaryDirectory() as tmp:
            w = os.path.join(tmp, 'w')
            with open(w, 'w') as f:
                f.write('# phases\n-c 3 "a b"\n\n-d < in.txt\n')
            a = argparse.Namespace(workload=w, stdin=None)
            self.assertEqual(cord.workload(a, ['prog']),
                             [(['prog', '-c', '3', 'a b'], os.devnull),
                              (['prog', '-d'], 'in.txt')])
            a = argparse.Namespace(workload=None, stdin='-')
            self.assertEqual(cord.workload(a, ['prog', 'x']), [(['prog', 'x'], '-')])

    def test_function_events(self):
        per = verify.function_events(os.path.join(DATA, 'small.callgrind'))
        # self cost only (a call's inclusive cost is not the caller's)
        self.assertEqual({k: v['Ir'] for k, v in per.items()},
                         {'main': 7, 'step': 16, 'helper': 4, '(below main)': 1})


if __name__ == '__main__':
    unittest.main(argv=[sys.argv[0], '-v'])
