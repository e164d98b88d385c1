/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AES-128 (FIPS-197) and counter mode in portable C, table-free.
 *
 * Why no tables: a lookup indexed by key-dependent bytes leaks the key
 * through the cache (the cache-timing attacks on T-table AES). Here the
 * S-box is computed: the inverse in GF(2^8) as x^254 (11 multiplications),
 * then the affine map, on eight bytes packed in a uint64_t at once, with
 * shifts, masks and XORs only, the same instruction stream for every key
 * and data. The price is speed (~300 ticks/byte), acceptable for the
 * fallback on CPUs without AES-NI and for the test oracle.
 *
 * State layout: the 16 bytes in FIPS-197 input order (byte r + 4c is row
 * r, column c), loaded as two little-endian 64-bit words, each holding two
 * columns; every step below works on that packing.
 */
#include "crypto_impl.h"

#define L01 0x0101010101010101ull
#define L7F 0x7f7f7f7f7f7f7f7full

/* Multiply each byte by x in GF(2^8) (AES polynomial 0x11b). */
static inline uint64_t xtime8(uint64_t a)
{
	return ((a & L7F) << 1) ^ (((a >> 7) & L01) * 0x1b);
}

/* Byte-wise GF(2^8) product. ((b >> i) & L01) * 0xff spreads bit i of each
 * byte over its byte without carrying into the next. */
static inline uint64_t gmul8(uint64_t a, uint64_t b)
{
	uint64_t r = 0;

	for (int i = 0; i < 8; i++) {
		r ^= a & (((b >> i) & L01) * 0xff);
		a = xtime8(a);
	}
	return r;
}

/* Rotate every byte left by k (1..7). */
static inline uint64_t rotb8(uint64_t x, int k)
{
	uint64_t hi = (0xffu << k) & 0xffu, lo = 0xffu >> (8 - k);

	return ((x << k) & (hi * L01)) | ((x >> (8 - k)) & (lo * L01));
}

/* S-box of each byte: affine(x^254). x^254 is 0 for 0, as the S-box needs. */
static inline uint64_t sbox8(uint64_t x)
{
	uint64_t x2 = gmul8(x, x);
	uint64_t x3 = gmul8(x2, x);
	uint64_t x6 = gmul8(x3, x3);
	uint64_t x12 = gmul8(x6, x6);
	uint64_t x15 = gmul8(x12, x3);
	uint64_t x30 = gmul8(x15, x15);
	uint64_t x60 = gmul8(x30, x30);
	uint64_t x120 = gmul8(x60, x60);
	uint64_t x240 = gmul8(x120, x120);
	uint64_t x252 = gmul8(x240, x12);
	uint64_t y = gmul8(x252, x2);

	return y ^ rotb8(y, 1) ^ rotb8(y, 2) ^ rotb8(y, 3) ^ rotb8(y, 4) ^ (0x63 * L01);
}

static inline uint64_t ld64le(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void st64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

/* MixColumns on two columns: each 32-bit half is a column, row 0 in the
 * low byte. r1 moves row r+1 into row r; out_r = 2a_r ^ 3a_{r+1} ^ a_{r+2}
 * ^ a_{r+3} = xtime(a_r ^ a_{r+1}) ^ a_{r+1} ^ a_{r+2} ^ a_{r+3}. */
static inline uint64_t rot_rows(uint64_t x)
{
	return ((x >> 8) & 0x00ffffff00ffffffull) | ((x << 24) & 0xff000000ff000000ull);
}

static inline uint64_t mix2(uint64_t x)
{
	uint64_t r1 = rot_rows(x), r2 = rot_rows(r1), r3 = rot_rows(r2);

	return xtime8(x ^ r1) ^ r1 ^ r2 ^ r3;
}

/* ShiftRows: row r rotates left by r columns, new[r + 4c] = old[r + 4(c+r)]. */
static inline void shift_rows(uint64_t *w0, uint64_t *w1)
{
	uint8_t s[16], t[16];

	st64le(s, *w0);
	st64le(s + 8, *w1);
	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++)
			t[r + 4 * c] = s[r + 4 * ((c + r) & 3)];
	*w0 = ld64le(t);
	*w1 = ld64le(t + 8);
}

void cn_aes128_encrypt_block_generic(const struct cn_aes128_key *k, const void *in, void *out)
{
	uint64_t w0 = ld64le(in) ^ ld64le(k->rk[0]);
	uint64_t w1 = ld64le((const uint8_t *)in + 8) ^ ld64le(k->rk[0] + 8);

	for (int round = 1; round <= 10; round++) {
		w0 = sbox8(w0);
		w1 = sbox8(w1);
		shift_rows(&w0, &w1);
		if (round < 10) {
			w0 = mix2(w0);
			w1 = mix2(w1);
		}
		w0 ^= ld64le(k->rk[round]);
		w1 ^= ld64le(k->rk[round] + 8);
	}
	st64le(out, w0);
	st64le((uint8_t *)out + 8, w1);
}

void cn_aes128_expand_key_generic(struct cn_aes128_key *k, const uint8_t *key)
{
	/* FIPS-197 5.2 with the words as little-endian byte images:
	 * RotWord is a right rotation by 8 bits of that image. */
	uint32_t w[44];
	uint32_t rcon = 1;

	for (int i = 0; i < 4; i++)
		w[i] = cn__ld32le(key + 4 * i);
	for (int i = 4; i < 44; i++) {
		uint32_t t = w[i - 1];
		if (i % 4 == 0) {
			t = (t >> 8) | (t << 24);
			t = (uint32_t)sbox8(t) ^ rcon;
			rcon = (uint32_t)xtime8(rcon) & 0xff;
		}
		w[i] = w[i - 4] ^ t;
	}
	for (int i = 0; i < 44; i++)
		cn__st32le(k->rk[i / 4] + 4 * (i % 4), w[i]);
}

void cn_aes128ctr_xor_generic(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			      void *out, size_t len)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	struct cn__ctr128 c = cn__ctr_load(ctr);
	uint8_t blk[16], ks[16];

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	while (len) {
		size_t n = len < 16 ? len : 16;
		cn__ctr_store(blk, c);
		c = cn__ctr_add(c, 1);
		cn_aes128_encrypt_block_generic(k, blk, ks);
		cn__xor_tail(op, ip, ks, n);
		if (ip)
			ip += n;
		op += n;
		len -= n;
	}
}
