#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cord end to end on the test program in tests/cord/prog.

    test_link.py SOURCE_ROOT MODE

MODE:
  profile     callgrind and -finstrument-functions profiles have the exact
              call counts the program's structure implies, statics apart
  ld          GNU ld + the linker script (program linked from an archive,
              as benchmarks link libcachenet.a); also: verify catches an
              order that did not apply (no -ffunction-sections, the
              unordered program, a stale name)
  lld-script  lld + the same kind of script (program linked from objects)
  lld-order   lld --symbol-ordering-file
  gold        gold --section-ordering-file
  icache      simulated I1 misses before/after at three geometries (C3,
              Pettis-Hansen, hotness); C3 must cut 16 KB direct-mapped
              misses by >= 30% with the same instruction count

The program is compiled here with fixed flags (not the build's), so it is
the same in release, sanitizer and clang builds and valgrind can run it.
CC comes from the environment (meson passes the build's compiler).
-gdwarf-4: valgrind 3.19 cannot read the DWARF 5 forms clang 14 emits, and
without line tables callgrind has no file names to keep statics apart.
Exit 77 (skip) only when a tool the mode needs is absent.
"""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
CORD = [sys.executable, os.path.join(ROOT, 'tools', 'cord', 'cord.py')]
PROG = os.path.join(ROOT, 'tests', 'cord', 'prog')
# Link order = the deliberately bad layout: hot files between cold ones.
SOURCES = ['main', 'pad0', 'hot_a', 'pad1', 'hot_b', 'pad2', 'hot_c']
CC = shlex.split(os.environ.get('CC') or 'cc')
CFLAGS = ['-O2', '-gdwarf-4', '-Wall', '-Wextra', '-Werror', '-fno-lto']
PACKETS = '2000'


def skip(why):
    print('SKIP: ' + why)
    sys.exit(77)


def need(*tools):
    for t in tools:
        if not shutil.which(t):
            skip(f'{t} not found (Debian: ' +
                 {'valgrind': 'valgrind', 'ld.lld': 'lld', 'ld.gold': 'binutils',
                  'readelf': 'binutils', 'ar': 'binutils'}.get(t, t) + ')')


def run(cmd, **kw):
    print('+ ' + ' '.join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    if r.returncode:
        raise SystemExit(f'FAILED ({r.returncode}): {" ".join(cmd)}')
    return r


def must_fail(cmd, expect):
    print('+ (must fail) ' + ' '.join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode == 0 or expect not in r.stdout + r.stderr:
        raise SystemExit(f'FAILED: expected failure mentioning {expect!r}')


def compile_objects(d, extra=()):
    objs = []
    for s in SOURCES:
        o = os.path.join(d, s + '.c.o')
        run(CC + CFLAGS + list(extra) + ['-c', os.path.join(PROG, s + '.c'), '-o', o])
        objs.append(o)
    return objs


def archive(d, objs):
    lib = os.path.join(d, 'libcordtest.a')
    run(['ar', 'rcs', lib] + objs)
    return ['-Wl,--whole-archive', lib, '-Wl,--no-whole-archive']


def link(out, inputs, args=()):
    run(CC + list(args) + ['-o', out] + inputs)
    return out


def profile_and_order(d, base, algo='c3'):
    prof = os.path.join(d, 'cg.prof')
    run(CORD + ['record', '-o', prof, '--', base, PACKETS])
    order = os.path.join(d, f'{algo}.order')
    run(CORD + ['order', prof, '--binary', base, '--algo', algo, '-o', order])
    return order


def expected_edges(n):
    s = (n + 63) // 64
    e = {('', 'main', '', 'ct_packet'): n, ('', 'main', 'main.c', 'ct_init'): 1,
         ('', 'ct_packet', '', 'dl_slow'): s,
         ('', 'rx_parse', 'hot_a.c', 'step'): n, ('', 'rx_csum', 'hot_a.c', 'step'): 2 * n,
         ('', 'tx_hdr', 'hot_b.c', 'step'): n,
         ('', 'dl_slow', '', 'dl_log'): s, ('', 'dl_slow', '', 'dl_copy'): s,
         ('', 'dl_wake', '', 'dl_timer'): n}
    for caller, callees in [('ct_packet', ['rx_input', 'tx_output', 'dl_deliver']),
                            ('rx_input', ['rx_parse', 'rx_csum', 'rx_reasm', 'rx_ack']),
                            ('tx_output', ['tx_seg', 'tx_hdr', 'tx_csum', 'tx_queue']),
                            ('dl_deliver', ['dl_copy', 'dl_wake'])]:
        for c in callees:
            e[('', caller, '', c)] = n
    for c in ['pad0_a', 'pad0_b', 'rx_cold', 'pad1_a', 'pad1_b', 'tx_cold', 'pad2_a',
              'pad2_b', 'dl_cold']:
        e[('main.c', 'ct_init', '', c)] = 1
    e[('', '<external>', '', 'main')] = 1
    return e


def canonical_edges(prof_path, binary):
    """The profile's edges under the binary's names (cord.canonical)."""
    sys.path.insert(0, os.path.join(ROOT, 'tools', 'cord'))
    import cord
    from cordlib import elf, profile
    p, _ = cord.canonical(profile.read_profile(prof_path), elf.ElfFunctions(binary),
                          'refuse')
    return {(a[0], a[1], b[0], b[1]): n for (a, b), n in p.edges.items()}


def same_edges(what, got, want):
    """Exit with the difference unless the WHAT profile's edges GOT are WANT."""
    if got != want:
        raise SystemExit(f'{what} edges differ:\n  extra {set(got.items()) - set(want.items())}'
                         f'\n  missing {set(want.items()) - set(got.items())}')


def mode_profile(d):
    need('valgrind', 'readelf', 'ar')
    base = link(os.path.join(d, 'base'), compile_objects(d, ['-ffunction-sections']))
    n = int(PACKETS)
    want = expected_edges(n)
    cg = os.path.join(d, 'cg.prof')
    run(CORD + ['record', '-o', cg, '--', base, PACKETS])
    same_edges('callgrind', canonical_edges(cg, base), want)
    print(f'callgrind: all {len(want)} edges exact, the two statics `step` apart')

    idir = os.path.join(d, 'instr')
    os.mkdir(idir)
    objs = compile_objects(idir, ['-finstrument-functions'])
    rt = os.path.join(idir, 'cord_instrument.o')
    run(CC + ['-O2', '-Wall', '-Wextra', '-Werror', '-c',
              os.path.join(ROOT, 'tools', 'cord', 'cord_instrument.c'), '-o', rt])
    ibin = link(os.path.join(idir, 'prog'), objs + [rt])
    raw = os.path.join(idir, 'counts.out')
    run([ibin, PACKETS], env=dict(os.environ, CORD_PROFILE_OUT=raw))
    ip = os.path.join(idir, 'instr.prof')
    run(CORD + ['profile', '--instrument', raw, '--binary', ibin, '-o', ip])
    same_edges('instrument', canonical_edges(ip, ibin), want)
    print(f'-finstrument-functions: the same {len(want)} edges')

    # Weighted merge of the two: every edge counts 1x + 2x = 3x.
    merged = os.path.join(d, 'merged.prof')
    run(CORD + ['merge', cg, ip, '--weights', '1,2', '-o', merged])
    got = canonical_edges(merged, base)
    if got != {k: 3 * v for k, v in want.items()}:
        raise SystemExit('merged edges are not 3x the exact ones')
    print('merge: 1x callgrind + 2x instrument = 3x every edge')


def mode_link(d, kind):
    need('valgrind', 'readelf', 'ar')
    ld = {'ld': 'bfd', 'lld-script': 'lld', 'lld-order': 'lld', 'gold': 'gold'}[kind]
    need('ld.' + ld)
    fuse = ['-fuse-ld=' + ld]
    objs = compile_objects(d, ['-ffunction-sections'])
    if kind == 'ld':
        inputs = archive(d, objs)
        objects = [inputs[1]]
    else:
        inputs = objs
        objects = objs
    base = link(os.path.join(d, 'base'), inputs, fuse)
    order = profile_and_order(d, base)
    fmt = {'ld': 'ld', 'lld-script': 'ld', 'lld-order': 'lld', 'gold': 'gold'}[kind]
    out = os.path.join(d, 'order.' + fmt)
    run(CORD + ['emit', order, '--format', fmt, '--objects'] + objects + ['-o', out])
    flag = {'ld': '-Wl,-T,', 'lld': '-Wl,--symbol-ordering-file=',
            'gold': '-Wl,--section-ordering-file='}[fmt] + out
    new = link(os.path.join(d, 'new'), inputs, fuse + [flag])
    by_name = ['--by-name'] if fmt != 'ld' else []
    run(CORD + ['verify', order, '--binary', new, '--baseline', base, '--run'] + by_name
        + ['--', PACKETS])

    # Verification is the only guard against an order that did not apply.
    must_fail(CORD + ['verify', order, '--binary', base] + by_name, 'did not apply')
    stale = os.path.join(d, 'stale.order')
    with open(order) as f, open(stale, 'w') as g:
        g.write(f.read() + 'rx_renamed\n')
    must_fail(CORD + ['verify', stale, '--binary', new] + by_name, 'rx_renamed: not in')
    if kind == 'ld':
        nd = os.path.join(d, 'nofs')
        os.mkdir(nd)
        nofs = link(os.path.join(nd, 'prog'), archive(nd, compile_objects(nd)),
                    fuse + [flag])
        must_fail(CORD + ['verify', order, '--binary', nofs], 'did not apply')
    print(f'{kind}: order applied and verified; unapplied orders caught')


def mode_icache(d):
    need('valgrind', 'readelf', 'ar', 'ld.bfd')
    objs = compile_objects(d, ['-ffunction-sections'])
    inputs = archive(d, objs)
    base = link(os.path.join(d, 'base'), inputs, ['-fuse-ld=bfd'])
    bins = [base]
    for algo in ('c3', 'ph', 'hotness'):
        order = profile_and_order(d, base, algo)
        script = os.path.join(d, algo + '.ld')
        run(CORD + ['emit', order, '--objects', inputs[1], '-o', script])
        b = link(os.path.join(d, algo), inputs, ['-fuse-ld=bfd', '-Wl,-T,' + script])
        run(CORD + ['verify', order, '--binary', b, '--baseline', base])
        bins.append(b)
    sys.path.insert(0, os.path.join(ROOT, 'tools', 'cord'))
    from cordlib import verify
    geoms = ['16384,1,64', '32768,8,64', '8192,2,64']
    print(f'\nI1 misses, test program, {PACKETS} packets (callgrind --cache-sim=yes '
          f'--I1=G --D1=32768,8,64 --LL=8388608,16,64)')
    print(f'{"I1 geometry":14}' + ''.join(f'{os.path.basename(b):>16}' for b in bins))
    res = {}
    for g in geoms:
        row = []
        for b in bins:
            ev, out = verify.callgrind([b, PACKETS], i1=g)[:2]
            res[(g, b)] = (ev, out)
            row.append(ev['I1mr'])
        print(f'{g:14}' + ''.join(f'{x:>16}' for x in row)
              + ''.join(f'  {os.path.basename(b)} {100 * (x - row[0]) / row[0]:+.1f}%'
                        for b, x in zip(bins[1:], row[1:])))
    irs = {res[(geoms[0], b)][0]['Ir'] for b in bins}
    outs = {res[(geoms[0], b)][1] for b in bins}
    print(f'instructions: {sorted(irs)}')
    if len(irs) != 1 or len(outs) != 1:
        raise SystemExit('FAILED: instruction count or output changed with the layout')
    before = res[(geoms[0], base)][0]['I1mr']
    after = res[(geoms[0], bins[1])][0]['I1mr']
    if after > 0.7 * before:
        raise SystemExit(f'FAILED: C3 cut 16 KB direct-mapped I1 misses only from '
                         f'{before} to {after}')
    print(f'C3, 16 KB direct-mapped: {before} -> {after} I1 misses '
          f'({100 * (after - before) / before:+.1f}%)')


def main():
    if not shutil.which(CC[0]):
        skip(f'C compiler {CC[0]} not found')
    with tempfile.TemporaryDirectory(prefix='cord-test-') as d:
        if MODE == 'profile':
            mode_profile(d)
        elif MODE == 'icache':
            mode_icache(d)
        elif MODE in ('ld', 'lld-script', 'lld-order', 'gold'):
            mode_link(d, MODE)
        else:
            raise SystemExit('unknown mode ' + MODE)


if __name__ == '__main__':
    main()
