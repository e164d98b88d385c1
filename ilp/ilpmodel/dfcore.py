# SPDX-License-Identifier: BSD-2-Clause
"""The dataflow core: an out-of-order core simulated instruction by
instruction (sim_dispatch) at probe.py's latencies, with a scheduler of Q
entries (fitted to probe.py's window loops, fit.fit_sched), run over a
kernel's compiled loops or whole straight path (dataflow).
"""

import collections
import math
import re

from .kernels import unroll_bytes
from .objcode import parse_insn


# probe.py's window loops: besides the chain, a load, a store, the index's
# add and and, the loop counter's add and the fused compare-and-branch
WIN_OVERHEAD = 6


def whole_path(core, loops_dis, N):
    """The kernel's compiled path (objdump_paths(), attached by
    kernel_loops()) when dataflow() simulates it whole for calls of N main-
    loop iterations, else None (the main loops alone, the remainder added
    outside by predict_overlap()): the path must be on (core.df_path, off
    with --no-path), hold exactly the loops of loops_dis, and the call be
    short (N <= 64; longer calls run each loop in its steady state)."""
    path = loops_dis[0].get('path') if core.df_path and loops_dis else None
    if not path or N > 64:
        return None
    if sum(1 for kd, _ in path if kd == 'loop') != len(loops_dis):
        return None
    return path

# ------------------------------------------------------------ dataflow
#
# The chain and window terms above take one loop at a time and a latency
# per instruction of 1 (functions.py's unit). The vector ALU's latency is
# 2 cycles on this core (probe.py dep_vec), and a chain-bound AVX-512 loop
# of 1460 B does not run at its chain's 2-cycle latency either: its state
# restarts at every call, so the next call's chain (and in `seq` the next
# loop's) starts while this one's is still running, as far as the out-of-
# order window lets the front end run ahead. Instead of a closed form for
# that overlap, dataflow() runs the compiled main loops' instructions, call
# after call as bench_ilp calls them, through a core with: in-order
# dispatch of `issue` instructions per cycle (probe.py mix_issue), each
# instruction waiting in a scheduler of Q entries from dispatch until its
# operands are ready (eliminated register moves take no entry and no
# time), latencies measured by probe.py (scalar ALU 1, vector ALU dep_vec,
# loads ld_lat; a stack slot stored and reloaded st_fwd or, from a vector
# register, st_fwd_vec; a message word
# stored by one loop and loaded by the next, or by the next call in place,
# after the store's data plus ld_lat), unlimited ports (the throughput
# terms stay max()ed beside it). Q is not a free parameter: it is the one
# scheduler size for which the same simulation reproduces probe.py's
# window loops (win_vec_L / win_int_L: chains of L dependent instructions
# per iteration, fit_sched()).

def sim_dispatch(stream, issue, Q, ports=None, R=None):
    """Dispatch cycle of every instruction of `stream` [(srcs, msrcs, dsts,
    ld, sched[, op_port, mem_port])] on an in-order front end of `issue`
    instructions per cycle with Q scheduler entries. srcs: registers the
    instruction waits for; msrcs: what its memory operand waits for (the
    address registers, the stored word it reloads), then ld cycles more;
    dsts: [(name, latency)]; late (optional 8th): {source: cycles} an
    operand is needed that much after it is ready (vpternlog's sources
    other than its destination). It issues one cycle after dispatch or
    when its operands are ready, whichever is later, and holds a scheduler
    entry (sched) until then; a load (no register sources) holds it until
    its address is ready, its data arriving ld later. ports: {class:
    instructions per cycle}; an operation (op_port) or memory access
    (mem_port) of a class issues in the first cycle from then on with a
    slot of its class left, older instructions first (None: unlimited).
    R: instructions in flight from dispatch until they and every older
    one have completed (in-order retirement: a reorder buffer or the
    physical registers behind it), None: unlimited. Returns [dispatch
    cycle]."""
    import heapq
    ready, held, out, used = {}, [], [], {}

    def slot(cls, t0):
        cap = ports.get(cls) if ports and cls else None
        if not cap:
            return t0
        c = math.floor(t0)
        while used.get((cls, c), 0) >= cap:
            c += 1
        used[(cls, c)] = used.get((cls, c), 0) + 1
        return max(t0, float(c))
    t, n = 0.0, 0
    rob, last = collections.deque(), 0.0
    for e in stream:
        srcs, msrcs, dsts, ld, sq = e[:5]
        while R and len(rob) >= R:
            while rob and rob[0] <= t:
                rob.popleft()
            if len(rob) >= R:
                t, n = max(t, rob[0]), 0
        op_port, mem_port = e[5:7] if len(e) > 5 else (None, None)
        late = e[7] if len(e) > 7 else None
        while True:
            while held and held[0] <= t:
                heapq.heappop(held)
            if n >= issue:
                t, n = math.floor(t) + 1.0, 0
                continue
            if sq and len(held) >= Q:
                t, n = max(t, held[0]), 0
                continue
            break
        n += 1
        go = max([t + 1.0] + [ready.get(r, 0.0) + (late.get(r, 0.0) if late else 0.0)
                              for r in srcs])
        hold = None
        if msrcs is not None:
            mem = max([t + 1.0] + [ready.get(r, 0.0) for r in msrcs])
            if srcs:    # an operation on a loaded operand waits for the data
                mem = slot(mem_port, mem)
                go = max(go, mem + ld)
            else:       # a load leaves the scheduler with its address
                hold = slot(mem_port, mem)
                go = hold + ld
        if hold is None:
            go = hold = slot(op_port, go)
        done = go
        for d, lat in dsts:
            ready[d] = go + lat
            done = max(done, go + lat)
        if sq and hold > t:
            heapq.heappush(held, hold)
        if R:
            last = max(last, done)
            rob.append(last)
        out.append(t)
    return out


def win_stream(L, iters, lat, ld_lat, kind='vec'):
    """probe.py's WIN_INT / WIN_VEC loop: a load, L dependent instructions,
    the store, the index's add and and, the counter and the fused branch."""
    v = 'v' if kind == 'vec' else ''
    for _ in range(iters):
        yield ([], ['i'], [('x', 0.0)], ld_lat, True, None, v + 'load')
        for _ in range(L):
            yield (['x'], None, [('x', lat)], 0.0, True, v + 'alu', None)
        yield (['x'], ['i'], [], 0.0, True, v + 'store', None)
        yield (['i'], None, [('i', 1.0)], 0.0, True, 'alu', None)
        yield (['i'], None, [('i', 1.0)], 0.0, True, 'alu', None)
        yield (['n'], None, [('n', 1.0)], 0.0, True, 'alu', None)
        yield (['n'], None, [], 0.0, True, 'alu', None)


def sim_win(L, lat, ld_lat, issue, Q, ports=None, kind='vec', R=None):
    """Simulated cycles per iteration of the window loop of chain L."""
    it = max(6, 2400 // (L + WIN_OVERHEAD))
    n = L + WIN_OVERHEAD
    d = sim_dispatch(win_stream(L, it, lat, ld_lat, kind), issue, Q, ports, R)
    h = it // 2
    return (d[(it - 1) * n] - d[h * n]) / (it - 1 - h)


_DISP = re.compile(r'^(-?0x[0-9a-f]+|-?\d+)?\(')


def _df_insns(body, lat_alu, ld_lat, vec, tern_extra=0.0):
    """Per instruction of a compiled loop body: (srcs, addr, dsts, kind,
    mem_in, mem_out, lat, sched, op_port, mem_port, late), message-data
    operands as ('data', rank of the displacement among the body's loads
    / stores); late: {source register: cycles it is needed later than
    ready}, tern_extra for a vector vpternlog's sources other than its
    destination (probe.py dep_tern: 3 cycles through them, 2 through the
    destination, on this core)."""
    parsed = [(op,) + parse_insn(op, args) for op, args in body
              if not (op == 'jmp')]
    stack = re.compile(r'\(%r[sb]p\)')

    def disp(x):
        mm = _DISP.match(x)
        return int(mm[1], 0) if mm and mm[1] else 0
    lds = sorted({disp(mi) for _, _, _, _, _, mi, _ in parsed if mi and not stack.search(mi)})
    sts = sorted({disp(mo) for _, _, _, _, _, _, mo in parsed if mo and not stack.search(mo)})
    out = []
    for op, srcs, addr, dsts, kind, mi, mo in parsed:
        def key(x, ranks):
            if x is None:
                return None
            return ('stack', x) if stack.search(x) else ('data', ranks.index(disp(x)))
        isvec = any(r.startswith('z') for r in srcs + dsts)
        lat = 0.0 if kind in ('move', 'load') else (lat_alu if isvec and vec else 1.0)
        v = 'v' if isvec and vec else ''
        op_port = {'move': None, 'load': None, 'store': v + 'store'}.get(kind, v + 'alu')
        mem_port = (v + 'load') if mi else None
        late = {}
        if tern_extra and vec and isvec and op.startswith('vpternlog'):
            late = {r: tern_extra for r in srcs if r not in dsts}
        out.append((srcs, addr, dsts, kind, key(mi, lds), key(mo, sts), lat, kind != 'move',
                    op_port, mem_port, late))
    return out


def dataflow(core, p, form, isa, size, loops_dis, calls=16):
    """Core cycles per byte of the kernel's main loops (loops_dis: its
    kernel_loops(), with 'body'), simulated (sim_dispatch) call after call
    on the benchmark's hot buffer: per loop, its share of a call's
    dispatch span in the steady state ([cycles per byte] per loop). At
    1460 B: `calls` calls of all the loops, the last half measured (the
    source of a copy is never written: its loads wait for nothing; the
    destination's words wait for the store of the same word by the loop
    or call before). Longer buffers (one call per stretch, calls cannot
    overlap enough to matter): each loop on its own for 256 iterations,
    its steady rate times the iterations. None without the bodies."""
    kind = 'int' if isa == 'scalar' else 'vec'
    Q = core.sched.get(kind)
    if not Q or not loops_dis or any('body' not in d for d in loops_dis):
        return None
    u = unroll_bytes(p, isa)
    N = size // u
    if N < 1:
        return None
    vec = isa != 'scalar'
    lat = core.vec_lat if vec and core.vec_lat else 1.0
    ld = core.ld_lat or 4.0
    tx = (core.tern_lat - lat) if vec and core.tern_lat else 0.0
    bodies = [_df_insns(d['body'], lat, ld, vec, tx) for d in loops_dis]
    ports = core.sim_ports if core.df_ports else None
    R = core.retire.get(kind)
    src_loop = 0 if p.copy else None   # the loop whose loads read the source
    # a reloaded stack slot is ready st_fwd (st_fwd_vec for a vector
    # register) after its store's data; a message word ld_lat after (the
    # ld added at the load)
    fwd = {'store': core.st_fwd - ld, 'vstore': core.st_fwd_vec - ld}

    def stream(ncalls, iters, which):
        # every loop of every call starts its state from constants: its
        # registers carry nothing over from the loop before (names per loop
        # instance); the message words in memory do
        inst = 0
        for _ in range(ncalls):
            for li in which:
                inst += 1
                for e in stream_body(inst, li, iters):
                    yield e

    def stream_body(inst, li, iters):
        # loop li's iterations, its registers named by inst
        for j in range(iters):
            for srcs, addr, dsts, kd, mi, mo, lt, sq, opp, mp, late in bodies[li]:
                late = {(inst, r): x for r, x in late.items()}
                srcs = [(inst, r) for r in srcs]
                addr = [(inst, r) for r in addr]
                dsts = [(inst, r) for r in dsts]
                ms = None
                if mi:
                    ms = list(addr)
                    if mi[0] == 'stack':
                        ms.append((inst,) + mi)
                    elif li != src_loop:
                        ms.append((j, mi[1]))
                elif addr:
                    ms = list(addr)
                dd = [(r, lt) for r in dsts]
                if mo:
                    k = (inst,) + mo if mo[0] == 'stack' else (j, mo[1])
                    dd.append((k, fwd.get(opp, fwd['store']) if mo[0] == 'stack'
                               else 0.0))
                yield (srcs, ms, dd, ld if mi else 0.0, sq, opp, mp, late)

    path = whole_path(core, loops_dis, N)
    if path:
        # the whole call as compiled: set-up, loops, the masked pass and
        # the fold, registers named per call; a piece of code belongs to
        # the loop before it (the set-up to the first loop)
        segs, li = [], 0
        for kd, b in path:
            if kd == 'loop':
                segs.append((li, None))
                li += 1
            else:
                segs.append((max(li - 1, 0), _df_insns(b, lat, ld, vec, tx)))
        def pstream(ncalls):
            for c in range(ncalls):
                inst = ('call', c)
                li = 0
                for owner, code in segs:
                    if code is None:
                        for e in stream_body(inst, li, N):
                            yield e
                        li += 1
                        continue
                    for srcs, addr, dsts, kd, mi, mo, lt, sq, opp, mp, late in code:
                        late = {(inst, r): x for r, x in late.items()}
                        srcs = [(inst, r) for r in srcs]
                        addr = [(inst, r) for r in addr]
                        dd = [((inst, r), lt) for r in dsts]
                        ms = None
                        if mi or addr:
                            ms = list(addr)
                            if mi and mi[0] == 'stack':
                                ms.append((inst,) + mi)
                        if mo and mo[0] == 'stack':
                            dd.append(((inst,) + mo, fwd.get(opp, fwd['store'])))
                        yield (srcs, ms, dd, ld if mi else 0.0, sq, opp, mp, late)
        marks, owners, i = [], [], 0
        for _ in range(calls):
            li = 0
            for owner, code in segs:
                marks.append(i)
                owners.append(owner)
                if code is None:
                    i += N * len(bodies[li])
                    li += 1
                else:
                    i += len(code)
        marks.append(i)
        d = sim_dispatch(pstream(calls), core.sim_issue, Q, ports, R)
        d.append(d[-1])
        k, h = len(segs), calls // 2
        spans = [0.0] * len(bodies)
        for c in range(h, calls - 1):
            for s in range(k):
                spans[owners[c * k + s]] += d[marks[c * k + s + 1]] - d[marks[c * k + s]]
        return [s_ / (calls - 1 - h) / size for s_ in spans]
    if N <= 64:
        which = list(range(len(bodies)))
        marks, i = [], 0
        for _ in range(calls):
            for li in which:
                marks.append(i)
                i += N * len(bodies[li])
        marks.append(i)
        d = sim_dispatch(stream(calls, N, which), core.sim_issue, Q, ports, R)
        d.append(d[-1])
        k, h = len(which), calls // 2
        spans = [0.0] * k
        for c in range(h, calls - 1):
            for li in range(k):
                spans[li] += d[marks[c * k + li + 1]] - d[marks[c * k + li]]
        return [s / (calls - 1 - h) / size for s in spans]
    out = []
    for li in range(len(bodies)):
        it, per = 256, len(bodies[li])
        d = sim_dispatch(stream(1, it, [li]), core.sim_issue, Q, ports, R)
        out.append((d[(it - 1) * per] - d[(it // 2) * per]) / (it - 1 - it // 2) * N / size)
    return out
