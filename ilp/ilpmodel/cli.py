# SPDX-License-Identifier: BSD-2-Clause
"""The command line: reads memsig's JSON, the ILP benchmark's timed and
callgrind JSON, probe.py's JSON and the kernels' disassembly, fits the
parameters, and prints predicted beside measured TSC ticks per byte.
"""

import argparse
import json
import os
import re

from .core import Core, LATER_PASSES
from .equations import Machine, Model, compute_instr
from .fit import CALIB_ROW, KNEE_READS, calibrate_cpi, calibrate_efficiency, probe_R
from .kernels import COUNTED, WIDTH, isas_of, load_bench, pipeline_of
from .objcode import (kernel_loops, objdump_bodies, objdump_loops, objdump_paths, probe_R_objdump,
                      read_objdump)
from .overlap import predict_overlap


def inputs_of(a):
    """Fill a's --memsig, --bench, --sim, --probe and --objdump from the
    input set directory a.inputs (the files ilp/collect.py writes that are
    there)."""
    def there(name):
        p = os.path.join(a.inputs, name)
        return p if os.path.exists(p) else None
    a.memsig = a.memsig or there('memsig.json')
    a.bench = [p for p in (there('table.json'), there('sweep.json')) if p] + a.bench
    a.sim = a.sim or there('sim.json')
    a.probe = a.probe or there('probe.json')
    dumps = [p for p in (there('objdump-avx512.txt'), there('objdump-avx2.txt'),
                         there('objdump-scalar.txt')) if p]
    a.objdump = dumps + (a.objdump or []) if dumps or a.objdump else None


# The model's on/off switches (store_true options) and what each does.
SWITCHES = (
    ('--cold-probe',
     'flushed buffers at probe.py\'s flushed rate at the buffer\'s size '
     '(cold_read/copy_S) instead of memsig\'s DRAM stream rate (64 MB) plus '
     'one DRAM latency per stream; off by default: it matched fewer rows '
     '(README.md)'),
    ('--no-warm',
     'loops reading and writing at L2 at memsig\'s read and write rates '
     'added, not probe.py\'s warm in-place / copy rate at the buffer\'s '
     'size (warm_rmw_S, warm_copy_S; README.md)'),
    ('--no-window',
     'leave out the out-of-order window term'),
    ('--no-inflight',
     'leave out the flushed-source lines-in-flight term (probe cold_lat)'),
    ('--dataflow-only',
     'dataflow() replaces the window term too (by default the window '
     'term stays beside it: README.md)'),
    ('--retire',
     'dataflow()\'s core with an in-order window R beside the scheduler Q, '
     'both fitted to the window loops (README.md)'),
    ('--no-path',
     'dataflow() runs the main loops alone, with the remainder added '
     'outside, not the kernel\'s whole path (objdump_paths(); README.md)'),
    ('--no-call',
     'the AVX-512 issue term counts the compiled main loops\' instructions '
     'only, not the rest of the call (walk_call(): set-up, remainder, byte '
     'tail, fold; README.md)'),
    ('--no-loop-overlap',
     'a sequential call\'s first loop alone, even where it fits in the '
     'window and its memory stream could run under the later loops'),
    ('--no-loops',
     'AVX-512 counts and chains from the spec, not from --objdump\'s '
     'compiled main loops'),
)


def main(argv=None):
    ap = argparse.ArgumentParser(description='the ILP model against measurement')
    ap.add_argument('--inputs', metavar='DIR',
                    help='an input set ilp/collect.py wrote: its memsig.json, table.json, '
                         'sweep.json, sim.json, probe.json and objdump-*.txt, as if each were '
                         'given by the options below (options given as well are added)')
    ap.add_argument('--memsig', help='memsig --json output')
    ap.add_argument('--bench', action='append', default=[],
                    help='bench_ilp JSON (timed); may be repeated')
    ap.add_argument('--objdump', action='append',
                    help='libcn_ilp_avx512.a (or its objdump -d text): R for AVX-512 from the '
                         'synthetic sweep\'s spills, and the compiled main loops (AVX-512: '
                         'counts and chains; scalar, libcn_ilp_scalar.a: chains, callgrind '
                         'counting the rest); may be repeated')
    ap.add_argument('--sim', help='bench_ilp --cn_sim JSON (callgrind)')
    ap.add_argument('--probe', help='ilp/probe.py JSON: enables the overlap form')
    ap.add_argument('--key', default='tsc_per_byte_med')
    ap.add_argument('--R', help='override R, e.g. scalar=12,avx512=28')
    ap.add_argument('--no-dataflow', default='',
                    help='comma list of isas (scalar,avx2,avx512) whose chain and window terms stay '
                         'per loop in latency-1 instructions instead of dataflow()\'s simulation '
                         'of the compiled loops; "all" for every one')
    ap.add_argument('--later-passes', choices=('rmw', 'all', 'none'), default=LATER_PASSES,
                    help='a flushed sequential call\'s later in-place passes (probe.py '
                         'cold_pass*_S, where the probe has them): charge those that store '
                         '(rmw), load-only ones too (all), or none (README.md)')
    ap.add_argument('--explain', metavar='REGEX',
                    help='for each row whose "pipeline form isa size cache" matches REGEX, '
                         'print every loop\'s terms (TSC ticks per byte; the largest is the '
                         'loop\'s) and what the call adds outside its loops')
    for name, text in SWITCHES:
        ap.add_argument(name, action='store_true', help=text)
    a = ap.parse_args(argv)
    if a.inputs:
        inputs_of(a)
    if not a.memsig or not a.bench or not a.sim:
        ap.error('--memsig, --bench and --sim are required (or --inputs DIR)')
    with open(a.memsig) as fh:
        m = Machine(json.load(fh))
    med = {}
    for path in a.bench:
        med.update(load_bench(path, a.key))
    sim_ir = load_bench(a.sim, 'instructions_per_byte')
    sim_dr = load_bench(a.sim, 'sim_dr_per_byte')
    sim_dw = load_bench(a.sim, 'sim_dw_per_byte')
    core = None
    if a.probe:
        with open(a.probe) as fh:
            pr = json.load(fh)
        core = Core(pr)
        if a.no_window:
            core.win = {}
        if a.cold_probe:
            m.set_cold(pr)
        if not a.no_warm:
            m.set_warm(pr)
        if a.no_inflight:
            core.cold_lat = {}
        for isa in (('scalar', 'avx2', 'avx512') if a.no_dataflow == 'all' else
                    [x for x in a.no_dataflow.split(',') if x]):
            core.use_dataflow[isa] = False
        if a.dataflow_only:
            core.df_keep_window = False
        if a.no_path:
            core.df_path = False
        if a.no_call:
            core.call_code = False
        if a.no_loop_overlap:
            core.loop_overlap = False
        if a.later_passes == 'none':
            core.cold_pass = {}
        else:
            core.later_passes = a.later_passes
        if a.retire:
            core.df_retire = True
            core.fit_dataflow()
    # the AVX-512 kernels' compiled main loops (valgrind cannot count them)
    loops_by_sym, paths_by_sym, fns_by_sym = {}, {}, {}
    if a.objdump and core and not a.no_loops:
        for x in a.objdump:
            text = read_objdump(x)
            loops_by_sym.update(objdump_loops(text))
            paths_by_sym.update(objdump_paths(text))
            fns_by_sym.update(objdump_bodies(text))

    def dis_of(p, form, isa):
        if not loops_by_sym:
            return None
        ls = kernel_loops(loops_by_sym, p, form, isa, core.ld_lat or 4.0, core.st_fwd,
                          core.st_fwd_vec, paths_by_sym, fns_by_sym)
        if ls and isa in COUNTED:
            # callgrind counts the scalar and AVX2 kernels (tails included):
            # only the compiled recurrence (and body, for dataflow()) from
            # the disassembly
            ls = [dict(chain=x['chain'], moves=x['moves'], body=x['body'],
                       mem_ops=x['loads'] + x['stores']) for x in ls]
        return ls

    R, cpi = {}, {}
    # AVX2 where the inputs have its rows (a CPU without AVX-512), beside
    # scalar and AVX-512
    isas = isas_of(med, sim_ir)
    print('Architecture parameters (TSC ticks; W = register bytes)')
    for isa in isas:
        W = WIDTH[isa]
        R[isa], rows, note = probe_R(sim_dr, isa)
        if not rows and isa != 'scalar' and a.objdump:
            r, orows = probe_R_objdump('\n'.join(read_objdump(x) for x in a.objdump), isa=isa)
            rows = []
            if r is not None:
                R[isa], note = r, ('from the sweep\'s disassembly: first spilling S = n*s '
                                   '(stack refs in the int loop): ' + '  '.join(
                                       'S%d(n%d s%d):%d' % x for x in orows if x[3])[:200])
            elif orows:
                note = 'no int loop of the sweep spills: R >= %d' % max(x[0] for x in orows)
                R[isa] = max(x[0] for x in orows)
            else:
                # e.g. only the scalar library's disassembly given
                note = 'not measured: no %s synthetic sweep in --objdump' % isa
        cpi[isa] = calibrate_cpi(m, sim_ir, med, isa) or 0.25
        print('  %-6s W=%2d A_C=%.3f/%.3f (L1 r/w)  A_L2=%.3f/%.3f  A_L3=%.3f/%.3f  '
              'A_M=%.3f/%.3f  CPI=%.3f  R=%d' % (
                  isa, W, *m.cost('L1', W), *m.cost('L2', W), *m.cost('L3', W),
                  *m.cost('DRAM', W), cpi[isa], R[isa]))
        if rows:
            print('         probe (s: data reads per block, knee at >= %.1f): %s' % (
                KNEE_READS, '  '.join('%d:%.2f' % r for r in rows)))
        if note:
            print('         R: %s' % note)
    print('  DRAM latency (page order) %.0f ticks' % m.dram_lat)
    if core:
        print('  core (ilp/probe.py, per core cycle): %.3f cycles per TSC tick; issue %.1f, '
              'ALU %.1f, loads %.1f, stores %.1f%s; store->load %.1f cycles' % (
                  core.cyc_per_tick, core.issue, core.alu, core.load, core.store,
                  '; vector ALU %.1f, loads %.1f, stores %.1f' % (core.vec, core.vload, core.vstore)
                  if core.vec else '', core.st_fwd) +
              ' (vector register %.1f)' % core.st_fwd_vec +
              ('; 64-bit loads and stores together %.1f' % core.memops if core.memops else ''))
        print('  dataflow: issue %d, scheduler %s%s (fitted to the window loops), ports %s' % (
            core.sim_issue, core.sched, ', in-order window %s' % core.retire
            if core.df_retire else '', core.sim_ports))
        print('  latency: load %.1f, vector ALU %s cycles (dep_vec)%s%s' % (
            core.ld_lat or 0, '%.1f' % core.vec_lat if core.vec_lat else '-',
            ', vpternlog through a source %.1f (dep_tern)' % core.tern_lat if core.tern_lat else '',
            ''.join(
                '; flushed %d-B line %.0f (in order %.0f)' % (
                    z, core.cold_lat[z], core.cold_seqlat.get(z, float('nan')))
                for z in sorted(core.cold_lat))))
    if core and core.cold_pass:
        print('  later passes over a flushed buffer (probe.py cold_pass*_S, ticks a line beyond '
              'warm_pass_S; %s charged): %s' % (
                  'none' if a.later_passes == 'none' else 'stores' if a.later_passes == 'rmw'
                  else 'all', '  '.join(
                      '%s %d: 2nd %+.1f 3rd %+.1f load-only %+.1f after copy %+.1f %+.1f' % (
                          isa, z, e['2'] - e['warm'], e['3'] - e['warm'], e['r'] - e['warm'],
                          e['c2'] - e['warm'], e['c3'] - e['warm'])
                      for (isa, z), e in sorted(core.cold_pass.items()))))
    if a.R:
        for kv in a.R.split(','):
            k, v = kv.split('=')
            R[k] = int(v)
    if core:
        for isa in isas:
            e = calibrate_efficiency(core, m, med, (sim_ir, sim_dr, sim_dw), isa, R[isa],
                                     dis=dis_of)
            if e:
                core.eff[isa] = e
            print('  %-6s throughput terms x %.2f (%s int hot: measured over its peak-rate '
                  'bound%s)' % (isa, core.eff[isa], CALIB_ROW, '' if e else '; not measured'))
    model = Model(m, sim_ir, R, cpi)

    print('\nPredicted vs measured TSC/B (%s)' % a.key)
    print('model: equation (3), the paper\'s (compute + memory + spills, added).')
    print('overlap: the same terms per loop combined by max() (out-of-order core), loops of a')
    print('sequential composition added; bound = the term that dominates (summed over loops).')
    print('%-34s %-5s %-6s %6s %-5s %8s %8s %7s %8s %7s %-8s %5s' % (
        'pipeline', 'form', 'isa', 'size', 'cache', 'measured', 'model', 'err%',
        'overlap', 'err%', 'bound', 'L'))
    errs, errs_ov, bounds = [], [], {}
    for k in sorted(med, key=lambda k: (k[0], k[2], k[3], ['hot', 'l2', 'l3', 'cold'].index(k[4]),
                                        ['seq', 'int', 'intpf'].index(k[1]))):
        pipe, form, isa, size, cache, conf = k
        if conf or form == 'intpf' or isa not in R or (pipe.startswith('syn.n') and cache != 'hot'):
            continue
        p = pipeline_of(pipe)
        if getattr(p, 'cipher', None):
            continue  # keystream cost not modelled
        pred = model.predict(p, form, isa, size, cache)
        ins, simulated = model.instr(p, form, isa, size)
        L = (ins - compute_instr(p, isa) * 1) * 64 if simulated else float('nan')
        err = 100.0 * (pred - med[k]) / med[k]
        errs.append((k, err))
        pov, dom, eov = float('nan'), '-', float('nan')
        if core:
            sk = (pipe, form, isa, 1460, 'hot', False)
            sim = (sim_ir[sk], sim_dr[sk], sim_dw[sk]) if sk in sim_ir and sk in sim_dw else None
            xl = None
            if a.explain and re.search(a.explain, '%s %s %s %d %s' % (pipe, form, isa, size,
                                                                     cache)):
                xl = []
            pov, dom, _ = predict_overlap(core, m, p, form, isa, size, cache, R[isa], sim,
                                          dis=dis_of(p, form, isa), explain=xl)
            eov = 100.0 * (pov - med[k]) / med[k]
            errs_ov.append((k, eov))
            bounds[dom] = bounds.get(dom, 0) + 1
        print('%-34s %-5s %-6s %6d %-5s %8.3f %8.3f %+7.1f %8.3f %+7.1f %-8s %5.1f' % (
            pipe, form, isa, size, cache, med[k], pred, err, pov, eov, dom, L))
        for x in xl or []:
            if x[0] == 'overlap':
                print('    loops together, the first under the later ones '
                      '(first_loop_overlap): %.4f' % x[1])
            elif x[0] == 'call':
                print('    outside the loops: %s' % '  '.join(
                    '%s %.4f' % kv for kv in x[1].items()))
            else:
                print('    loop %-22s %s -> %-5s %s' % (x[0], x[1], x[2] or '-', '  '.join(
                    '%s%s %.4f' % ('*' if v == max(x[3].values()) else '', kk, v)
                    for kk, v in sorted(x[3].items()))))
    if errs:
        within = sum(1 for _, e in errs if abs(e) <= 20)
        print('\nmodel (paper, eq. 3): %d of %d within 20%%' % (within, len(errs)))
        if errs_ov:
            wov = sum(1 for _, e in errs_ov if abs(e) <= 20)
            print('overlap (eq. 3 terms, max per loop): %d of %d within 20%%' % (wov, len(errs_ov)))
            for sub, pred_ in (('real loops', lambda k: not k[0].startswith(('syn', 'copy+syn'))),
                               ('synthetic twins', lambda k: 'o110' in k[0]),
                               ('state sweep', lambda k: k[0].startswith('syn.n') and 'o110' not in k[0])):
                es = [e for kk, e in errs_ov if pred_(kk)]
                ep = [e for kk, e in errs if pred_(kk)]
                if es:
                    print('  %-16s overlap %d of %d, paper %d of %d within 20%%' % (
                        sub, sum(1 for e in es if abs(e) <= 20), len(es),
                        sum(1 for e in ep if abs(e) <= 20), len(ep)))
            print('  bound: %s' % ', '.join('%s %d' % kv for kv in sorted(bounds.items())))
        else:
            print('overlap: not run (no --probe)')
    return 0
