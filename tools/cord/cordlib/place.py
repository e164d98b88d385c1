# SPDX-License-Identifier: BSD-2-Clause
"""Conflict-aware placement: offsets for an ordered list of functions so
that hot code which runs together does not share I-cache sets.

Clustering (C3, Pettis-Hansen) packs hot code together, which is all a
cache needs while the hot code fits in it.  When it does not -- or when a
direct-mapped cache maps two alternating functions onto the same lines --
packing alone can make things worse: two functions of one phase land one
cache-size apart and evict each other on every call.  This pass is the
idea of Hashemi, Kaeli and Calder, "Efficient procedure mapping using
cache line coloring" (PLDI 1997), done greedily and per cache line:
functions are taken in the clustered order, and each goes to the first
offset at or after the end of the previous one where its hot lines
collide least with the lines already placed; the gap, if any, is left
empty.

What collides: two different memory lines in one cache set, both run in
the same phase (profile) of the workload.  Line l of a function runs n(l)
times in a phase (the most any instruction in it ran, from the `hot`
records; without them, every line of f as often as f is called).  Two
lines of one set that alternate evict each other at most 2 min(n1, n2)
times, so that is the estimate of a pair's conflict misses in a
direct-mapped cache; in an A-way cache a line conflicts only where A
others of its phase are in the set already.  Lines of different phases
never run together and may share sets freely.

The cost of an offset is the estimate summed over the function's lines.
The candidates are the packed offset and each next line boundary up to one
way further; the least cost wins (ties: the smallest gap), and a gap is
taken only if it removes at least GAIN of the cost at no gap.  The gaps
add up to at most MAX_GAP_SHARE of the hot bytes.  Offsets are relative
to the start of the ordered region (which the linker script aligns to a
cache line): where the region starts shifts every function's sets alike,
so which lines share sets depends only on the offsets.
"""

GAIN = 0.25             # a gap must remove at least this share of the conflicts
MAX_GAP_SHARE = 3.0     # total gap bytes at most this share of the hot bytes
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


def phase_heat(profile, funcs, size, hot=None):
    """{f: {byte offset in f: times run}} for one phase: the profile's
    executed blocks where it has them (hot: {f: {offset: n}}), else every
    line-sized block of a function as often as it was called."""
    hot = hot or {}
    calls = {}
    for (_a, b), n in profile.edges.items():
        calls[b] = calls.get(b, 0) + n
    out = {}
    for f in funcs:
        if hot.get(f):
            out[f] = dict(hot[f])
        elif calls.get(f):
            out[f] = {b: calls[f] for b in range(0, max(size.get(f, 0), 1), 64)}
    return out


def _lines(off, blocks, line):
    """{memory line: times run} of a function at offset off, from its
    {offset in it: times run}."""
    out = {}
    for b, n in blocks.items():
        ln = (off + b) // line
        if n > out.get(ln, 0):
            out[ln] = n
    return out


class _Cache:
    """The lines placed so far, by set and phase."""

    def __init__(self, geometry):
        self.size, self.assoc, self.line = geometry
        self.nsets = self.size // self.assoc // self.line
        self.sets = [dict() for _ in range(self.nsets)]   # set -> phase -> [(memline, n, f)]

    def cost(self, lines_by_phase):
        """Estimated conflict misses of adding these lines."""
        total = 0
        for ph, lines in lines_by_phase.items():
            for ln, n in lines.items():
                occ = self.sets[ln % self.nsets].get(ph)
                if not occ:
                    continue
                other = [m for oln, m, _f in occ if oln != ln]
                if len(other) >= self.assoc:
                    total += sum(2 * min(n, m) for m in other)
        return total

    def add(self, lines_by_phase, f):
        for ph, lines in lines_by_phase.items():
            for ln, n in lines.items():
                self.sets[ln % self.nsets].setdefault(ph, []).append((ln, n, f))


def place(order, size, heat, geometry, align=FUNC_ALIGN, pack=False):
    """Offsets {f: bytes from the region start} for `order`, the total gap
    bytes and the estimated conflict misses left.  `size` in bytes
    (functions without one count as `align` bytes); `heat`: one
    {f: {offset in f: times run}} per phase (phase_heat).  pack: no gaps,
    only the estimate of the packed layout."""
    cache = _Cache(geometry)
    line = cache.line
    hot_bytes = sum(max(size.get(f, 0), 1) for f in order)
    budget = 0 if pack else MAX_GAP_SHARE * hot_bytes
    offsets, end, gaps, left = {}, 0, 0, 0

    def lines_at(f, off):
        return {ph: _lines(off, h[f], line) for ph, h in enumerate(heat) if h.get(f)}

    for f in order:
        sz = max(size.get(f, 0), 1)
        start = -(-end // align) * align
        here = lines_at(f, start)
        c0 = cache.cost(here)
        best = (c0, start, here)
        # a function larger than a way covers every set wherever it goes
        if c0 and budget - gaps > 0 and sz < cache.nsets * line:
            for step in range(1, cache.nsets):
                off = (start // line + step) * line
                if off - start > budget - gaps:
                    break
                cand = lines_at(f, off)
                c = cache.cost(cand)
                if c < best[0]:
                    best = (c, off, cand)
                    if c == 0:
                        break
            if c0 - best[0] < GAIN * c0:
                best = (c0, start, here)
        c, off, lines = best
        left += c
        gaps += off - start
        offsets[f] = off
        cache.add(lines, f)
        end = off + sz
    return offsets, gaps, left
