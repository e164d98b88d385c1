/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, eight blocks at once in 256-bit vectors: the state layout,
 * the quarter round in intrinsics (the AVX2 variant's pairs of blocks use
 * it; its eight-block rounds are asm, chacha20_avx2.c) and the output. Each
 * register holds one state word of eight consecutive blocks ("vertical"
 * layout), so a quarter round is 12 vector instructions for 8 blocks and no
 * shuffles are needed between column and diagonal rounds; a transpose at
 * the end turns words-by-block into 64-byte blocks.
 *
 * With AVX512VL the four rotations are single VPROLD instructions; with AVX2
 * only, 16 and 8 are byte shuffles (one instruction) and 12 and 7 take two
 * shifts and an OR.
 */
#ifndef CN_CHACHA20_X8_H
#define CN_CHACHA20_X8_H

#include "crypto_impl.h"

#include <immintrin.h>

#if defined(__AVX512VL__)
#define CN_X8_ROL16(v) _mm256_rol_epi32(v, 16)
#define CN_X8_ROL12(v) _mm256_rol_epi32(v, 12)
#define CN_X8_ROL8(v) _mm256_rol_epi32(v, 8)
#define CN_X8_ROL7(v) _mm256_rol_epi32(v, 7)
#else
#define CN_X8_ROL16(v) _mm256_shuffle_epi8(v, rot16)
#define CN_X8_ROL8(v) _mm256_shuffle_epi8(v, rot8)
#define CN_X8_ROL12(v) _mm256_or_si256(_mm256_slli_epi32(v, 12), _mm256_srli_epi32(v, 20))
#define CN_X8_ROL7(v) _mm256_or_si256(_mm256_slli_epi32(v, 7), _mm256_srli_epi32(v, 25))
#endif

#define CN_X8_QR(a, b, c, d)                                                      \
	do {                                                                      \
		a = _mm256_add_epi32(a, b); d = CN_X8_ROL16(_mm256_xor_si256(d, a)); \
		c = _mm256_add_epi32(c, d); b = CN_X8_ROL12(_mm256_xor_si256(b, c)); \
		a = _mm256_add_epi32(a, b); d = CN_X8_ROL8(_mm256_xor_si256(d, a));  \
		c = _mm256_add_epi32(c, d); b = CN_X8_ROL7(_mm256_xor_si256(b, c));  \
	} while (0)

/* The byte-shuffle rotation constants CN_X8_QR uses without AVX512VL. */
#if defined(__AVX512VL__)
#define CN_X8_ROT_CONSTS
#else
#define CN_X8_ROT_CONSTS                                                                       \
	const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, \
					       13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15,  \
					       12, 13);                                           \
	const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13,  \
					      14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12,   \
					      13, 14)
#endif

/* The initial state of one group of eight blocks, word i in p##i (block
 * ctr + j in lane j); needs st and lane (0, 1, .., 7 in a __m256i) in
 * scope. */
#define CN_X8_INIT(p, ctr)                                                     \
	__m256i p##0 = _mm256_set1_epi32((int)CN_CHACHA_C0);                   \
	__m256i p##1 = _mm256_set1_epi32((int)CN_CHACHA_C1);                   \
	__m256i p##2 = _mm256_set1_epi32((int)CN_CHACHA_C2);                   \
	__m256i p##3 = _mm256_set1_epi32((int)CN_CHACHA_C3);                   \
	__m256i p##4 = _mm256_set1_epi32((int)st->key[0]);                     \
	__m256i p##5 = _mm256_set1_epi32((int)st->key[1]);                     \
	__m256i p##6 = _mm256_set1_epi32((int)st->key[2]);                     \
	__m256i p##7 = _mm256_set1_epi32((int)st->key[3]);                     \
	__m256i p##8 = _mm256_set1_epi32((int)st->key[4]);                     \
	__m256i p##9 = _mm256_set1_epi32((int)st->key[5]);                     \
	__m256i p##10 = _mm256_set1_epi32((int)st->key[6]);                    \
	__m256i p##11 = _mm256_set1_epi32((int)st->key[7]);                    \
	__m256i p##12 = _mm256_add_epi32(_mm256_set1_epi32((int)(ctr)), lane); \
	__m256i p##13 = _mm256_set1_epi32((int)st->nonce[0]);                  \
	__m256i p##14 = _mm256_set1_epi32((int)st->nonce[1]);                  \
	__m256i p##15 = _mm256_set1_epi32((int)st->nonce[2])

/* 32 bytes of out = in ^ v (in NULL: v). Unaligned; in == out safe. */
static inline void cn__x8_put(uint8_t *out, const uint8_t *in, __m256i v)
{
	if (in)
		v = _mm256_xor_si256(v, _mm256_loadu_si256((const __m256i *)in));
	_mm256_storeu_si256((__m256i *)out, v);
}

/* Feed-forward of blocks counter..counter+7 (the rounds' output in x[16])
 * and 512 bytes of out = in ^ keystream. */
static inline __attribute__((always_inline)) void
cn__x8_finish(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	      __m256i x0, __m256i x1, __m256i x2, __m256i x3, __m256i x4, __m256i x5, __m256i x6,
	      __m256i x7, __m256i x8, __m256i x9, __m256i x10, __m256i x11, __m256i x12,
	      __m256i x13, __m256i x14, __m256i x15)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

	/* Feed-forward: the input state is re-broadcast from memory rather
	 * than kept in 16 more registers (AVX2 has only 16). */
	x0 = _mm256_add_epi32(x0, _mm256_set1_epi32((int)CN_CHACHA_C0));
	x1 = _mm256_add_epi32(x1, _mm256_set1_epi32((int)CN_CHACHA_C1));
	x2 = _mm256_add_epi32(x2, _mm256_set1_epi32((int)CN_CHACHA_C2));
	x3 = _mm256_add_epi32(x3, _mm256_set1_epi32((int)CN_CHACHA_C3));
	x4 = _mm256_add_epi32(x4, _mm256_set1_epi32((int)st->key[0]));
	x5 = _mm256_add_epi32(x5, _mm256_set1_epi32((int)st->key[1]));
	x6 = _mm256_add_epi32(x6, _mm256_set1_epi32((int)st->key[2]));
	x7 = _mm256_add_epi32(x7, _mm256_set1_epi32((int)st->key[3]));
	x8 = _mm256_add_epi32(x8, _mm256_set1_epi32((int)st->key[4]));
	x9 = _mm256_add_epi32(x9, _mm256_set1_epi32((int)st->key[5]));
	x10 = _mm256_add_epi32(x10, _mm256_set1_epi32((int)st->key[6]));
	x11 = _mm256_add_epi32(x11, _mm256_set1_epi32((int)st->key[7]));
	x12 = _mm256_add_epi32(x12, _mm256_add_epi32(_mm256_set1_epi32((int)counter), lane));
	x13 = _mm256_add_epi32(x13, _mm256_set1_epi32((int)st->nonce[0]));
	x14 = _mm256_add_epi32(x14, _mm256_set1_epi32((int)st->nonce[1]));
	x15 = _mm256_add_epi32(x15, _mm256_set1_epi32((int)st->nonce[2]));

	/* Transpose two 8x8 matrices of words (words 0-7 and 8-15; lanes are
	 * blocks). After the 32- and 64-bit unpacks, 128-bit lane h of u_r
	 * holds four words of block r + 4h. */
#define CN_X8_HALF(a0, a1, a2, a3, a4, a5, a6, a7, off)                              \
	do {                                                                          \
		__m256i t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1); \
		__m256i t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3); \
		__m256i t4 = _mm256_unpacklo_epi32(a4, a5), t5 = _mm256_unpackhi_epi32(a4, a5); \
		__m256i t6 = _mm256_unpacklo_epi32(a6, a7), t7 = _mm256_unpackhi_epi32(a6, a7); \
		__m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2); \
		__m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3); \
		__m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6); \
		__m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7); \
		cn__x8_put(out + 0 * 64 + (off), in ? in + 0 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u0, u4, 0x20));                      \
		cn__x8_put(out + 1 * 64 + (off), in ? in + 1 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u1, u5, 0x20));                      \
		cn__x8_put(out + 2 * 64 + (off), in ? in + 2 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u2, u6, 0x20));                      \
		cn__x8_put(out + 3 * 64 + (off), in ? in + 3 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u3, u7, 0x20));                      \
		cn__x8_put(out + 4 * 64 + (off), in ? in + 4 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u0, u4, 0x31));                      \
		cn__x8_put(out + 5 * 64 + (off), in ? in + 5 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u1, u5, 0x31));                      \
		cn__x8_put(out + 6 * 64 + (off), in ? in + 6 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u2, u6, 0x31));                      \
		cn__x8_put(out + 7 * 64 + (off), in ? in + 7 * 64 + (off) : NULL,           \
			   _mm256_permute2x128_si256(u3, u7, 0x31));                      \
	} while (0)
	/* in == out: every 32 bytes are loaded before the same 32 are stored,
	 * and the halves never overlap, so in-place is safe. */
	CN_X8_HALF(x0, x1, x2, x3, x4, x5, x6, x7, 0);
	CN_X8_HALF(x8, x9, x10, x11, x12, x13, x14, x15, 32);
#undef CN_X8_HALF
}

/* 32 bytes of out = in ^ ks (in NULL: ks), ks 32-byte aligned. */
static inline void cn__x8_put_ks(uint8_t *out, const uint8_t *in, const uint8_t *ks)
{
	cn__x8_put(out, in, _mm256_load_si256((const __m256i *)ks));
}

/* out = in ^ ks over len bytes (in NULL: ks), ks 32-byte aligned: 32 bytes
 * at a time, the last < 32 byte-exactly so nothing past len is touched. */
static inline void cn__x8_xor_ks(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t len)
{
	cn__xor_ks(out, in, ks, len, 32, cn__x8_put_ks);
}

#endif /* CN_CHACHA20_X8_H */
