/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX2: twenty-four blocks (1.5 KB) per pass as three interleaved
 * groups of eight; what is left (< 1.5 KB) takes one pass of 8, 16 or 24
 * blocks (two or three groups here, one in chacha20_x8.h), the fewest
 * that cover it, or, up to 384 bytes, one to three pairs of blocks in
 * the horizontal layout (chacha20_h).
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
 * Figures, against OpenSSL's AVX2 path: docs/performance.md, Ciphers.
 *
 * Compiled with -mavx2 -mbmi -mbmi2 (src/meson.build); crypto.c requires
 * exactly those features.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "chacha20_x8.h"

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
	CN_X8_CONSTS;
	CN_X8_INIT(x, counter);
	CN_X8_INIT(y, counter + 8);

	CN_X8_TEN_DOUBLE_ROUNDS(QR2)
	X8_FINISH(x, counter, 0);
	X8_FINISH(y, counter + 8, 512);
}

/* Blocks counter..counter+23: 1536 bytes, groups x, y and z. */
static inline void chacha20_x8x3(const struct cn_chacha20 *st, uint32_t counter,
				 const uint8_t *in, uint8_t *out)
{
	CN_X8_CONSTS;
	CN_X8_INIT(x, counter);
	CN_X8_INIT(y, counter + 8);
	CN_X8_INIT(z, counter + 16);

	CN_X8_TEN_DOUBLE_ROUNDS(QR3)
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

/*
 * Up to 2 * ns blocks (ns <= 3, a constant after inlining): "horizontal"
 * layout, each register one row of the 4x4 state for two blocks (the
 * lower block in the low 128-bit lane), ns such pairs side by side; the
 * diagonal rounds rotate rows b, c, d within each lane (VPSHUFD). The
 * state is 4 * ns registers, so nothing spills (the eight-block pass's
 * 16 state registers do, on the quarter rounds' chain), and ns pairs give
 * ns independent chains.
 */
static inline __attribute__((always_inline)) void
chacha20_h(const struct cn_chacha20 *st, uint32_t counter, const uint8_t *in, uint8_t *out,
	   size_t len, const int ns)
{
	CN_X8_ROT_CONSTS;
	const __m256i a0 = _mm256_setr_epi32((int)CN_CHACHA_C0, (int)CN_CHACHA_C1, (int)CN_CHACHA_C2,
					     (int)CN_CHACHA_C3, (int)CN_CHACHA_C0, (int)CN_CHACHA_C1,
					     (int)CN_CHACHA_C2, (int)CN_CHACHA_C3);
	const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)&st->key[0]));
	const __m256i c0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)&st->key[4]));
	__m256i a[3], b[3], c[3], d[3], d0[3];
	uint8_t ks[384] __attribute__((aligned(32)));

	for (int j = 0; j < ns; j++) {
		d0[j] = _mm256_setr_epi32((int)(counter + 2 * j), (int)st->nonce[0],
					  (int)st->nonce[1], (int)st->nonce[2],
					  (int)(counter + 2 * j + 1), (int)st->nonce[0],
					  (int)st->nonce[1], (int)st->nonce[2]);
		a[j] = a0, b[j] = b0, c[j] = c0, d[j] = d0[j];
	}
	for (int i = 0; i < 10; i++) {
		for (int j = 0; j < ns; j++)
			CN_X8_QR(a[j], b[j], c[j], d[j]); /* columns */
		for (int j = 0; j < ns; j++) {
			b[j] = _mm256_shuffle_epi32(b[j], 0x39); /* row b left by 1 */
			c[j] = _mm256_shuffle_epi32(c[j], 0x4e); /* row c by 2 */
			d[j] = _mm256_shuffle_epi32(d[j], 0x93); /* row d left by 3 */
		}
		for (int j = 0; j < ns; j++)
			CN_X8_QR(a[j], b[j], c[j], d[j]); /* diagonals */
		for (int j = 0; j < ns; j++) {
			b[j] = _mm256_shuffle_epi32(b[j], 0x93);
			c[j] = _mm256_shuffle_epi32(c[j], 0x4e);
			d[j] = _mm256_shuffle_epi32(d[j], 0x39);
		}
	}
	for (int j = 0; j < ns; j++) {
		__m256i x = _mm256_add_epi32(a[j], a0), y = _mm256_add_epi32(b[j], b0);
		__m256i z = _mm256_add_epi32(c[j], c0), w = _mm256_add_epi32(d[j], d0[j]);
		uint8_t *k = ks + 128 * j;
		/* block 2j: the low lanes of the rows, block 2j + 1 the high */
		_mm256_store_si256((__m256i *)k, _mm256_permute2x128_si256(x, y, 0x20));
		_mm256_store_si256((__m256i *)(k + 32), _mm256_permute2x128_si256(z, w, 0x20));
		_mm256_store_si256((__m256i *)(k + 64), _mm256_permute2x128_si256(x, y, 0x31));
		_mm256_store_si256((__m256i *)(k + 96), _mm256_permute2x128_si256(z, w, 0x31));
	}
	cn__x8_xor_ks(out, in, ks, len);
}

/* The last len <= 384 bytes: 1, 2 or 3 pairs of blocks, the fewest that
 * cover them. */
static __attribute__((noinline)) void chacha20_small(const struct cn_chacha20 *st,
						     uint32_t counter, const uint8_t *in,
						     uint8_t *out, size_t len)
{
	if (len <= 128)
		chacha20_h(st, counter, in, out, len, 1);
	else if (len <= 256)
		chacha20_h(st, counter, in, out, len, 2);
	else
		chacha20_h(st, counter, in, out, len, 3);
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
	else if (len > 384)
		cn__chacha20_x8_tail(st, counter, ip, op, len);
	else if (len)
		chacha20_small(st, counter, ip, op, len);
}
#endif
