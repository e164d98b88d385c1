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

/* The rotation constants and lane numbers every group pass needs. */
#define X8_CONSTS                                                                              \
	const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, \
					       13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15,  \
					       12, 13);                                           \
	const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13,  \
					      14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12,   \
					      13, 14);                                            \
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)

/* One quarter round on words a, b, c, d of every group: QR2 for groups x
 * and y, QR3 for x, y and z, interleaved instruction by instruction by
 * the compiler (independent chains). */
#define QR2(a, b, c, d)                                      \
	do {                                                 \
		CN_X8_QR(x##a, x##b, x##c, x##d);            \
		CN_X8_QR(y##a, y##b, y##c, y##d);            \
	} while (0)
#define QR3(a, b, c, d)                                      \
	do {                                                 \
		QR2(a, b, c, d);                             \
		CN_X8_QR(z##a, z##b, z##c, z##d);            \
	} while (0)

/* Ten double rounds (columns, then diagonals) with quarter-round macro QR. */
#define TEN_DOUBLE_ROUNDS(QR)                                \
	for (int i = 0; i < 10; i++) {                       \
		QR(0, 4, 8, 12);                             \
		QR(1, 5, 9, 13);                             \
		QR(2, 6, 10, 14);                            \
		QR(3, 7, 11, 15);                            \
		QR(0, 5, 10, 15);                            \
		QR(1, 6, 11, 12);                            \
		QR(2, 7, 8, 13);                             \
		QR(3, 4, 9, 14);                             \
	}

/* Feed-forward and output of group p: blocks ctr..ctr+7, 512 bytes at
 * byte offset off of in and out. */
#define X8_FINISH(p, ctr, off)                                                                 \
	cn__x8_finish(st, (ctr), in ? in + (off) : NULL, out + (off), p##0, p##1, p##2, p##3,   \
		      p##4, p##5, p##6, p##7, p##8, p##9, p##10, p##11, p##12, p##13, p##14,   \
		      p##15)

/* Blocks counter..counter+15 (mod 2^32): 1024 bytes of out = in ^
 * keystream (in NULL: the keystream), group x the first eight, y the next. */
static inline void chacha20_x8x2(const struct cn_chacha20 *st, uint32_t counter,
				 const uint8_t *in, uint8_t *out)
{
	X8_CONSTS;
	X8_INIT(x, counter);
	X8_INIT(y, counter + 8);

	TEN_DOUBLE_ROUNDS(QR2)
	X8_FINISH(x, counter, 0);
	X8_FINISH(y, counter + 8, 512);
}

/* Blocks counter..counter+23: 1536 bytes, groups x, y and z. */
static inline void chacha20_x8x3(const struct cn_chacha20 *st, uint32_t counter,
				 const uint8_t *in, uint8_t *out)
{
	X8_CONSTS;
	X8_INIT(x, counter);
	X8_INIT(y, counter + 8);
	X8_INIT(z, counter + 16);

	TEN_DOUBLE_ROUNDS(QR3)
	X8_FINISH(x, counter, 0);
	X8_FINISH(y, counter + 8, 512);
	X8_FINISH(z, counter + 16, 1024);
}

/* The last 512 < len < 1536 bytes: the keystream of the pass's blocks in a
 * stack buffer, XORed byte-exactly so nothing past len is touched. */
static __attribute__((noinline)) void
chacha20_tail(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	      size_t len)
{
	uint8_t ks[1536] __attribute__((aligned(32)));

	if (len > 1024)
		chacha20_x8x3(st, counter, NULL, ks);
	else
		chacha20_x8x2(st, counter, NULL, ks);
	cn__x8_xor_ks(out, in, ks, len);
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
