/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX-512: thirty-two blocks (2 KB) per pass in two interleaved
 * groups of sixteen (chacha20_x32 says why), one state word of 16 blocks
 * per ZMM register, rotations by VPROLD; what is left after the last
 * whole 2 KB takes one more pass of 32 or 16 blocks (chacha20_x16_tail says
 * why a partly used pass is the cheaper choice).
 *
 * Compiled with -mavx512f/bw/vl/dq -mavx2 -mbmi -mbmi2 (src/meson.build);
 * crypto.c requires all of those.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define CN_X16_QR(a, b, c, d)                                                             \
	do {                                                                              \
		a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16); \
		c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12); \
		a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);  \
		c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);  \
	} while (0)

static inline void put64(uint8_t *out, const uint8_t *in, __m512i v)
{
	if (in)
		v = _mm512_xor_si512(v, _mm512_loadu_si512((const void *)in));
	_mm512_storeu_si512((void *)out, v);
}

/* The initial state of blocks counter..counter+15, word i of block j in
 * lane j of s[i]. */
static inline __attribute__((always_inline)) void
x16_init(const struct cn_chacha20 *st, uint32_t counter, __m512i s[16])
{
	s[0] = _mm512_set1_epi32((int)CN_CHACHA_C0);
	s[1] = _mm512_set1_epi32((int)CN_CHACHA_C1);
	s[2] = _mm512_set1_epi32((int)CN_CHACHA_C2);
	s[3] = _mm512_set1_epi32((int)CN_CHACHA_C3);
	for (int i = 0; i < 8; i++)
		s[4 + i] = _mm512_set1_epi32((int)st->key[i]);
	s[12] = _mm512_add_epi32(_mm512_set1_epi32((int)counter),
				 _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	for (int i = 0; i < 3; i++)
		s[13 + i] = _mm512_set1_epi32((int)st->nonce[i]);
}

/* One double round: four column quarter rounds, four diagonal ones. */
#define CN_X16_DOUBLE_ROUND(x)                                                            \
	do {                                                                              \
		CN_X16_QR(x[0], x[4], x[8], x[12]);                                       \
		CN_X16_QR(x[1], x[5], x[9], x[13]);                                       \
		CN_X16_QR(x[2], x[6], x[10], x[14]);                                      \
		CN_X16_QR(x[3], x[7], x[11], x[15]);                                      \
		CN_X16_QR(x[0], x[5], x[10], x[15]);                                      \
		CN_X16_QR(x[1], x[6], x[11], x[12]);                                      \
		CN_X16_QR(x[2], x[7], x[8], x[13]);                                       \
		CN_X16_QR(x[3], x[4], x[9], x[14]);                                       \
	} while (0)

/*
 * Finish blocks counter..counter+15 whose 20 rounds are done in x: add the
 * initial state, transpose 16x16 words, out = in ^ keystream (1024 bytes).
 */
static inline __attribute__((always_inline)) void
x16_finish(const struct cn_chacha20 *st, uint32_t counter, __m512i x[16], const uint8_t *in,
	   uint8_t *out)
{
	__m512i s[16];

	x16_init(st, counter, s);
	for (int i = 0; i < 16; i++)
		x[i] = _mm512_add_epi32(x[i], s[i]);

	/*
	 * Transpose 16x16 words. Per group of four words (g = 0..3: words
	 * 4g..4g+3), 32- then 64-bit unpacks give a[g][r] whose 128-bit lane L
	 * holds those four words of block 4L + r. Block 4L + r is then lanes L
	 * of a[0][r], a[1][r], a[2][r], a[3][r]: a 4x4 transpose of 128-bit
	 * lanes, two rounds of VSHUFI32X4.
	 */
#define CN_X16_GROUP(w0, w1, w2, w3, r0, r1, r2, r3)                                      \
	do {                                                                              \
		__m512i t0 = _mm512_unpacklo_epi32(w0, w1), t1 = _mm512_unpackhi_epi32(w0, w1); \
		__m512i t2 = _mm512_unpacklo_epi32(w2, w3), t3 = _mm512_unpackhi_epi32(w2, w3); \
		r0 = _mm512_unpacklo_epi64(t0, t2);                                       \
		r1 = _mm512_unpackhi_epi64(t0, t2);                                       \
		r2 = _mm512_unpacklo_epi64(t1, t3);                                       \
		r3 = _mm512_unpackhi_epi64(t1, t3);                                       \
	} while (0)
	__m512i a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33;
	CN_X16_GROUP(x[0], x[1], x[2], x[3], a00, a01, a02, a03);
	CN_X16_GROUP(x[4], x[5], x[6], x[7], a10, a11, a12, a13);
	CN_X16_GROUP(x[8], x[9], x[10], x[11], a20, a21, a22, a23);
	CN_X16_GROUP(x[12], x[13], x[14], x[15], a30, a31, a32, a33);
#undef CN_X16_GROUP
	/* Lane transpose for one r; in == out safe: each 64-byte block is
	 * loaded before it is stored and blocks do not overlap. */
#define CN_X16_LANES(g0, g1, g2, g3, r)                                                 \
	do {                                                                            \
		__m512i v0 = _mm512_shuffle_i32x4(g0, g1, 0x44);                        \
		__m512i v1 = _mm512_shuffle_i32x4(g0, g1, 0xee);                        \
		__m512i v2 = _mm512_shuffle_i32x4(g2, g3, 0x44);                        \
		__m512i v3 = _mm512_shuffle_i32x4(g2, g3, 0xee);                        \
		put64(out + (0 + (r)) * 64, in ? in + (0 + (r)) * 64 : NULL,            \
		      _mm512_shuffle_i32x4(v0, v2, 0x88));                              \
		put64(out + (4 + (r)) * 64, in ? in + (4 + (r)) * 64 : NULL,            \
		      _mm512_shuffle_i32x4(v0, v2, 0xdd));                              \
		put64(out + (8 + (r)) * 64, in ? in + (8 + (r)) * 64 : NULL,            \
		      _mm512_shuffle_i32x4(v1, v3, 0x88));                              \
		put64(out + (12 + (r)) * 64, in ? in + (12 + (r)) * 64 : NULL,          \
		      _mm512_shuffle_i32x4(v1, v3, 0xdd));                              \
	} while (0)
	CN_X16_LANES(a00, a10, a20, a30, 0);
	CN_X16_LANES(a01, a11, a21, a31, 1);
	CN_X16_LANES(a02, a12, a22, a32, 2);
	CN_X16_LANES(a03, a13, a23, a33, 3);
#undef CN_X16_LANES
}

/* Blocks counter..counter+15: 1024 bytes of out = in ^ keystream. */
static inline void chacha20_x16(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in,
				uint8_t *out)
{
	__m512i x[16];

	x16_init(st, counter, x);
	for (int i = 0; i < 10; i++)
		CN_X16_DOUBLE_ROUND(x);
	x16_finish(st, counter, x, in, out);
}

/*
 * Blocks counter..counter+31, 2048 bytes, as two groups of 16 whose
 * rounds interleave. Within one group a double round is four chains of 24
 * dependent operations, and each step here waits about two core cycles for
 * its input (an add, an XOR and a rotate run on different pipes), so a
 * lone group leaves half the vector pipes idle: measured, its rounds take
 * ~0.36 TSC ticks per byte where the pipes allow ~0.2. Two groups give the
 * core eight independent chains; their 32 working words fill the 32 ZMM
 * registers exactly (quarter rounds need no temporaries), so the initial
 * state is rebuilt from st for the final additions. The words are named
 * variables, not arrays, and empty asm statements pin them in registers at
 * the end of every double round: otherwise gcc 12 keeps part of them in
 * memory, 60 loads and stores per double round. Rounds alone, measured:
 * 0.214-0.227 ticks per byte, against 0.356-0.366 for one group.
 */
#define CN_X32_PIN(a, b, c, d, e, f, g, h)                                                \
	__asm__("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d), "+v"(e), "+v"(f), "+v"(g), "+v"(h))

/* 20 rounds of the two groups' working words, in place. Out of line: in
 * one function with the finishing transposes gcc 12 -O3 spills 40 words
 * per double round even with the pins (at -O2 none). */
static __attribute__((noinline)) void x32_rounds(__m512i xs[16], __m512i ys[16])
{
	__m512i x0 = xs[0], x1 = xs[1], x2 = xs[2], x3 = xs[3], x4 = xs[4], x5 = xs[5];
	__m512i x6 = xs[6], x7 = xs[7], x8 = xs[8], x9 = xs[9], x10 = xs[10], x11 = xs[11];
	__m512i x12 = xs[12], x13 = xs[13], x14 = xs[14], x15 = xs[15];
	__m512i y0 = ys[0], y1 = ys[1], y2 = ys[2], y3 = ys[3], y4 = ys[4], y5 = ys[5];
	__m512i y6 = ys[6], y7 = ys[7], y8 = ys[8], y9 = ys[9], y10 = ys[10], y11 = ys[11];
	__m512i y12 = ys[12], y13 = ys[13], y14 = ys[14], y15 = ys[15];

	for (int i = 0; i < 10; i++) {
		CN_X16_QR(x0, x4, x8, x12);
		CN_X16_QR(y0, y4, y8, y12);
		CN_X16_QR(x1, x5, x9, x13);
		CN_X16_QR(y1, y5, y9, y13);
		CN_X16_QR(x2, x6, x10, x14);
		CN_X16_QR(y2, y6, y10, y14);
		CN_X16_QR(x3, x7, x11, x15);
		CN_X16_QR(y3, y7, y11, y15);
		CN_X16_QR(x0, x5, x10, x15);
		CN_X16_QR(y0, y5, y10, y15);
		CN_X16_QR(x1, x6, x11, x12);
		CN_X16_QR(y1, y6, y11, y12);
		CN_X16_QR(x2, x7, x8, x13);
		CN_X16_QR(y2, y7, y8, y13);
		CN_X16_QR(x3, x4, x9, x14);
		CN_X16_QR(y3, y4, y9, y14);
		CN_X32_PIN(x0, x1, x2, x3, x4, x5, x6, x7);
		CN_X32_PIN(x8, x9, x10, x11, x12, x13, x14, x15);
		CN_X32_PIN(y0, y1, y2, y3, y4, y5, y6, y7);
		CN_X32_PIN(y8, y9, y10, y11, y12, y13, y14, y15);
	}
	xs[0] = x0; xs[1] = x1; xs[2] = x2; xs[3] = x3; xs[4] = x4; xs[5] = x5; xs[6] = x6;
	xs[7] = x7; xs[8] = x8; xs[9] = x9; xs[10] = x10; xs[11] = x11; xs[12] = x12;
	xs[13] = x13; xs[14] = x14; xs[15] = x15;
	ys[0] = y0; ys[1] = y1; ys[2] = y2; ys[3] = y3; ys[4] = y4; ys[5] = y5; ys[6] = y6;
	ys[7] = y7; ys[8] = y8; ys[9] = y9; ys[10] = y10; ys[11] = y11; ys[12] = y12;
	ys[13] = y13; ys[14] = y14; ys[15] = y15;
}

/* Blocks counter..counter+15 into out0 = in0 ^ keystream, blocks
 * counter+16..counter+31 into out1 = in1 ^ keystream (1024 bytes each). */
static inline void chacha20_x32(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in0,
				uint8_t *out0, const uint8_t *in1, uint8_t *out1)
{
	__m512i xs[16], ys[16];

	x16_init(st, counter, xs);
	x16_init(st, counter + 16, ys);
	x32_rounds(xs, ys);
	x16_finish(st, counter, xs, in0, out0);
	x16_finish(st, counter + 16, ys, in1, out1);
}
#undef CN_X32_PIN

/* 64 bytes of out = in ^ ks (in NULL: ks), ks 64-byte aligned. */
static inline void put_ks64(uint8_t *out, const uint8_t *in, const uint8_t *ks)
{
	put64(out, in, _mm512_load_si512((const void *)ks));
}

/* out = in ^ ks for n bytes, whole 64-byte blocks then byte-exactly. */
static inline void xor_ks(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
	cn__xor_ks(out, in, ks, n, 64, put_ks64);
}

/*
 * The rounds are latency-bound (see chacha20_x32), so a pass costs about
 * the same whatever part of its keystream is used: a short input takes one
 * pass of 16 blocks (0 < len < 1024) or of 32 (1024 < len < 2048, a
 * 1460-byte segment: about 1.2 times a pass of 16, where 16 blocks and
 * then 8 would cost about 1.7 times). The unused keystream goes to a stack
 * buffer and the XOR stops at len, so nothing past len is touched.
 */
static void chacha20_x16_tail(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in,
			      uint8_t *out, size_t len)
{
	uint8_t ks[1024] __attribute__((aligned(64)));

	chacha20_x16(st, counter, NULL, ks);
	xor_ks(out, in, ks, len);
}

static void chacha20_x32_tail(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in,
			      uint8_t *out, size_t len)
{
	uint8_t ks[1024] __attribute__((aligned(64)));

	chacha20_x32(st, counter, in, out, NULL, ks);
	xor_ks(out + 1024, in ? in + 1024 : NULL, ks, len - 1024);
}

/* One whole pass: blocks counter..counter+31, 2048 bytes. */
static inline __attribute__((always_inline)) void
chacha20_x32_pass(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out)
{
	chacha20_x32(st, counter, in, out, in ? in + 1024 : NULL, out + 1024);
}

/* The last len < 2048 bytes (none: nothing): one pass of 32 or 16 blocks. */
static inline __attribute__((always_inline)) void
chacha20_rest(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	      size_t len)
{
	if (len > 1024)
		chacha20_x32_tail(st, counter, in, out, len);
	else if (len == 1024)
		chacha20_x16(st, counter, in, out);
	else if (len)
		chacha20_x16_tail(st, counter, in, out, len);
}

CN__CHACHA20_ENTRY(cn_chacha20_xor_avx512, 2048, chacha20_x32_pass, chacha20_rest)

#endif
