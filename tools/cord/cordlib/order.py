# SPDX-License-Identifier: BSD-2-Clause
"""Function orders from a call graph: C3, Pettis-Hansen, plain hotness.

All three take the same inputs: `funcs` (the keys to place), `weight` (a
node's weight: its instructions where the profile has them, else the calls
into it, see Profile.calls_into), `size` in bytes, `edges` {(caller,
callee): count} restricted to funcs, and `calls` (the calls into each
function, which C3 compares its edges with; `weight` when not given).
Ties are broken by the key, so an order is a pure function of its inputs
(the tests check hand-computed orders).
"""

# C3's three limits, as in Ottoni and Maher, "Optimizing function placement
# for large-scale data-center applications", and the lld and BOLT
# implementations of it.
C3_MIN_EDGE_FRACTION = 0.10     # ignore a caller supplying < 10% of the calls
C3_MAX_DENSITY_DROP = 8         # do not dilute a dense cluster more than 8x
C3_MAX_CLUSTER = 1 << 20        # clusters beyond 1 MiB gain nothing on a page


def coverage_cut(funcs, weight, coverage, phases=()):
    """The hottest functions that together carry `coverage` of the weight;
    the rest stay where the linker puts them.  Zero-weight functions are
    never placed.  `phases`: one {f: weight} per phase of the workload;
    the functions that carry `coverage` of any one phase are placed too,
    or a cheap phase beside costly ones (a UDP path beside TCP ones)
    would lose its hot code to the cut, and that code, left in .text
    where the placement cannot see it, would collide with placed code."""
    def cut(w):
        ranked = sorted((f for f in funcs if w.get(f, 0) > 0), key=lambda f: (-w[f], f))
        total = sum(w[f] for f in ranked)
        keep, acc = set(), 0
        for f in ranked:
            if acc >= coverage * total:
                break
            keep.add(f)
            acc += w[f]
        return keep
    keep = cut(weight)
    for w in phases:
        keep |= cut(w)
    return keep


SMALL_BYTES = 256       # four cache lines: what a wrapper or an accessor takes


def frequent_small(funcs, calls, size, coverage):
    """The functions of at most SMALL_BYTES among those that carry
    `coverage` of the calls.  A wrapper run once a packet carries few of
    the instructions and falls under the cut by instructions, yet it
    runs as often as the hot code and, left where the linker puts it,
    collides with placed code where the placement cannot see it.  Being
    small, it costs the order almost nothing."""
    return {f for f in coverage_cut(funcs, calls, coverage)
            if 0 < size.get(f, 0) <= SMALL_BYTES}


def _density(w, s):
    return w / max(s, 1)


def c3(funcs, weight, size, edges, calls=None):
    """Call-chain clustering.

    Functions are visited by decreasing density (weight per byte).  Each
    one's cluster is appended to the cluster of its hottest caller, so a
    caller is followed by its callee as on the call path, unless

      - that edge carries under 10% of the calls into the function (the
        caller is not really what makes it hot),
      - the caller's cluster would drop to under 1/8 of its density (hot
        small code diluted by a big lukewarm callee), or
      - the merged cluster would exceed 1 MiB.

    Clusters are then laid out by decreasing density.
    """
    funcs = sorted(funcs)
    sz = {f: max(size.get(f, 1), 1) for f in funcs}
    best = {}
    for (a, b), n in sorted(edges.items()):
        if a == b or a not in sz or b not in sz:
            continue
        cur = best.get(b)
        if cur is None or n > cur[1] or (n == cur[1] and a < cur[0]):
            best[b] = (a, n)

    leader = {f: f for f in funcs}
    members = {f: [f] for f in funcs}
    csize = dict(sz)
    cweight = {f: weight.get(f, 0) for f in funcs}

    def find(f):
        root = f
        while leader[root] != root:
            root = leader[root]
        while leader[f] != root:          # path compression
            leader[f], f = root, leader[f]
        return root

    visit = sorted(funcs, key=lambda f: (-_density(weight.get(f, 0), sz[f]),
                                         -weight.get(f, 0), f))
    for f in visit:
        if f not in best:
            continue
        caller, n = best[f]
        if n < C3_MIN_EDGE_FRACTION * (calls if calls is not None else weight).get(f, 0):
            continue
        to = find(caller)
        if to == f:
            continue
        if csize[to] + csize[f] > C3_MAX_CLUSTER:
            continue
        merged = _density(cweight[to] + cweight[f], csize[to] + csize[f])
        if _density(cweight[to], csize[to]) > C3_MAX_DENSITY_DROP * merged:
            continue
        leader[f] = to
        members[to] += members.pop(f)
        csize[to] += csize[f]
        cweight[to] += cweight[f]

    roots = sorted(members, key=lambda r: (-_density(cweight[r], csize[r]),
                                           -cweight[r], r))
    return [f for r in roots for f in members[r]]


def pettis_hansen(funcs, weight, size, edges, calls=None):
    """Pettis and Hansen, "Profile guided code positioning": "closest is best".

    The graph is made undirected (a->b and b->a add up).  Taking edges from
    the heaviest down, the chains holding the two ends are joined, each
    possibly reversed: of the four ways, the one with the least
    weight x distance over all edges between the two chains, so that the
    edge just taken ends up with its ends adjacent where possible.  Chains
    are laid out by decreasing total weight.
    """
    funcs = sorted(funcs)
    sz = {f: max(size.get(f, 1), 1) for f in funcs}
    und = {}
    for (a, b), n in edges.items():
        if a == b or a not in sz or b not in sz:
            continue
        k = (a, b) if a < b else (b, a)
        und[k] = und.get(k, 0) + n
    chain_of = {f: f for f in funcs}
    chains = {f: [f] for f in funcs}

    def cost(seq, ca, cb):
        pos, off = {}, 0
        for f in seq:
            pos[f] = off + sz[f] / 2
            off += sz[f]
        total = 0
        for x in ca:
            for y in cb:
                k = (x, y) if x < y else (y, x)
                if k in und:
                    total += und[k] * abs(pos[x] - pos[y])
        return total

    for (a, b), _n in sorted(und.items(), key=lambda kv: (-kv[1], kv[0])):
        ra, rb = chain_of[a], chain_of[b]
        if ra == rb:
            continue
        ca, cb = chains[ra], chains[rb]
        options = [ca + cb, ca + cb[::-1], ca[::-1] + cb, ca[::-1] + cb[::-1]]
        best = min(options, key=lambda seq: cost(seq, ca, cb))   # first wins ties
        del chains[rb]
        chains[ra] = best
        for f in cb:
            chain_of[f] = ra

    def cweight(r):
        return sum(weight.get(f, 0) for f in chains[r])
    roots = sorted(chains, key=lambda r: (-cweight(r), r))
    return [f for r in roots for f in chains[r]]


def hotness(funcs, weight, size, edges, calls=None):
    """The hottest function first: what CORD's simplest mode and a plain
    "sort by samples" give.  Ignores the graph."""
    return sorted(funcs, key=lambda f: (-weight.get(f, 0), f))


ALGORITHMS = {'c3': c3, 'ph': pettis_hansen, 'hotness': hotness}
