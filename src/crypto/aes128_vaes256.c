/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-128-CTR with VAES on 256-bit registers (AVX2, no AVX-512): one
 * VAESENC does a round of two blocks. Where VAES runs on 256-bit units
 * (AMD Zen 3/4, Intel client cores without AVX-512) two of them issue per
 * cycle with a latency of about four, so eight registers (16 blocks, 256
 * bytes) are in flight per pass; the 128-bit AES-NI variant needs twice
 * the instructions for the same bytes.
 *
 * Counter blocks as in the AVX-512 form (aes128_vaes.c): ctr holds the
 * next two counters as 128-bit little-endian integers, one per lane,
 * advanced by 2 with one 64-bit add per register and turned into
 * big-endian blocks by one VPSHUFB; a call whose low 64 counter bits
 * would wrap is split at the wrap.
 *
 * The last < 256 bytes go in passes of 4, 2 and 1 registers (the fewest
 * that cover them, largest first so the small latency-bound passes
 * overlap the large one). AVX2 has no byte-masked load or store, so the
 * register that reaches the end is written 16 bytes, then the last
 * < 16 bytes from a copy of the keystream block: nothing outside
 * [in, in+len) / [out, out+len) is read or written.
 *
 * The round keys are broadcast into eleven named registers; where the
 * compiler runs out of registers it keeps them on the stack and uses them
 * as VAESENC memory operands, which cost a load each and no extra
 * instruction.
 *
 * Compiled with -mavx2 -mbmi -mbmi2 -maes -mvaes (src/meson.build's
 * isa_avx2vaes); crypto.c requires those features and AESNI/SSSE3/SSE4.1
 * for the shared key expansion.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "aes128_ni.h"
#include <stdbool.h>

struct vaes256_keys {
	__m256i rk0, rk1, rk2, rk3, rk4, rk5, rk6, rk7, rk8, rk9, rk10;
	__m256i bswap, inc;
};

static inline __attribute__((always_inline)) struct vaes256_keys
load_keys(const struct cn_aes128_key *key)
{
	struct vaes256_keys k;

#define RK(r) _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)key->rk[r]))
	k.rk0 = RK(0), k.rk1 = RK(1), k.rk2 = RK(2), k.rk3 = RK(3), k.rk4 = RK(4), k.rk5 = RK(5);
	k.rk6 = RK(6), k.rk7 = RK(7), k.rk8 = RK(8), k.rk9 = RK(9), k.rk10 = RK(10);
#undef RK
	k.bswap = _mm256_broadcastsi128_si256(cn__aes_bswap128_mask());
	k.inc = _mm256_setr_epi64x(2, 0, 2, 0);
	return k;
}

#define ROUND(op, r)                                                   \
	for (int j = 0; j < nv; j++)                                   \
		v[j] = op(v[j], r)

/* The last 0 < n < 32 bytes of keystream register x (in NULL: copy). */
static __attribute__((noinline)) void put_partial(uint8_t *op, const uint8_t *ip, __m256i x,
						  size_t n)
{
	__m128i lo = _mm256_castsi256_si128(x);

	if (n >= 16) {
		__m128i w = lo;
		if (ip) {
			w = _mm_xor_si128(w, _mm_loadu_si128((const __m128i *)ip));
			ip += 16;
		}
		_mm_storeu_si128((__m128i *)op, w);
		op += 16;
		n -= 16;
		lo = _mm256_extracti128_si256(x, 1);
	}
	if (n) {
		uint8_t ks[16] __attribute__((aligned(16)));
		_mm_store_si128((__m128i *)ks, lo);
		cn__xor_tail(op, ip, ks, n);
	}
}

/*
 * The next nv (<= 8, a constant after inlining) registers of keystream
 * from *ctr, the rounds interleaved across the registers, XORed with in
 * (when has_in) and stored; the register that reaches the end of the
 * data (*len) is written byte-exactly.
 */
static inline __attribute__((always_inline)) void
pass(const struct vaes256_keys *k, const int nv, const bool has_in, __m256i *ctr,
     const uint8_t **ip, uint8_t **op, size_t *len)
{
	__m256i v[8];

	for (int j = 0; j < nv; j++) {
		v[j] = _mm256_xor_si256(_mm256_shuffle_epi8(*ctr, k->bswap), k->rk0);
		*ctr = _mm256_add_epi64(*ctr, k->inc);
	}
	ROUND(_mm256_aesenc_epi128, k->rk1);
	ROUND(_mm256_aesenc_epi128, k->rk2);
	ROUND(_mm256_aesenc_epi128, k->rk3);
	ROUND(_mm256_aesenc_epi128, k->rk4);
	ROUND(_mm256_aesenc_epi128, k->rk5);
	ROUND(_mm256_aesenc_epi128, k->rk6);
	ROUND(_mm256_aesenc_epi128, k->rk7);
	ROUND(_mm256_aesenc_epi128, k->rk8);
	ROUND(_mm256_aesenc_epi128, k->rk9);
	ROUND(_mm256_aesenclast_epi128, k->rk10);
	for (int j = 0; j < nv; j++) {
		if (__builtin_expect(*len < 32, 0)) {
			put_partial(*op, has_in ? *ip : NULL, v[j], *len);
			*len = 0;
			return;
		}
		__m256i x = v[j];
		if (has_in) {
			x = _mm256_xor_si256(x, _mm256_loadu_si256((const __m256i *)*ip));
			*ip += 32;
		}
		_mm256_storeu_si256((__m256i *)*op, x);
		*op += 32;
		*len -= 32;
	}
}

/* [in, in+len) from counter (hi, lo), whose low 64 bits do not wrap
 * within the len / 16 rounded up blocks. */
static inline __attribute__((always_inline)) void
run(const struct vaes256_keys *k, const bool has_in, uint64_t hi, uint64_t lo, const uint8_t *ip,
    uint8_t *op, size_t len)
{
	__m256i ctr = _mm256_add_epi64(_mm256_broadcastsi128_si256(_mm_set_epi64x((long long)hi,
										   (long long)lo)),
				       _mm256_setr_epi64x(0, 0, 1, 0));

	while (len >= 256)
		pass(k, 8, has_in, &ctr, &ip, &op, &len);
	size_t n = (len + 31) / 32;
	for (; n >= 4; n -= 4)
		pass(k, 4, has_in, &ctr, &ip, &op, &len);
	if (n & 2)
		pass(k, 2, has_in, &ctr, &ip, &op, &len);
	if (n & 1)
		pass(k, 1, has_in, &ctr, &ip, &op, &len);
}

CN__AES128CTR_ENTRY(cn_aes128ctr_xor_vaes256, struct vaes256_keys)
#endif
