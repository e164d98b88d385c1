#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cord on a program shaped like a third-party one (tests/cord/lib3p): a
static library built with -fvisibility=hidden, a loop-heavy hot function,
and two hot functions that alternate and that the linker's default order
puts 16 KB apart.

    test_thirdparty.py SOURCE_ROOT [CACHENET_CORD [lto]]

CACHENET_CORD is the command to test (meson passes the build tree's
`tools/cord/cachenet-cord`, which must run as it is); default the source
tree's cord.py.  The whole loop runs as a user would: record a
three-phase workload (`--workload`: pack, unpack, and a run reading a
file on standard input), order with the defaults, emit for GNU ld with
both the objects and the archive built from them, relink, verify with
--run and --simulate.  Asserted:

  1. hidden functions: every function carrying 0.1% of the instructions
     -- the library's hidden ones, its API, a static that has a
     same-named twin in another file -- is in the order, and the
     relinked program has them back to back, no cold function between;
  2. loop-heavy code: zl_inflate (64 calls, a third of the instructions)
     is placed by default and with --node-weight calls too (the cut is by
     instructions); the order says it weighed by cost;
  3. conflicts: zl_match and zl_emit share every I-cache set (16 KB
     direct-mapped) in the baseline and none after; simulated I1 misses
     drop by more than half, `verify --simulate --functions` puts the
     removed misses on those two, and it does not warn; a
     layout made to collide on purpose makes it warn (exit 2 with
     --strict);
  plus: the script has no pattern twice, order and script end in a
  newline, the phase reading standard input gets its file and a run
  given none reads /dev/null.

With `lto`, the same with gcc's LTO (main_lto): the LTO-private
functions placed by section name with `--lto=place`.

Exit 77 (skip) only when valgrind, readelf, ar or GNU ld is missing (and,
for `lto`, when the compiler is not gcc or gcc-ar is missing).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1])
CORD = [sys.argv[2]] if len(sys.argv) > 2 else \
    [sys.executable, os.path.join(ROOT, 'tools', 'cord', 'cord.py')]
LIB = os.path.join(ROOT, 'tests', 'cord', 'lib3p')
CC = shlex.split(os.environ.get('CC') or 'cc')
CFLAGS = ['-O2', '-gdwarf-4', '-Wall', '-Wextra', '-Werror', '-fno-lto',
          '-ffunction-sections']
WAY = 16384
LINE = 64
# the functions carrying >= 0.1% of the workload's instructions (zl_unpack.c's
# mix runs 64 times, 0.04%: not hot)
HOT = ['zl_match', 'zl_emit', 'zl_inflate', 'zl_pack.c:mix', 'zl_put', 'zl_pack', 'zl_unpack']


def skip(why):
    print('SKIP: ' + why)
    sys.exit(77)


def run(cmd, ok=(0,), feed=None, **kw):
    print('+ ' + ' '.join(cmd), flush=True)
    if feed is None:
        kw['stdin'] = subprocess.DEVNULL
    r = subprocess.run(cmd, capture_output=True, text=True, input=feed, **kw)
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode not in ok:
        raise SystemExit(f'FAILED ({r.returncode}): {" ".join(cmd)}')
    return r


def symbols(binary):
    """{name or file:name: (addr, size)} of the functions, statics under
    their STT_FILE name."""
    out = run(['readelf', '-sW', binary]).stdout
    syms, src = {}, ''
    for line in out.splitlines():
        t = line.split()
        if len(t) >= 8 and t[3] == 'FILE':
            src = t[7]
        elif len(t) >= 8 and t[3] == 'FUNC' and t[6] != 'UND':
            name = t[7]
            key = f'{src}:{name}' if name == 'mix' else name
            syms[key] = (int(t[1], 16), int(t[2]))
    return syms


def sets(sym):
    addr, size = sym
    return {(a // LINE) % (WAY // LINE) for a in range(addr, addr + size, 16)}


def conflicts(x, y):
    """The sets of a 16 KB direct-mapped cache where functions x and y
    (addr, size) have different memory lines (a line both share, where
    one ends and the next begins, is no conflict)."""
    lx = {a // LINE for a in range(x[0], x[0] + x[1], 16)}
    ly = {a // LINE for a in range(y[0], y[0] + y[1], 16)}
    return {la % (WAY // LINE) for la in lx for lb in ly
            if la != lb and la % (WAY // LINE) == lb % (WAY // LINE)}


def build(d, gap):
    objs = []
    for s in ('zl_pack', 'zl_unpack'):
        o = os.path.join(d, s + '.c.o')
        run(CC + CFLAGS + ['-fvisibility=hidden', f'-DZL_GAP={gap}', '-c',
                           os.path.join(LIB, s + '.c'), '-o', o])
        objs.append(o)
    lib = os.path.join(d, 'libzl.a')
    if os.path.exists(lib):
        os.unlink(lib)
    run(['ar', 'rcs', lib] + objs)
    main = os.path.join(d, 'main.c.o')
    run(CC + CFLAGS + ['-c', os.path.join(LIB, 'main.c'), '-o', main])
    return objs, lib, main


def link(out, main, lib, extra=()):
    run(CC + ['-fuse-ld=bfd', '-o', out, main, lib] + list(extra))
    return out


def order_keys(path):
    with open(path) as f:
        return [line.split()[0] for line in f if line.strip() and not line.startswith('#')]


def main_lto():
    """The same library and program built with gcc's LTO (slim bytecode
    objects, a gcc-ar archive): the link compiles them into temporary
    objects, hidden functions come out LOCAL, and the two same-named
    statics `mix` become mix.lto_priv.0 and .1.  `order` refuses by
    default and names --lto=place; with it, the hot functions are placed
    by section name, and verify (--run, --simulate) passes."""
    if os.path.basename(CC[0]).startswith('clang') or 'clang' in \
            run(CC + ['--version']).stdout.lower():
        skip('LTO mode needs gcc (clang LTO objects are LLVM bitcode)')
    for t in ('valgrind', 'readelf', 'gcc-ar', 'ld.bfd'):
        if not shutil.which(t):
            skip(f'{t} not found')
    flags = ['-O2', '-Wall', '-Wextra', '-Werror', '-flto', '-ffunction-sections']
    problems = []
    with tempfile.TemporaryDirectory(prefix='cord-3p-lto-') as d:
        objs = []
        for s in ('zl_pack', 'zl_unpack'):
            o = os.path.join(d, s + '.c.o')
            run(CC + flags + ['-fvisibility=hidden', '-c', os.path.join(LIB, s + '.c'),
                              '-o', o])
            objs.append(o)
        lib = os.path.join(d, 'libzl.a')
        run(['gcc-ar', 'rcs', lib] + objs)
        mainobj = os.path.join(d, 'main.c.o')
        run(CC + flags + ['-c', os.path.join(LIB, 'main.c'), '-o', mainobj])

        def link_lto(out, extra=()):
            run(CC + flags + ['-fuse-ld=bfd', '-o', out, mainobj, lib] + list(extra))
            return out
        base = link_lto(os.path.join(d, 'base'))
        s = symbols(base)
        privs = sorted(k for k in s if '.lto_priv.' in k)
        if len(privs) != 2:
            raise SystemExit(f'FAILED: expected two mix.lto_priv.N, got {privs}')
        wl = os.path.join(d, 'workload')
        with open(wl, 'w') as f:
            f.write('pack 3000\nunpack 16384\n')
        prof = os.path.join(d, 'zl.prof')
        run(CORD + ['record', '-o', prof, '--workload', wl, '--', base])
        order = os.path.join(d, 'zl.order')
        r = run(CORD + ['order', prof, '--binary', base, '-o', order], ok=(1,))
        if '--lto=place' not in r.stderr:
            problems.append('the refusal does not name --lto=place')
        run(CORD + ['order', prof, '--binary', base, '--lto=place', '-o', order])
        keys = order_keys(order)
        # pack's mix (95 % of the two by calls: 3000 against 64) is hot
        hot_mix = [k for k in privs if s[k][1] == min(s[p][1] for p in privs)]
        for k in ['zl_match', 'zl_emit', 'zl_inflate', 'zl_put'] + hot_mix:
            if k not in keys:
                problems.append(f'{k} is not in the LTO order')
        script = os.path.join(d, 'zl.ld')
        r = run(CORD + ['emit', order, '--objects', lib, mainobj, '-o', script])
        if 'LTO bytecode' not in r.stderr:
            problems.append('emit did not say the objects hold LTO bytecode')
        new = link_lto(os.path.join(d, 'new'), ['-Wl,-T,' + script])
        r = run(CORD + ['verify', order, '--binary', new, '--baseline', base, '--run',
                        '--simulate', '--icache', f'{WAY},1,{LINE}', '--workload', wl])
        m = re.search(r'before (\d+) I1 misses, after (\d+)', r.stdout)
        if 'WARNING' in r.stdout or not m or not int(m.group(2)) * 2 < int(m.group(1)):
            problems.append('LTO layout: I1 misses did not halve')
        n = symbols(new)
        if conflicts(n['zl_match'], n['zl_emit']):
            problems.append('LTO layout: zl_match and zl_emit still share sets')
    for p in problems:
        print('FAILED: ' + p)
    if problems:
        sys.exit(1)
    print('LTO build: hidden and LTO-private functions placed by section name, verified')


def main():
    if len(sys.argv) > 3 and sys.argv[3] == 'lto':
        return main_lto()
    for t in ('valgrind', 'readelf', 'ar', 'ld.bfd'):
        if not shutil.which(t):
            skip(f'{t} not found')
    problems = []
    with tempfile.TemporaryDirectory(prefix='cord-3p-') as d:
        # The default link order, made to collide: size zl_spare so that
        # zl_emit starts a multiple of 16 KB after zl_match.
        gap = 15000
        objs, lib, mainobj = build(d, gap)
        s = symbols(link(os.path.join(d, 'base'), mainobj, lib))
        gap += (-(s['zl_emit'][0] - s['zl_match'][0])) % WAY
        objs, lib, mainobj = build(d, gap)
        base = link(os.path.join(d, 'base'), mainobj, lib)
        s = symbols(base)
        if (s['zl_emit'][0] - s['zl_match'][0]) % WAY or \
                conflicts(s['zl_match'], s['zl_emit']) != sets(s['zl_match']):
            raise SystemExit('FAILED: the test program does not collide as designed '
                             f'(zl_match {s["zl_match"]}, zl_emit {s["zl_emit"]})')
        print(f'baseline: zl_match at {s["zl_match"][0]:#x}, zl_emit at {s["zl_emit"][0]:#x}: '
              f'the same {len(sets(s["zl_match"]))} sets of a 16 KB direct-mapped cache')

        inp = os.path.join(d, 'input.txt')
        with open(inp, 'w') as f:
            f.write('x' * 1234)
        wl = os.path.join(d, 'workload')
        with open(wl, 'w') as f:
            f.write(f'# three phases\npack 3000\nunpack 16384\ncount < {inp}\n')

        # record's own standard input is a pipe with 3 bytes: a run without
        # `< FILE` must read /dev/null, not them
        prof = os.path.join(d, 'zl.prof')
        r = run(CORD + ['record', '-o', prof, '--workload', wl, '--', base], feed='abc')
        if 'zltest: 1234 bytes on stdin' not in r.stdout:
            problems.append('the workload line `count < FILE` did not get its file')
        r = run(CORD + ['record', '-o', os.path.join(d, 'c.prof'), '--', base, 'count'],
                feed='abc')
        if 'zltest: 0 bytes on stdin' not in r.stdout:
            problems.append('record passed its own standard input on by default')
        order = os.path.join(d, 'zl.order')
        run(CORD + ['order', prof, '--binary', base, '-o', order])
        keys = order_keys(order)
        with open(order) as f:
            head = f.readline()
        if 'node-weight=cost' not in head:
            problems.append(f'the order was not weighed by instructions: {head.strip()}')
        for k in HOT:
            if k not in keys:
                problems.append(f'{k} is not in the order (hidden or static function lost)')
        calls_order = os.path.join(d, 'calls.order')
        run(CORD + ['order', prof, '--binary', base, '--node-weight', 'calls',
                    '-o', calls_order])
        if 'zl_inflate' not in order_keys(calls_order):
            problems.append('--node-weight calls left the loop-heavy zl_inflate out')

        script = os.path.join(d, 'zl.ld')
        # the objects and the archive built from them: one pattern each
        run(CORD + ['emit', order, '--objects'] + objs + [lib, mainobj, '-o', script])
        with open(script) as f:
            text = f.read()
        pats = [x.strip() for x in text.splitlines() if x.strip().startswith('*')]
        dups = sorted({x for x in pats if pats.count(x) > 1})
        if dups:
            problems.append(f'patterns written twice: {dups}')
        for path, t in ((script, text), (order, open(order).read())):
            if not t.endswith('\n'):
                problems.append(f'{os.path.basename(path)} does not end in a newline')

        new = link(os.path.join(d, 'new'), mainobj, lib, ['-Wl,-T,' + script])
        r = run(CORD + ['verify', order, '--binary', new, '--baseline', base, '--run',
                        '--simulate', '--icache', f'{WAY},1,{LINE}', '--functions', '8',
                        '--workload', wl])
        if 'WARNING' in r.stdout:
            problems.append('verify --simulate warned about the default layout')
        m = re.search(r'before (\d+) I1 misses, after (\d+)', r.stdout)
        if not m:
            raise SystemExit('FAILED: verify --simulate printed no I1 misses')
        before, after = int(m.group(1)), int(m.group(2))
        if not after * 2 < before:
            problems.append(f'I1 misses (16 KB direct-mapped) only {before} -> {after}')
        print(f'I1 misses, 16 KB direct-mapped, the three phases: {before} -> {after} '
              f'({100 * (after - before) / before:+.1f}%)')
        # --functions: callgrind's attribution puts the removed misses on
        # the two colliding functions (one a step each before, a few after)
        for f in ('zl_match', 'zl_emit'):
            m = re.search(rf'^  {f} +(\d+) +(\d+)$', r.stdout, re.M)
            if not m or not (int(m.group(1)) >= 3000 and int(m.group(2)) * 100 < int(m.group(1))):
                problems.append(f'verify --functions: no row for {f} with its misses gone '
                                f'({m.group(0).strip() if m else "missing"})')

        n = symbols(new)
        if conflicts(n['zl_match'], n['zl_emit']):
            problems.append(f'zl_match and zl_emit still share '
                            f'{len(conflicts(n["zl_match"], n["zl_emit"]))} sets')
        # the hot span: the ordered functions back to back (gaps of the
        # placement and function alignment aside), no cold code inside
        lo = min(n[k][0] for k in keys if k in n)
        hi = max(n[k][0] + n[k][1] for k in keys if k in n)
        gaps = int(re.search(r'gaps=(\d+)', head).group(1))
        room = sum(n[k][1] for k in keys if k in n) + gaps + 16 * len(keys)
        if hi - lo > room:
            problems.append(f'the ordered span {lo:#x}..{hi:#x} is {hi - lo} bytes, more '
                            f'than its functions and gaps ({room})')
        for k in ('zl_spare', 'zl_table', 'zl_unpack.c:mix'):
            if k not in keys and lo < n[k][0] + n[k][1] and n[k][0] < hi:
                problems.append(f'cold {k} at {n[k][0]:#x} inside the hot span')
        # The safety net must fire on a layout that is worse: zl_match and
        # zl_emit placed one cache size apart on purpose.
        bad = os.path.join(d, 'bad.order')
        with open(bad, 'w') as f:
            f.write(f'# cord order v2: hand-made; icache={WAY},1,{LINE}; gaps={WAY}\n'
                    f'zl_match @0x0\nzl_emit @{WAY:#x}\n')
        bad_ld = os.path.join(d, 'bad.ld')
        run(CORD + ['emit', bad, '--objects', lib, '-o', bad_ld])
        badbin = link(os.path.join(d, 'bad'), mainobj, lib, ['-Wl,-T,' + bad_ld])
        r = run(CORD + ['verify', bad, '--binary', badbin, '--baseline', new, '--simulate',
                        '--icache', f'{WAY},1,{LINE}', '--strict', '--', 'pack', '3000'],
                ok=(2,))
        if 'WARNING' not in r.stdout:
            problems.append('verify --simulate did not warn about a colliding layout')
    for p in problems:
        print('FAILED: ' + p)
    if problems:
        sys.exit(1)
    print('third-party-shaped program: hidden and static functions placed, the '
          'loop-heavy one kept, the collision removed')


if __name__ == '__main__':
    main()
