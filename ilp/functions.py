# SPDX-License-Identifier: BSD-2-Clause
"""The data manipulation functions the ILP generator composes, each described
once (Ahlgren et al., Section V.A): block size, whether it produces output, the
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
 - pes (cachenet/pes.h, Ahlgren et al. Fig. 5 as listed): the last len % 8 bytes
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
             instructions per register, a_i of the model), chain (core
             cycles of the loop-carried dependency per register step, for
             model.py's overlap form; absent = 0: no state carried),
             accs (independent accumulators the step's {a} picks from,
             register r of a block using r % accs; absent = 1), iter
             (C run once per loop iteration or masked pass, before its
             steps, {nreg} = its registers; vector forms only)
  tail       C run on the last bytes (fewer than the composition's
             remainder granule) in place: p (unsigned char *), n (size_t)
  cipher     stream ciphers only (see below), else None
  zero_pad   True if the step may run on a register whose bytes past the
             message are zero (loaded byte-masked) and gives the message's
             bytes and the function's state exactly as on the message
             alone, leaving the zeros zero: copy, the checksum (zeros add
             nothing); 'rezero' if so but the bytes past the message come
             out nonzero, so that the generator masks them back to zero
             for the functions after it: the ciphers (byte-wise XOR with
             keystream). The AVX-512 forms of pipelines made only of such
             functions finish in byte-masked registers instead of 8-byte
             scalar granules and byte tails (ilpgen.py).

Stream ciphers (chacha20, aes128ctr; cachenet/crypto.h). The keystream is
not computed inside the step: the integrated loop asks the library for the
keystream of up to CN_ILP_KS_BYTES at a time (32 ChaCha20 blocks, 128 AES
blocks: the dispatched, vectorised cn_*_keystream()) into a buffer `ks` that
stays in L1, and the step XORs the matching keystream word into the data
register, beside the other functions' steps. `ks + ({off} - ks_base)` is
the keystream of the register's bytes ({off} is their offset in the
message, ks_base the offset ks starts at). The step itself is word-granular
(block 8), so the composition's LCM is not forced up to the cipher block;
the cipher block (cblock) only sets the keystream granule. The cipher
field holds:
  cblock     keystream block, bytes (64 ChaCha20, 16 AES)
  init       C declaring and initialising the cipher state (integrated
             forms), from the study key of the generated cn_ilp.h
  refill     C writing {nblk} keystream blocks to ks, advancing the state
  whole      C for the sequential pass: the library's whole-buffer kernel,
             in place on dst (what a stack running the cipher as its own
             layer calls)
The study keys (cn_ilp_study_*, cn_ilp_table.c) are fixed: RFC 8439 section
2.4.2's key and nonce with block counter 1, and SP 800-38A F.5.1's AES key
and initial counter block; every call starts from them.
"""

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass(eq=False)  # compared and hashed by identity, as before
class Fn:
    name: str
    block: int
    writes: bool
    state: int
    consts: int
    decl: str
    result: Any
    forms: dict
    tail: str
    doc: str
    cipher: Any = None
    zero_pad: bool = False


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
        doc='copy source to destination (load + store only)', zero_pad=True))

def _shuffle_forms(idx, shuf):
    """The AVX2 and AVX-512 forms of a byte permutation within each 16
    bytes: one vpshufb by the pattern SHUF, broadcast into constant IDX."""
    return {
        'avx2': dict(decl='const __m256i %s = _mm256_broadcastsi128_si256(_mm_setr_epi8(%s));' % (idx, shuf),
                     step='{x} = _mm256_shuffle_epi8({x}, %s);' % idx, ops=1),
        'avx512': dict(decl='const __m512i %s = _mm512_broadcast_i32x4(_mm_setr_epi8(%s));' % (idx, shuf),
                       step='{x} = _mm512_shuffle_epi8({x}, %s);' % idx, ops=1),
    }


# bswap32: reverse the bytes of each 32-bit word (cn_bswap32_step).
_SHUF32 = ('3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12')
_add(Fn('bswap32', block=4, writes=True, state=0, consts=0, decl='', result=None,
        forms={
            # bswap64 reverses all 8 bytes; rotating by 32 puts the two
            # words back in place, each reversed. Two instructions.
            'scalar': dict(step='{x} = __builtin_bswap64({x}); {x} = ({x} >> 32) | ({x} << 32);',
                           ops=2),
            **_shuffle_forms('bswap32_idx', _SHUF32),
        },
        tail='for (size_t k = 0; k + 4 <= n; k += 4) {\n'
             '\tuint32_t w;\n'
             '\t__builtin_memcpy(&w, p + k, 4);\n'
             '\tw = __builtin_bswap32(w);\n'
             '\t__builtin_memcpy(p + k, &w, 4);\n'
             '}',
        doc='reverse the bytes of every 32-bit word (cn_bswap32)'))

# bswap16: Ahlgren et al. Fig. 5's "BSWAP", the bytes of each 16-bit half swapped
# (cn_bswap16_step).
_SHUF16 = ('1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14')
_add(Fn('bswap16', block=2, writes=True, state=0, consts=1, decl='', result=None,
        forms={
            'scalar': dict(decl='const uint64_t bswap16_m = 0x00FF00FF00FF00FFull;',
                           step='{x} = (({x} & bswap16_m) << 8) | (({x} >> 8) & bswap16_m);',
                           ops=5),
            **_shuffle_forms('bswap16_idx', _SHUF16),
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
        doc='Abbott & Peterson pseudo-encryption, Ahlgren et al. Fig. 5 (cn_pes)'))

# csum: 64-bit words added with end-around carry; 2^64 = 1 (mod 0xffff),
# so this is the RFC 1071 sum of the 16-bit words, as stored (csum.h).
# Vector forms: per 64-bit lane, two accumulators, three instructions per
# register and a loop-carried chain of one add each:
#   csum_v  += x          (wraps mod 2^64)
#   csum_hv += x >> 32    (the high halves, exact below 2^32 registers)
# x = hi * 2^32 + lo, so csum_v - (csum_hv << 32) = sum of lo (mod 2^64,
# exact while that sum is below 2^64, i.e. below 2^32 registers), and the
# lane's sum of 32-bit halves is that plus csum_hv. Same value as adding
# (x & 0xffffffff) and (x >> 32) separately (four instructions, two adds
# chained per register), with one instruction and one cycle of chain less.
_add(Fn('csum', block=2, writes=False, state=1, consts=0,
        decl='uint64_t csum_acc = 0;', result='csum_acc',
        forms={
            'scalar': dict(step='csum_acc += {x}; csum_acc += csum_acc < {x};', ops=2, chain=2),
            'avx2': dict(decl='__m256i csum_v = _mm256_setzero_si256();\n'
                              '__m256i csum_hv = _mm256_setzero_si256();',
                         step='csum_v = _mm256_add_epi64(csum_v, {x});\n'
                              'csum_hv = _mm256_add_epi64(csum_hv, _mm256_srli_epi64({x}, 32));',
                         final='csum_acc = cn_ilp_addc(csum_acc, cn_ilp_hsum256(_mm256_add_epi64(\n'
                               '\t_mm256_sub_epi64(csum_v, _mm256_slli_epi64(csum_hv, 32)), csum_hv)));',
                         ops=3, chain=1),
            'avx512': dict(decl='__m512i csum_v = _mm512_setzero_si512();\n'
                                '__m512i csum_hv = _mm512_setzero_si512();',
                           step='csum_v = _mm512_add_epi64(csum_v, {x});\n'
                                'csum_hv = _mm512_add_epi64(csum_hv, _mm512_srli_epi64({x}, 32));',
                           final='csum_acc = cn_ilp_addc(csum_acc, cn_ilp_hsum512(_mm512_add_epi64(\n'
                                 '\t_mm512_sub_epi64(csum_v, _mm512_slli_epi64(csum_hv, 32)), csum_hv)));',
                           ops=3, chain=1),
        },
        # Fewer than 8 bytes at an even offset: zero padding adds nothing.
        tail='{\n'
             '\tuint64_t t = 0;\n'
             '\t__builtin_memcpy(&t, p, n);\n'
             '\tcsum_acc = cn_ilp_addc(csum_acc, t);\n'
             '}',
        doc='Internet checksum partial sum of the data (cn_csum_partial)', zero_pad=True))


# csum, AVX-512 VNNI form, for pipelines whose other work occupies the
# vector pipes the add/shift/add form needs (the inline AES-CTR step: see
# _AES_INLINE's csum_form). One XOR and one VPDPWSSD per register: the XOR
# makes every 16-bit word w the signed value w - 32768, the dot product with
# ones adds a lane's two words into its 32-bit accumulator, so a register
# adds exactly its 32 words minus 2^20, given back at the end from the step
# count. A lane moves by at most 2^16 per step; every 2^14 steps (1 MB) the
# lanes are sign-extended into 64-bit ones, so any length stays exact.
# Measured by hand-editing the generated copy+aes128ctr+csum AVX-512 loop:
# 1.06x the cipher alone at 16 and 64 KB against 1.19-1.20x
# with the add/shift/add form in the same run; without the checksum 1.00x.
#
# Any vector work costs here: in a 4-register AES loop written in inline
# assembly (TSC ticks per iteration) two more operations per
# register took it from 12.0 to 14.0 (XOR + VPDPWSSD), 14.7 (AND + VPADDQ),
# 14.4 (VPSRLQ + VPADDQ). Tried and not kept: summing each 512-byte block
# on the idle integer side instead (ADCX/ADOX chains, 64-bit loads of the
# destination) L blocks after it was stored, the last L in this form.
# 64 KB hot: 0.0520 -> 0.0484 TSC/B at L = 1 (1.03x the cipher alone), but
# flushed 0.140 -> 0.178 (loads of lines whose stores still wait for their
# RFO hold up retirement), and at L = 16-32 hot only 0.050-0.051 while
# flushed stayed 0-6% and L3 4-20% slower. Loads of the block just stored
# ran at 1.5x: a 64-bit load from a 512-bit store in flight is not
# forwarded.
CSUM_VNNI_AVX512 = dict(
    decl='__m512i csum_d0 = _mm512_setzero_si512();\n'
         '__m512i csum_d1 = _mm512_setzero_si512();\n'
         '__m512i csum_w = _mm512_setzero_si512();\n'
         'uint64_t csum_nb = 0, csum_wnb = 0;\n'
         'const __m512i csum_bias = _mm512_set1_epi16((short)0x8000);\n'
         'const __m512i csum_ones = _mm512_set1_epi16(1);',
    # once per loop iteration (or masked pass) of {nreg} registers: widen
    # first if the steps since the last widening would pass 2^14, then
    # count the iteration's registers (the bias given back at the end);
    # per register, the count and its test cost ~3% of the AES loop at
    # 1460 B (hand-edited loop in a harness)
    iter='if (__builtin_expect(csum_nb - csum_wnb > 16384 - {nreg}, 0)) {\n'
         '\tcsum_w = cn_ilp_vnni_widen(csum_w, _mm512_add_epi32(csum_d0, csum_d1));\n'
         '\tcsum_d0 = csum_d1 = _mm512_setzero_si512();\n'
         '\tcsum_wnb = csum_nb;\n'
         '}\n'
         'csum_nb += {nreg};',
    step='csum_d{a} = _mm512_dpwssd_epi32(csum_d{a}, _mm512_xor_si512({x}, csum_bias), csum_ones);',
    # d0 + d1 in 32 bits is exact: between widenings the two hold at most
    # 2^14 steps together, each moving a lane by at most 2^16, so their
    # sum stays within [-2^30, 2^30]; one widening at the end, not two
    final='csum_acc = cn_ilp_addc(csum_acc, cn_ilp_hsum512(cn_ilp_vnni_widen(\n'
          '\tcsum_w, _mm512_add_epi32(csum_d0, csum_d1))) + (csum_nb << 20));',
    accs=2, ops=2, chain=1, features='CN_CPU_AVX512VNNI')


# chacha20 / aes128ctr: out = in ^ keystream, the keystream from the library
# (see the module comment). One XOR per register plus the keystream load.
def _cipher(name, cblock, init, refill, whole, doc, inline=None):
    f = Fn(name, block=8, writes=True, state=0, consts=0, decl='', result=None,
              forms={
                  'scalar': dict(step='{x} ^= cn_ilp_ld64(ks + ({off} - ks_base));', ops=1),
                  'avx2': dict(step='{x} = _mm256_xor_si256({x}, _mm256_load_si256('
                                    '(const __m256i *)(const void *)(ks + ({off} - ks_base))));',
                               ops=1),
                  'avx512': dict(step='{x} = _mm512_xor_si512({x}, _mm512_load_si512('
                                      '(const void *)(ks + ({off} - ks_base))));',
                                 ops=1),
              },
              tail='for (size_t k = 0; k < n; k++)\n'
                   '\tp[k] ^= ks[i - ks_base + k];',
              doc=doc,
              cipher=dict(cblock=cblock, init=init, refill=refill, whole=whole),
              zero_pad='rezero')
    # inline[isa]: the keystream computed in the step itself (decl, step,
    # sync = write the counter back to the state after the main loop,
    # features = CN_CPU_* bits the kernel needs beyond the isa's)
    for isa, d in (inline or {}).items():
        f.forms[isa] = dict(d, inline=True)
    return f


_add(_cipher('chacha20', 64,
             init='struct cn_chacha20 chacha20_st;\n'
                  'cn_chacha20_init(&chacha20_st, cn_ilp_study_key, cn_ilp_study_nonce, 1);',
             refill='cn_chacha20_keystream(&chacha20_st, ks, {nblk});',
             whole='(void)cn_chacha20_xor(cn_ilp_study_key, cn_ilp_study_nonce, 1, dst, dst, len);',
             doc='ChaCha20 (RFC 8439), study key, counter 1 (cn_chacha20_xor)'))

_AES_REV = '15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0'
# AVX-512 + VAES: the keystream never leaves registers. aes_ctr holds the
# next four counter blocks as 128-bit little-endian integers (low qword
# first), advanced by 4 (a 64-bit add) per register; one byte reversal per 128-bit lane gives the big-endian counter blocks, ten
# rounds (round keys broadcast once) their keystream, one XOR the cipher.
# The rounds are emitted round by round across the block's registers
# (block_step), so that every round has as many independent VAESENC ready
# as there are registers (the library's cn_aes128ctr_xor_vaes does the
# same with eight): written register by register, each register's chain of
# ten dependent rounds filled the scheduler and the loop ran at 1.5x the
# library's time. The generator unrolls this loop to four registers
# (256 B) and follows it with a one-register loop; the last bytes (fewer
# than 64) take one more register of keystream through a 64-byte ks, so no
# library call is made at all.
#
# No carry from the low into the high qword: the counter always starts at
# the study IV (every call does), whose low qword is more than 2^56 blocks
# from wrapping, and a kernel's length is below 2^33 bytes (cn_ilp.h), so
# it cannot wrap within a call. aes_no_wrap_check() verifies that at
# generation time; a different IV would need the carry back.
AES_MAX_BLOCKS = (1 << 33) // 16 + 8


def aes_no_wrap_check(iv):
    lo = int.from_bytes(iv[8:16], 'big')
    if lo + AES_MAX_BLOCKS >= 1 << 64:
        raise ValueError('the study IV\'s low qword can wrap within a call: '
                         'the inline AES-CTR step has no carry')


def _aes_block_step(xs):
    """Round-major AES-CTR of the registers xs (each 64 B = four blocks):
    (keystream, [apply to xs[r]]). The generator emits the keystream part
    before the block's loads, so no data register is live across the rounds
    (eight registers, 8 data + 8 keystream + 11 round keys, spilled
    otherwise), and each apply where its register is loaded (in the masked
    remainder, one register at a time)."""
    n = len(xs)
    ks = ['/* counter blocks of the %d register%s, big-endian, XORed with round key 0 */'
          % (n, 's' if n > 1 else '')]
    for r in range(n):
        ks.append('__m512i k%d = _mm512_xor_si512(_mm512_shuffle_epi8(aes_ctr, aes_rev), aes_rk0);'
                  % r)
        ks.append('aes_ctr = _mm512_add_epi64(aes_ctr, aes_inc);')
    for rnd in range(1, 10):
        ks.append(' '.join('k%d = _mm512_aesenc_epi128(k%d, aes_rk%d);' % (r, r, rnd)
                           for r in range(n)))
    ks.append(' '.join('k%d = _mm512_aesenclast_epi128(k%d, aes_rk10);' % (r, r)
                       for r in range(n)))
    apply = ['%s = _mm512_xor_si512(%s, k%d);' % (x, x, r) for r, x in enumerate(xs)]
    return '\n'.join(ks), apply


_AES_INLINE = dict(
    features='CN_CPU_VAES',
    csum_form=CSUM_VNNI_AVX512,
    decl='const __m512i aes_rev = _mm512_broadcast_i32x4(_mm_setr_epi8(%s));\n'
         'const __m512i aes_inc = _mm512_setr_epi64(4, 0, 4, 0, 4, 0, 4, 0);\n'
         '%s\n'
         '/* the IV as a little-endian 128-bit integer in every lane, plus 0..3 */\n'
         '__m512i aes_ctr = _mm512_add_epi64(_mm512_broadcast_i32x4(_mm_set_epi64x(\n'
         '\t(long long)__builtin_bswap64(cn_ilp_ld64(cn_ilp_study_aes_iv)),\n'
         '\t(long long)__builtin_bswap64(cn_ilp_ld64(cn_ilp_study_aes_iv + 8)))),\n'
         '\t_mm512_setr_epi64(0, 0, 1, 0, 2, 0, 3, 0));' % (_AES_REV, '\n'.join(
             'const __m512i aes_rk%d = _mm512_broadcast_i32x4(_mm_loadu_si128('
             '(const __m128i *)(const void *)cn_ilp_study_aes_sched.rk[%d]));' % (k, k)
             for k in range(11))),
    block_step=_aes_block_step,
    ops=14, chain=1)


_add(_cipher('aes128ctr', 16,
             init='struct cn_aes128ctr aes128ctr_st;\n'
                  'aes128ctr_st.key = cn_ilp_study_aes_sched;\n'
                  '__builtin_memcpy(aes128ctr_st.ctr, cn_ilp_study_aes_iv, 16);',
             refill='cn_aes128ctr_keystream(&aes128ctr_st, ks, {nblk});',
             whole='(void)cn_aes128ctr_xor(&cn_ilp_study_aes_sched, cn_ilp_study_aes_iv, dst, dst, len);',
             doc='AES-128-CTR (SP 800-38A), study key and counter (cn_aes128ctr_xor)',
             inline={'avx512': _AES_INLINE}))


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
    'copy,chacha20,csum',
    'chacha20,csum',
    'chacha20',
    'copy,aes128ctr,csum',
    'aes128ctr,csum',
    'aes128ctr',
]


# ------------------------------------------------------------ study keys

def _gf_mul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        a = ((a << 1) ^ 0x11B) if a & 0x80 else (a << 1)
        b >>= 1
    return r


def _aes_sbox():
    # FIPS-197 5.1.1: multiplicative inverse in GF(2^8), then the affine map.
    box = []
    for x in range(256):
        inv = next((y for y in range(1, 256) if _gf_mul(x, y) == 1), 0)
        b = inv
        for k in range(1, 5):
            b ^= ((inv << k) | (inv >> (8 - k))) & 0xFF
        box.append(b ^ 0x63)
    return box


def aes128_expand(key):
    """FIPS-197 5.2 key expansion: 176 bytes, round key i at 16i."""
    sbox = _aes_sbox()
    w = [list(key[4 * k:4 * k + 4]) for k in range(4)]
    rcon = 1
    for k in range(4, 44):
        t = list(w[k - 1])
        if k % 4 == 0:
            t = [sbox[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = _gf_mul(rcon, 2)
        w.append([a ^ b for a, b in zip(w[k - 4], t)])
    return bytes(b for word in w for b in word)


STUDY_KEY = bytes(range(32))                                    # RFC 8439 2.4.2
STUDY_NONCE = bytes.fromhex('000000000000004a00000000')         # RFC 8439 2.4.2
STUDY_AES_KEY = bytes.fromhex('2b7e151628aed2a6abf7158809cf4f3c')  # SP 800-38A F.5.1
STUDY_AES_IV = bytes.fromhex('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff')   # SP 800-38A F.5.1
