#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cord: profile-guided function ordering for the instruction cache.

    cord record   -o P.prof [--workload W] [--stdin F] -- PROGRAM ARGS
                                                profile runs under callgrind
    cord profile  --callgrind F | --instrument F --binary B | --perf F  -o P.prof
    cord merge    A.prof B.prof --weights 2,1 [--normalize] -o M.prof
    cord order    P.prof... --binary B [--algo c3|ph|hotness] [--coverage 0.999]
                  [--node-weight auto|cost|calls] [--icache 16384,1,64|none] -o hot.order
    cord emit     hot.order --format ld|lld|gold [--objects DIR/.a/.o...] -o FILE
    cord verify   hot.order --binary NEW [--baseline OLD] [--by-name] [--run]
                  [--simulate [--icache G] [--functions N]] [--workload W] -- ARGS
    cord simulate --binary OLD --binary NEW [--i1 16384,1,64]... [--functions N] -- ARGS

See tools/cord/README.md for the whole loop.
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cordlib import elf as elfmod                      # noqa: E402
from cordlib import emit as emitmod                    # noqa: E402
from cordlib import order as ordermod                  # noqa: E402
from cordlib import place as placemod                  # noqa: E402
from cordlib import profile as profmod                 # noqa: E402
from cordlib import verify as verifymod                # noqa: E402
from cordlib.profile import EXTERNAL, fmt_key, parse_key   # noqa: E402

GEOMETRIES = ['16384,1,64', '32768,8,64', '8192,2,64']
DEFAULT_ICACHE = GEOMETRIES[0]      # Nahum et al.'s: where layout decides


def warn(msg):
    print('cord: ' + msg, file=sys.stderr)


def die(msg):
    print('cord: error: ' + msg, file=sys.stderr)
    sys.exit(1)


def read_order(path):
    """[(key, offset or None)] of an order file: one function a line,
    optionally followed by `@0xOFFSET` (its planned offset in the ordered
    region, see place.py)."""
    keys = []
    with open(path) as f:
        for line in f:
            t = line.split()
            if not t or t[0].startswith('#'):
                continue
            off = int(t[1][1:], 16) if len(t) > 1 and t[1].startswith('@') else None
            keys.append((parse_key(t[0]), off))
    return keys


def order_header(path):
    """The settings an order file's first line records ({} if none)."""
    with open(path) as f:
        head = f.readline()
    out = {}
    for part in head.split(';')[1:]:
        if '=' in part:
            k, v = part.strip().split('=', 1)
            out[k] = v
    return out


# ------------------------------------------------------------- workloads

def workload(a, program):
    """The runs of a workload: [(argv, stdin)].  `program` is the argv the
    runs start with; --workload FILE adds one run per line (the line's
    arguments after `program`; a trailing `< PATH` is that run's standard
    input); without it, one run.  Standard input is /dev/null unless
    --stdin names a file, or `-` to pass this process's own."""
    default_in = getattr(a, 'stdin', None) or os.devnull
    if not getattr(a, 'workload', None):
        return [(list(program), default_in)]
    runs = []
    with open(a.workload) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            try:
                t = shlex.split(line)
            except ValueError as e:
                die(f'{a.workload}:{lineno}: {e}')
            stdin = default_in
            if len(t) >= 2 and t[-2] == '<':
                stdin, t = t[-1], t[:-2]
            runs.append((list(program) + t, stdin))
    if not runs:
        die(f'{a.workload}: no command lines')
    return runs


# ------------------------------------------------------------------ profile

def cmd_record(a):
    if not a.command:
        die('record: give the program after --')
    if not shutil.which('valgrind'):
        die('record: valgrind not found (Debian: valgrind)')
    runs = workload(a, a.command)
    profs = []
    with tempfile.TemporaryDirectory(prefix='cord-rec-') as tmp:
        for n, (argv, stdin) in enumerate(runs):
            out = os.path.join(tmp, f'callgrind.out.{n}')
            # --demangle=no: the linker wants C++ names mangled.  Instruction
            # positions, uncompressed: every function gets an address, which
            # resolves it in the binary where its name and file do not.
            vg = ['valgrind', '-q', '--tool=callgrind', '--demangle=no',
                  '--dump-instr=yes', '--compress-pos=no',
                  '--callgrind-out-file=' + out] + a.valgrind_arg
            r = verifymod.run_with_stdin(vg + argv, stdin, capture=False)
            if r.returncode != 0:
                die(f'record: {" ".join(argv)} exited with {r.returncode}')
            if a.keep:
                shutil.copy(out, a.keep + (f'.{n}' if len(runs) > 1 else ''))
            profs.append(profmod.read_callgrind(out, a.object or None))
    # The phases of one workload add up: a sum, not a normalised merge.
    p = profs[0] if len(profs) == 1 else profmod.merge(profs)
    p.write(a.output)
    warn(f'record: {len(runs)} run(s), {len(p.edges)} edges, {len(p.functions())} '
         f'functions -> {a.output}')


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


def read_profiles(paths, weights, normalize):
    """The profiles, each scaled as merge() would scale it."""
    profs = [profmod.read_profile(p) for p in paths]
    if weights:
        w = [float(x) for x in weights.split(',')]
        if len(w) != len(profs):
            die('--weights needs one number per profile')
    else:
        w = [1] * len(profs)
    totals = [sum(p.edges.values()) or 1 for p in profs]
    ref = max(totals)
    return [p.scaled(x * (ref / t if normalize else 1)) for p, x, t in zip(profs, w, totals)]


def load_profiles(paths, weights, normalize):
    return profmod.merge(read_profiles(paths, weights, normalize))


def cmd_merge(a):
    p = load_profiles(a.profiles, a.weights, a.normalize)
    p.write(a.output)


# ------------------------------------------------------------------- order

def address_bias(prof, binary):
    """The run's load bias of `binary`: the most common (profiled address
    - symbol address) over functions whose name the binary has once, or
    None without addresses.  Position-independent programs run at a base
    valgrind chooses; fixed ones at bias 0."""
    votes = {}
    for (src, name), a in prof.addr.items():
        cands = binary.by_name.get(name, [])
        if len(cands) == 1 and cands[0].addr:
            b = a - cands[0].addr
            votes[b] = votes.get(b, 0) + 1
    if not votes:
        return None
    return max(votes.items(), key=lambda kv: (kv[1], -kv[0]))[0]


def canonical(prof, binary, lto, quiet=False):
    """Rename every profile key to the binary's own identity for it: the
    STT_FILE name for a static, no file for a global or for a local the
    symbol table gives no file (hidden functions of a static library).
    This is where callgrind's /full/path/x.c:step, the instrument runtime's
    x.c:step and perf's file-less names meet.

    A function the profile has an address for is found by address: the
    symbol of its name whose bytes hold that address (less the run's load
    bias), whatever its file; the others by name and file.  Keys the
    binary lacks (C library, vdso...) drop out: they cannot be placed.
    Returns (profile, sizes)."""
    names = {k[1] for k in prof.functions()}
    problem = elfmod.lto_problem(names, binary.file_symbols)
    drop = set()
    if problem and lto == 'refuse':
        die(problem)
    elif problem and lto == 'drop':
        drop = {n for n in names if '.lto_priv.' in n}
        if not quiet:
            warn(f'--lto=drop: leaving out {len(drop)} LTO-private functions')
    elif problem and not quiet:
        warn('--lto=place: an LTO build; its functions are placed by section name '
             '(valid for links of the same inputs, which verify checks)')
    bias = address_bias(prof, binary)
    sizes, missing, ambiguous = {}, set(), []
    by_addr = set()
    hot, hot_done = {}, set()

    def hot_offsets(key, f):
        blocks = prof.hot.get(key)
        if blocks and bias is not None and key not in hot_done:
            hot_done.add(key)
            d = hot.setdefault(binary.key(f), {})
            for b, n in blocks.items():
                r = b - bias - f.addr
                if 0 <= r < max(f.size, 1):
                    d[r] = d.get(r, 0) + n

    def fn(key):
        src, name = key
        if name in drop:
            return None
        a = prof.addr.get(key)
        if a is not None and bias is not None:
            f = binary.by_address(a - bias, name)
            if f is not None:
                k = binary.key(f)
                sizes[k] = f.size
                by_addr.add(key)
                hot_offsets(key, f)
                return k
        if not src and len(binary.by_name.get(name, [])) > 1:
            ambiguous.append(fmt_key(key))     # a file-less name of several
            return None
        hits = binary.lookup(name, src)
        if len(hits) == 1:
            f = hits[0]
            k = binary.key(f)
            sizes[k] = f.size
            return k
        if hits:
            ambiguous.append(fmt_key(key))
        else:
            missing.add(key)
        return None
    out = prof.remap(fn)
    # which bytes of each function ran, as offsets into it (place.py)
    out.hot_offsets = hot
    if quiet:
        return out, sizes
    if by_addr:
        warn(f'{len(by_addr)} profiled functions found in {binary.path} by address')
    if ambiguous:
        ambiguous = set(ambiguous)
        warn(f'{len(ambiguous)} names match several statics and the profile has no '
             f'file or address to choose (left out): {", ".join(sorted(ambiguous)[:5])}')
    if missing:
        warn(f'{len(missing)} profiled functions are not in {binary.path} '
             '(other libraries): left out')
    return out, sizes


def cmd_order(a):
    profs = read_profiles(a.profiles, a.weights, a.normalize)
    prof = profmod.merge(profs)
    if a.binary:
        binary = elfmod.ElfFunctions(a.binary)
        prof, sizes = canonical(prof, binary, a.lto)
        phases = [canonical(p, binary, a.lto, quiet=True)[0] for p in profs]
    else:
        problem = elfmod.lto_problem({k[1] for k in prof.functions()})
        if problem and a.lto == 'refuse':
            die(problem)

        def nolto(k):
            return None if '.lto_priv.' in k[1] else k
        drop = problem and a.lto == 'drop'
        if drop:
            prof = prof.remap(nolto)
        phases = [p.remap(nolto) for p in profs] if drop else profs
        sizes = dict(prof.size)
    funcs = prof.functions()
    calls = prof.calls_into()
    cost = {f: prof.cost.get(f, 0) for f in funcs}
    has_cost = any(cost.values())
    node_weight = a.node_weight
    if node_weight == 'auto':
        node_weight = 'cost' if has_cost else 'calls'
    if node_weight == 'cost' and not has_cost:
        die('--node-weight cost: the profile has no cost records')
    weight = cost if node_weight == 'cost' else calls
    nosize = sorted(fmt_key(f) for f in funcs if f not in sizes)
    if nosize:
        warn(f'{len(nosize)} functions without a size (counted as 1 byte): '
             + ', '.join(nosize[:5]))
    # The cut: by share of instructions where the profile has them, so
    # that a loop-heavy function called a few times is never left out
    # while cold code that is merely called often is placed.
    cut_by = cost if has_cost else calls
    keep = ordermod.coverage_cut(
        funcs, cut_by, a.coverage,
        [ph.cost if has_cost else ph.calls_into() for ph in phases] if len(phases) > 1
        else ())
    # small functions run as often as the hot ones, in any phase
    small = set()
    for ph in phases if len(phases) > 1 else [prof]:
        small |= ordermod.frequent_small(funcs, ph.calls_into(), sizes, a.coverage)
    if small - keep:
        warn(f'order: {len(small - keep)} small functions called as often as the hot ones '
             'placed too: ' + ', '.join(sorted(fmt_key(f) for f in small - keep)[:8]))
    keep |= small
    edges = {k: n for k, n in prof.edges.items()
             if k[0] in keep and k[1] in keep and EXTERNAL not in k}
    order = ordermod.ALGORITHMS[a.algo](keep, weight, sizes, edges, calls)
    total = sum(cut_by.get(f, 0) for f in funcs) or 1
    hot_bytes = sum(sizes.get(f, 0) for f in order)
    offsets, gaps, geom = None, 0, None
    if a.icache != 'none':
        try:
            geom = placemod.parse_geometry(a.icache)
        except ValueError as e:
            die(str(e))
        heat = [placemod.phase_heat(p, order, sizes, getattr(p, 'hot_offsets', None))
                for p in phases]
        _o, _g, packed = placemod.place(order, sizes, heat, geom, pack=True)
        offsets, gaps, left = placemod.place(order, sizes, heat, geom)
        warn(f'order: placed for I1 {a.icache}: estimated conflict misses {packed:.0f} '
             f'packed, {left:.0f} placed; {gaps} bytes of gaps')
    with open(a.output, 'w') as f:
        f.write(f'# cord order v2: {a.algo}, coverage {a.coverage}, {len(order)} '
                f'functions, {hot_bytes} bytes, '
                f'{100 * sum(cut_by.get(x, 0) for x in order) / total:.3f}% of '
                f'{"instructions" if has_cost else "calls"}; node-weight={node_weight}; '
                f'icache={a.icache}; gaps={gaps}' + ('; lto=place' if a.lto == 'place' else '')
                + '\n')
        for k in order:
            f.write(fmt_key(k) + (f' @{offsets[k]:#x}' if gaps else '') + '\n')
    warn(f'order: {a.algo} by {node_weight}: {len(order)} of {len(funcs)} functions, '
         f'{hot_bytes} bytes -> {a.output}')


# -------------------------------------------------------------------- emit

def cmd_emit(a):
    entries = read_order(a.order)
    if not entries:
        die(f'{a.order}: empty order')
    order = [k for k, _o in entries]
    offsets = {k: o for k, o in entries if o is not None} or None
    head = order_header(a.order)
    lto_place = head.get('lto') == 'place'
    problem = elfmod.lto_problem({k[1] for k in order})
    if problem and not lto_place:
        die(problem)
    objects = emitmod.ObjectIndex(a.objects) if a.objects else None
    if objects is not None:
        problem = elfmod.lto_problem(
            set(), [s for e in objects.elfs for s in e.file_symbols])
        if any(e.lto_ir for e in objects.elfs):
            # slim LTO objects hold bytecode: the link compiles the code
            # into temporary objects no pattern can name
            warn('emit: the objects hold LTO bytecode: functions are selected by '
                 'section name alone (`*(.text.f)`), not by object')
            objects = None
        elif problem and not lto_place:
            die(problem)
    align = None
    if offsets and head.get('icache', 'none') != 'none':
        align = placemod.parse_geometry(head['icache'])[2]
    comment = f'{len(order)} functions from {os.path.basename(a.order)}'
    if a.format == 'ld':
        text = emitmod.emit_ld(order, objects, a.object_name, warn, comment,
                               offsets=offsets, align=align)
    else:
        if offsets and any(offsets.values()):
            warn(f'emit: {a.format} takes an order, not offsets: the placement for '
                 f'I1 {head.get("icache")} applies with --format ld only (GNU ld and '
                 'lld); check this packed layout with verify --simulate')
        if a.format == 'lld':
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


def run_workload(a, binary, i1=None, toggle=None, functions=False, extra=()):
    """The events of every run of the workload on `binary`, summed, and
    the outputs concatenated (and, with functions, per-function events)."""
    if not os.path.isfile(binary):
        die(f'{binary}: no such program')
    total, outs, per = {}, [], {}
    for argv, stdin in workload(a, [os.path.abspath(binary)] + a.command):
        r = verifymod.callgrind(argv, i1=i1, toggle=toggle, stdin=stdin,
                                functions=functions,
                                extra=list(extra) + list(getattr(a, 'valgrind_arg', [])))
        for k, v in r[0].items():
            total[k] = total.get(k, 0) + v
        outs.append(r[1])
        if functions:
            for fname, ev in r[3].items():
                d = per.setdefault(fname, {})
                for k, v in ev.items():
                    d[k] = d.get(k, 0) + v
    return total, b''.join(outs), per


def short_names(binaries):
    """{binary: a short name that tells it from the others}: its file
    name, else its directory's and file name (base/prog, c3/prog)."""
    for n in (1, 2):
        names = {b: '/'.join(os.path.abspath(b).split('/')[-n:]) for b in binaries}
        if len(set(names.values())) == len(binaries):
            return names
    return {b: b for b in binaries}


def print_functions(binaries, per, top):
    """Per-function I1 misses (callgrind's own attribution), the functions
    with the most misses in any of the binaries first."""
    names = set()
    for b in binaries:
        names |= set(per[b])
    rank = sorted(names, key=lambda n: (-max(per[b].get(n, {}).get('I1mr', 0)
                                             for b in binaries), n))[:top]
    short = short_names(binaries)
    print(f'  {"function":40}' + ''.join(f'{short[b].split("/")[0][:14]:>16}'
                                         for b in binaries) + '   I1 misses')
    for n in rank:
        print(f'  {n[:40]:40}' + ''.join(f'{per[b].get(n, {}).get("I1mr", 0):>16}'
                                         for b in binaries))


def safety_net(a, base, new):
    """verify --simulate: I1 misses of both layouts on the target
    geometry.  Returns a problem (str) when the new layout misses more
    than the baseline by over --tolerance, else None."""
    geom = a.icache
    evs, per = {}, {}
    for label, b in (('before', base), ('after', new)):
        evs[label], _out, per[b] = run_workload(a, b, i1=geom, toggle=a.toggle,
                                                functions=a.functions > 0)
    x, y = evs['before'].get('I1mr', 0), evs['after'].get('I1mr', 0)
    chg = f'{100 * (y - x) / x:+.1f}%' if x else 'n/a'
    print(f'simulate (I1 {geom}): before {x} I1 misses, after {y} ({chg}); '
          f'instructions {evs["before"].get("Ir", 0)} / {evs["after"].get("Ir", 0)}')
    if a.functions:
        print_functions([base, new], per, a.functions)
    if y > x * (1 + a.tolerance / 100) and y - x > a.min_misses:
        return (f'the new layout misses more on I1 {geom}: {x} -> {y} ({chg}, tolerance '
                f'{a.tolerance:g}%)')
    return None


def cmd_verify(a):
    entries = read_order(a.order)
    order = [k for k, _o in entries]
    offsets = {k: o for k, o in entries if o is not None}
    new = elfmod.ElfFunctions(a.binary)
    placed, problems = verifymod.place(order, new, a.by_name)
    problems += verifymod.check_increasing(placed)
    head = order_header(a.order)
    gaps = int(head.get('gaps', 0) or 0)
    if offsets and not a.by_name and head.get('icache', 'none') != 'none':
        way = placemod.way_bytes(placemod.parse_geometry(head['icache']))
        problems += verifymod.check_offsets(placed, offsets, way)
    after = describe(f'after  ({a.binary})', [f for _r, _k, f in placed])
    if a.baseline:
        old = elfmod.ElfFunctions(a.baseline)
        oplaced, _ = verifymod.place(order, old)
        before = describe(f'before ({a.baseline})', [f for _r, _k, f in oplaced])
        if gaps:
            print(f'(of the span after, {gaps} bytes are gaps the placement for I1 '
                  f'{head.get("icache")} left between functions)')
        if after[0] - gaps > before[0]:
            problems.append(f'hot span grew: {before[0]} -> {after[0]} bytes')
    if a.simulate and not a.baseline:
        die('verify --simulate: give --baseline')
    if a.run:
        results = {}
        for label, b in (('after', a.binary), ('before', a.baseline)):
            if not b:
                continue
            ev, out, _ = run_workload(a, b)
            results[label] = (ev.get('Ir', 0), out)
            print(f'{label}: {ev.get("Ir", 0)} instructions')
        if 'before' not in results:
            pass
        elif results['before'][0] != results['after'][0]:
            problems.append(f'instruction count changed: {results["before"][0]} -> '
                            f'{results["after"][0]}')
        if 'before' in results and results['before'][1] != results['after'][1]:
            problems.append('program output changed')
    for p in problems:
        print('FAIL: ' + p)
    if problems:
        print(f'verify: {len(problems)} problems: the order did not apply as written')
        sys.exit(1)
    if a.icache is None:        # the geometry the order was placed for
        a.icache = head.get('icache', 'none')
        a.icache = DEFAULT_ICACHE if a.icache == 'none' else a.icache
    worse = safety_net(a, a.baseline, a.binary) if a.simulate else None
    if worse:
        print('WARNING: ' + worse + '; keep the baseline layout, or order with another '
              '--algo/--icache and compare again')
        if a.strict:
            sys.exit(2)
    print(f'verify: OK, {len(placed)} functions in order')


def cmd_simulate(a):
    geoms = a.i1 or GEOMETRIES
    print(f'{"I1 (size,assoc,line)":22} {"binary":28} {"Ir":>14} {"I1 misses":>12} '
          f'{"per unit":>10} {"cycle est.":>14}')
    rows = {}
    short = short_names(a.binaries)
    for g in geoms:
        per = {}
        for b in a.binaries:
            ev, _out, per[b] = run_workload(a, b, i1=g, toggle=a.toggle,
                                            functions=a.functions > 0)
            rows[(g, b)] = ev
            print(f'{g:22} {short[b][-28:]:28} {ev.get("Ir", 0):>14} '
                  f'{ev.get("I1mr", 0):>12} {ev.get("I1mr", 0) / a.per:>10.2f} '
                  f'{verifymod.cycle_estimate(ev) / a.per:>14.1f}')
        if len(a.binaries) == 2:
            x, y = (rows[(g, b)].get('I1mr', 0) for b in a.binaries)
            if x:
                print(f'{"":22} {"change":28} {"":>14} {100 * (y - x) / x:>+11.1f}%')
        if a.functions:
            print_functions(a.binaries, per, a.functions)


def add_run_options(p):
    p.add_argument('--valgrind-arg', action='append', default=[],
                   help='passed to valgrind (repeatable), e.g. --collect-atstart=no')
    p.add_argument('--workload', help='a file of runs, one argument list a line (after '
                   'the program); a trailing `< FILE` gives that run its standard input')
    p.add_argument('--stdin', help='standard input of every run (default /dev/null; '
                   '`-` passes this one\'s)')


# -------------------------------------------------------------------- main

# verify's on/off switches and what each does.
VERIFY_SWITCHES = (
    ('--by-name', 'the order was applied by name (lld symbol-ordering, gold): '
     'same-named statics share a rank'),
    ('--run', 'run both programs under callgrind with the arguments after -- '
     'and require equal instruction counts and output'),
    ('--simulate', 'compare simulated I1 misses with the baseline on --icache; '
     'warn when the new layout is worse'),
    ('--strict', 'exit 2 (not 0) when --simulate warns'),
)


def subcommand(sub, name, fn, text, output=True):
    """The parser of subcommand NAME, run by FN; with OUTPUT its -o."""
    p = sub.add_parser(name, help=text)
    p.set_defaults(fn=fn)
    if output:
        p.add_argument('-o', '--output', required=True)
    return p


def add_profiles(p):
    """The profiles a command combines, and how (merge, order)."""
    p.add_argument('profiles', nargs='+')
    p.add_argument('--weights')
    p.add_argument('--normalize', action='store_true',
                   help='scale each profile to the same total first')


def main(argv=None):
    ap = argparse.ArgumentParser(prog='cord', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)

    p = subcommand(sub, 'record', cmd_record, 'run a program under callgrind, write a profile')
    p.add_argument('--object', action='append', default=[],
                   help='keep only functions of this ELF object (basename; repeatable)')
    p.add_argument('--keep', help='also keep the raw callgrind.out here')
    add_run_options(p)

    p = subcommand(sub, 'profile', cmd_profile, 'convert a callgrind/instrument/perf run')
    p.add_argument('--callgrind')
    p.add_argument('--instrument')
    p.add_argument('--perf', help='`perf script` output of a perf record -g run')
    p.add_argument('--binary', action='append', default=[],
                   help='ELF files to resolve --instrument addresses with')
    p.add_argument('--object', action='append', default=[],
                   help='callgrind ob= / perf DSO basenames to keep (repeatable)')

    p = subcommand(sub, 'merge', cmd_merge, 'weighted sum of profiles')
    add_profiles(p)

    p = subcommand(sub, 'order', cmd_order, 'compute a function order')
    add_profiles(p)
    p.add_argument('--binary', help='the profiled program: sizes and static identities')
    p.add_argument('--algo', choices=sorted(ordermod.ALGORITHMS), default='c3')
    p.add_argument('--coverage', type=float, default=0.999)
    p.add_argument('--node-weight', choices=['auto', 'cost', 'calls'], default='auto',
                   help='cost: a function\'s own instructions (samples), loops included; '
                   'calls: the calls into it (as lld); auto (default): cost where the '
                   'profile has it')
    p.add_argument('--icache', default=DEFAULT_ICACHE,
                   help=f'size,assoc,line of the I-cache to place for (default {DEFAULT_ICACHE}): '
                   'functions that run together get different sets (gaps where needed); '
                   '`none`: packed, no placement')
    p.add_argument('--lto', choices=['refuse', 'drop', 'place'], default='refuse',
                   help='an LTO build: refuse (default), drop its LTO-private '
                        'functions, or place everything by section name')

    p = subcommand(sub, 'emit', cmd_emit, 'write the order for a linker')
    p.add_argument('order')
    p.add_argument('--format', choices=['ld', 'lld', 'gold'], default='ld')
    p.add_argument('--objects', nargs='+',
                   help='objects, archives or build dirs the program is linked from: '
                        'exact object and section for every function')
    p.add_argument('--object-name', default='{src}.o',
                   help='without --objects, the object of source {src} ({stem} = '
                        'without extension); default {src}.o as meson and cmake name them')

    p = subcommand(sub, 'verify', cmd_verify, 'check that an order applied', output=False)
    p.add_argument('order')
    p.add_argument('--binary', required=True, help='the relinked program')
    p.add_argument('--baseline', help='the program before (footprint, instructions, output)')
    for name, text in VERIFY_SWITCHES:
        p.add_argument(name, action='store_true', help=text)
    p.add_argument('--icache', help='size,assoc,line for --simulate (default: the one '
                   f'the order was placed for, else {DEFAULT_ICACHE})')
    p.add_argument('--tolerance', type=float, default=5.0,
                   help='percent more I1 misses --simulate lets pass without a warning')
    p.add_argument('--min-misses', type=int, default=100,
                   help='absolute increase --simulate ignores (a few misses in noise)')
    p.add_argument('--toggle', help='count only inside this function (--simulate)')
    p.add_argument('--functions', type=int, default=0, metavar='N',
                   help='with --simulate: the N functions with the most I1 misses, '
                        'before and after')
    add_run_options(p)

    p = subcommand(sub, 'simulate', cmd_simulate, 'simulated I1 misses, before vs after', output=False)
    p.add_argument('--binary', dest='binaries', action='append', required=True,
                   help='program to run (repeat: before, after)')
    p.add_argument('--i1', action='append', help='size,assoc,line (repeatable); default '
                   + ' '.join(GEOMETRIES))
    p.add_argument('--toggle', help='count only inside this function (callgrind '
                   '--toggle-collect), e.g. the per-packet entry point')
    p.add_argument('--per', type=float, default=1, help='divide by this (packets)')
    p.add_argument('--functions', type=int, default=0, metavar='N',
                   help='also the N functions with the most I1 misses, per binary')
    add_run_options(p)

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
