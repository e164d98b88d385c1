#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cord: profile-guided function ordering for the instruction cache.

    cord record   -o P.prof -- PROGRAM ARGS     profile a run under callgrind
    cord profile  --callgrind F | --instrument F --binary B | --perf F  -o P.prof
    cord merge    A.prof B.prof --weights 2,1 [--normalize] -o M.prof
    cord order    P.prof... --binary B [--algo c3|ph|hotness] [--coverage 0.999] -o hot.order
    cord emit     hot.order --format ld|lld|gold [--objects DIR/.a/.o...] -o FILE
    cord verify   hot.order --binary NEW [--baseline OLD] [--by-name] [--run -- ARGS]
    cord simulate --binary OLD --binary NEW [--i1 16384,1,64]... -- ARGS

See tools/cord/README.md for the whole loop.
"""

import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cordlib import elf as elfmod                      # noqa: E402
from cordlib import emit as emitmod                    # noqa: E402
from cordlib import order as ordermod                  # noqa: E402
from cordlib import profile as profmod                 # noqa: E402
from cordlib import verify as verifymod                # noqa: E402
from cordlib.profile import EXTERNAL, fmt_key, parse_key   # noqa: E402

GEOMETRIES = ['16384,1,64', '32768,8,64', '8192,2,64']


def warn(msg):
    print('cord: ' + msg, file=sys.stderr)


def die(msg):
    print('cord: error: ' + msg, file=sys.stderr)
    sys.exit(1)


def read_order(path):
    keys = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                keys.append(parse_key(line))
    return keys


# ------------------------------------------------------------------ profile

def cmd_record(a):
    if not a.command:
        die('record: give the program after --')
    if not shutil.which('valgrind'):
        die('record: valgrind not found (Debian: valgrind)')
    with tempfile.TemporaryDirectory(prefix='cord-rec-') as tmp:
        out = os.path.join(tmp, 'callgrind.out')
        # --demangle=no: the linker wants C++ names mangled.
        vg = ['valgrind', '-q', '--tool=callgrind', '--demangle=no',
              '--callgrind-out-file=' + out] + a.valgrind_arg
        import subprocess
        r = subprocess.run(vg + a.command)
        if r.returncode != 0:
            die(f'record: the program exited with {r.returncode}')
        if a.keep:
            shutil.copy(out, a.keep)
        p = profmod.read_callgrind(out, a.object or None)
    p.write(a.output)
    warn(f'record: {len(p.edges)} edges, {len(p.functions())} functions -> {a.output}')


def cmd_profile(a):
    got = [x for x in (a.callgrind, a.instrument, a.perf) if x]
    if len(got) != 1:
        die('profile: give exactly one of --callgrind, --instrument, --perf')
    if a.callgrind:
        p = profmod.read_callgrind(a.callgrind, a.object or None)
    elif a.instrument:
        if not a.binary:
            die('profile --instrument needs --binary (the instrumented program '
                'and any shared library it was instrumented in)')
        p = profmod.read_instrument(a.instrument,
                                    [elfmod.ElfFunctions(b) for b in a.binary])
    else:
        p = profmod.read_perf_script(a.perf, a.object or None)
    p.write(a.output)
    warn(f'profile: {len(p.edges)} edges, {len(p.functions())} functions -> {a.output}')


def load_profiles(paths, weights, normalize):
    profs = [profmod.read_profile(p) for p in paths]
    if weights:
        w = [float(x) for x in weights.split(',')]
        if len(w) != len(profs):
            die('--weights needs one number per profile')
    else:
        w = None
    return profmod.merge(profs, w, normalize)


def cmd_merge(a):
    p = load_profiles(a.profiles, a.weights, a.normalize)
    p.write(a.output)


# ------------------------------------------------------------------- order

def canonical(prof, binary, lto):
    """Rename every profile key to the binary's own identity for it: the
    STT_FILE name for a static, no file for a global.  This is where
    callgrind's /full/path/x.c:step, the instrument runtime's x.c:step and
    perf's file-less names meet.  Keys the binary lacks (C library,
    vdso...) drop out: they cannot be placed.  Returns (profile, sizes)."""
    names = {k[1] for k in prof.functions()}
    problem = elfmod.lto_problem(names, binary.file_symbols)
    if problem:
        if lto == 'refuse':
            die(problem)
        drop = {n for n in names if '.lto_priv.' in n}
        warn(f'--lto=drop: leaving out {len(drop)} LTO-private functions')
    else:
        drop = set()
    sizes, missing, ambiguous = {}, set(), []

    def fn(key):
        src, name = key
        if name in drop:
            return None
        hits = binary.lookup(name, src)
        if len(hits) == 1:
            f = hits[0]
            k = (f.src if f.local else '', f.name)
            sizes[k] = f.size
            return k
        if hits:
            ambiguous.append(fmt_key(key))
        else:
            missing.add(key)
        return None
    out = prof.remap(fn)
    if ambiguous:
        ambiguous = set(ambiguous)
        warn(f'{len(ambiguous)} names match several statics and the profile has no '
             f'file to choose (left out): {", ".join(sorted(ambiguous)[:5])}')
    if missing:
        warn(f'{len(missing)} profiled functions are not in {binary.path} '
             '(other libraries): left out')
    return out, sizes


def cmd_order(a):
    prof = load_profiles(a.profiles, a.weights, a.normalize)
    if a.binary:
        prof, sizes = canonical(prof, elfmod.ElfFunctions(a.binary), a.lto)
    else:
        problem = elfmod.lto_problem({k[1] for k in prof.functions()})
        if problem and a.lto == 'refuse':
            die(problem)
        if problem:
            prof = prof.remap(lambda k: None if '.lto_priv.' in k[1] else k)
        sizes = dict(prof.size)
    funcs = prof.functions()
    if a.node_weight == 'cost':
        weight = {f: prof.cost.get(f, 0) for f in funcs}
    else:
        weight = prof.calls_into()
    nosize = sorted(fmt_key(f) for f in funcs if f not in sizes)
    if nosize:
        warn(f'{len(nosize)} functions without a size (counted as 1 byte): '
             + ', '.join(nosize[:5]))
    keep = ordermod.coverage_cut(funcs, weight, a.coverage)
    edges = {k: n for k, n in prof.edges.items()
             if k[0] in keep and k[1] in keep and EXTERNAL not in k}
    order = ordermod.ALGORITHMS[a.algo](keep, weight, sizes, edges)
    total = sum(weight.get(f, 0) for f in funcs) or 1
    hot_bytes = sum(sizes.get(f, 0) for f in order)
    with open(a.output, 'w') as f:
        f.write(f'# cord order v1: {a.algo}, coverage {a.coverage}, {len(order)} '
                f'functions, {hot_bytes} bytes, '
                f'{100 * sum(weight.get(x, 0) for x in order) / total:.3f}% of weight\n')
        for k in order:
            f.write(fmt_key(k) + '\n')
    warn(f'order: {a.algo}: {len(order)} of {len(funcs)} functions, {hot_bytes} bytes '
         f'-> {a.output}')


# -------------------------------------------------------------------- emit

def cmd_emit(a):
    order = read_order(a.order)
    if not order:
        die(f'{a.order}: empty order')
    problem = elfmod.lto_problem({k[1] for k in order})
    if problem:
        die(problem)
    objects = emitmod.ObjectIndex(a.objects) if a.objects else None
    if objects is not None:
        problem = elfmod.lto_problem(
            set(), [s for e in objects.elfs for s in e.file_symbols])
        if problem:
            die(problem)
    comment = f'{len(order)} functions from {os.path.basename(a.order)}'
    if a.format == 'ld':
        text = emitmod.emit_ld(order, objects, a.object_name, warn, comment)
    elif a.format == 'lld':
        text = emitmod.emit_lld(order, comment)
    else:
        text = emitmod.emit_gold(order, objects, comment)
    with open(a.output, 'w') as f:
        f.write(text)
    warn(f'emit: {a.format} -> {a.output}  (link with '
         + {'ld': f'-Wl,-T,{a.output}',
            'lld': f'-fuse-ld=lld -Wl,--symbol-ordering-file={a.output}',
            'gold': f'-fuse-ld=gold -Wl,--section-ordering-file={a.output}'}[a.format]
         + '; compile with -ffunction-sections)')


# ------------------------------------------------------------------ verify

def describe(label, funcs):
    span, pages, hot = verifymod.footprint(funcs)
    print(f'{label}: {len(funcs)} hot functions, {hot} bytes, span {span} bytes, '
          f'{pages} pages of 4 KB')
    return span, pages


def cmd_verify(a):
    order = read_order(a.order)
    new = elfmod.ElfFunctions(a.binary)
    placed, problems = verifymod.place(order, new, a.by_name)
    problems += verifymod.check_increasing(placed)
    after = describe(f'after  ({a.binary})', [f for _r, _k, f in placed])
    if a.baseline:
        old = elfmod.ElfFunctions(a.baseline)
        oplaced, _ = verifymod.place(order, old)
        before = describe(f'before ({a.baseline})', [f for _r, _k, f in oplaced])
        if after[0] > before[0]:
            problems.append(f'hot span grew: {before[0]} -> {after[0]} bytes')
    if a.run:
        runs = [('after', a.binary)] + ([('before', a.baseline)] if a.baseline else [])
        results = {}
        for label, b in runs:
            ev, out, _ = verifymod.callgrind([os.path.abspath(b)] + a.command)
            results[label] = (ev.get('Ir', 0), out)
            print(f'{label}: {ev.get("Ir", 0)} instructions')
        if 'before' in results:
            if results['before'][0] != results['after'][0]:
                problems.append(f'instruction count changed: {results["before"][0]} -> '
                                f'{results["after"][0]}')
            if results['before'][1] != results['after'][1]:
                problems.append('program output changed')
    for p in problems:
        print('FAIL: ' + p)
    if problems:
        print(f'verify: {len(problems)} problems: the order did not apply as written')
        sys.exit(1)
    print(f'verify: OK, {len(placed)} functions in order')


def cmd_simulate(a):
    geoms = a.i1 or GEOMETRIES
    print(f'{"I1 (size,assoc,line)":22} {"binary":28} {"Ir":>14} {"I1 misses":>12} '
          f'{"per unit":>10} {"cycle est.":>14}')
    rows = {}
    for g in geoms:
        for b in a.binaries:
            ev, _out, _ = verifymod.callgrind([os.path.abspath(b)] + a.command, i1=g,
                                              toggle=a.toggle)
            per = ev.get('I1mr', 0) / a.per
            rows[(g, b)] = ev
            print(f'{g:22} {os.path.basename(b)[:28]:28} {ev.get("Ir", 0):>14} '
                  f'{ev.get("I1mr", 0):>12} {per:>10.2f} '
                  f'{verifymod.cycle_estimate(ev) / a.per:>14.1f}')
        if len(a.binaries) == 2:
            x, y = (rows[(g, b)].get('I1mr', 0) for b in a.binaries)
            if x:
                print(f'{"":22} {"change":28} {"":>14} {100 * (y - x) / x:>+11.1f}%')


# -------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(prog='cord', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)

    p = sub.add_parser('record', help='run a program under callgrind, write a profile')
    p.add_argument('-o', '--output', required=True)
    p.add_argument('--object', action='append', default=[],
                   help='keep only functions of this ELF object (basename; repeatable)')
    p.add_argument('--keep', help='also keep the raw callgrind.out here')
    p.add_argument('--valgrind-arg', action='append', default=[])
    p.set_defaults(fn=cmd_record)

    p = sub.add_parser('profile', help='convert a callgrind/instrument/perf run')
    p.add_argument('--callgrind')
    p.add_argument('--instrument')
    p.add_argument('--perf', help='`perf script` output of a perf record -g run')
    p.add_argument('--binary', action='append', default=[],
                   help='ELF files to resolve --instrument addresses with')
    p.add_argument('--object', action='append', default=[],
                   help='callgrind ob= / perf DSO basenames to keep (repeatable)')
    p.add_argument('-o', '--output', required=True)
    p.set_defaults(fn=cmd_profile)

    p = sub.add_parser('merge', help='weighted sum of profiles')
    p.add_argument('profiles', nargs='+')
    p.add_argument('--weights')
    p.add_argument('--normalize', action='store_true',
                   help='scale each profile to the same total first')
    p.add_argument('-o', '--output', required=True)
    p.set_defaults(fn=cmd_merge)

    p = sub.add_parser('order', help='compute a function order')
    p.add_argument('profiles', nargs='+')
    p.add_argument('--weights')
    p.add_argument('--normalize', action='store_true')
    p.add_argument('--binary', help='the profiled program: sizes and static identities')
    p.add_argument('--algo', choices=sorted(ordermod.ALGORITHMS), default='c3')
    p.add_argument('--coverage', type=float, default=0.999)
    p.add_argument('--node-weight', choices=['calls', 'cost'], default='calls',
                   help='calls into a function (default, as lld) or its self cost')
    p.add_argument('--lto', choices=['refuse', 'drop'], default='refuse')
    p.add_argument('-o', '--output', required=True)
    p.set_defaults(fn=cmd_order)

    p = sub.add_parser('emit', help='write the order for a linker')
    p.add_argument('order')
    p.add_argument('--format', choices=['ld', 'lld', 'gold'], default='ld')
    p.add_argument('--objects', nargs='+',
                   help='objects, archives or build dirs the program is linked from: '
                        'exact object and section for every function')
    p.add_argument('--object-name', default='{src}.o',
                   help='without --objects, the object of source {src} ({stem} = '
                        'without extension); default {src}.o as meson and cmake name them')
    p.add_argument('-o', '--output', required=True)
    p.set_defaults(fn=cmd_emit)

    p = sub.add_parser('verify', help='check that an order applied')
    p.add_argument('order')
    p.add_argument('--binary', required=True, help='the relinked program')
    p.add_argument('--baseline', help='the program before (footprint, instructions, output)')
    p.add_argument('--by-name', action='store_true',
                   help='the order was applied by name (lld symbol-ordering, gold): '
                        'same-named statics share a rank')
    p.add_argument('--run', action='store_true',
                   help='run both programs under callgrind with the arguments after -- '
                        'and require equal instruction counts and output')
    p.set_defaults(fn=cmd_verify)

    p = sub.add_parser('simulate', help='simulated I1 misses, before vs after')
    p.add_argument('--binary', dest='binaries', action='append', required=True,
                   help='program to run (repeat: before, after)')
    p.add_argument('--i1', action='append', help='size,assoc,line (repeatable); default '
                   + ' '.join(GEOMETRIES))
    p.add_argument('--toggle', help='count only inside this function (callgrind '
                   '--toggle-collect), e.g. the per-packet entry point')
    p.add_argument('--per', type=float, default=1, help='divide by this (packets)')
    p.set_defaults(fn=cmd_simulate)

    # Everything after the first `--` is the program's command line; split it
    # off ourselves, as argparse's REMAINDER does not mix with options.
    argv = list(sys.argv[1:] if argv is None else argv)
    tail = []
    if '--' in argv:
        i = argv.index('--')
        argv, tail = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    a.command = tail
    a.fn(a)


if __name__ == '__main__':
    main()
