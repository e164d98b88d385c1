/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX2: eight blocks (512 bytes) per pass, one state word of the
 * eight blocks per YMM register ("vertical" layout, chacha20_x8.h); the
 * last 385-511 bytes take one more such pass into a keystream buffer, and
 * up to 384 bytes take one to three pairs of blocks in the horizontal
 * layout (chacha20_h).
 *
 * The eight-block pass's rounds are one asm statement per double round,
 * because the register budget is exact: the 16 state words and the two
 * temporaries of the shift-and-OR rotations need 18 YMM registers, AVX2
 * has 16. Words 10 and 11 (two of the c row) live in a 64-byte stack slot,
 * each quarter round reading them as a VPADDD memory operand and storing
 * the sum back (two 32-byte stores per quarter round); the other 14 words
 * stay in registers for all ten double rounds, and the rotation constants
 * are memory operands. Each half round issues the four independent
 * quarter rounds step by step (a += b; d ^= a; d <<<= 16 for all four,
 * then c += d; b ^= c; b <<<= 12 for all four, ...), so four dependency
 * chains are in flight at once. Compiled C with the same structure let
 * the compiler choose what to spill, and it spilled the chains' operands
 * (loads and stores on every step); two or three groups of eight blocks
 * interleaved, which the previous form of this file did, hide latency
 * but spill 32 or 48 words.
 *
 * Figures, against OpenSSL's AVX2 path: docs/performance.md, Ciphers.
 *
 * Compiled with -mavx2 -mbmi -mbmi2 (src/meson.build); crypto.c requires
 * exactly those features.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "chacha20_x8.h"

/*
 * Up to 2 * ns blocks (ns <= 3, a constant after inlining): "horizontal"
 * layout, each register one row of the 4x4 state for two blocks (the
 * lower block in the low 128-bit lane), ns such pairs side by side; the
 * diagonal rounds rotate rows b, c, d within each lane (VPSHUFD). The
 * state is 4 * ns registers, so nothing spills, and ns pairs give ns
 * independent chains; below 385 bytes this beats a whole eight-block
 * pass.
 */
static inline __attribute__((always_inline)) void
chacha20_h(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	   size_t len, const int ns)
{
	CN_X8_ROT_CONSTS;
	const __m256i a0 = _mm256_setr_epi32((int)CN_CHACHA_C0, (int)CN_CHACHA_C1, (int)CN_CHACHA_C2,
					     (int)CN_CHACHA_C3, (int)CN_CHACHA_C0, (int)CN_CHACHA_C1,
					     (int)CN_CHACHA_C2, (int)CN_CHACHA_C3);
	const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)&st->key[0]));
	const __m256i c0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)&st->key[4]));
	__m256i a[3], b[3], c[3], d[3], d0[3];
	uint8_t ks[384] __attribute__((aligned(32)));

	for (int j = 0; j < ns; j++) {
		d0[j] = _mm256_setr_epi32((int)(counter + 2 * j), (int)st->nonce[0],
					  (int)st->nonce[1], (int)st->nonce[2],
					  (int)(counter + 2 * j + 1), (int)st->nonce[0],
					  (int)st->nonce[1], (int)st->nonce[2]);
		a[j] = a0, b[j] = b0, c[j] = c0, d[j] = d0[j];
	}
	/* Quarter rounds of all ns pairs, then rows a, c, d of each
	 * shuffled within their lanes by the VPSHUFD immediates ia, ic, id
	 * (a macro: they must be constants, also at -O0). */
#define CN_H_HALF_ROUND(ia, ic, id)                                              \
	do {                                                                     \
		for (int j = 0; j < ns; j++)                                     \
			CN_X8_QR(a[j], b[j], c[j], d[j]);                        \
		for (int j = 0; j < ns; j++) {                                   \
			a[j] = _mm256_shuffle_epi32(a[j], ia);                   \
			c[j] = _mm256_shuffle_epi32(c[j], ic);                   \
			d[j] = _mm256_shuffle_epi32(d[j], id);                   \
		}                                                                \
	} while (0)
	/* Diagonals: rows a, c, d rotated against b (right by 1, left by 1,
	 * by 2), not b, c, d against a: b is the last word a quarter round
	 * computes, a, c and d are ready earlier, so their shuffles stay off
	 * the chain (one cycle a half round). */
	for (int i = 0; i < 10; i++) {
		CN_H_HALF_ROUND(0x93, 0x39, 0x4e); /* columns, then into diagonals */
		CN_H_HALF_ROUND(0x39, 0x93, 0x4e); /* diagonals, then back */
	}
#undef CN_H_HALF_ROUND
	for (int j = 0; j < ns; j++) {
		__m256i x = _mm256_add_epi32(a[j], a0), y = _mm256_add_epi32(b[j], b0);
		__m256i z = _mm256_add_epi32(c[j], c0), w = _mm256_add_epi32(d[j], d0[j]);
		uint8_t *k = ks + 128 * j;
		/* block 2j: the low lanes of the rows, block 2j + 1 the high */
		_mm256_store_si256((__m256i *)k, _mm256_permute2x128_si256(x, y, 0x20));
		_mm256_store_si256((__m256i *)(k + 32), _mm256_permute2x128_si256(z, w, 0x20));
		_mm256_store_si256((__m256i *)(k + 64), _mm256_permute2x128_si256(x, y, 0x31));
		_mm256_store_si256((__m256i *)(k + 96), _mm256_permute2x128_si256(z, w, 0x31));
	}
	cn__x8_xor_ks(out, in, ks, len);
}

/* The last len <= 384 bytes: 1, 2 or 3 pairs of blocks, the fewest that
 * cover them. */
static __attribute__((noinline)) void chacha20_small(const struct cn_chacha20 *st,
						     uint32_t counter, const uint8_t *in,
						     uint8_t *out, size_t len)
{
	if (len <= 128)
		chacha20_h(st, counter, in, out, len, 1);
	else if (len <= 256)
		chacha20_h(st, counter, in, out, len, 2);
	else
		chacha20_h(st, counter, in, out, len, 3);
}

/* AT&T operand order: op src2, src1, dst. */
#define X8A_ADD(d, s) "vpaddd %[" #s "], %[" #d "], %[" #d "]\n\t"
#define X8A_XOR(d, s) "vpxor %[" #s "], %[" #d "], %[" #d "]\n\t"
#define X8A_SHUF(d, k) "vpshufb " k ", %[" #d "], %[" #d "]\n\t"
#define X8A_ROT(d, t, l, r)                                  \
	"vpsrld $" #r ", %[" #d "], %%" #t "\n\t"             \
	"vpslld $" #l ", %[" #d "], %[" #d "]\n\t"            \
	"vpor %%" #t ", %[" #d "], %[" #d "]\n\t"
/* a += b; d ^= a; d <<<= 16 (k = R16) or 8 (k = R8) */
#define X8A_AD(a, b, d, k) X8A_ADD(a, b) X8A_XOR(d, a) X8A_SHUF(d, k)
/* c += d; b ^= c; b <<<= l, c in a register */
#define X8A_CB(b, c, d, t, l, r) X8A_ADD(c, d) X8A_XOR(b, c) X8A_ROT(b, t, l, r)
/* the same, c in memory: through temporary t, stored back */
#define X8A_CBM(b, c, d, t, l, r)                            \
	"vpaddd " c ", %[" #d "], %%" #t "\n\t"              \
	"vmovdqa %%" #t ", " c "\n\t"                        \
	"vpxor %%" #t ", %[" #b "], %[" #b "]\n\t"           \
	X8A_ROT(b, t, l, r)

/* Two steps of four quarter rounds: a += b; d ^= a; d <<<= 16 or 8 (k =
 * R16 or R8) for all four, in the order given; then c += d; b ^= c; b <<<=
 * l (r = 32 - l) for the two whose c is a memory word (10: C0, 11: C1,
 * first: their store-to-load forwarding is the longest latency), then for
 * the two in registers. */
#define X8A_STEPS(k, l, r, a0, b0, d0, a1, b1, d1, a2, b2, d2, a3, b3, d3, mb0, md0, mb1, md1, \
		  rb0, rc0, rd0, rb1, rc1, rd1)                                               \
	X8A_AD(a0, b0, d0, k) X8A_AD(a1, b1, d1, k)                                           \
	X8A_AD(a2, b2, d2, k) X8A_AD(a3, b3, d3, k)                                           \
	X8A_CBM(mb0, C0, md0, ymm14, l, r) X8A_CBM(mb1, C1, md1, ymm15, l, r)                 \
	X8A_CB(rb0, rc0, rd0, ymm14, l, r) X8A_CB(rb1, rc1, rd1, ymm15, l, r)
/* Four quarter rounds, operands as X8A_STEPS takes them. */
#define X8A_HALF_ROUND(...) X8A_STEPS(R16, 12, 20, __VA_ARGS__) X8A_STEPS(R8, 7, 25, __VA_ARGS__)

/* One double round of a group of eight blocks: the column quarter rounds
 * (x0,x4,x8,x12) .. (x3,x7,x11,x15), then the diagonal ones; each quarter
 * round's four steps are issued for all four chains before the next step.
 * Operands: x0-x9, x12-x15 registers; C0, C1 words 10 and 11 in memory;
 * R16, R8 the byte-rotation masks; YMM14/15 the temporaries. */
#define X8A_DOUBLE_ROUND                                                                  \
	X8A_HALF_ROUND(x0, x4, x12, x1, x5, x13, x2, x6, x14, x3, x7, x15,                \
		       x6, x14, x7, x15, x4, x8, x12, x5, x9, x13)                        \
	X8A_HALF_ROUND(x0, x5, x15, x1, x6, x12, x2, x7, x13, x3, x4, x14,                \
		       x5, x15, x6, x12, x7, x8, x13, x4, x9, x14)

#define R16 "(%[rot])"
#define R8 "32(%[rot])"
#define C0 "(%[cm])"
#define C1 "32(%[cm])"

static const uint8_t x8_rot[2][32] __attribute__((aligned(32))) = {
	{ 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
	  2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13 },
	{ 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
	  3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14 },
};

/* Blocks counter..counter+7 (mod 2^32): 512 bytes of out = in ^ keystream
 * (in NULL: the keystream). */
static inline __attribute__((always_inline)) void
chacha20_x8(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	CN_X8_INIT(x, counter);
	__m256i cm[2] = { x10, x11 };

	for (int i = 0; i < 10; i++)
		__asm__(X8A_DOUBLE_ROUND
			: [x0] "+x"(x0), [x1] "+x"(x1), [x2] "+x"(x2), [x3] "+x"(x3),
			  [x4] "+x"(x4), [x5] "+x"(x5), [x6] "+x"(x6), [x7] "+x"(x7),
			  [x8] "+x"(x8), [x9] "+x"(x9), [x12] "+x"(x12), [x13] "+x"(x13),
			  [x14] "+x"(x14), [x15] "+x"(x15)
			: [cm] "r"(cm), [rot] "r"(x8_rot)
			: "xmm14", "xmm15", "memory");
	x10 = cm[0];
	x11 = cm[1];
	cn__x8_finish(st, counter, in, out, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12,
		      x13, x14, x15);
}

/* The last 384 < len < 512 bytes: a pass's keystream in a stack buffer,
 * XORed byte-exactly so nothing past len is touched. */
static __attribute__((noinline)) void chacha20_x8_tail(const struct cn_chacha20 *st,
							uint32_t counter, const uint8_t *in,
							uint8_t *out, size_t len)
{
	uint8_t ks[512] __attribute__((aligned(32)));

	chacha20_x8(st, counter, NULL, ks);
	cn__x8_xor_ks(out, in, ks, len);
}

/* The last len < 512 bytes (none: nothing): one partly used pass or the
 * pairs; the passes are latency-bound, so a partly used one costs about a
 * whole one. */
static inline __attribute__((always_inline)) void
chacha20_rest(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	      size_t len)
{
	if (len > 384)
		chacha20_x8_tail(st, counter, in, out, len);
	else if (len)
		chacha20_small(st, counter, in, out, len);
}

CN__CHACHA20_ENTRY(cn_chacha20_xor_avx2, 512, chacha20_x8, chacha20_rest)

#endif
