# SPDX-License-Identifier: BSD-2-Clause
"""Call-graph profiles: caller->callee edge counts plus optional self cost.

A function is a key (src, name): `src` is the source file for statics (any
form: full DWARF path from callgrind, STT_FILE name from the symbol table)
and '' when unknown or not needed (globals, perf).  Callers we cannot name
(the C library calling main, a frame outside the program) are EXTERNAL:
their calls still count toward the callee's weight, but EXTERNAL is never
placed.

The text form, one record a line, is also what hand-written test graphs use:

    # cord profile v1
    edge  CALLER  CALLEE  COUNT
    cost  FUNC    COUNT          self cost (instructions, samples); optional
    size  FUNC    BYTES          only for graphs without a binary
    addr  FUNC    0xADDR         an instruction address inside FUNC in the
                                 profiled run (callgrind with instruction
                                 positions); resolves FUNC in the binary by
                                 address where its name and file do not
    hot   FUNC    0xA:N,0xB:M... the 16-byte blocks of FUNC that executed
                                 (their run addresses) and how often (the
                                 most any of their instructions ran):
                                 which cache lines of a function are hot,
                                 and how hot, for place.py

where FUNC is `name` or `src:name` (split at the last ':').
"""

import os
import re

EXTERNAL = ('', '<external>')
HOT_BLOCK_SHARE = 0.01


def fmt_key(key):
    src, name = key
    return f'{src}:{name}' if src else name


def parse_key(text):
    if ':' in text:
        src, name = text.rsplit(':', 1)
        return (src, name)
    return ('', text)


class Profile:
    def __init__(self):
        self.edges = {}     # (caller, callee) -> count
        self.cost = {}      # func -> self cost
        self.size = {}      # func -> bytes (hand-written graphs only)
        self.addr = {}      # func -> lowest instruction address seen in the run
        self.hot = {}       # func -> {executed 16-byte block address: times run}
        self.sources = []   # what it was made from, for the header

    def add_edge(self, caller, callee, n):
        if n:
            k = (caller, callee)
            self.edges[k] = self.edges.get(k, 0) + n

    def add_cost(self, func, n):
        if n:
            self.cost[func] = self.cost.get(func, 0) + n

    def add_addr(self, func, a):
        cur = self.addr.get(func)
        if cur is None or a < cur:
            self.addr[func] = a

    def add_hot(self, func, blocks):
        """blocks: {address: times run}; the same block from two profiles
        adds up."""
        if blocks:
            d = self.hot.setdefault(func, {})
            for b, n in blocks.items():
                d[b] = d.get(b, 0) + n

    def functions(self):
        fs = set(self.cost) | set(self.size)
        for a, b in self.edges:
            fs.add(a)
            fs.add(b)
        fs.discard(EXTERNAL)
        return fs

    def calls_into(self):
        """Node weight as lld and the C3 paper use it for call-count
        profiles: the sum of the function's incoming edges."""
        w = {}
        for (_a, b), n in self.edges.items():
            w[b] = w.get(b, 0) + n
        return w

    def remap(self, fn):
        """A copy with every key passed through fn (None drops to EXTERNAL
        for edges, and drops costs/sizes)."""
        out = Profile()
        out.sources = list(self.sources)
        for (a, b), n in self.edges.items():
            a2 = EXTERNAL if a == EXTERNAL else (fn(a) or EXTERNAL)
            b2 = fn(b) if b != EXTERNAL else None
            if b2 is None:
                continue          # calls into code we do not place
            if a2 == b2 and a != b:
                continue          # two keys folded into one: not a real self-call
            out.add_edge(a2, b2, n)
        for per_key, add in ((self.cost, out.add_cost), (self.size, out.size.__setitem__),
                             (self.addr, out.add_addr), (self.hot, out.add_hot)):
            for k, v in per_key.items():
                k2 = fn(k)
                if k2 is not None:
                    add(k2, v)
        return out

    def scaled(self, w):
        out = Profile()
        out.sources = list(self.sources)
        out.edges = {k: v * w for k, v in self.edges.items()}
        out.cost = {k: v * w for k, v in self.cost.items()}
        out.size = dict(self.size)
        out.addr = dict(self.addr)
        out.hot = {k: {b: n * w for b, n in v.items()} for k, v in self.hot.items()}
        return out

    def write(self, path):
        with open(path, 'w') as f:
            f.write('# cord profile v1\n')
            for s in self.sources:
                f.write(f'# from {s}\n')
            for (a, b), n in sorted(self.edges.items(), key=lambda kv: (-kv[1], kv[0])):
                f.write(f'edge {fmt_key(a)} {fmt_key(b)} {_num(n)}\n')
            for k, n in sorted(self.cost.items(), key=lambda kv: (-kv[1], kv[0])):
                f.write(f'cost {fmt_key(k)} {_num(n)}\n')
            for k, n in sorted(self.size.items()):
                f.write(f'size {fmt_key(k)} {n}\n')
            for k, a in sorted(self.addr.items()):
                f.write(f'addr {fmt_key(k)} {a:#x}\n')
            for k, b in sorted(self.hot.items()):
                f.write(f'hot {fmt_key(k)} ' + ','.join(f'{x:#x}:{_num(b[x])}' for x in sorted(b))
                        + '\n')


def _num(n):
    return str(int(n)) if float(n).is_integer() else f'{n:.6g}'


def _parse_num(s):
    try:
        return int(s)
    except ValueError:
        return float(s)


def read_profile(path):
    p = Profile()
    p.sources.append(path)
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            t = line.split()
            if not t or t[0].startswith('#'):
                continue
            try:
                if t[0] == 'edge' and len(t) == 4:
                    p.add_edge(parse_key(t[1]), parse_key(t[2]), _parse_num(t[3]))
                elif t[0] == 'cost' and len(t) == 3:
                    p.add_cost(parse_key(t[1]), _parse_num(t[2]))
                elif t[0] == 'size' and len(t) == 3:
                    p.size[parse_key(t[1])] = int(t[2], 0)
                elif t[0] == 'addr' and len(t) == 3:
                    p.add_addr(parse_key(t[1]), int(t[2], 16))
                elif t[0] == 'hot' and len(t) == 3:
                    p.add_hot(parse_key(t[1]), {int(x.split(':')[0], 16): _parse_num(x.split(':')[1])
                                                for x in t[2].split(',')})
                else:
                    raise ValueError('unknown record')
            except ValueError as e:
                raise SystemExit(f'{path}:{lineno}: {e}: {line.strip()}')
    return p


def merge(profiles, weights=None, normalize=False):
    """Weighted sum.  With normalize, each profile is first scaled to the
    same total edge weight, so that a callgrind run with exact counts and a
    perf run with a few thousand samples count as much as their weights say
    and not as much as their units."""
    weights = weights or [1] * len(profiles)
    out = Profile()
    totals = [sum(p.edges.values()) or 1 for p in profiles]
    ref = max(totals)
    for p, w, t in zip(profiles, weights, totals):
        s = p.scaled(w * (ref / t if normalize else 1))
        out.sources += s.sources
        for k, n in s.edges.items():
            out.edges[k] = out.edges.get(k, 0) + n
        for k, n in s.cost.items():
            out.cost[k] = out.cost.get(k, 0) + n
        out.size.update(s.size)
        for k, a in s.addr.items():
            out.add_addr(k, a)
        for k, b in s.hot.items():
            out.add_hot(k, b)
    return out


# ------------------------------------------------------------------ callgrind

def placeable(name):
    """callgrind's and perf's stand-ins for code without a symbol --
    "(below main)", "0x0000000000001190", "[unknown]" -- name nothing a
    linker can place (and would break the one-record-a-line format)."""
    return bool(name) and not (name[0] in '([?' or name.startswith('0x')
                               or any(c.isspace() for c in name))


_CG_NAME = re.compile(r'^\((\d+)\)(?:\s+(.*))?$')


def read_callgrind(path, objects=None):
    """Exact call counts from a callgrind.out file.

    Every `calls=N target` line after `cfn=` adds N to caller->callee.  The
    caller's file is the `fl=` in force at its `fn=`; the callee's is the
    `cfi=`/`cfl=` given before the call, else the file recorded where the
    callee itself is defined, else the caller's (the format's default).
    Names may be compressed, `(id) name` once and `(id)` after; files,
    functions and objects have separate id spaces.  callgrind gives each
    function node its own id, so two statics named `step` get two ids and we
    resolve each id to (file, name) only at the end.  `fi=`/`fe=` (inlined
    code) change where costs are attributed, not which function we are in.

    With instruction positions (`--dump-instr=yes --compress-pos=no`, as
    `record` runs it) every absolute address on a cost line is kept: the
    lowest per function becomes its `addr` record, and its 16-byte blocks
    that ran at least HOT_BLOCK_SHARE as often as its busiest block, with
    how often (an instruction's Ir is the times it ran), its `hot`
    record.

    objects: if given, basenames of ELF objects (ob=) to keep; functions of
    other objects become EXTERNAL callers and are dropped as callees.
    """
    prof = Profile()
    prof.sources.append(f'callgrind {path}')
    tables = {'file': {}, 'fn': {}, 'ob': {}}

    def name(kind, value, file=''):
        m = _CG_NAME.match(value)
        if not m:
            # Uncompressed (--compress-strings=no): the name alone is not an
            # identity for a static, so the function handle carries its file.
            return ((file, value) if kind == 'fn' else value), value
        ident, text = m.group(1), m.group(2)
        if text is not None:
            tables[kind][ident] = text
        return ('#' + ident), tables[kind].get(ident, '?' + ident)

    fn_info = {}     # fn handle -> [name, file, object]
    npos = 1
    cur_fl = cur_ob = ''
    cur_fn = None
    cfile = cob = cfn = None
    pending = None   # (callee handle, count) awaiting its cost line
    edges = {}
    costs = {}
    addrs = {}
    instrs = {}      # fn -> {instruction address: times run}
    ipos = None      # index of the instr position, when positions have it

    def define(handle, fname, file, ob):
        info = fn_info.get(handle)
        if info is None:
            fn_info[handle] = [fname, file, ob]

    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line[0] == '#':
                continue
            c = line[0]
            if c.isdigit() or c in '+-*' or line.startswith('0x'):
                if ipos is not None and cur_fn is not None:
                    t = line.split()
                    if len(t) > ipos and t[ipos].startswith('0x'):
                        a = int(t[ipos], 16)
                        if a < addrs.get(cur_fn, a + 1):
                            addrs[cur_fn] = a
                        if len(t) > npos and pending is None:
                            ins = instrs.setdefault(cur_fn, {})
                            ins[a] = ins.get(a, 0) + int(t[npos])
                if pending is not None:
                    # The inclusive cost of the call: not self cost.
                    pending = None
                    continue
                if cur_fn is not None:
                    t = line.split()
                    if len(t) > npos:
                        costs[cur_fn] = costs.get(cur_fn, 0) + int(t[npos])
                continue
            key, _, value = line.partition('=')
            if key == 'positions' or line.startswith('positions:'):
                pnames = line.split(':', 1)[1].split()
                npos = len(pnames)
                ipos = pnames.index('instr') if 'instr' in pnames else None
            elif key in ('fl',):
                cur_fl = name('file', value)[1]
            elif key in ('fi', 'fe'):
                name('file', value)      # register the id; no identity change
            elif key == 'ob':
                cur_ob = name('ob', value)[1]
            elif key == 'fn':
                h, text = name('fn', value, cur_fl)
                cur_fn = h
                define(h, text, cur_fl, cur_ob)
                # The definition site wins over any guess made at a call.
                fn_info[h][1] = cur_fl
                fn_info[h][2] = cur_ob
                fn_info[h][0] = text
            elif key in ('cfi', 'cfl'):
                cfile = name('file', value)[1]
            elif key == 'cob':
                cob = name('ob', value)[1]
            elif key == 'cfn':
                h, text = name('fn', value, cfile if cfile is not None else cur_fl)
                cfn = h
                define(h, text, cfile if cfile is not None else cur_fl,
                       cob if cob is not None else cur_ob)
            elif key == 'calls':
                n = int(value.split()[0])
                if cur_fn is not None and cfn is not None:
                    k = (cur_fn, cfn)
                    edges[k] = edges.get(k, 0) + n
                pending = (cfn, n)
                cfile = cob = cfn = None
            # Everything else (events:, summary:, jump=, jcnd=, part:, ...) is
            # not needed for the call graph.

    keep_obj = None
    if objects:
        keep_obj = {os.path.basename(o) for o in objects}

    def key(h):
        fname, file, ob = fn_info.get(h, ['?', '', ''])
        if keep_obj is not None and os.path.basename(ob) not in keep_obj:
            return None
        if not placeable(fname):
            return None
        if file in ('???', ''):
            file = ''
        return (file, fname)

    for (a, b), n in edges.items():
        kb = key(b)
        if kb is None:
            continue
        prof.add_edge(key(a) or EXTERNAL, kb, n)
    for h, n in costs.items():
        k = key(h)
        if k is not None:
            prof.add_cost(k, n)
    for h, a in addrs.items():
        k = key(h)
        if k is not None:
            prof.add_addr(k, a)
    for h, ins in instrs.items():
        k = key(h)
        if k is None:
            continue
        b = {}
        for a, n in ins.items():
            b[a & ~15] = max(b.get(a & ~15, 0), n)
        # hot: the blocks that ran at least 1% as often as the busiest one
        # of the function (not its set-up paths, run once)
        top = max(b.values())
        prof.add_hot(k, {x: n for x, n in b.items() if n >= max(2, HOT_BLOCK_SHARE * top)})
    return prof


# ------------------------------------------------------- -finstrument-functions

def read_instrument(path, binaries):
    """Edge counts written by cord_instrument.c, resolved with the symbol
    tables of `binaries` (ElfFunctions).  Each record holds the call site
    (an address inside the caller) and the callee's entry, as offsets from
    the load base of the module they are in; we add the module's first
    PT_LOAD address so PIE and fixed executables resolve the same way."""
    from .elf import find_containing
    prof = Profile()
    prof.sources.append(f'instrument {path}')
    modules = {}
    spans = {id(b): b.containing() for b in binaries}

    def module_elf(mpath):
        base = os.path.basename(mpath)
        for b in binaries:
            if os.path.basename(b.path) == base:
                return b
        # The main program may be reported by its argv[0] or not at all.
        return binaries[0] if binaries and (not mpath or mpath == '?') else None

    def resolve(mod, off):
        m = modules.get(mod)
        if m is None:
            return None
        elf = m
        f = find_containing(spans[id(elf)], off + elf.min_load)
        if f is None:
            return None
        return (f.src if f.local else '', f.name)

    with open(path) as f:
        for line in f:
            t = line.split()
            if not t or t[0].startswith('#'):
                continue
            if t[0] == 'module':
                elf = module_elf(t[3] if len(t) > 3 else '')
                if elf is not None:
                    modules[t[1]] = elf
            elif t[0] == 'edge':
                callee = resolve(t[3], int(t[4], 16))
                if callee is None:
                    continue
                caller = resolve(t[1], int(t[2], 16)) or EXTERNAL
                prof.add_edge(caller, callee, int(t[5]))
            elif t[0] == 'lost':
                if int(t[1]):
                    raise SystemExit(f'{path}: the counting table overflowed, '
                                     f'{t[1]} calls lost; raise CORD_TABLE_BITS')
    return prof


# ------------------------------------------------------------------- perf

_PERF_FRAME = re.compile(r'^\s+([0-9a-fA-F]+)\s+(.+?)\s+\((.*)\)\s*$')


def read_perf_script(path, dsos=None):
    """`perf script` output of `perf record -g` (or --call-graph=dwarf/lbr).

    A sample is a header line and its frames, leaf first, then a blank
    line.  Like hfsort we count each sample once for its leaf (cost) and
    once for the arc from the leaf's caller, the only arc whose sampled
    weight means time spent on that call.  perf names only the symbol and
    the DSO, so same-named statics cannot be told apart here: their keys
    have no file, and they resolve only when the name is unique.

    dsos: basenames to keep (the program and its libraries); frames in other
    DSOs become EXTERNAL callers and are not placed.
    """
    prof = Profile()
    prof.sources.append(f'perf {path}')
    keep = {os.path.basename(d) for d in dsos} if dsos else None
    frames = []

    def fkey(sym, dso):
        if keep is not None and os.path.basename(dso) not in keep:
            return None
        if not placeable(sym):
            return None
        sym = re.sub(r'\+0x[0-9a-fA-F]+$', '', sym)
        return ('', sym)

    def flush():
        if frames:
            leaf = fkey(*frames[0])
            if leaf is not None:
                prof.add_cost(leaf, 1)
                caller = fkey(*frames[1]) if len(frames) > 1 else None
                prof.add_edge(caller or EXTERNAL, leaf, 1)
        frames.clear()

    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                flush()
                continue
            m = _PERF_FRAME.match(line)
            if m and line[0] in ' \t':
                frames.append((m.group(2), m.group(3)))
            elif line[0] not in ' \t':
                flush()
    flush()
    return prof
