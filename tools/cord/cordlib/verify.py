# SPDX-License-Identifier: BSD-2-Clause
"""Did the order apply, and did it change nothing but the layout?

Linkers skip names they do not find without a word (lld at most warns, GNU
ld's scripts match nothing and carry on), so an order can silently do
nothing: a renamed static, a missing -ffunction-sections, the wrong option
spelling.  This is the only guard, hence its use in the tests.
"""

import os
import subprocess
import tempfile

from .profile import fmt_key

PAGE = 4096


def place(order, elf, by_name=False):
    """Resolve the ordered keys in `elf`.  Returns (placed, problems):
    placed is [(rank, key, Func)]; rank is the position in the order, or,
    by_name, the position of the first function of that name (lld and gold
    give same-named statics one priority)."""
    placed, problems = [], []
    first = {}
    for i, (src, name) in enumerate(order):
        first.setdefault(name, i)
        hits = elf.lookup(name, src)
        if not hits:
            problems.append(f'{fmt_key((src, name))}: not in {elf.path}')
        elif len(hits) > 1:
            problems.append(f'{fmt_key((src, name))}: ambiguous in {elf.path} '
                            f'({len(hits)} symbols; profile without file names?)')
        else:
            placed.append((first[name] if by_name else i, (src, name), hits[0]))
    return placed, problems


def check_increasing(placed):
    """Each rank's functions must all lie below the next rank's."""
    problems = []
    groups = {}
    for rank, key, f in placed:
        groups.setdefault(rank, []).append((key, f))
    prev = None
    for rank in sorted(groups):
        lo = min(f.addr for _k, f in groups[rank])
        hi = max(f.addr for _k, f in groups[rank])
        if prev is not None and lo <= prev[1]:
            problems.append(f'{fmt_key(groups[rank][0][0])} at {lo:#x} is not after '
                            f'{fmt_key(prev[0])} at {prev[1]:#x}')
        prev = (groups[rank][-1][0], hi)
    return problems


def footprint(funcs):
    """(span in bytes from the first hot byte to the last, distinct 4 KB
    pages the hot functions touch, total hot bytes)."""
    if not funcs:
        return 0, 0, 0
    start = min(f.addr for f in funcs)
    end = max(f.addr + f.size for f in funcs)
    pages = set()
    for f in funcs:
        pages.update(range(f.addr // PAGE, (f.addr + max(f.size, 1) - 1) // PAGE + 1))
    return end - start, len(pages), sum(f.size for f in funcs)


# Cycle estimate KCachegrind and callgrind_annotate use: L1 miss ~10 cycles,
# last-level miss ~100.  Crude, but the same formula before and after.
def cycle_estimate(ev):
    l1 = ev.get('I1mr', 0) + ev.get('D1mr', 0) + ev.get('D1mw', 0)
    ll = ev.get('ILmr', 0) + ev.get('DLmr', 0) + ev.get('DLmw', 0)
    return ev.get('Ir', 0) + 10 * l1 + 100 * ll


def run_with_stdin(cmd, stdin, capture=True, cwd=None):
    """subprocess.run with standard input from the file `stdin` (None:
    /dev/null; '-': this process's own)."""
    if stdin == '-':
        return subprocess.run(cmd, cwd=cwd, capture_output=capture)
    with open(stdin or os.devnull, 'rb') as f:
        return subprocess.run(cmd, cwd=cwd, capture_output=capture, stdin=f)


def callgrind(cmd, i1=None, toggle=None, cwd=None, extra=(), stdin=None, functions=False):
    """Run cmd under callgrind; returns (events dict, stdout bytes, rc,
    per-function events or None).  D1 and LL are fixed so that figures do
    not depend on the host's caches (and on valgrind's guess of them in a
    VM).  Standard input is /dev/null unless `stdin` names a file ('-':
    inherited).  With functions, also {"file:function": events}, each
    function's own events (callgrind's exclusive cost).

    The program runs through a symlink of one fixed length: the C library's
    start-up walks argv[0] and the environment, so "./base" and "./new"
    would differ by a few instructions and hide a real change.  ($ORIGIN
    still resolves: ld.so takes it from the real path.)"""
    with tempfile.TemporaryDirectory(prefix='cord-cg-') as tmp:
        out = os.path.join(tmp, 'callgrind.out')
        prog = os.path.join(tmp, 'prog')
        os.symlink(os.path.abspath(cmd[0]), prog)
        cmd = [prog] + list(cmd[1:])
        vg = ['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out]
        if i1:
            vg += ['--cache-sim=yes', '--I1=' + i1, '--D1=32768,8,64',
                   '--LL=8388608,16,64']
        if toggle:
            vg += ['--toggle-collect=' + toggle]
        vg += list(extra)
        r = run_with_stdin(vg + list(cmd), stdin, cwd=cwd)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f'callgrind failed on {" ".join(cmd)}: '
                               + r.stderr.decode(errors='replace')[-2000:])
        ev = callgrind_totals(out)
        per = function_events(out) if functions else None
        return ev, r.stdout, r.returncode, per


def callgrind_totals(path):
    """{event: total} of a callgrind.out file ({} if it has no totals).
    Also the report's (cnreport/caches.py)."""
    events, totals = [], None
    with open(path) as f:
        for line in f:
            if line.startswith('events:'):
                events = line.split()[1:]
            elif line.startswith(('summary:', 'totals:')):
                totals = [int(x) for x in line.split()[1:]]
    return dict(zip(events, totals or []))


def function_events(path):
    """{function: {event: count}} of a callgrind.out: each function's own
    cost lines (a call's inclusive cost, the line after `calls=`, is not
    the caller's own).  Keyed by name alone -- valgrind gives code in a
    `.text.cord` section no file, so "file:f" before would be "???:f"
    after -- so same-named statics add up."""
    names = {'fl': {}, 'fn': {}}
    events, npos = [], 1
    per = {}
    cur, after_call = None, False

    def name(kind, value):
        if value.startswith('('):
            ident, _, text = value[1:].partition(')')
            text = text.strip()
            if text:
                names[kind][ident] = text
            return names[kind].get(ident, '?')
        return value
    with open(path, errors='replace') as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in '+-*':
                if after_call:
                    after_call = False
                    continue
                if cur is None:
                    continue
                t = line.split()
                d = per.setdefault(cur, {})
                for e, v in zip(events, t[npos:]):
                    d[e] = d.get(e, 0) + int(v)
            elif line.startswith('events:'):
                events = line.split()[1:]
            elif line.startswith('positions:'):
                npos = len(line.split()[1:])
            elif line.startswith(('fl=', 'fi=', 'fe=')):
                name('fl', line[3:].strip())
            elif line.startswith('fn='):
                cur = name('fn', line[3:].strip())
            elif line.startswith(('cfi=', 'cfl=')):
                name('fl', line.split('=', 1)[1].strip())
            elif line.startswith('cfn='):
                name('fn', line[4:].strip())
            elif line.startswith('calls='):
                after_call = True
    return per


def check_offsets(placed, offsets, way):
    """The placement for an I-cache (place.py) applied: every function
    with a planned offset sits at that offset from one common origin,
    modulo the cache way, i.e. in the cache sets planned relative to each
    other (where the region starts shifts them all alike)."""
    problems = []
    origin = None
    for _rank, key, f in placed:
        off = offsets.get(key)
        if off is None:
            continue
        o = (f.addr - off) % way
        if origin is None:
            origin = (o, key)
        elif o != origin[0]:
            problems.append(f'{fmt_key(key)} at {f.addr:#x} is not at its planned offset '
                            f'{off:#x} (modulo {way}) from the region of '
                            f'{fmt_key(origin[1])}')
    return problems[:10] + ([f'... and {len(problems) - 10} more'] if len(problems) > 10
                            else [])
