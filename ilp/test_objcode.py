#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the ILP model's object-code walk (objdump and x86 operand
parsing, a call's walk), its dataflow core and its fits (run by `meson test
ilpgen`)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ilpgen  # noqa: E402
import ilpmodel as model  # noqa: E402
from ilpmodel import dfcore, fit  # noqa: E402
from test_model import PROBE, _F, _P, _machine  # noqa: E402


class TestObjcode(unittest.TestCase):
    """The object-code walk, the dataflow core and the fits on constructed
    disassembly and machines, answers worked out by hand."""

    def setUp(self):
        self.core = model.Core(PROBE)
        self.m = _machine()

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
        grids = fit.SCHED_GRID, fit.RETIRE_GRID
        try:
            fit.SCHED_GRID, fit.RETIRE_GRID = (88, 96, 104, 112, 120), (None, 128, 160, 192)
            self.assertEqual(model.fit_sched(pts, 2.0, 4.0, 7, 16, ports, 'vec'), (104, 160))
        finally:
            fit.SCHED_GRID, fit.RETIRE_GRID = grids

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
        ins = dfcore._df_insns(via_src, 2.0, 4.0, True, 1.0)
        self.assertEqual(ins[1][-1], {'z1': 1.0, 'z0': 1.0})
        self.assertEqual(dfcore._df_insns(via_src, 2.0, 4.0, True)[1][-1], {})
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
