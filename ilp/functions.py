# SPDX-License-Identifier: BSD-2-Clause
"""The data manipulation functions the ILP generator composes, each described
once (seed 003 Section V.A): block size, whether it produces output, the
state it keeps between blocks, and its per-block step in every form.

A step transforms (or consumes) one register of message data named {x}:
 - scalar: uint64_t, 8 bytes, two 32-bit words (little-endian: the word at
   the lower address is the low half);
 - avx2:   __m256i, 32 bytes;
 - avx512: __m512i, 64 bytes.
Steps are written with explicit operations (intrinsics in the vector forms)
so that the instruction mix is ours, never the auto-vectorizer's: the
generated files are compiled with vectorization switched off.

Every function must match the library's whole-buffer kernel byte for byte
(tests/unit/test_ilp.c composes those by hand), tails included:
 - bswap32 (cachenet/bswap.h): the last len % 4 bytes are left unchanged;
 - bswap16: an odd last byte is left unchanged;
 - pes (cachenet/pes.h, seed 003 Fig. 5 as listed): the last len % 8 bytes
   are left unchanged; both output words are (w0 | w1) & 0xF0F0F0F0;
 - csum (cachenet/csum.h): an unfolded ones'-complement sum, as stored.

Field meanings (all strings are C; '{x}' is the data register):
  block      bytes per block (b_i^in; output block equals input or is 0)
  writes     True if the function changes the data (b_i^out != 0)
  state      state words kept across blocks in the scalar form (s_i), for
             the model; constants are counted separately in consts
  decl       scalar declarations, always present (the scalar state is the
             function's canonical state; vector forms reduce into it)
  result     C expression of the function's result (or None)
  forms      per form: decl (vector state/constants), step, final (reduce
             vector state into the scalar state), ops (computation
             instructions per register, a_i of the model)
  tail       C run on the last bytes (fewer than the composition's
             remainder granule) in place: p (unsigned char *), n (size_t)
"""

from collections import OrderedDict


class Fn:
    def __init__(self, name, block, writes, state, consts, decl, result,
                 forms, tail, doc):
        self.name = name
        self.block = block
        self.writes = writes
        self.state = state
        self.consts = consts
        self.decl = decl
        self.result = result
        self.forms = forms
        self.tail = tail
        self.doc = doc


FUNCS = OrderedDict()


def _add(fn):
    FUNCS[fn.name] = fn


# copy: the load from the source and the store to the destination are the
# composition's; the function itself computes nothing. It must come first:
# the functions after it work on the destination.
_add(Fn('copy', block=1, writes=True, state=0, consts=0, decl='', result=None,
        forms={
            'scalar': dict(step='', ops=0),
            'avx2': dict(step='', ops=0),
            'avx512': dict(step='', ops=0),
        },
        tail='',  # the generator copies the tail before any function's tail
        doc='copy source to destination (load + store only)'))

# bswap32: reverse the bytes of each 32-bit word (cn_bswap32_step).
_SHUF32 = ('3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12')
_add(Fn('bswap32', block=4, writes=True, state=0, consts=0, decl='', result=None,
        forms={
            # bswap64 reverses all 8 bytes; rotating by 32 puts the two
            # words back in place, each reversed. Two instructions.
            'scalar': dict(step='{x} = __builtin_bswap64({x}); {x} = ({x} >> 32) | ({x} << 32);',
                           ops=2),
            'avx2': dict(decl='const __m256i bswap32_idx = _mm256_broadcastsi128_si256(_mm_setr_epi8(%s));' % _SHUF32,
                         step='{x} = _mm256_shuffle_epi8({x}, bswap32_idx);', ops=1),
            'avx512': dict(decl='const __m512i bswap32_idx = _mm512_broadcast_i32x4(_mm_setr_epi8(%s));' % _SHUF32,
                           step='{x} = _mm512_shuffle_epi8({x}, bswap32_idx);', ops=1),
        },
        tail='for (size_t k = 0; k + 4 <= n; k += 4) {\n'
             '\tuint32_t w;\n'
             '\t__builtin_memcpy(&w, p + k, 4);\n'
             '\tw = __builtin_bswap32(w);\n'
             '\t__builtin_memcpy(p + k, &w, 4);\n'
             '}',
        doc='reverse the bytes of every 32-bit word (cn_bswap32)'))

# bswap16: seed 003 Fig. 5's "BSWAP", the bytes of each 16-bit half swapped
# (cn_bswap16_step).
_SHUF16 = ('1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14')
_add(Fn('bswap16', block=2, writes=True, state=0, consts=1, decl='', result=None,
        forms={
            'scalar': dict(decl='const uint64_t bswap16_m = 0x00FF00FF00FF00FFull;',
                           step='{x} = (({x} & bswap16_m) << 8) | (({x} >> 8) & bswap16_m);',
                           ops=5),
            'avx2': dict(decl='const __m256i bswap16_idx = _mm256_broadcastsi128_si256(_mm_setr_epi8(%s));' % _SHUF16,
                         step='{x} = _mm256_shuffle_epi8({x}, bswap16_idx);', ops=1),
            'avx512': dict(decl='const __m512i bswap16_idx = _mm512_broadcast_i32x4(_mm_setr_epi8(%s));' % _SHUF16,
                           step='{x} = _mm512_shuffle_epi8({x}, bswap16_idx);', ops=1),
        },
        tail='for (size_t k = 0; k + 2 <= n; k += 2) {\n'
             '\tunsigned char t = p[k];\n'
             '\tp[k] = p[k + 1];\n'
             '\tp[k + 1] = t;\n'
             '}',
        doc='swap the bytes of every 16-bit unit (Fig. 5 BSWAP, cn_bswap16)'))

# pes: Fig. 5 as listed (cachenet/pes.h): both words of a pair become
# (w0 & M) | (w1 & M) = (w0 | w1) & M. With the pair in one 64-bit lane,
# the swapped pair y has y.lo = x.hi and y.hi = x.lo, so out = (x | y) & M
# in both halves at once.
_add(Fn('pes', block=8, writes=True, state=0, consts=1, decl='', result=None,
        forms={
            'scalar': dict(decl='const uint64_t pes_m = 0xF0F0F0F0F0F0F0F0ull;',
                           step='{x} = ({x} | (({x} >> 32) | ({x} << 32))) & pes_m;',
                           ops=3),
            'avx2': dict(decl='const __m256i pes_mv = _mm256_set1_epi32((int)0xF0F0F0F0);',
                         step='{x} = _mm256_and_si256(_mm256_or_si256({x}, _mm256_shuffle_epi32({x}, 0xB1)), pes_mv);',
                         ops=3),
            # vpternlog 0xA8 = (a | b) & c in one instruction.
            'avx512': dict(decl='const __m512i pes_mv = _mm512_set1_epi32((int)0xF0F0F0F0);',
                           step='{x} = _mm512_ternarylogic_epi32({x}, _mm512_shuffle_epi32({x}, _MM_PERM_CDAB), pes_mv, 0xA8);',
                           ops=2),
        },
        tail='(void)p; (void)n; /* an unpaired word and the bytes after it stay */',
        doc='Abbott & Peterson pseudo-encryption, seed 003 Fig. 5 (cn_pes)'))

# csum: 64-bit words added with end-around carry; 2^64 = 1 (mod 0xffff),
# so this is the RFC 1071 sum of the 16-bit words, as stored (csum.h). The
# vector forms add the two 32-bit halves of each 64-bit lane into 64-bit
# lanes (no carry can be lost below 2^32 iterations), then reduce.
_add(Fn('csum', block=2, writes=False, state=1, consts=0,
        decl='uint64_t csum_acc = 0;', result='csum_acc',
        forms={
            'scalar': dict(step='csum_acc += {x}; csum_acc += csum_acc < {x};', ops=2),
            'avx2': dict(decl='__m256i csum_v = _mm256_setzero_si256();\n'
                              'const __m256i csum_lo = _mm256_set1_epi64x(0xffffffff);',
                         step='csum_v = _mm256_add_epi64(csum_v, _mm256_and_si256({x}, csum_lo));\n'
                              'csum_v = _mm256_add_epi64(csum_v, _mm256_srli_epi64({x}, 32));',
                         final='csum_acc = cn_ilp_addc(csum_acc, cn_ilp_hsum256(csum_v));',
                         ops=4),
            'avx512': dict(decl='__m512i csum_v = _mm512_setzero_si512();\n'
                                'const __m512i csum_lo = _mm512_set1_epi64(0xffffffff);',
                           step='csum_v = _mm512_add_epi64(csum_v, _mm512_and_si512({x}, csum_lo));\n'
                                'csum_v = _mm512_add_epi64(csum_v, _mm512_srli_epi64({x}, 32));',
                           final='csum_acc = cn_ilp_addc(csum_acc, cn_ilp_hsum512(csum_v));',
                           ops=4),
        },
        # Fewer than 8 bytes at an even offset: zero padding adds nothing.
        tail='{\n'
             '\tuint64_t t = 0;\n'
             '\t__builtin_memcpy(&t, p, n);\n'
             '\tcsum_acc = cn_ilp_addc(csum_acc, t);\n'
             '}',
        doc='Internet checksum partial sum of the data (cn_csum_partial)'))


# Pipelines built by default, and the ones that need the crypto module.
PIPELINES = [
    'copy,bswap32,pes,csum',
    'bswap32,pes,csum',
    'copy,bswap16,pes,csum',
    'bswap16,pes,csum',
    'copy,csum',
    'copy,bswap32',
    'bswap32',
    'pes',
    'csum',
]
