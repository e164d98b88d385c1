#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Not a timing probe: a simulation (ilp/README.md, session 11). Runs
model.py's dataflow core (sim_dispatch) over every instruction a kernel's
call executes at 1460 B (walk_call()'s trace), 16 calls back to back, with
and without bench_ilp.cc run()'s own code in front of each call: the
`div` of `j % b.dst.size()` (and, for a copy kernel, of `j % b.src.size()`)
whose remainder indexes the buffer pointer the kernel then uses. The div
latency is ASSUMED (no input measures it): the columns give it in cycles,
'p' the two divs of a copy in parallel, 's' one after the other.

  python3 sim_harness.py PROBE.json LIBCN_ILP_AVX512.a
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import json  # noqa: E402
import model  # noqa: E402


def harness(c, copy, div, serial, ld):
    """The timed loop's instructions before call c (its registers named
    (c, r)): the div, the pointer's load, the rest as independent ALU ops."""
    n = lambda r: (c, r)  # noqa: E731
    out = [([n('j')], None, [(n('rem1'), div)], 0.0, True, 'alu', None, {}),
           ([], [n('rem1')], [(n('rdi'), 0.0)], ld, True, None, 'load', {})]
    out += [([], None, [], 0.0, True, 'alu', None, {})] * 4
    if copy:
        out += [([], [], [(n('sb'), 0.0)], ld, True, None, 'load', {}),
                ([], [], [(n('se'), 0.0)], ld, True, None, 'load', {}),
                ([n('sb'), n('se')], None, [(n('cnt'), 2.0)], 0.0, True, 'alu', None, {}),
                ([n('j'), n('cnt')] + ([n('rem1')] if serial else []), None,
                 [(n('rem2'), div)], 0.0, True, 'alu', None, {}),
                ([], [n('rem2'), n('sb')], [(n('rsi'), 0.0)], ld, True, None, 'load', {})]
    else:
        out.append(([n('rdi')], None, [(n('rsi'), 0.0)], 0.0, False, None, None, {}))
    return out + [([], None, [], 0.0, True, 'alu', None, {})] * 3


def simulate(core, body, size, copy, div, serial, calls=16):
    """Cycles per call in the steady state (the last half of `calls`)."""
    ld, lat = core.ld_lat, core.vec_lat
    tx = core.tern_lat - lat if core.tern_lat else 0.0
    fwd = {'store': core.st_fwd - ld, 'vstore': core.st_fwd_vec - ld}
    tr = []
    model.walk_call(body, size, 64, trace=tr)
    ins = model._df_insns([(body[i][1], body[i][2]) for i in tr], lat, ld, True, tx)
    per = []

    def stream():
        for c in range(calls):
            hs = harness(c, copy, div, serial, ld) if div is not None else []
            per.append(len(hs) + len(ins))
            yield from hs
            for srcs, addr, dsts, _k, mi, mo, lt, sq, opp, mp, late in ins:
                ms = None
                if mi or addr:
                    ms = [(c, r) for r in addr]
                    if mi and mi[0] == 'stack':
                        ms.append((c,) + mi)
                dd = [((c, r), lt) for r in dsts]
                if mo and mo[0] == 'stack':
                    dd.append(((c,) + mo, fwd.get(opp, fwd['store'])))
                yield ([(c, r) for r in srcs], ms, dd, ld if mi else 0.0, sq, opp, mp,
                       {(c, r): x for r, x in late.items()})
    d = model.sim_dispatch(stream(), core.sim_issue, core.sched['vec'], core.sim_ports, None)
    h = calls // 2
    return (d[(calls - 1) * per[0]] - d[h * per[0]]) / (calls - 1 - h)


def main():
    core = model.Core(json.load(open(sys.argv[1])))
    fns = model.objdump_bodies(model.read_objdump(sys.argv[2]))
    for sym, copy in (('cn_ilp_syn_n3_s0_1_1_a2_3_2_o110_int_avx512', False),
                      ('cn_ilp_copy_syn_n3_s0_1_1_a2_3_2_o110_int_avx512', True),
                      ('cn_ilp_bswap32_pes_csum_int_avx512', False),
                      ('cn_ilp_copy_bswap32_pes_csum_int_avx512', True)):
        cols = ['%s/%s:%.0f' % ('-' if div is None else div, 's' if serial else 'p',
                                simulate(core, fns[sym], 1460, copy, div, serial))
                for div, serial in ((None, False), (0, False), (14, False), (14, True),
                                    (20, True))]
        print('%-50s %s' % (sym, '  '.join(cols)))


if __name__ == '__main__':
    main()
