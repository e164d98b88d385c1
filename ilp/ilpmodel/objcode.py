# SPDX-License-Identifier: BSD-2-Clause
"""The object-code walk: objdump -d text parsed into functions, main loops
and straight paths; x86 instructions parsed into the registers they read
and write (parse_insn); a compiled loop's counts and recurrence
(loop_stats); and walk_call(), which executes a kernel's integer control
flow on a buffer of a given size to count what one call runs.
"""

import re

import ilpgen

from .kernels import unroll_bytes


def probe_R_objdump(text, prefix='cn_ilp_syn_', form='int', isa='avx512'):
    """R from the disassembly (objdump -d) of the synthetic sweep: the
    first total state S = n * s whose integrated kernel's main loop (up to
    its first backward branch) reads or writes the stack, so R = S - 1.
    For AVX-512, which valgrind cannot run. Returns (R or None, rows
    [(S, n, s, stack references in the loop)])."""
    fn = re.compile(r'^[0-9a-f]+ <%sn(\d+)_s(\d+)_a10_%s_%s>:' % (prefix, form, isa))
    ins = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')
    rows, cur, body = [], None, []

    def close():
        if cur is None:
            return
        loop = None
        for addr, op, args in body:
            mm = re.match(r'([0-9a-f]+) <', args)
            if op.startswith('j') and mm and body[0][0] <= int(mm[1], 16) < addr:
                loop = (int(mm[1], 16), addr)
                break
        if loop:
            refs = sum(1 for addr, op, args in body
                       if loop[0] <= addr <= loop[1] and op != 'lea'
                       and re.search(r'\(%r[sb]p\)', args))
            rows.append((cur[0] * cur[1], cur[0], cur[1], refs))

    for line in text.splitlines():
        mf = fn.match(line)
        if mf:
            close()
            cur, body = (int(mf[1]), int(mf[2])), []
            continue
        if cur is None:
            continue
        if not line.strip():
            close()
            cur, body = None, []
            continue
        mi = ins.match(line)
        if mi:
            body.append((int(mi[1], 16), mi[2], mi[3]))
    close()
    rows.sort()
    spilling = [S for S, _, _, refs in rows if refs]
    if not spilling:
        return None, rows
    return min(spilling) - 1, rows


# ------------------------------------------------------------ disassembly
#
# valgrind cannot run AVX-512, so the scalar form's instruction, load and
# store counts come from callgrind and the AVX-512 form's from the spec
# (ops per function). The compiler does not emit the spec one for one: it
# merges x ^= s_j; x ^= s_k into one vpternlogd, reassociates XORs of
# state words off the data register's path, adds register moves, and
# spills what does not fit. The main loops' own instructions, read from
# objdump -d, give the AVX-512 form what callgrind gives the scalar one
# (and the loop-carried recurrence as compiled, not as specified).

_REG = re.compile(r'%([a-z0-9]+)')
_FLAGS_W = ('add', 'sub', 'adc', 'sbb', 'cmp', 'test', 'and', 'or', 'xor', 'inc', 'dec',
            'neg', 'shl', 'shr', 'sar', 'rol', 'ror')
_FLAGS_R = ('adc', 'sbb', 'cmov', 'set')
# register moves the renamer eliminates (latency 0): reg-to-reg only
_MOVES = ('mov', 'movq', 'vmovdqa32', 'vmovdqa64', 'vmovdqu8', 'vmovdqu32', 'vmovdqu64',
          'vmovdqa', 'vmovdqu', 'vmovaps', 'vmovups')


def _canon(r):
    """Architectural register of an operand name (xmm/ymm/zmm N -> zN;
    eax/ax/al -> rax; r8d -> r8)."""
    mm = re.match(r'[xyz]mm(\d+)$', r)
    if mm:
        return 'z' + mm[1]
    mm = re.match(r'(r\d+)[dwb]?$', r)
    if mm:
        return mm[1]
    mm = re.match(r'[re]?([a-d])[xlh]$', r)
    if mm:
        return 'r%sx' % mm[1]
    mm = re.match(r'[re]?(si|di|bp|sp)l?$', r)
    if mm:
        return 'r' + mm[1]
    return r


def _operands(args):
    """AT&T operand list, commas inside parentheses kept; masks dropped."""
    args = args.split('#')[0].split('<')[0].strip()
    out, depth, cur = [], 0, ''
    for ch in args:
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
            continue
        depth += ch == '('
        depth -= ch == ')'
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_insn(op, args):
    """(srcs, addr, dsts, kind, mem_in, mem_out) of one AT&T instruction:
    register sources, the memory operand's address registers, register
    destinations, kind 'move' (register to register), 'load', 'store',
    'alu', 'branch' or 'other'; mem_in / mem_out the memory operand text
    read / written."""
    ops = _operands(args)
    srcs, addr, dsts, mem_in, mem_out = [], [], [], None, None
    if op.startswith('j') or op in ('nop', 'nopl', 'nopw', 'xchg') or op.startswith('nop'):
        return (['flags'] if op.startswith('j') and op != 'jmp' else [], [], [], 'branch',
                None, None)
    last = ops[-1] if ops else ''
    masked = '{%k' in last and '{z}' not in last
    dst_is_mem = '(' in last
    for o in ops[:-1]:
        if '(' in o:
            mem_in = o
            addr += [_canon(r) for r in _REG.findall(o)]
        elif o.startswith('%'):
            srcs.append(_canon(o[1:].split('{')[0]))
    if dst_is_mem:
        mem_out = last
        addr += [_canon(r) for r in _REG.findall(last)]
    elif last.startswith('%'):
        d = _canon(last[1:].split('{')[0])
        dsts.append(d)
        # two-operand scalar ALU ops, ternary logic, dot products and merge
        # masking read their destination too
        if (not op.startswith('v') and len(ops) == 2 and not op.startswith(('mov', 'lea', 'bswap')))\
                or op.startswith(('vpternlog', 'vpdp', 'vfmadd', 'vpmadd52')) or masked \
                or op.startswith('bswap') or len(ops) == 1:
            srcs.append(d)
    if op.startswith('lea') and ops:    # not `leave`
        srcs, addr = [_canon(r) for r in _REG.findall(ops[0])], []
        mem_in = None
    if not op.startswith('v') and op.startswith(_FLAGS_R):
        srcs.append('flags')
    if not op.startswith('v') and op.startswith(_FLAGS_W) and not op.startswith('lea'):
        dsts.append('flags')
    if op.startswith(('cmp', 'test')):
        dsts = ['flags']
    if mem_out and not op.startswith(('mov', 'vmov')):
        mem_in = mem_out   # read-modify-write: add %rax,0x10(%rsp) loads too
    if mem_out and op.startswith(('mov', 'vmov')):
        kind = 'store'
    elif mem_in and op.startswith(('mov', 'vmov', 'vpbroadcast', 'vbroadcast')):
        kind = 'load'
    elif (op in _MOVES or op.startswith('vmovdq')) and len(ops) == 2 and not mem_in \
            and not mem_out and ops[0].startswith('%') and '{' not in last:
        kind = 'move'
    elif op.startswith(('lea', 'cmp', 'test')):
        kind = 'other'
    else:
        kind = 'alu'
    return srcs, addr, dsts, kind, mem_in, mem_out


def loop_stats(body, ld_lat=4.0, st_fwd=5.0, iters=40, st_fwd_vec=None):
    """Counts and the loop-carried recurrence of one loop body [(op, args)]:
    {instr, alu (vector ALU instructions, or scalar ones in a loop without
    vector registers), loads, stores, stack (stack references), moves
    (register-to-register moves, eliminated at rename), chain
    (core cycles per iteration of the longest recurrence with unlimited
    ports: ALU 1 (functions.py's unit, see Core.vec_lat), eliminated
    moves 0, loads ld_lat, a store and the load of the same stack slot
    st_fwd, or st_fwd_vec when the stored register is a vector one)}.
    The recurrence is found by running
    the body's dependencies for `iters` iterations and taking the growth
    of the latest result over the second half."""
    parsed = [(op,) + parse_insn(op, args) for op, args in body]
    vec = any(r.startswith('z') for _, srcs, _a, dsts, *_ in parsed for r in srcs + dsts)
    st = dict(instr=0, alu=0, loads=0, stores=0, stack=0, moves=0)
    for op, srcs, addr, dsts, kind, mi, mo in parsed:
        if kind == 'branch' and op == 'jmp':
            continue
        st['instr'] += 1
        st['loads'] += 1 if mi else 0
        st['stores'] += 1 if mo else 0
        st['stack'] += sum(1 for x in (mi, mo) if x and re.search(r'\(%r[sb]p\)', x))
        if kind == 'alu' and (not vec or any(r.startswith('z') for r in dsts)):
            st['alu'] += 1
        st['moves'] += kind == 'move'
    ready, mem, ends = {}, {}, []
    for _ in range(iters):
        for op, srcs, addr, dsts, kind, mi, mo in parsed:
            t = max([ready.get(r, 0.0) for r in srcs] or [0.0])
            if mi:  # the loaded operand: its address, then the load
                tm = max([ready.get(r, 0.0) for r in addr] or [0.0]) + ld_lat
                if mi in mem:   # a stack slot stored in this loop: forwarded
                    tm = max(tm, mem[mi])
                t = max(t, tm)
            # message data moves on every iteration (its address changes);
            # only a stack slot is the same memory on the next iteration
            lat = 0.0 if kind in ('move', 'load') else 1.0
            if mo and re.search(r'\(%r[sb]p\)', mo):
                vs = st_fwd_vec is not None and any(r.startswith('z') for r in srcs)
                mem[mo] = t + (st_fwd_vec if vs else st_fwd)
            for d in dsts:
                ready[d] = t + lat
        ends.append(max(list(ready.values()) + list(mem.values()) + [0.0]))
    h = iters // 2
    st['chain'] = (ends[-1] - ends[h - 1]) / (iters - h)
    return st


def _objdump_functions(text):
    """An objdump -d listing's functions in address order, [(symbol,
    [(address, op, args)])], and {symbol: the symbol it jumps to} for each
    function that is one jmp to another (n = 1 int is the seq kernel)."""
    head = re.compile(r'^[0-9a-f]+ <([^>]+)>:')
    ins = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')
    fns, alias = [], {}
    for line in text.splitlines():
        mh = head.match(line)
        if mh:
            fns.append((mh[1], []))
            continue
        mi = ins.match(line)
        if fns and mi:
            fns[-1][1].append((int(mi[1], 16), mi[2], mi[3]))
    for sym, body in fns:
        if body and body[0][1] == 'jmp':
            mm = re.search(r'<([^>+]+)>', body[0][2])
            if mm:
                alias[sym] = mm[1]
    return fns, alias


def _with_aliases(out, alias):
    """out, each function that jumps to another given that one's entry."""
    for a, b in alias.items():
        if b in out:
            out[a] = out[b]
    return out


def objdump_loops(text):
    """{symbol: [loop bodies [(op, args)]]} for every function of an objdump
    -d listing: the loops are the spans from a backward branch's target to
    the branch, in address order, inner loops only (no other backward
    branch inside). A function that is one jmp to another (n = 1 int is
    the seq kernel) takes that function's loops."""
    fns, alias = _objdump_functions(text)
    out = {}
    for sym, body in fns:
        loops = []
        for addr, op, args in body:
            mm = re.match(r'([0-9a-f]+) <', args)
            # a backward branch within the function (not a tail call)
            if op.startswith('j') and mm and body[0][0] <= int(mm[1], 16) < addr:
                tgt = int(mm[1], 16)
                span = [(o, a) for ad, o, a in body if tgt <= ad <= addr]
                inner = not any(o.startswith('j') and re.match(r'([0-9a-f]+) <', a)
                                and tgt <= int(re.match(r'([0-9a-f]+)', a)[1], 16) < ad
                                for ad, o, a in body if tgt <= ad < addr)
                if inner and span:
                    loops.append(span)
        out[sym] = loops
    return _with_aliases(out, alias)


def _straight_path(body):
    """objdump_paths()'s pieces of one function's body, or None if its
    code up to the first `ret` is not one straight path."""
    end = next((i for i, (_, op, _a) in enumerate(body) if op.startswith('ret')), None)
    if end is None:
        return None
    code = body[:end + 1]
    if any(op.startswith('call') for _, op, _a in code):
        return None
    start, last = code[0][0], code[-1][0]
    tgt_re = re.compile(r'([0-9a-f]+) <')
    loops = []
    for ad, op, args in code:
        mm = tgt_re.match(args)
        if op.startswith('j') and mm and start <= int(mm[1], 16) < ad:
            loops.append((int(mm[1], 16), ad))
        elif op == 'jmp':
            return None     # code skipped on the way: not one straight path
    # inner loops only, none overlapping another
    for (a0, a1), (b0, b1) in zip(loops, loops[1:]):
        if b0 <= a1:
            return None
    out, i = [], 0
    for a0, a1 in loops:
        seg = [(op, args) for ad, op, args in code if i <= ad < a0 and not op.startswith('j')]
        if seg:
            out.append(('code', seg))
        out.append(('loop', [(op, args) for ad, op, args in code if a0 <= ad <= a1]))
        i = a1 + 1
    seg = [(op, args) for ad, op, args in code if i <= ad <= last and not op.startswith('j')]
    if seg:
        out.append(('code', seg))
    return out


def objdump_paths(text):
    """{symbol: [(kind, body)]} for every function of an objdump -d listing
    whose code from its first instruction to its first `ret` runs straight
    through but for its inner loops (no call, every backward branch there
    the end of an inner loop): that code in address order, cut into
    ('code', [(op, args)]) and ('loop', body) pieces, jumps left out. The
    synthetic AVX-512 kernels are laid out so: set-up, main loop, the
    masked pass over the last whole words, the fold into the result, per
    function of a `seq`; their other paths (buffers under one block) sit
    after the `ret`. A function that is one jmp to another takes its path."""
    fns, alias = _objdump_functions(text)
    out = {}
    for sym, body in fns:
        path = _straight_path(body) if body and sym not in alias else None
        if path is not None:
            out[sym] = path
    return _with_aliases(out, alias)


def objdump_bodies(text):
    """{symbol: [(address, op, args)]}: every function of an objdump -d
    listing (walk_call()'s input); one that is one jmp to another takes
    that one's body."""
    fns, alias = _objdump_functions(text)
    return _with_aliases({sym: body for sym, body in fns if sym not in alias}, alias)


def kernel_loops(dis, p, form, isa, ld_lat=4.0, st_fwd=5.0, st_fwd_vec=None, paths=None,
                 fns=None):
    """loop_stats() of the kernel's main loops, one per loop of loops()
    (seq: the copy loop, then one per function; int: one), taken as the
    kernel's first inner loops in address order; None when the listing
    does not have the kernel or has fewer loops. paths: objdump_paths();
    where the kernel's straight path holds exactly these loops, the first
    loop's entry carries it as 'path' (dataflow() then runs the code
    between the loops too)."""
    sym = ilpgen.fn_symbol(p, 'seq' if form == 'seq' else form, isa)
    step = unroll_bytes(p, isa)
    # main loops advance their index by the unrolled block (remainder
    # loops by 8-byte granules)
    inc = re.compile(r'^(?:add\s+\$0x%x,%%r|lea\s+0x%x\(%%r)' % (step, step))
    bodies = [b for b in dis.get(sym) or []
              if any(inc.match('%s %s' % (op, args)) for op, args in b)]
    k = (len(p.fns) + (1 if p.copy else 0)) if form == 'seq' else 1
    if len(bodies) < k:
        return None
    out = []
    for b in bodies[:k]:
        st = loop_stats(b, ld_lat, st_fwd, st_fwd_vec=st_fwd_vec)
        st['body'] = b
        out.append(st)
    path = (paths or {}).get(sym)
    if path and [b for kd, b in path if kd == 'loop'] == bodies[:k]:
        out[0]['path'] = path
    if fns and fns.get(sym):
        out[0]['fn'] = fns[sym]
    return out


# ------------------------------------------------------------ the call's instructions

_MASK64 = (1 << 64) - 1
_WALKS = {}


def walk_call(body, size, step, base=(0x10000000, 0x20000000), limit=2000000, trace=None):
    """The instructions one call of a compiled kernel executes on a buffer
    of `size` bytes: body [(address, op, args)] (_objdump_functions()),
    run from its entry on the general registers only (rdi, rsi the
    destination and source, rdx the size; vector registers, memory and
    what calls return unknown), every branch decided by the registers
    it tests. Returns (instructions executed, of them in main loops: the
    inner loops whose index advances by `step` bytes, {main loop's first
    address: instructions of the rest of the call attributed to it (the
    code after a main loop up to the next, the set-up to the first)}),
    or None where a branch tests an unknown value, the path leaves the
    function or runs over `limit` steps. A `call` counts as one
    instruction (the callee's own are not in the listing: the real
    kernels' byte tails call memcpy). trace: a list, given the index in
    body of every instruction executed, in order."""
    if not body:
        return None
    if trace is not None:
        return _walk_call(body, size, step, base, limit, trace)
    key = (tuple(body), size, step, base, limit)
    if key not in _WALKS:
        _WALKS[key] = _walk_call(body, size, step, base, limit)
    return _WALKS[key]


def _walk_call(body, size, step, base, limit, trace=None):
    at = {a: i for i, (a, _o, _r) in enumerate(body)}
    tgt_re = re.compile(r'([0-9a-f]+) <')
    inc = re.compile(r'^(?:add\s+\$0x%x,%%r|lea\s+0x%x\(%%r)' % (step, step))

    def target(args):
        mm = tgt_re.match(args)
        return int(mm[1], 16) if mm else None
    # main loops: inner loops (a conditional backward branch, no other
    # backward branch inside) whose index advances by `step`
    mains = []
    for ad, op, args in body:
        t0 = target(args)
        if op.startswith('j') and op != 'jmp' and t0 is not None and body[0][0] <= t0 < ad:
            span = [(x, o, a) for x, o, a in body if t0 <= x <= ad]
            inner = not any(o.startswith('j') and target(a) is not None and t0 <= target(a) < x
                            for x, o, a in span[:-1])
            if inner and any(inc.match('%s %s' % (o, a)) for _x, o, a in span):
                mains.append((t0, ad))
    if not mains:
        return None
    reg = {'rdi': base[0], 'rsi': base[1], 'rdx': size, 'rsp': 0x7fff0000}
    # the last flag-setting instruction: ('cmp', a, b) for `cmp a,b` (b - a)
    # or ('res', result) for an arithmetic one; None: unknown
    flags = None

    def val(x):
        if x.startswith('$'):
            return int(x[1:], 0) & _MASK64
        if x.startswith('%') and not x.startswith(('%xmm', '%ymm', '%zmm', '%k')):
            return reg.get(_canon(x[1:]))
        return None

    def w32(x):
        return re.match(r'%(e..|r\d+d)$', x) is not None

    def put(x, v):
        if v is not None:
            v &= 0xffffffff if w32(x) else _MASK64
        reg[_canon(x[1:])] = v

    def lea(x):
        mm = re.match(r'^(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)$', x)
        if not mm:
            return None
        b = val(mm[2]) if mm[2] else 0
        ix = val(mm[3]) if mm[3] else 0
        if b is None or ix is None:
            return None
        return int(mm[1], 0) + b + ix * int(mm[4] or 1) if mm[1] else b + ix * int(mm[4] or 1)

    def taken(cc):
        if flags is None:
            return None
        if flags[0] == 'cmp':
            a, b = flags[1], flags[2]
            if a is None or b is None:
                return None
            sa = a - (1 << 64) if a >> 63 else a
            sb = b - (1 << 64) if b >> 63 else b
            return {'jb': b < a, 'jae': b >= a, 'jbe': b <= a, 'ja': b > a, 'je': b == a,
                    'jne': b != a, 'jl': sb < sa, 'jge': sb >= sa, 'jle': sb <= sa,
                    'jg': sb > sa}.get(cc)
        r = flags[1]
        if r is None:
            return None
        return {'je': r == 0, 'jne': r != 0, 'js': r >> 63 == 1, 'jns': r >> 63 == 0}.get(cc)
    arith = {'add': lambda b, a: b + a, 'sub': lambda b, a: b - a, 'and': lambda b, a: b & a,
             'or': lambda b, a: b | a, 'xor': lambda b, a: b ^ a,
             'shl': lambda b, a: b << (a & 63), 'shr': lambda b, a: b >> (a & 63),
             'imul': lambda b, a: b * a}
    n, in_main, i = 0, 0, 0
    rest = {m[0]: 0 for m in mains}
    owner = mains[0][0]
    while True:
        if n >= limit or i >= len(body):
            return None
        ad, op, args = body[i]
        n += 1
        if trace is not None:
            trace.append(i)
        main = next((m for m in mains if m[0] <= ad <= m[1]), None)
        if main:
            in_main += 1
            owner = main[0]
        else:
            rest[owner] += 1
        ops = _operands(args)
        nxt = i + 1
        base_op = re.sub(r'[qlwb]$', '', op) if op not in arith else op
        if op.startswith('ret'):
            return n, in_main, rest
        if op.startswith('j'):
            t = target(args)
            go = True if op == 'jmp' else taken(op)
            if t not in at or go is None:
                return None
            if go:
                nxt = at[t]
        elif op.startswith('call'):
            # the callee's result and the caller-saved registers: unknown
            for r in ('rax', 'rcx', 'rdx', 'rsi', 'rdi', 'r8', 'r9', 'r10', 'r11'):
                reg[r] = None
            flags = None
        elif base_op in ('cmp', 'test') and len(ops) == 2:
            a, b = val(ops[0]), val(ops[1])
            if base_op == 'cmp':
                flags = ('cmp', a, b)
            else:
                flags = ('res', a & b if a is not None and b is not None else None)
        elif base_op in ('mov', 'movabs', 'lea') and len(ops) == 2 and ops[1].startswith('%') \
                and not ops[1].startswith(('%xmm', '%ymm', '%zmm', '%k')):
            put(ops[1], lea(ops[0]) if base_op == 'lea' else
                None if '(' in ops[0] else val(ops[0]))
        elif op.startswith('movz') and len(ops) == 2:
            v = val(ops[0])
            put(ops[1], None if v is None else v & (0xff if op.startswith('movzb') else 0xffff))
        elif base_op in arith and len(ops) == 2 and ops[1].startswith('%') \
                and not ops[1].startswith(('%xmm', '%ymm', '%zmm')):
            a, b = val(ops[0]), val(ops[1])
            if base_op == 'xor' and ops[0] == ops[1]:
                v = 0
            else:
                v = None if a is None or b is None else arith[base_op](b, a)
            put(ops[1], v)
            flags = ('res', reg[_canon(ops[1][1:])])
        elif op == 'shlx' and len(ops) == 3:
            c, x = val(ops[0]), val(ops[1])
            put(ops[2], None if c is None or x is None else
                x << (c & (31 if w32(ops[2]) else 63)))
        elif op.startswith('popcnt') and len(ops) == 2:
            v = val(ops[0])
            put(ops[1], None if v is None else bin(v).count('1'))
            flags = None
        else:
            # anything else: the general registers and flags it writes
            # become unknown
            for d in parse_insn(op, args)[2]:
                if d == 'flags':
                    flags = None
                elif not d.startswith(('z', 'k')):
                    reg[d] = None
        i = nxt


def read_objdump(path):
    """objdump -d text: a file, or run on a static library / object."""
    if path.endswith(('.a', '.o')):
        import subprocess
        return subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], check=True,
                              capture_output=True, text=True).stdout
    with open(path) as fh:
        return fh.read()
