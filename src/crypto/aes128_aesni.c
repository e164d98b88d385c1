/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-128-CTR with AES-NI on 128-bit registers: eight blocks in flight.
 * AESENC has a latency of several cycles but issues every cycle or two, so
 * one block at a time would leave the unit idle most of the time; eight
 * independent blocks per round key cover the latency.
 *
 * Counter blocks: the 128-bit big-endian counter is kept byte-reversed
 * (little-endian integer in an XMM register), blocks i = base + i are made
 * with one 64-bit add on the low qword and one PSHUFB back to big-endian.
 * That add cannot carry into the high qword, so a batch whose low 64 bits
 * would wrap (once per 2^64 blocks, or when the caller starts near it)
 * takes counter blocks from scalar 128-bit arithmetic instead.
 *
 * Compiled with -maes -mssse3 -msse4.1 (src/meson.build); crypto.c
 * requires AESNI, SSSE3 and SSE4.1.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "aes128_ni.h"

void cn_aes128_expand_key_aesni(struct cn_aes128_key *k, const uint8_t *key)
{
	cn__aes128_expand_ni(k, key);
}

void cn_aes128_encrypt_block_aesni(const struct cn_aes128_key *k, const void *in, void *out)
{
	__m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)in),
				  _mm_load_si128((const __m128i *)k->rk[0]));

	for (int r = 1; r < 10; r++)
		b = _mm_aesenc_si128(b, _mm_load_si128((const __m128i *)k->rk[r]));
	b = _mm_aesenclast_si128(b, _mm_load_si128((const __m128i *)k->rk[10]));
	_mm_storeu_si128((__m128i *)out, b);
}

/* Counter blocks c, c+1, ..., c+n-1 (n <= 8) into b[], big-endian. */
static inline void make_ctrs(__m128i *b, struct cn__ctr128 c, unsigned n, __m128i bswap)
{
	if (c.lo <= UINT64_MAX - 8) {
		__m128i base = _mm_set_epi64x((long long)c.hi, (long long)c.lo);
		for (unsigned i = 0; i < n; i++)
			b[i] = _mm_shuffle_epi8(_mm_add_epi64(base, _mm_set_epi64x(0, i)), bswap);
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct cn__ctr128 ci = cn__ctr_add(c, i);
			b[i] = _mm_shuffle_epi8(_mm_set_epi64x((long long)ci.hi, (long long)ci.lo),
						bswap);
		}
	}
}

void cn_aes128ctr_xor_aesni(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			    void *out, size_t len)
{
	const __m128i bswap = cn__aes_bswap128_mask();
	const uint8_t *ip = in;
	uint8_t *op = out;
	struct cn__ctr128 c = cn__ctr_load(ctr);
	__m128i rk[11];

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	for (int r = 0; r < 11; r++)
		rk[r] = _mm_load_si128((const __m128i *)k->rk[r]);

	while (len) {
		__m128i b[8];
		size_t nb = (len + 15) / 16;
		unsigned n = nb < 8 ? (unsigned)nb : 8;

		make_ctrs(b, c, 8, bswap);
		c = cn__ctr_add(c, n);
		/* Always eight: the fixed count lets the compiler keep b[] in
		 * registers, and extra tail blocks cost less than a loop with a
		 * variable trip count per round. */
		for (int i = 0; i < 8; i++)
			b[i] = _mm_xor_si128(b[i], rk[0]);
		for (int r = 1; r < 10; r++)
			for (int i = 0; i < 8; i++)
				b[i] = _mm_aesenc_si128(b[i], rk[r]);
		for (int i = 0; i < 8; i++)
			b[i] = _mm_aesenclast_si128(b[i], rk[10]);

		if (len >= 128) {
			for (int i = 0; i < 8; i++) {
				__m128i v = b[i];
				if (ip)
					v = _mm_xor_si128(v, _mm_loadu_si128((const __m128i *)(ip + 16 * i)));
				_mm_storeu_si128((__m128i *)(op + 16 * i), v);
			}
			if (ip)
				ip += 128;
			op += 128;
			len -= 128;
		} else {
			/* Last < 128 bytes: whole blocks directly, the partial
			 * one through a stack copy, never past len. */
			uint8_t ks[128] __attribute__((aligned(16)));
			size_t full = len & ~(size_t)15;
			for (int i = 0; i < 8; i++)
				_mm_store_si128((__m128i *)(ks + 16 * i), b[i]);
			for (size_t o = 0; o < full; o += 16) {
				__m128i v = _mm_load_si128((const __m128i *)(ks + o));
				if (ip)
					v = _mm_xor_si128(v, _mm_loadu_si128((const __m128i *)(ip + o)));
				_mm_storeu_si128((__m128i *)(op + o), v);
			}
			cn__xor_tail(op + full, ip ? ip + full : NULL, ks + full, len - full);
			len = 0;
		}
	}
}
#endif
