/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-128-CTR with VAES on 512-bit registers: one VAESENC does a round of
 * four blocks, and eight registers (32 blocks, 512 bytes) are in flight so
 * that the instruction's latency is covered. The last < 512 bytes go in
 * passes of exactly the registers they need (4, 2, 1), the register that
 * reaches the end byte-masked at load and store (AVX512BW), so nothing
 * outside [in, in+len) / [out, out+len) is touched, no stack copy is made
 * and no round is spent on a register past the end.
 *
 * Counter blocks: ctr holds the next four counters as 128-bit
 * little-endian integers, one per lane (low qword first), advanced by 4
 * with one 64-bit add per register; one VPSHUFB per register turns them
 * into big-endian counter blocks. The 64-bit add cannot carry into the
 * high qword, so a call whose low 64 counter bits would wrap is split at
 * the wrap (run() twice), which keeps the loop free of carry handling.
 * The round keys are eleven named registers, not an array: gcc 12 spilled
 * the array's registers around the tail passes.
 *
 * (Figures against the previous form: docs/performance.md, Ciphers.)
 *
 * Compiled with the AVX-512 flags plus -maes -mvaes -mvpclmulqdq
 * (src/meson.build's isa_avx512vaes); crypto.c requires all of those
 * features, and AESNI/SSSE3/SSE4.1 for the shared key expansion.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "aes128_ni.h"
#include <stdbool.h>

struct vaes_keys {
	__m512i rk0, rk1, rk2, rk3, rk4, rk5, rk6, rk7, rk8, rk9, rk10;
	__m512i bswap, inc;
};

/* Round keys broadcast to all four lanes, the byte reversal, the counter
 * step. Built where they are used: a struct whose address escaped to an
 * out-of-line call was written to the stack on every call (13 x 64 B). */
static inline __attribute__((always_inline)) struct vaes_keys
load_keys(const struct cn_aes128_key *key)
{
	struct vaes_keys k;

#define RK(r) _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)key->rk[r]))
	k.rk0 = RK(0), k.rk1 = RK(1), k.rk2 = RK(2), k.rk3 = RK(3), k.rk4 = RK(4), k.rk5 = RK(5);
	k.rk6 = RK(6), k.rk7 = RK(7), k.rk8 = RK(8), k.rk9 = RK(9), k.rk10 = RK(10);
#undef RK
	k.bswap = _mm512_broadcast_i32x4(cn__aes_bswap128_mask());
	k.inc = _mm512_setr_epi64(4, 0, 4, 0, 4, 0, 4, 0);
	return k;
}

#define ROUND(op, r)                                                   \
	for (int j = 0; j < nv; j++)                                   \
		v[j] = op(v[j], r)

/*
 * The next nv (<= 8, a constant after inlining, so v[] stays in
 * registers) registers of keystream from *ctr, the rounds interleaved
 * across the registers, XORed with in (when has_in) and stored; the
 * register that reaches the end of the data (*len) is byte-masked.
 */
static inline __attribute__((always_inline)) void
pass(const struct vaes_keys *k, const int nv, const bool has_in, __m512i *ctr,
     const uint8_t **ip, uint8_t **op, size_t *len)
{
	__m512i v[8];

	for (int j = 0; j < nv; j++) {
		v[j] = _mm512_xor_si512(_mm512_shuffle_epi8(*ctr, k->bswap), k->rk0);
		*ctr = _mm512_add_epi64(*ctr, k->inc);
	}
	ROUND(_mm512_aesenc_epi128, k->rk1);
	ROUND(_mm512_aesenc_epi128, k->rk2);
	ROUND(_mm512_aesenc_epi128, k->rk3);
	ROUND(_mm512_aesenc_epi128, k->rk4);
	ROUND(_mm512_aesenc_epi128, k->rk5);
	ROUND(_mm512_aesenc_epi128, k->rk6);
	ROUND(_mm512_aesenc_epi128, k->rk7);
	ROUND(_mm512_aesenc_epi128, k->rk8);
	ROUND(_mm512_aesenc_epi128, k->rk9);
	ROUND(_mm512_aesenclast_epi128, k->rk10);
	for (int j = 0; j < nv; j++) {
		const size_t n = *len >= 64 ? 64 : *len;
		const __mmask64 m = _bzhi_u64(~0ull, (unsigned)n); /* all 64 for n = 64 */
		__m512i x = v[j];

		if (has_in) {
			x = _mm512_xor_si512(x, _mm512_maskz_loadu_epi8(m, *ip));
			*ip += n;
		}
		_mm512_mask_storeu_epi8(*op, m, x);
		*op += n;
		*len -= n;
	}
}

/* [in, in+len) from counter (hi, lo), whose low 64 bits do not wrap
 * within the len / 16 rounded up blocks. */
static inline __attribute__((always_inline)) void
run(const struct vaes_keys *k, const bool has_in, uint64_t hi, uint64_t lo, const uint8_t *ip,
    uint8_t *op, size_t len)
{
	__m512i ctr = _mm512_add_epi64(_mm512_broadcast_i32x4(_mm_set_epi64x((long long)hi,
									      (long long)lo)),
				       _mm512_setr_epi64(0, 0, 1, 0, 2, 0, 3, 0));

	while (len >= 512)
		pass(k, 8, has_in, &ctr, &ip, &op, &len);
	/* The last < 512 bytes, n <= 8 registers. The largest pass first:
	 * the smaller ones, whose ten dependent rounds are latency-bound,
	 * overlap its rounds. */
	size_t n = (len + 63) / 64;
	for (; n >= 4; n -= 4)
		pass(k, 4, has_in, &ctr, &ip, &op, &len);
	if (n & 2)
		pass(k, 2, has_in, &ctr, &ip, &op, &len);
	if (n & 1)
		pass(k, 1, has_in, &ctr, &ip, &op, &len);
}

CN__AES128CTR_ENTRY(cn_aes128ctr_xor_vaes, struct vaes_keys)
#endif
