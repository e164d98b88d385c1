/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-128-CTR with VAES on 512-bit registers: one VAESENC does a round of
 * four blocks, and eight registers (32 blocks, 512 bytes) are in flight so
 * that the instruction's latency is covered. The last < 512 bytes go in
 * batches of four registers whose loads and stores are byte-masked
 * (AVX512BW), so nothing outside [in, in+len) / [out, out+len) is touched
 * and no stack copy is needed.
 *
 * Counter blocks as in aes128_aesni.c: byte-reversed base + per-lane 64-bit
 * increments, VPSHUFB back to big-endian; a batch whose low 64 bits would
 * wrap takes its counters from scalar 128-bit arithmetic.
 *
 * Compiled with the AVX-512 flags plus -maes -mvaes -mvpclmulqdq
 * (src/meson.build's isa_avx512vaes); crypto.c requires all of those
 * features, and AESNI/SSSE3/SSE4.1 for the shared key expansion.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "aes128_ni.h"

#define BATCH 8 /* registers (of 4 blocks) per main-loop pass */

/* Counter blocks c + 4j + i for register j < nv, lane i, big-endian. */
static inline void make_ctrs(__m512i *v, int nv, struct cn__ctr128 c, __m512i bswap)
{
	if (c.lo <= UINT64_MAX - 4 * BATCH) {
		const __m512i base = _mm512_broadcast_i32x4(
			_mm_set_epi64x((long long)c.hi, (long long)c.lo));
		for (int j = 0; j < nv; j++) {
			__m512i inc = _mm512_set_epi64(0, 4 * j + 3, 0, 4 * j + 2, 0, 4 * j + 1, 0, 4 * j);
			v[j] = _mm512_shuffle_epi8(_mm512_add_epi64(base, inc), bswap);
		}
	} else {
		uint8_t blk[4 * BATCH][16] __attribute__((aligned(64)));
		for (int i = 0; i < 4 * nv; i++)
			cn__ctr_store(blk[i], cn__ctr_add(c, (uint64_t)i));
		for (int j = 0; j < nv; j++)
			v[j] = _mm512_load_si512((const void *)blk[4 * j]);
	}
}

static inline void encrypt(__m512i *v, int nv, const __m512i *rk)
{
	for (int j = 0; j < nv; j++)
		v[j] = _mm512_xor_si512(v[j], rk[0]);
	for (int r = 1; r < 10; r++)
		for (int j = 0; j < nv; j++)
			v[j] = _mm512_aesenc_epi128(v[j], rk[r]);
	for (int j = 0; j < nv; j++)
		v[j] = _mm512_aesenclast_epi128(v[j], rk[10]);
}

void cn_aes128ctr_xor_vaes(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			   void *out, size_t len)
{
	const __m512i bswap = _mm512_broadcast_i32x4(cn__aes_bswap128_mask());
	const uint8_t *ip = in;
	uint8_t *op = out;
	struct cn__ctr128 c = cn__ctr_load(ctr);
	__m512i rk[11];

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	for (int r = 0; r < 11; r++)
		rk[r] = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k->rk[r]));

	while (len >= 64 * BATCH) {
		__m512i v[BATCH];
		make_ctrs(v, BATCH, c, bswap);
		c = cn__ctr_add(c, 4 * BATCH);
		encrypt(v, BATCH, rk);
		for (int j = 0; j < BATCH; j++) {
			__m512i x = v[j];
			if (ip)
				x = _mm512_xor_si512(x, _mm512_loadu_si512((const void *)(ip + 64 * j)));
			_mm512_storeu_si512((void *)(op + 64 * j), x);
		}
		if (ip)
			ip += 64 * BATCH;
		op += 64 * BATCH;
		len -= 64 * BATCH;
	}
	while (len) {
		/* Up to four registers; the fixed count keeps v[] in registers,
		 * unused ones cost a few idle AES rounds. */
		__m512i v[4];
		make_ctrs(v, 4, c, bswap);
		encrypt(v, 4, rk);
		for (int j = 0; j < 4 && len; j++) {
			__mmask64 m = len >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1);
			__m512i x = v[j];
			if (ip) {
				x = _mm512_xor_si512(x, _mm512_maskz_loadu_epi8(m, ip));
				ip += len >= 64 ? 64 : len;
			}
			_mm512_mask_storeu_epi8(op, m, x);
			op += len >= 64 ? 64 : len;
			len -= len >= 64 ? 64 : len;
		}
		c = cn__ctr_add(c, 16);
	}
}
#endif
