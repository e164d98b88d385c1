# SPDX-License-Identifier: BSD-2-Clause
"""Conflict-aware placement: offsets for an ordered list of functions so
that hot functions which run together do not share I-cache sets.

Clustering (C3, Pettis-Hansen) packs hot code together, which is all a
cache needs while the hot code fits in it.  When it does not -- or when a
direct-mapped cache maps two alternating functions onto the same lines --
packing alone can make things worse: two functions of one phase land one
cache-size apart and evict each other on every call.  This pass is the
idea of Hashemi, Kaeli and Calder, "Efficient procedure mapping using
cache line coloring" (PLDI 1997), done greedily: functions are taken in
the clustered order, and each goes to the first offset at or after the end
of the previous one whose cache sets are least used by functions it runs
with; the gap, if any, is left empty.

Who runs with whom (the affinity of f and g) comes from the profiles, one
per phase of the workload (a `record` of one command, one path):

    aff(f, g) = sum over profiles of  calls(f->g) + calls(g->f)
                                      + min(runs(f), runs(g))
    runs(f)   = max(calls into f, calls f makes)

-- a caller and its callee alternate on every call, and two functions of
one phase alternate at least as often as the rarer of them runs; a
function runs again each time it is called and each time a call it made
returns (a loop that calls out on every turn, like a program's main loop,
comes back to its own lines once a turn).
Functions that never run in the same profile have no affinity and may
share sets freely.

The cost of putting f at line offset o, for an A-way cache of S sets:
over f's lines, the sum of aff(f, g) for the functions g already in that
set, counted only where at least A of them have affinity with f (fewer fit
beside f).  The offset with the least cost wins; ties go to the smallest
gap, and a gap is taken only if it removes at least GAIN of the cost at
no gap.  The total of the gaps is bounded by MAX_GAP_SHARE of the hot
bytes.  Offsets are relative to the start of the ordered region (which
the linker script aligns to a cache line): where the region starts shifts
every function's sets alike, so which functions share sets depends only
on the offsets.
"""

GAIN = 0.25             # a gap must remove at least this share of the conflicts
MAX_GAP_SHARE = 1.0     # total gap bytes at most this share of the hot bytes
FUNC_ALIGN = 16         # what gcc and clang align x86-64 functions to at -O2


def parse_geometry(text):
    """'16384,1,64' -> (size, assoc, line); ValueError when it is not a
    cache (line a power of two, size a multiple of assoc x line)."""
    size, assoc, line = (int(x) for x in text.split(','))
    if line <= 0 or line & (line - 1) or assoc <= 0 or size <= 0 or \
            size % (assoc * line):
        raise ValueError(f'not an I-cache geometry: {text} (size,assoc,line)')
    return size, assoc, line


def way_bytes(geometry):
    size, assoc, _line = geometry
    return size // assoc


def affinity(profiles, keep):
    """{f: {g: aff}} over the functions in `keep`, from per-phase profiles
    (each a Profile with keys already canonical)."""
    aff = {f: {} for f in keep}

    def add(a, b, n):
        if a != b and n > 0:
            aff[a][b] = aff[a].get(b, 0) + n
            aff[b][a] = aff[b].get(a, 0) + n
    for p in profiles:
        calls, out = {}, {}
        for (a, b), n in p.edges.items():
            if b in aff:
                calls[b] = calls.get(b, 0) + n
            if a in aff:
                out[a] = out.get(a, 0) + n
            if a in aff and b in aff:
                add(a, b, n)
        for f, n in out.items():
            calls[f] = max(calls.get(f, 0), n)
        hot = sorted(calls, key=lambda f: (-calls[f], f))
        for i, f in enumerate(hot):
            for g in hot[i + 1:]:
                add(f, g, calls[g])       # calls[g] <= calls[f]: the rarer
    return aff


def lines_of(off, sz, blocks, line):
    """The memory lines function f occupies at offset `off`: those holding
    its executed 16-byte blocks (offsets into f) where the profile has
    them, else all of it."""
    if blocks:
        return sorted({(off + b) // line for b in blocks})
    return list(range(off // line, (off + sz - 1) // line + 1))


def place(order, size, aff, geometry, align=FUNC_ALIGN, hot=None):
    """Offsets {f: bytes from the region start} for `order`, and the total
    gap bytes.  `size` in bytes; functions the profile could not size
    count as `align` bytes.  `hot`: {f: offsets of its executed 16-byte
    blocks}; only those lines of a function take part in conflicts (a
    large function's cold paths do not)."""
    hot = hot or {}
    csize, assoc, line = geometry
    nsets = csize // assoc // line
    occupants = [[] for _ in range(nsets)]     # per set: (function, memory line)
    hot_bytes = sum(max(size.get(f, 0), 1) for f in order)
    budget = MAX_GAP_SHARE * hot_bytes
    offsets, end, gaps = {}, 0, 0

    def set_costs(fa, shared):
        """Per set: what f would pay for one line there (prefix sums over
        the sets twice round, for windows that wrap).  Memory line
        `shared`, the one f would share with the function before it, is
        one line in the cache, not a conflict."""
        cost = [0] * nsets
        for s_, occ in enumerate(occupants):
            if len(occ) >= assoc:
                w = [fa[g] for g, ln in occ if g in fa and ln != shared]
                if len(w) >= assoc:
                    cost[s_] = sum(w)
        return cost

    for f in order:
        sz = max(size.get(f, 0), 1)
        start = -(-end // align) * align
        fa = aff.get(f, {})
        best = None
        if fa and any(occupants):
            cost = set_costs(fa, start // line if start % line else None)
            blocks = hot.get(f)

            def conflicts(off):
                return sum(cost[s_] for s_ in
                           {ln % nsets for ln in lines_of(off, sz, blocks, line)})
            # candidate starts: this one, then each next line boundary up to
            # one way further (a function's first line shifts one set a step)
            base_cost = conflicts(start)
            best = (base_cost, start)
            for step in range(1, nsets if base_cost else 0):
                off = (start // line + step) * line
                if off - start > budget - gaps:
                    break
                c = conflicts(off)
                if c < best[0]:
                    best = (c, off)
                    if c == 0:
                        break
            if best[1] != start and base_cost - best[0] < GAIN * base_cost:
                best = (base_cost, start)
        off = best[1] if best else start
        gaps += off - start
        offsets[f] = off
        for ln in lines_of(off, sz, hot.get(f), line)[:nsets]:
            occupants[ln % nsets].append((f, ln))
        end = off + sz
    return offsets, gaps


def conflict_report(order, offsets, size, aff, geometry, hot=None):
    """The pairs of affine functions whose hot lines share sets, heaviest
    first: [(aff, f, g, shared sets)] -- what a layout leaves to chance."""
    csize, assoc, line = geometry
    nsets = csize // assoc // line
    hot = hot or {}
    lines = {}
    for f in order:
        off, sz = offsets[f], max(size.get(f, 0), 1)
        lines[f] = {}
        for ln in lines_of(off, sz, hot.get(f), line):
            lines[f].setdefault(ln % nsets, set()).add(ln)
    out = []
    for i, f in enumerate(order):
        for g in order[i + 1:]:
            a = aff.get(f, {}).get(g, 0)
            if not a:
                continue
            # a set both use with different memory lines (one line both
            # share is no conflict)
            shared = [s_ for s_ in lines[f].keys() & lines[g].keys()
                      if lines[f][s_] | lines[g][s_] != lines[f][s_] & lines[g][s_]]
            if shared:
                out.append((a, f, g, len(shared)))
    out.sort(key=lambda x: (-x[0], x[1], x[2]))
    return out
