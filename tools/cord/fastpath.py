#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""CORD on cachenet's own protocol paths: Tables 11-12 of Nahum et al., "Cache
behavior of network protocols", for this machine.

    fastpath.py SOURCE_ROOT WORK_DIR [--paths P,P..] [--geometries G:G..]
                [--packets N] [--cold-packets N] [--icache warm,cold]
                [--reps N] [--cpu C] [--memsig JSON] [--json OUT] [--jobs 2]

1. Build: one meson build of libcachenet + cachenet-cord-paths in
   WORK_DIR/build with -Dlink_order=WORK_DIR/link.ld (so every object has
   one section per function, and the program is linked statically against
   libcachenet.a: one order spans library and program).  The baseline is
   linked with a script that orders nothing; the CORD builds only relink,
   from the same objects, with the C3 and the Pettis-Hansen script.
2. Profile the baseline: `cachenet-cord record` of every path (warm), the
   profiles merged with equal weight (--normalize).
3. Order (C3; PH for comparison), emit GNU ld scripts with exact objects
   (archive members of libcachenet.a), relink, `cachenet-cord verify`
   (every ordered function in place, hot span before/after).
4. Measure each path under callgrind (--collect-atstart=no: only the
   region cachenet-cord-paths marks, the host's per-packet work) with the
   I1 geometries given (D1 32 KB 8-way, LL 8 MB 16-way fixed): Ir, I1, D1
   and LL misses per packet; the instruction count and the program output
   must be identical in every layout.  With --icache cold the I-cache is
   emptied before every packet (outside the region).
5. Native timing: baseline and CORD binaries alternated, `taskset -c CPU`,
   --reps runs each, median TSC ticks per packet, ratio after/before.

The latency estimate per packet: Ir (one instruction a cycle, the paper's
"ideal" CPI of 1) + L1 misses (I and D) x the L2 hit latency + LL misses x
the memory latency, both in TSC ticks from tools/memsig's levels (measured
here: --memsig JSON, else memsig --quick is run; penalties are printed).

Prints the tables; --json writes everything.  Re-running re-uses the build
(ninja is incremental).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from cordlib import verify as verifymod  # noqa: E402

CORD = [sys.executable, os.path.join(HERE, 'cord.py')]
PATHS = ['tcp-send-off', 'tcp-send-on', 'tcp-recv-off', 'tcp-recv-on',
         'udp-send-off', 'udp-send-on', 'udp-recv-off', 'udp-recv-on']
GEOMETRIES = ['16384,1,64', '32768,8,64', '8192,2,64']
PROG = 'cachenet-cord-paths'
TARGET = 'tools/cord/' + PROG
# A script that orders nothing: the baseline goes through the same -T
# option and the same linker as the ordered builds (an empty output
# section is dropped by the linker).
EMPTY_LD = ('/* cachenet-cord fastpath.py: the baseline, nothing ordered */\n'
            'SECTIONS\n{\n  .text.cord : { }\n}\nINSERT BEFORE .text;\n')
# -gdwarf-4: valgrind 3.19 cannot read clang 14's DWARF 5, and callgrind needs
# the file names to keep same-named statics apart.
MESON_OPTS = ['--buildtype=release', '-Ddebug=true', '-Db_lto=false', '-Dtests=false',
              '-Dbenchmarks=false', '-Dpeers=disabled', '-Dc_args=-gdwarf-4']
# Stated fallbacks when no memsig figure is at hand (TSC ticks).
DEFAULT_L2, DEFAULT_MEM = 14.0, 250.0


def log(msg):
    print('fastpath: ' + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log('+ ' + ' '.join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit(f'fastpath: FAILED ({r.returncode}): {" ".join(cmd)}\n'
                         + r.stdout[-3000:] + r.stderr[-3000:])
    return r


# ------------------------------------------------------------------ build

def build(src, work, jobs):
    bdir = os.path.join(work, 'build')
    lo = os.path.join(work, 'link.ld')
    if not os.path.exists(lo):
        with open(lo, 'w') as f:
            f.write(EMPTY_LD)
    if not os.path.exists(os.path.join(bdir, 'build.ninja')):
        env = dict(os.environ)
        for v in ('CFLAGS', 'CPPFLAGS', 'LDFLAGS'):   # the measured build is the project's own
            env.pop(v, None)
        run(['meson', 'setup', bdir, src, '-Dlink_order=' + lo] + MESON_OPTS, env=env)
    return bdir, lo


def link(bdir, lo, script_text, dest, jobs, target=TARGET):
    """Link `target` with `script_text` as the link order and copy it to
    dest.  The script is not a meson input: the program is removed first
    so that ninja relinks it."""
    with open(lo, 'w') as f:
        f.write(script_text)
    exe = os.path.join(bdir, target)
    if os.path.exists(exe):
        os.unlink(exe)
    run(['ninja', '-C', bdir, '-j', str(jobs), target])
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copy2(exe, dest)
    return dest


# ------------------------------------------------------------- profiling

def profile(work, base, paths, packets, jobs):
    profs = [os.path.join(work, f'prof-{p}.prof') for p in paths]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        list(ex.map(lambda x: run(CORD + ['record', '-o', x[1], '--', base, x[0], str(packets)]),
                    zip(paths, profs)))
    # the shared order is made from all of them, each a phase of its own
    return profs, dict(zip(paths, profs))


def order(work, prof, base, algo, tag, icache=None):
    """`cachenet-cord order` of one profile or of several (kept apart as
    the phases of one workload, each scaled to the same total: one path
    counts as much as another).  `algo` may end in -packed: clustering
    only, no placement for the I-cache (--icache none)."""
    out = os.path.join(work, f'{tag}-{algo}.order')
    profs = prof if isinstance(prof, list) else [prof]
    extra = ['--normalize'] if len(profs) > 1 else []
    if algo.endswith('-packed'):
        algo, extra = algo[:-len('-packed')], extra + ['--icache', 'none']
    elif icache:
        extra += ['--icache', icache]
    run(CORD + ['order'] + profs + ['--binary', base, '--algo', algo, '-o', out] + extra)
    return out


def order_header(path):
    with open(path) as f:
        head = f.readline()
    m = re.search(r'(\d+) functions, (\d+) bytes', head)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def verify(order_file, new, base):
    r = run(CORD + ['verify', order_file, '--binary', new, '--baseline', base])
    spans = {}
    for line in r.stdout.splitlines():
        m = re.match(r'(before|after)\s.*: (\d+) hot functions, (\d+) bytes, span (\d+) bytes, '
                     r'(\d+) pages', line)
        if m:
            spans[m.group(1)] = {'functions': int(m.group(2)), 'bytes': int(m.group(3)),
                                 'span': int(m.group(4)), 'pages': int(m.group(5))}
    return {'ok': 'verify: OK' in r.stdout, 'output': r.stdout.strip(), **spans}


# ------------------------------------------------------------- measuring

def simulate(binary, path, geom, packets, icache):
    cmd = [binary, path, str(packets), '--icache=' + icache]
    ev, out = verifymod.callgrind(cmd, i1=geom, extra=['--collect-atstart=no'])[:2]
    return {'ev': ev, 'out': out.decode(errors='replace')}


def per_packet(ev, packets, l2, mem):
    ir = ev.get('Ir', 0)
    i1 = ev.get('I1mr', 0)
    d1 = ev.get('D1mr', 0) + ev.get('D1mw', 0)
    ll = ev.get('ILmr', 0) + ev.get('DLmr', 0) + ev.get('DLmw', 0)
    return {'ir': ir / packets, 'i1': i1 / packets, 'd1': d1 / packets, 'll': ll / packets,
            'il': ev.get('ILmr', 0) / packets,
            'est': (ir + (i1 + d1) * l2 + ll * mem) / packets}


def timing(binaries, path, packets, reps, cpu, icache):
    """Median TSC ticks per packet of each binary, runs alternated."""
    got = {k: [] for k in binaries}
    pin = ['taskset', '-c', str(cpu)] if cpu is not None and shutil.which('taskset') else []
    for _ in range(reps):
        for k, b in binaries.items():
            r = run(pin + [b, path, str(packets), '--time', '--icache=' + icache])
            m = re.search(r'per_packet ([0-9.]+)', r.stdout)
            got[k].append(float(m.group(1)))
    return {k: statistics.median(v) for k, v in got.items()}, got


def penalties(memsig_path, bdir, cpu, jobs):
    d = None
    src = None
    if memsig_path:
        with open(memsig_path) as f:
            d = json.load(f)
        src = 'tools/memsig, ' + os.path.basename(memsig_path)
    else:
        try:
            run(['ninja', '-C', bdir, '-j', str(jobs), 'tools/memsig/memsig'])
            js = os.path.join(os.path.dirname(bdir), 'memsig.json')
            pin = ['taskset', '-c', str(cpu)] if cpu is not None else []
            run(pin + [os.path.join(bdir, 'tools', 'memsig', 'memsig'), '--quick', '--json', js])
            with open(js) as f:
                d = json.load(f)
            src = 'memsig --quick (this run)'
        except SystemExit as e:
            log(f'memsig unavailable ({str(e)[:200]}); stated penalties')
    lv = (d or {}).get('levels') or {}
    l2 = (lv.get('L2') or {}).get('tsc')
    mem = (lv.get('DRAM') or {}).get('tsc')
    if l2 and mem:
        return float(l2), float(mem), 'measured by ' + src
    return DEFAULT_L2, DEFAULT_MEM, 'stated (memsig levels not found)'


# --------------------------------------------------- cachenet-bench-tcp

# cachenet-bench-tcp's cases for the eight paths (the same loops; TCP
# receive there goes through the driver's burst poll).
BENCH_CASES = {
    'tcp-send-off': 'tcp_tx/offload-mbuf/1460', 'tcp-send-on': 'tcp_tx/separate-mbuf/1460',
    'tcp-recv-off': 'tcp_rx/offload-mbuf-inject/1460',
    'tcp-recv-on': 'tcp_rx/separate-mbuf-inject/1460',
    'udp-send-off': 'udp_tx/nocsum/1472', 'udp-send-on': 'udp_tx/csum/1472',
    'udp-recv-off': 'udp_rx/nocsum/1472', 'udp-recv-on': 'udp_rx/csum/1472',
}
BENCH = 'bench/cachenet-bench-tcp'


def bench_tcp(a, bdir, lo, work, script, order_file):
    """-Dlink_order on the benchmark program: it links libcachenet.a, so
    the library's part of the order applies to it too.  Verify that, and
    compare the two builds natively with the benchmark's own counters."""
    out = {'cases': BENCH_CASES}
    try:
        run(['meson', 'configure', bdir, '-Dbenchmarks=true'])
        base = link(bdir, lo, EMPTY_LD, os.path.join(work, 'base', 'cachenet-bench-tcp'),
                    a.jobs, BENCH)
        with open(script) as f:
            new = link(bdir, lo, f.read(), os.path.join(work, 'c3', 'cachenet-bench-tcp'),
                       a.jobs, BENCH)
    except SystemExit as e:
        out['error'] = str(e)[:500]
        return out
    # the order's functions that live in the library (not cachenet-cord-paths')
    lib = os.path.join(work, 'bench.order')
    with open(order_file) as f, open(lib, 'w') as g:
        g.writelines(x for x in f if not x.startswith('paths.c:'))
    out['verify'] = verify(lib, new, base)
    filt = '^(' + '|'.join(BENCH_CASES.values()) + ')$'   # names need no escaping
    pin = ['taskset', '-c', str(a.cpu)] if a.cpu is not None and shutil.which('taskset') else []
    got = {'base': {}, 'c3': {}, 'base-again': {}}
    rounds = max(1, min(a.reps, 3))
    for _ in range(rounds):
        for k, b in (('base', base), ('c3', new), ('base-again', base)):
            r = run(pin + [b, '--benchmark_filter=' + filt, '--benchmark_min_time=0.05',
                           '--benchmark_repetitions=3', '--benchmark_format=json',
                           '--cn_events=none'])
            for x in json.loads(r.stdout).get('benchmarks', []):
                if x.get('run_type') == 'iteration' and 'tsc_per_packet' in x:
                    got[k].setdefault(x['run_name'], []).append(x['tsc_per_packet'])
    out['median'] = {k: {c: statistics.median(v) for c, v in d.items()} for k, d in got.items()}
    out['command'] = (' '.join(pin) + ' ' if pin else '') + \
        f'cachenet-bench-tcp --benchmark_filter=... --benchmark_min_time=0.05 ' \
        f'--benchmark_repetitions=3 --cn_events=none, {rounds} rounds of base, C3, base again'
    return out


# ------------------------------------------------------------------ main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('source')
    ap.add_argument('work')
    ap.add_argument('--paths', default=','.join(PATHS))
    ap.add_argument('--geometries', default=':'.join(GEOMETRIES),
                    help='I1 geometries size,assoc,line separated by colons')
    ap.add_argument('--icache', default='warm,cold')
    ap.add_argument('--algos', default='c3-path,c3,ph',
                    help='c3, ph, hotness: one order from all paths (each a phase); with '
                         '-path: an order (and a program) per path, as Nahum et al. CORDed each '
                         'benchmark; with -packed (before -path): clustering only, no '
                         'placement for the I-cache')
    ap.add_argument('--target', default='16384,1,64',
                    help='the I-cache `cachenet-cord order --icache` places for, and the '
                         'geometry of the safety net (verify --simulate)')
    ap.add_argument('--packets', type=int, default=2000, help='simulated packets (warm)')
    ap.add_argument('--cold-packets', type=int, default=50,
                    help='simulated packets with the I-cache emptied before each')
    ap.add_argument('--cold-geometries', default='16384,1,64',
                    help='I1 geometries of the cold runs (emptied, the geometry matters little)')
    ap.add_argument('--profile-packets', type=int, default=2000)
    ap.add_argument('--time-packets', type=int, default=20000)
    ap.add_argument('--cold-time-packets', type=int, default=300)
    ap.add_argument('--reps', type=int, default=5, help='timed runs of each binary (0: none)')
    ap.add_argument('--cpu', type=int, default=None, help='taskset -c CPU for the timings')
    ap.add_argument('--memsig', help="memsig JSON for the penalties (else memsig --quick)")
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--json', help='write all results here')
    ap.add_argument('--bench-tcp', action='store_true',
                    help='also link cachenet-bench-tcp with the shared order (needs '
                         'google-benchmark), verify it and time its eight cases natively')
    a = ap.parse_args(argv)
    paths = a.paths.split(',')
    geoms = a.geometries.split(':')
    cold_geoms = [g for g in a.cold_geometries.split(':') if g]
    modes = a.icache.split(',')
    algos = a.algos.split(',')
    for t in ('valgrind', 'meson', 'ninja', 'readelf'):
        if not shutil.which(t):
            print(f'SKIP: {t} not found')
            sys.exit(77)
    t0 = time.time()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    bdir, lo = build(os.path.abspath(a.source), work, a.jobs)
    bins = {'base': link(bdir, lo, EMPTY_LD, os.path.join(work, 'base', PROG), a.jobs)}
    res = {'paths': paths, 'geometries': geoms, 'icache': modes, 'algos': algos,
           'packets': {'warm': a.packets, 'cold': a.cold_packets},
           'meson': MESON_OPTS + ['-Dlink_order=WORK/link.ld'],
           'compiler': run(['cc', '--version']).stdout.splitlines()[0], 'phases': {}}
    merged, per_path = profile(work, bins['base'], paths, a.profile_packets, a.jobs)
    res['hot'] = {}
    for p, prof in per_path.items():
        o = order(work, prof, bins['base'], 'hotness', p, 'none')
        n, b = order_header(o)
        res['hot'][p] = {'functions': n, 'bytes': b}
    res['verify'] = {}
    res['order'] = {}

    def apply(key, prof, algo, dest):
        o = order(work, prof, bins['base'], algo, key.replace('/', '-'), a.target)
        n, b = order_header(o)
        res['order'][key] = {'functions': n, 'bytes': b}
        script = os.path.join(work, key.replace('/', '-') + '.ld')
        # the archives and the program's own objects: what the link reads
        run(CORD + ['emit', o, '--format', 'ld', '--objects',
                    os.path.join(bdir, 'src', 'libcachenet.a'),
                    os.path.join(bdir, 'src', 'libcachenet-lab.a'),
                    os.path.join(bdir, 'tools', 'cord', PROG + '.p'), '-o', script])
        with open(script) as f:
            exe = link(bdir, lo, f.read(), dest, a.jobs)
        res['verify'][key] = verify(o, exe, bins['base'])
        if not res['verify'][key]['ok']:
            raise SystemExit(f'fastpath: the {key} order did not apply')
        return exe, script

    for algo in algos:
        if algo.endswith('-path'):
            # the paper's way: each benchmark its own CORDed program
            bins[algo] = {p: apply(f'{algo}/{p}', per_path[p], algo[:-5],
                                   os.path.join(work, algo, p, PROG))[0] for p in paths}
        else:
            bins[algo], last = apply(algo, merged, algo, os.path.join(work, algo, PROG))
            if 'build_order' not in res:
                res['build_order'], res['build_algo'] = last, algo
    res['phases']['build, profile, order, relink, verify'] = time.time() - t0
    if a.bench_tcp and res.get('build_order'):
        res['bench_tcp'] = bench_tcp(a, bdir, lo, work, res['build_order'],
                                     os.path.join(work, f'{res["build_algo"]}-{res["build_algo"]}.order'))
        res['phases']['cachenet-bench-tcp'] = time.time() - t0 - sum(res['phases'].values())
    # leave the build dir linked with the shared order, as -Dlink_order would
    if res.get('build_order'):
        shutil.copy(res['build_order'], lo)
    l2, mem, psrc = penalties(a.memsig, bdir, a.cpu, a.jobs)
    res['penalties'] = {'l2_tsc': l2, 'mem_tsc': mem, 'source': psrc}

    def binary(k, p):
        return bins[k][p] if isinstance(bins[k], dict) else bins[k]

    jobs = []
    for mode in modes:
        n = a.packets if mode == 'warm' else a.cold_packets
        for p in paths:
            for g in (geoms if mode == 'warm' else cold_geoms):
                for k in bins:
                    jobs.append((mode, p, g, k, binary(k, p), n))
    sim = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(simulate, b, p, g, n, mode): (mode, p, g, k, n)
                for mode, p, g, k, b, n in jobs}
        for f in concurrent.futures.as_completed(futs):
            mode, p, g, k, n = futs[f]
            r = f.result()
            sim.setdefault(mode, {}).setdefault(p, {}).setdefault(g, {})[k] = {
                **per_packet(r['ev'], n, l2, mem), 'raw': r['ev'], 'out': r['out']}
    identical = True
    for mode in sim:
        for p in sim[mode]:
            for g in sim[mode][p]:
                row = sim[mode][p][g]
                irs = {v['raw'].get('Ir') for v in row.values()}
                outs = {v['out'] for v in row.values()}
                row_ok = len(irs) == 1 and len(outs) == 1
                identical &= row_ok
                for v in row.values():
                    v['same_ir'] = row_ok
                    del v['out']
    res['sim'] = sim
    res['identical_instructions'] = identical
    # The safety net of `cachenet-cord verify --simulate`, on these runs:
    # a layout that misses more than the baseline on the target geometry
    # by over 5% (and by more than a few misses in the run) is flagged.
    res['target'] = a.target
    res['safety'] = {}
    for algo in algos:
        worse = []
        for p in paths:
            row = sim.get('warm', {}).get(p, {}).get(a.target)
            if not row or algo not in row:
                continue
            x, y = row['base']['raw'].get('I1mr', 0), row[algo]['raw'].get('I1mr', 0)
            if y > 1.05 * x and y - x > 100:
                worse.append({'path': p, 'base': x, 'new': y})
        res['safety'][algo] = worse
    res['phases']['simulation'] = time.time() - t0 - sum(res['phases'].values())

    res['timing'] = {}
    if a.reps > 0:
        for mode in modes:
            for p in paths:
                n = a.time_packets if mode == 'warm' else a.cold_time_packets
                # the baseline a second time: the ratio of two runs of the
                # same program is this machine's noise in that run
                tb = {k: binary(k, p) for k in bins}
                tb['base-again'] = tb['base']
                med, allv = timing(tb, p, n, a.reps, a.cpu, mode)
                res['timing'].setdefault(mode, {})[p] = {'median': med, 'runs': allv,
                                                         'packets': n}
    res['timing_command'] = (f'taskset -c {a.cpu} ' if a.cpu is not None else '') + \
        f'{PROG} PATH N --time --icache=MODE, {a.reps} runs of each binary alternated, ' \
        'the baseline twice'
    res['phases']['native timing'] = time.time() - t0 - sum(res['phases'].values())
    res['seconds'] = time.time() - t0
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(res, f, indent=1)
    print(render_text(res))
    if not identical:
        print('FAILED: instruction count or output changed with the layout')
        sys.exit(1)


def render_text(res):
    out = []
    algos = res['algos']
    out.append(f'penalties: L2 {res["penalties"]["l2_tsc"]:.1f}, memory '
               f'{res["penalties"]["mem_tsc"]:.1f} TSC ticks ({res["penalties"]["source"]})')
    for algo, v in res['verify'].items():
        b, a = v.get('before', {}), v.get('after', {})
        out.append(f'{algo}: {res["order"][algo]["functions"]} functions, '
                   f'{res["order"][algo]["bytes"]} bytes; hot span {b.get("span")} -> '
                   f'{a.get("span")} bytes, {b.get("pages")} -> {a.get("pages")} pages; verify '
                   + ('OK' if v['ok'] else 'FAILED'))
    for mode, bypath in res['sim'].items():
        out.append(f'\n{mode} I-cache: I1 misses per packet (instructions per packet), '
                   f'{res["packets"][mode]} packets')
        hdr = f'{"path":14} {"hot B":>6} {"I1":>11} {"Ir":>7} {"base":>9} ' + ''.join(
            f'{a:>9} {"chg":>7} ' for a in algos) + f'{"est base":>9} ' + ''.join(
            f'{"est " + a:>9} ' for a in algos)
        out.append(hdr)
        for p, byg in bypath.items():
            for g, row in byg.items():
                b = row['base']
                line = f'{p:14} {res["hot"][p]["bytes"] or 0:>6} {g:>11} {b["ir"]:>7.0f} {b["i1"]:>9.2f} '
                for a in algos:
                    x = row[a]['i1']
                    chg = f'{100 * (x - b["i1"]) / b["i1"]:+.0f}%' if b['i1'] else '—'
                    line += f'{x:>9.2f} {chg:>7} '
                line += f'{b["est"]:>9.0f} ' + ''.join(f'{row[a]["est"]:>9.0f} ' for a in algos)
                if not b.get('same_ir'):
                    line += ' INSTRUCTIONS DIFFER'
                out.append(line)
    for mode, bypath in res.get('timing', {}).items():
        out.append(f'\nnative, {mode} I-cache: median TSC ticks per packet ({res["timing_command"]})')
        for p, t in bypath.items():
            m = t['median']
            out.append(f'{p:14} base {m["base"]:>8.1f} ' + ''.join(
                f'{a} {m[a]:>8.1f} ({m[a] / m["base"]:.3f}) ' for a in algos + ['base-again']
                if a in m))
    bt = res.get('bench_tcp')
    if bt:
        out.append('\ncachenet-bench-tcp linked with the shared order: ' + (
            bt['error'] if 'error' in bt else
            ('verify OK' if bt['verify']['ok'] else 'verify FAILED') +
            f'; median tsc_per_packet ({bt["command"]})'))
        for p, c in bt.get('cases', {}).items():
            m = bt.get('median', {})
            x, y = m.get('base', {}).get(c), m.get('c3', {}).get(c)
            z = m.get('base-again', {}).get(c)
            if x and y:
                out.append(f'{p:14} {c:34} base {x:>8.1f} c3 {y:>8.1f} ({y / x:.3f})'
                           + (f' base again {z:>8.1f} ({z / x:.3f})' if z else ''))
    for algo, worse in res.get('safety', {}).items():
        out.append(f'safety net ({algo}, I1 {res["target"]}, as verify --simulate): ' + (
            'no path worse than the baseline by over 5%' if not worse else
            'WORSE on ' + ', '.join(f'{w["path"]} ({w["base"]} -> {w["new"]} I1 misses)'
                                    for w in worse)))
    out.append(f'\ninstructions identical in every layout: {res["identical_instructions"]}; '
               f'{res["seconds"]:.0f} s (' + ', '.join(f'{k} {v:.0f} s' for k, v in
                                                     res.get('phases', {}).items()) + ')')
    return '\n'.join(out)


if __name__ == '__main__':
    main()
