/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX2: twenty-four blocks (1.5 KB) per pass as three interleaved
 * groups of eight; what is left (< 1.5 KB) takes one pass of 8, 16 or 24
 * blocks (two or three groups here, one in chacha20_x8.h), the fewest
 * that cover it.
 *
 * Why several groups: a quarter round is a chain of twelve dependent
 * vector instructions (fourteen with the shift-and-OR rotations), and one
 * group of eight blocks has only four independent quarter rounds per half
 * round, so a single group waits on latency. Two or three groups give
 * eight or twelve independent chains; their 32 or 48 state registers do
 * not fit AVX2's 16, so most live on the stack, which costs loads and
 * stores that the out-of-order core overlaps with the other groups'
 * arithmetic.
 *
 * Measured (2026-11-24, Zen 5 class EPYC VM: an AVX-512 machine, so this
 * variant forced; OpenSSL 3.0 told to use its AVX2 code with
 * OPENSSL_ia32cap=":~0x10000"), TSC ticks per byte, the one-group kernel
 * before and this one after, two alternations of the binaries, medians of
 * 5 interleaved repetitions (cachenet-bench-crypto
 * --benchmark_filter='^chacha20/(cachenet-avx2|openssl)/...', taskset -c 1):
 *   64 B    7.83-7.97 -> 7.83-7.90   (OpenSSL AVX2 5.71-5.77)
 *   576 B   1.75      -> 1.37-1.49   (1.27-1.31)
 *   1460 B  1.03-1.04 -> 0.77-0.78   (1.02-1.04)
 *   16 KB   0.99      -> 0.73-0.77   (0.71-0.72)
 *   64 KB   0.98-0.99 -> 0.72-0.73   (0.70-0.71)
 * Three groups against two: 16 KB 0.725 against 0.778 (same run). Below
 * 512 bytes one group of eight is still latency-bound at every size
 * (OpenSSL's one-block path is faster at 64 B).
 *
 * Compiled with -mavx2 -mbmi -mbmi2 (src/meson.build); crypto.c requires
 * exactly those features.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "chacha20_x8.h"

#define X8_INIT(p, ctr)                                                        \
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

/* Blocks counter..counter+15 (mod 2^32): 1024 bytes of out = in ^
 * keystream, group x the first eight, group y the next eight. */
static inline void chacha20_x8x2(const struct cn_chacha20 *st, uint32_t counter,
				 const uint8_t *in, uint8_t *out)
{
	const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
					       2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
	const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
					      3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	X8_INIT(x, counter);
	X8_INIT(y, counter + 8);

	for (int i = 0; i < 10; i++) {
		CN_X8_QR(x0, x4, x8, x12);
		CN_X8_QR(y0, y4, y8, y12);
		CN_X8_QR(x1, x5, x9, x13);
		CN_X8_QR(y1, y5, y9, y13);
		CN_X8_QR(x2, x6, x10, x14);
		CN_X8_QR(y2, y6, y10, y14);
		CN_X8_QR(x3, x7, x11, x15);
		CN_X8_QR(y3, y7, y11, y15);
		CN_X8_QR(x0, x5, x10, x15);
		CN_X8_QR(y0, y5, y10, y15);
		CN_X8_QR(x1, x6, x11, x12);
		CN_X8_QR(y1, y6, y11, y12);
		CN_X8_QR(x2, x7, x8, x13);
		CN_X8_QR(y2, y7, y8, y13);
		CN_X8_QR(x3, x4, x9, x14);
		CN_X8_QR(y3, y4, y9, y14);
	}
	cn__x8_finish(st, counter, in, out, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12,
		      x13, x14, x15);
	cn__x8_finish(st, counter + 8, in ? in + 512 : NULL, out + 512, y0, y1, y2, y3, y4, y5, y6,
		      y7, y8, y9, y10, y11, y12, y13, y14, y15);
}

/* Blocks counter..counter+15 (mod 2^32): 1024 bytes of out = in ^
 * keystream, group x the first eight, group y the next eight. */
static inline void chacha20_x8x3(const struct cn_chacha20 *st, uint32_t counter,
				 const uint8_t *in, uint8_t *out)
{
	const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
					       2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
	const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
					      3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	X8_INIT(x, counter);
	X8_INIT(y, counter + 8);
	X8_INIT(z, counter + 16);

	for (int i = 0; i < 10; i++) {
		CN_X8_QR(x0, x4, x8, x12);
		CN_X8_QR(y0, y4, y8, y12);
		CN_X8_QR(z0, z4, z8, z12);
		CN_X8_QR(x1, x5, x9, x13);
		CN_X8_QR(y1, y5, y9, y13);
		CN_X8_QR(z1, z5, z9, z13);
		CN_X8_QR(x2, x6, x10, x14);
		CN_X8_QR(y2, y6, y10, y14);
		CN_X8_QR(z2, z6, z10, z14);
		CN_X8_QR(x3, x7, x11, x15);
		CN_X8_QR(y3, y7, y11, y15);
		CN_X8_QR(z3, z7, z11, z15);
		CN_X8_QR(x0, x5, x10, x15);
		CN_X8_QR(y0, y5, y10, y15);
		CN_X8_QR(z0, z5, z10, z15);
		CN_X8_QR(x1, x6, x11, x12);
		CN_X8_QR(y1, y6, y11, y12);
		CN_X8_QR(z1, z6, z11, z12);
		CN_X8_QR(x2, x7, x8, x13);
		CN_X8_QR(y2, y7, y8, y13);
		CN_X8_QR(z2, z7, z8, z13);
		CN_X8_QR(x3, x4, x9, x14);
		CN_X8_QR(y3, y4, y9, y14);
		CN_X8_QR(z3, z4, z9, z14);
	}
	cn__x8_finish(st, counter, in, out, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12,
		      x13, x14, x15);
	cn__x8_finish(st, counter + 8, in ? in + 512 : NULL, out + 512, y0, y1, y2, y3, y4, y5, y6,
		      y7, y8, y9, y10, y11, y12, y13, y14, y15);
	cn__x8_finish(st, counter + 16, in ? in + 1024 : NULL, out + 1024, z0, z1, z2, z3, z4, z5, z6,
		      z7, z8, z9, z10, z11, z12, z13, z14, z15);
}

/* The last 512 < len < 1536 bytes: the keystream of the pass's blocks in a
 * stack buffer, XORed byte-exactly so nothing past len is touched. */
static __attribute__((noinline)) void
chacha20_tail(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	      size_t len)
{
	uint8_t ks[1536] __attribute__((aligned(32)));
	size_t full = len & ~(size_t)31;

	if (len > 1024)
		chacha20_x8x3(st, counter, NULL, ks);
	else
		chacha20_x8x2(st, counter, NULL, ks);
	for (size_t i = 0; i < full; i += 32)
		cn__x8_put(out + i, in ? in + i : NULL, _mm256_load_si256((const __m256i *)(ks + i)));
	cn__xor_tail(out + full, in ? in + full : NULL, ks + full, len - full);
}

void cn_chacha20_xor_avx2(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	uint32_t counter = st->counter;

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	while (len >= 1536) {
		chacha20_x8x3(st, counter, ip, op);
		counter += 24;
		if (ip)
			ip += 1536;
		op += 1536;
		len -= 1536;
	}
	/* The rest, < 1536 bytes, in one pass of 8, 16 or 24 blocks, the
	 * fewest that cover it: the passes are latency-bound, so one partly
	 * used pass beats a full pass followed by a smaller one. */
	if (len > 512)
		chacha20_tail(st, counter, ip, op, len);
	else if (len == 512)
		cn__chacha20_x8(st, counter, ip, op);
	else if (len)
		cn__chacha20_x8_tail(st, counter, ip, op, len);
}
#endif
