/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-NI helpers shared by the AES-NI and VAES variants (both compiled with
 * -maes): key expansion with AESKEYGENASSIST and the 128-bit counter
 * arithmetic on byte-reversed blocks.
 */
#ifndef CN_AES128_NI_H
#define CN_AES128_NI_H

#include "crypto_impl.h"

#include <immintrin.h>

/* One round of the AES-128 key schedule: gen is AESKEYGENASSIST's output,
 * whose dword 3 is SubWord(RotWord(w3)) ^ rcon; each new word is the XOR of
 * all earlier words of the previous round key up to it, done as three
 * shift-by-4-bytes XORs (a prefix XOR). */
static inline __m128i cn__aes_expand_step(__m128i key, __m128i gen)
{
	gen = _mm_shuffle_epi32(gen, 0xff);
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	return _mm_xor_si128(key, gen);
}

/* The rcon operand of AESKEYGENASSIST must be an immediate. */
#define CN__AES_EXP(i, rc) \
	rk[i] = cn__aes_expand_step(rk[(i) - 1], _mm_aeskeygenassist_si128(rk[(i) - 1], rc))

static inline void cn__aes128_expand_ni(struct cn_aes128_key *k, const uint8_t *key)
{
	__m128i rk[11];

	rk[0] = _mm_loadu_si128((const __m128i *)key);
	CN__AES_EXP(1, 0x01);
	CN__AES_EXP(2, 0x02);
	CN__AES_EXP(3, 0x04);
	CN__AES_EXP(4, 0x08);
	CN__AES_EXP(5, 0x10);
	CN__AES_EXP(6, 0x20);
	CN__AES_EXP(7, 0x40);
	CN__AES_EXP(8, 0x80);
	CN__AES_EXP(9, 0x1b);
	CN__AES_EXP(10, 0x36);
	for (int i = 0; i < 11; i++)
		_mm_store_si128((__m128i *)k->rk[i], rk[i]);
}
#undef CN__AES_EXP

/* Reverses the 16 bytes of a block: a big-endian counter block becomes a
 * little-endian 128-bit integer (qword 0 = low 64 bits) and back. */
static inline __m128i cn__aes_bswap128_mask(void)
{
	return _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

#endif /* CN_AES128_NI_H */
