/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX-512: sixteen blocks (1 KB) per pass, one state word of 16
 * blocks per ZMM register, rotations by VPROLD. The 32 ZMM registers hold
 * the 16 working words, the transpose temporaries and the constants without
 * spilling. The last < 1 KB goes through the 8-block YMM code of
 * chacha20_x8.h (EVEX-encoded here, VPROLD too): a whole 16-block pass for
 * a 576-byte packet would cost twice as much.
 *
 * Compiled with -mavx512f/bw/vl/dq -mavx2 -mbmi -mbmi2 (src/meson.build);
 * crypto.c requires all of those.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "chacha20_x8.h"

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

/* Blocks counter..counter+15: 1024 bytes of out = in ^ keystream. */
static inline void chacha20_x16(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in,
				uint8_t *out)
{
	const __m512i s0 = _mm512_set1_epi32((int)CN_CHACHA_C0), s1 = _mm512_set1_epi32((int)CN_CHACHA_C1);
	const __m512i s2 = _mm512_set1_epi32((int)CN_CHACHA_C2), s3 = _mm512_set1_epi32((int)CN_CHACHA_C3);
	const __m512i s4 = _mm512_set1_epi32((int)st->key[0]), s5 = _mm512_set1_epi32((int)st->key[1]);
	const __m512i s6 = _mm512_set1_epi32((int)st->key[2]), s7 = _mm512_set1_epi32((int)st->key[3]);
	const __m512i s8 = _mm512_set1_epi32((int)st->key[4]), s9 = _mm512_set1_epi32((int)st->key[5]);
	const __m512i s10 = _mm512_set1_epi32((int)st->key[6]), s11 = _mm512_set1_epi32((int)st->key[7]);
	const __m512i s12 = _mm512_add_epi32(_mm512_set1_epi32((int)counter),
					     _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
							       12, 13, 14, 15));
	const __m512i s13 = _mm512_set1_epi32((int)st->nonce[0]);
	const __m512i s14 = _mm512_set1_epi32((int)st->nonce[1]);
	const __m512i s15 = _mm512_set1_epi32((int)st->nonce[2]);
	__m512i x0 = s0, x1 = s1, x2 = s2, x3 = s3, x4 = s4, x5 = s5, x6 = s6, x7 = s7;
	__m512i x8 = s8, x9 = s9, x10 = s10, x11 = s11, x12 = s12, x13 = s13, x14 = s14, x15 = s15;

	for (int i = 0; i < 10; i++) {
		CN_X16_QR(x0, x4, x8, x12);
		CN_X16_QR(x1, x5, x9, x13);
		CN_X16_QR(x2, x6, x10, x14);
		CN_X16_QR(x3, x7, x11, x15);
		CN_X16_QR(x0, x5, x10, x15);
		CN_X16_QR(x1, x6, x11, x12);
		CN_X16_QR(x2, x7, x8, x13);
		CN_X16_QR(x3, x4, x9, x14);
	}
	x0 = _mm512_add_epi32(x0, s0); x1 = _mm512_add_epi32(x1, s1);
	x2 = _mm512_add_epi32(x2, s2); x3 = _mm512_add_epi32(x3, s3);
	x4 = _mm512_add_epi32(x4, s4); x5 = _mm512_add_epi32(x5, s5);
	x6 = _mm512_add_epi32(x6, s6); x7 = _mm512_add_epi32(x7, s7);
	x8 = _mm512_add_epi32(x8, s8); x9 = _mm512_add_epi32(x9, s9);
	x10 = _mm512_add_epi32(x10, s10); x11 = _mm512_add_epi32(x11, s11);
	x12 = _mm512_add_epi32(x12, s12); x13 = _mm512_add_epi32(x13, s13);
	x14 = _mm512_add_epi32(x14, s14); x15 = _mm512_add_epi32(x15, s15);

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
	CN_X16_GROUP(x0, x1, x2, x3, a00, a01, a02, a03);
	CN_X16_GROUP(x4, x5, x6, x7, a10, a11, a12, a13);
	CN_X16_GROUP(x8, x9, x10, x11, a20, a21, a22, a23);
	CN_X16_GROUP(x12, x13, x14, x15, a30, a31, a32, a33);
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

void cn_chacha20_xor_avx512(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	uint32_t counter = st->counter;

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	while (len >= 1024) {
		chacha20_x16(st, counter, ip, op);
		counter += 16;
		if (ip)
			ip += 1024;
		op += 1024;
		len -= 1024;
	}
	if (len >= 512) {
		cn__chacha20_x8(st, counter, ip, op);
		counter += 8;
		if (ip)
			ip += 512;
		op += 512;
		len -= 512;
	}
	if (len)
		cn__chacha20_x8_tail(st, counter, ip, op, len);
}
#endif
