# SPDX-License-Identifier: BSD-2-Clause
"""The overlap form: eq. (3)'s terms combined per loop for an out-of-order core.

Equation (3) adds its three terms: an in-order machine of the paper's
time issues one instruction after another and waits on each miss. An
out-of-order core runs the terms side by side: within one loop the
computation of every function, the loads and stores, the loop-carried
dependencies and the memory stream overlap, and the loop runs at the
pace of whichever resource is used up first. The overlap form keeps
eq. (3)'s terms and parameters (a_i, b_i, LO, eq. (1)/(2)'s spilled state
words, A_C/A_M per level) and combines them per loop by max():

  t(loop) = max( I / issue,               eq. (3)'s CPI x instructions,
                                           CPI = 1 / measured issue width
                 sum_i a_i/b_i / alu_or_vec,   the ALU (vector) ports
                 (DA + SA) reads / load ports, (DA + SA) writes / store ports
                 C / b,                    the loop-carried chain: the
                                           longest recurrence of the loop's
                                           functions, plus the store-to-load
                                           round trip when state spills
                 memory )                 eq. (3)'s memory term, as a
                                           bandwidth (A per word, memsig)

A sequential composition is one loop per function, one after the other:
the sum of each loop's max. The integrated loop is one loop: one max,
which is why the functions' work is "hidden" in it. Rates and latencies
come from ilp/probe.py on this core (core cycles per TSC tick, issue
width, ports, store forwarding); chains from functions.py / synthetic.py
(`chain`); R as in eq. (1). Remainder bytes (len mod the unrolled block)
go through scalar steps after the loop: added, not overlapped; a cold
buffer's first miss (DRAM latency) too, as in the additive form.
"""

from .dfcore import dataflow, whole_path
from .kernels import COUNTED, WIDTH, hot_level, loops, unroll_bytes
from .objcode import walk_call

LINE = 64  # bytes per cache line


def fn_xpath(f, isa):
    """(dx, depth): how much later (core cycles, latency-1 instructions)
    the data register leaves f's step than it came in, and when the
    step's last instruction completes. functions.py / synthetic.py give
    `xpath` where it is not simply one instruction after another (ops)."""
    form = f.forms[isa]
    xp = form.get('xpath', form.get('ops', 0))
    dx, d = xp if isinstance(xp, tuple) else (xp, xp)
    return (dx if f.writes else 0), d


def loop_path(fns, isa):
    """Core cycles from a block's load to its last instruction through the
    loop's steps (the load latency not included): the data register's path
    through every writing step, plus the last step's own depth."""
    x, fin = 0, 0
    for f in fns:
        dx, d = fn_xpath(f, isa)
        fin = max(fin, x + d)
        x += dx
    return max(fin, x)


def later_pass_extra(core, p, form, isa, size, cache, which=None):
    """TSC ticks per byte a flushed call's in-place passes after the first
    over its buffer cost beyond the same passes over cached lines, from
    probe.py's cold_pass2_S / cold_pass3_S / cold_passr_S less its
    warm_pass_S (ticks per 64-byte line; Core.cold_pass), at the buffer's
    size and the kernel's isa. Only the sequential form has later passes
    (one loop per function; with copy, the copy loop is the destination's
    first pass) and only a cold call's buffer was flushed: else 0, and 0
    without the probe's keys (an older probe.json). Each later pass
    that stores is charged the second pass's figure, then the third's
    (after a copy, the probe's passes after its copy: cold_cpass*_S);
    `which` ('rmw' or 'all'; default core.later_passes): whether a
    load-only later pass (csum) is charged cold_passr_S too. The probe's extra is
    clipped at 0 (64 KB: none measured)."""
    e = core.cold_pass.get((isa, size))
    if cache != 'cold' or form != 'seq' or not e:
        return 0.0
    which = which or core.later_passes
    t, k = 0.0, 0
    for fns, rd, wr in loops(p, form, isa, size, cache):
        k += 1
        if k == 1:
            continue
        if wr:
            x = e[('c' if p.copy else '') + ('2' if k == 2 else '3')]
        elif which == 'all':
            x = e['r']
        else:
            continue
        t += max(0.0, x - e['warm']) / LINE
    return t


def loop_terms(core, m, fns, isa, unroll, R, rd, wr, scale=(1.0, 1.0, 1.0), size=None,
               dis=None, copy=None):
    """Per-byte core cycles of one loop's resources: {term: cycles}.
    scale multiplies (instructions, loads, stores): callgrind's counts over
    the spec's, when the kernel was simulated. size: the buffer's, for the
    flushed-stream rate (Machine.stream). dis: the compiled loop's
    loop_stats() (instructions, ALU instructions, loads, stores, chain per
    iteration of `unroll` bytes), which then replace the spec's counts,
    eq. (1)'s spills and the spec's chain."""
    W = WIDTH[isa]
    comp = sum(f.forms[isa]['ops'] for f in fns) / W          # sum a_i / b_i
    lo = 3.0 / unroll                                          # add, cmp, branch
    S = sum(f.state + f.consts for f in fns)
    spill = max(0, S - R)                                      # eq. (1) / (2)
    loads = (1 + spill) / W
    stores = ((1 if wr else 0) + spill) / W
    instr = (comp + lo + loads + stores) * scale[0]
    loads *= scale[1]
    stores *= scale[2]
    cp, lp, sp = core.ports(isa)
    chain = max([f.forms[isa].get('chain', 0) for f in fns] or [0])
    if spill and chain:
        chain += core.st_fwd if isa == 'scalar' else core.st_fwd_vec
    chain /= W
    if dis and 'instr' in dis:
        instr, comp = dis['instr'] / unroll, dis['alu'] / unroll
        loads, stores = dis['loads'] / unroll, dis['stores'] / unroll
        scale = (1.0, 1.0, 1.0)
    if dis:
        chain = dis['chain'] / unroll
    mem = m.stream(rd, wr, W, size, copy)
    e = core.eff[isa]
    terms = {
        'issue': e * instr / core.issue,
        # the ALU ports also run the loop overhead in the scalar form; in
        # the vector forms it goes to the scalar ALUs beside them
        'compute': e * ((comp + lo) * scale[0] / cp if isa == 'scalar' or not core.vec else
                        max(comp * scale[0] / cp, lo / core.alu)),
        # the efficiency factor is measured on an issue/ALU-bound loop and
        # applies to those terms only: spill-bound loops reach the probe's
        # store rate (syn.n6.s16-int scalar: 61 stores per 8
        # bytes at 2 per cycle, measured within 1%)
        'load': loads / lp,
        'store': stores / sp,
        'chain': chain,
        # loads and stores share the core's memory pipes: probe.py mem_mix
        # (3 loads and a store per group) runs 4 64-bit accesses a cycle,
        # where loads alone run 4 and stores alone 2. A read-modify-write
        # of a stack slot (`add %rax,-0x78(%rsp)`) is both, which
        # callgrind's data reads do not count: the compiled loop's
        'memops': (max(loads + stores, dis.get('mem_ops', 0.0) / unroll) / core.memops
                   if isa == 'scalar' and core.memops and dis else 0.0),
        'mem-' + (rd if not wr or wr == rd else rd + '/' + wr): mem * core.cyc_per_tick,
    }
    # the window: each iteration holds its instructions in flight for its
    # path's latency P (load, then the steps' path); with W in flight, an
    # iteration of I instructions takes at least P * I / W cycles (per
    # byte: P * instructions per byte / W)
    kind = 'int' if isa == 'scalar' else 'vec'
    if core.ld_lat and core.win.get(kind):
        P = core.ld_lat + loop_path(fns, isa)
        # register moves the renamer eliminates (compiled loops) complete at
        # rename and never wait in a scheduler: they do not hold the window
        # (W(P) from the probe, ~100-330 instructions, well under the ROB)
        wi = instr - (dis.get('moves', 0) / unroll if dis else 0.0)
        terms['window'] = P * wi / core.window(kind, P)
        # lines in flight from a flushed source. The loop's own misses:
        # each iteration holds its instructions in the window from
        # dispatch until its line arrives from DRAM and its path completes,
        # P = the flushed line's raw latency (probe.py cold_lat, scrambled
        # order, at the buffer's size) + the path; with W(P) instructions
        # in flight a loop of I instructions per line keeps W / I lines in
        # flight: P * I / W per line (Little's law). Or the hardware
        # prefetcher: a sequential stream's line, once the prefetcher runs
        # ahead, arrives cold_seqlat after its load (probe.py's in-order
        # chase through the same flushed buffers, one line in flight), and
        # the window keeps W(P) / I such lines in flight: Little's law at
        # that latency. Whichever delivers faster. A scalar loop (~100
        # instructions per line) keeps 2-3 lines in flight and runs at
        # about twice the chase's pace (64 KB on the development machine: 15.3 ticks
        # a line measured, the chase 31.2); an AVX-512 one (~12) keeps so
        # many that the memory term binds.
        # Each buffer's first miss stays added outside (first_miss).
        if rd == 'DRAM' and size in core.cold_lat:
            path = loop_path(fns, isa)
            P = core.cold_lat[size] + path
            t = P * instr / core.window(kind, P)
            if size in core.cold_seqlat:
                Ps = core.cold_seqlat[size] + path
                t = min(t, Ps * instr / core.window(kind, Ps))
            terms['inflight'] = t
    return terms


def remainder_cycles(core, p, isa, size, nloops):
    """Cycles per byte of the bytes after the last whole block (8-byte
    granules through the scalar steps, each loop), not overlapped."""
    rem = size % unroll_bytes(p, isa)
    if isa == 'scalar' or rem < 8:
        return 0.0
    ops = sum(f.forms['scalar']['ops'] for f in p.fns) + 2 * nloops + 3 * nloops
    chain = max([f.forms['scalar'].get('chain', 0) for f in p.fns] or [0])
    g = rem // 8
    return max(g * ops / core.issue, g * chain) / size


def predict_overlap(core, m, p, form, isa, size, cache, R, sim=None, cold_latency=True,
                    dis=None, explain=None):
    """Overlap form: (TSC ticks per byte, dominating term, {term: ticks/B}
    summed over the loops). sim: (instructions, data reads, data writes) per
    byte from callgrind for this kernel at 1460 B hot, to scale the spec's
    counts (spills included), or None. dis: the compiled main loops'
    loop_stats(), one per loop (kernel_loops()), or None. explain: a list
    that gets, per loop, (functions, read level, write level, {term: TSC
    ticks per byte}), then ('overlap', ticks per byte) where
    first_loop_overlap() set the loops' total, then ('call', {term: ticks
    per byte}) for what is added outside the loops (--explain)."""
    ls = loops(p, form, isa, size, cache)
    if dis and len(dis) != len(ls):
        dis = None
    u = unroll_bytes(p, isa)
    scale = (1.0, 1.0, 1.0)
    if sim:
        # the spec's counts per byte, undoing the rates (at efficiency 1)
        save, core.eff[isa] = core.eff[isa], 1.0
        spec = [loop_terms(core, m, fns, isa, u, R, rd, wr, size=size) for fns, rd, wr in ls]
        core.eff[isa] = save
        ins = sum(t['issue'] for t in spec) * core.issue
        ld = sum(t['load'] for t in spec) * core.ports(isa)[1]
        st = sum(t['store'] for t in spec) * core.ports(isa)[2]
        scale = tuple(x / y if y else 1.0 for x, y in zip(sim, (ins, ld, st)))
    # the compiled loops' dataflow at the probe's latencies and window
    # (dataflow()) replaces the per-loop chain and window terms
    df = dataflow(core, p, form, isa, size, dis) if dis and core.use_dataflow.get(isa) else None
    # did dataflow() run the kernel's whole path (the code between and
    # after the loops)? The same test it made.
    df_path = bool(df) and whole_path(core, dis, size // u) is not None
    rem = remainder_cycles(core, p, isa, size, len(ls))
    # the instructions the call runs besides its main loops (AVX-512: the
    # compiled loops' counts leave them out; callgrind's scalar counts
    # have them): per loop, walk_call()'s
    extra = call_extra(dis, size, u) if isa not in COUNTED and core.call_code else None
    total, by_term = 0.0, {}
    per_loop = []
    for j, (fns, rd, wr) in enumerate(ls):
        # the loop copies (the seq form's first loop, or the integrated
        # loop, of a pipeline with copy) or works in place
        cp = bool(p.copy) and (form != 'seq' or j == 0)
        t = loop_terms(core, m, fns, isa, u, R, rd, wr, scale, size, dis[j] if dis else None,
                       cp)
        if extra:
            t['issue'] += core.eff[isa] * extra[j] / size / core.issue
        if df:
            t.pop('chain', None)
            if not core.df_keep_window:
                t.pop('window', None)
            if df_path:
                # the simulated call ran the masked pass itself: the
                # remainder goes on the other terms, not beside dataflow
                t = {kk: v + rem / len(ls) for kk, v in t.items()}
            t['dataflow'] = df[j]
        if explain is not None:
            explain.append(('+'.join(f.name for f in fns) or 'copy', rd, wr,
                            {kk: v / core.cyc_per_tick for kk, v in t.items()}))
        per_loop.append(t)
        total += add_largest(by_term, t)
    # the first loop's stores into a destination not in L1 (a copy's, in
    # a prepared state) wait for their lines' ownership: they stay added
    wr1 = ls[0][2]
    keep = (m.cost(wr1, WIDTH[isa])[1] / WIDTH[isa] * core.cyc_per_tick
            if wr1 and wr1 != hot_level(size) else 0.0)
    lo = first_loop_overlap(core, per_loop, form, isa, size, keep)
    if lo:
        total, by_term = lo
        if explain is not None:
            explain.append(('overlap', total / core.cyc_per_tick))
    if not df_path:
        total += rem
    ticks = total / core.cyc_per_tick
    outside = {'remainder': rem / core.cyc_per_tick if not df_path else 0.0}
    if cold_latency:
        fm = m.first_miss(cache, 2 if p.copy else 1, size)
        ticks += fm
        outside['first_miss'] = fm
        # later in-place passes over the flushed lines (probe.py cold_pass)
        later = later_pass_extra(core, p, form, isa, size, cache)
        outside['later'] = later
        if later:
            ticks += later
            by_term['later'] = later * core.cyc_per_tick
    if explain is not None:
        explain.append(('call', outside))
    dom = max(by_term, key=by_term.get)
    return ticks, dom, {k: v / core.cyc_per_tick for k, v in by_term.items()}


def add_largest(by_term, t):
    """A loop's cost in the overlap form: the largest of its terms t
    ({term: cycles per byte}), added to by_term under the term's kind
    ('mem-L2/L1' counts as 'mem'); returns it."""
    k = max(t, key=t.get)
    by_term[k.split('-')[0]] = by_term.get(k.split('-')[0], 0.0) + t[k]
    return t[k]


def first_loop_overlap(core, per_loop, form, isa, size, keep=0.0):
    """A sequential call's first loop, when its instructions for the
    whole call fit in the window (its capacity: probe.py's largest W(P)):
    the core dispatches the next loop's instructions while the first
    loop's lines are still arriving (the later loops work in the cache
    level the first one filled), so the first loop's memory term overlaps
    the later loops' work: the call costs max(m1, o1 + A), m1 the first
    loop's memory term, o1 the largest of its other terms, A the later
    loops' (each its largest term), where loops one after the other cost
    max(m1, o1) + A. per_loop: each loop's terms (core cycles per byte).
    keep: the part of m1 that does not overlap (the first loop's stores
    into a destination outside L1, which wait for their lines), added to
    the call and left out of m1.
    Returns (total, {term: cycles per byte}) or None where it does not
    apply (the integrated form, one loop, no memory term, no window probe,
    or a first loop too long: at 1460 B a scalar loop's ~2300
    instructions, at 64 KB any)."""
    if form != 'seq' or len(per_loop) < 2 or not core.loop_overlap:
        return None
    cap = max((w for _, w in core.win.get('int' if isa == 'scalar' else 'vec') or []),
              default=0.0)
    t1 = per_loop[0]
    mk = [k for k in t1 if k.startswith('mem-')]
    if not cap or not mk or not core.eff[isa]:
        return None
    if t1['issue'] * core.issue / core.eff[isa] * size > cap:
        return None
    m1 = max(0.0, t1[mk[0]] - keep)
    o = {k: v for k, v in t1.items() if k != mk[0]}
    by_term = {}
    for t in [o] + per_loop[1:]:
        add_largest(by_term, t)
    rest = sum(by_term.values())
    if m1 >= rest:
        return m1 + keep, {'mem': m1 + keep}
    if keep:
        by_term['mem'] = by_term.get('mem', 0.0) + keep
    return rest + keep, by_term


def call_extra(dis, size, step):
    """Per main loop of a kernel (dis: kernel_loops(), the first carrying
    the function's body as 'fn'), the instructions a call of `size` bytes
    runs outside the main loops (walk_call(): the set-up, the remainder,
    the byte tail, the fold and the exit; each piece counted to the main
    loop before it); None without the body or where the walk fails or
    finds another count of main loops."""
    body = dis[0].get('fn') if dis else None
    if not body:
        return None
    w = walk_call(body, size, step)
    if not w or len(w[2]) != len(dis):
        return None
    return [w[2][k] for k in sorted(w[2])]
