# SPDX-License-Identifier: BSD-2-Clause
"""Synthetic data manipulation functions (Ahlgren et al., Section V.B).

A synthetic function is made from Ahlgren's parameters: s state words, a
computation instructions per block, an 8-byte (one scalar word) or 64-byte
(one AVX-512 register) block, with or without output. It does nothing
useful, but its register demand is exactly what the parameters say:

 - every state word is read and written once per block (s_j += x), so a
   spilled state word costs one load and one store per block, the "2" of
   equation (1);
 - the state words start from constants distinct within and across
   functions and are all folded into the return value, so the compiler can
   neither merge two of them nor drop one;
 - the computation instructions alternate passes over the state:
   s_j += x for every j, then x ^= s_j for every j, and so on until a
   instructions are emitted (at least s, so every word is updated);
 - with s = 0 the instructions are x += <imm32>, each followed by an empty
   asm that hides x's value, so consecutive additions cannot be folded;
 - a function without output ends on a state update, so none of its
   instructions is dead.
Check the assembly (README.md: objdump of libcn_ilp) for spills as s grows.
"""

from functions import Fn

# Distinct odd 32-bit constants (sign-extended immediates on x86-64).
_IMM = [0x2545F491, 0x1B873593, 0x27D4EB2F, 0x165667B1, 0x61C88647,
        0x7FEB352D, 0x346B3E4B, 0x5BD1E995, 0x1F3D5B79, 0x68E31DA4]


def _ops(a, s, out):
    """(kind, j) list: 'add' s_j += x, 'xor' x ^= s_j, 'imm' x += K_j."""
    if s == 0:
        return [('imm', k % len(_IMM)) for k in range(a)]
    n = max(a, s)
    ops = []
    for k in range(n):
        j = k % s
        ops.append(('add' if (k // s) % 2 == 0 else 'xor', j))
    if not out and ops[-1][0] != 'add':
        ops[-1] = ('add', ops[-1][1])
    return ops


def chain(ops):
    """Loop-carried dependency per block, in instructions of latency 1 (add,
    xor, and their vector forms): the longest path from a state word at the
    start of a block to a state word at its end. The data word is loaded
    fresh every block, so paths through it alone carry nothing over."""
    NONE = float('-inf')
    depth, x = {}, NONE
    for kind, j in ops:
        if kind == 'add':
            depth[j] = max(depth.get(j, 0), x) + 1
        elif kind == 'xor':
            x = max(x, depth.get(j, 0)) + 1
        else:
            x = x + 1
    return max(depth.values(), default=0)


def xpath(ops):
    """The block's own dependency path through this function, in
    instructions of latency 1, counted from the data word's arrival:
    (dx, depth) = how much later the data word leaves the function than it
    came in, and how late its last instruction completes (the state
    updates s_j += x hang off the data word; state from the previous
    block is taken as ready). model.py adds these along a pipeline for the
    path an iteration holds the out-of-order window for."""
    NONE = float('-inf')
    depth, x = {}, 0
    for kind, j in ops:
        if kind == 'add':
            depth[j] = max(depth.get(j, NONE), x) + 1
        elif kind == 'xor':
            x = max(x, depth.get(j, 0)) + 1
        else:
            x = x + 1
    return x, max([x] + list(depth.values()))


# The vector forms' instructions: register type, 64-bit lane add, XOR,
# broadcast, the lane sum, and the s = 0 step, one instruction of latency 1
# that needs no constant register and keeps every bit (AVX-512: a lane
# rotate by 1 + j; AVX2, which has no rotate: a permutation of the 32-bit
# halves, one per j).
_SHUF = [0xB1, 0x4E, 0x1B, 0x39, 0x93, 0x6C, 0xD8, 0x72, 0x8D, 0xC6]
VEC = {
    'avx2': dict(type='__m256i', add='_mm256_add_epi64', xor='_mm256_xor_si256',
                 set1='_mm256_set1_epi64x', hsum='cn_ilp_hsum256',
                 imm=lambda x, j: '%s = _mm256_shuffle_epi32(%s, 0x%02x);' % (x, x, _SHUF[j])),
    'avx512': dict(type='__m512i', add='_mm512_add_epi64', xor='_mm512_xor_si512',
                   set1='_mm512_set1_epi64', hsum='cn_ilp_hsum512',
                   imm=lambda x, j: '%s = _mm512_ror_epi64(%s, %d);' % (x, x, 1 + j)),
}


def _vector_form(f, ops, s, out, isa):
    """The isa's form of synthetic function f (VEC[isa]): the same ops on
    64-bit lanes, the state in one register per word, reduced to the scalar
    state words at the end (the scalar steps take the remainder)."""
    V = VEC[isa]
    xs = '{x}' if out else f + '_t'
    vc = [] if out else ['%s %s = {x};' % (V['type'], xs)]
    for kind, j in ops:
        sj = '%s_s%dv' % (f, j)
        if kind == 'add':
            vc.append('%s = %s(%s, %s);' % (sj, V['add'], sj, xs))
        elif kind == 'xor':
            vc.append('%s = %s(%s, %s);' % (xs, V['xor'], xs, sj))
        else:
            vc.append('%s CN_ILP_OPAQUE_V(%s);' % (V['imm'](xs, j), xs))
    vdecl = ' '.join('%s %s_s%dv = %s((long long)%s_s%d);' % (V['type'], f, j, V['set1'], f, j)
                     for j in range(s))
    vfinal = ' '.join('%s_s%d = %s(%s_s%dv);' % (f, j, V['hsum'], f, j) for j in range(s))
    return dict(decl=vdecl, step='\n'.join(vc), final=vfinal, ops=len(ops), chain=chain(ops),
                xpath=xpath(ops))


def synth_fn(idx, s, a, out=True):
    """Fn for synthetic function number idx (names syn<idx>_*)."""
    f = 'syn%d' % idx
    ops = _ops(a, s, out)
    sc = []
    # A function without output works on a copy of the data register.
    xs = '{x}' if out else f + '_t'
    if not out:
        sc.append('uint64_t %s = {x};' % xs)
    for kind, j in ops:
        sj = '%s_s%d' % (f, j)
        if kind == 'add':
            sc.append('%s += %s;' % (sj, xs))
        elif kind == 'xor':
            sc.append('%s ^= %s;' % (xs, sj))
        else:
            sc.append('%s += 0x%x; CN_ILP_OPAQUE_R(%s);' % (xs, _IMM[j], xs))
    # Initial values and result multipliers distinct across functions too:
    # with the same ones, functions whose steps coincide (s >= a: every
    # instruction is s_j += x, x unchanged) computed identical state, which
    # gcc merged into one function's worth (n = 6, s = 10 ran as fast as
    # n = 1), and equal words cancelled in the XOR of the result.
    decl = ' '.join('uint64_t %s_s%d = 0x%xull;' % (
        f, j, 0x9E3779B97F4A7C15 * (64 * idx + j + 1) & (2**64 - 1))
                    for j in range(s))
    res = ' ^ '.join('(%s_s%d * 0x%xull)' % (f, j, 2 * (64 * idx + j) + 3)
                     for j in range(s)) or None
    forms = {'scalar': dict(step='\n'.join(sc), ops=len(ops), chain=chain(ops), xpath=xpath(ops))}
    for isa in VEC:
        forms[isa] = _vector_form(f, ops, s, out, isa)
    return Fn(f, block=8, writes=out, state=s, consts=0, decl=decl, result=res,
              forms=forms,
              tail='(void)p; (void)n; /* whole words only */',
              doc='synthetic: %d state words, %d instructions, %s output'
              % (s, len(ops), 'with' if out else 'no'))


def parse_spec(spec):
    """'syn:n=3,s=4,a=10[,out=1110][,copy=1]' -> (name, [Fn], copy)."""
    assert spec.startswith('syn:'), spec
    kv = dict(p.split('=') for p in spec[4:].split(','))
    n = int(kv['n'])

    def per_fn(key):
        # one value for all functions, or one per function: s=0/0/1
        v = [int(t) for t in kv[key].split('/')]
        if len(v) == 1:
            v = v * n
        if len(v) != n:
            raise ValueError('%s needs 1 or %d values in %r' % (key, n, spec))
        return v

    ss, aa = per_fn('s'), per_fn('a')
    outs = kv.get('out', '1' * n)
    if len(outs) != n:
        raise ValueError('out needs %d digits in %r' % (n, spec))
    copy = kv.get('copy', '0') == '1'
    fns = [synth_fn(i, ss[i], aa[i], outs[i] == '1') for i in range(n)]
    name = 'syn.n%d.s%s.a%s' % (n, kv['s'].replace('/', '_'), kv['a'].replace('/', '_'))
    if 'out' in kv:
        name += '.o' + outs
    if copy:
        name = 'copy+' + name
    return name, fns, copy
