/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private helpers shared by the cipher variants. Included by files compiled
 * with different -m flags (one static library per ISA, src/meson.build), so
 * everything here is static inline with baseline instructions: each variant
 * gets its own copy compiled for its ISA.
 */
#ifndef CN_CRYPTO_IMPL_H
#define CN_CRYPTO_IMPL_H

#include "cachenet/crypto.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* Debug checks of the raw variants' contract (the checked entry points in
 * crypto.c return -EINVAL instead), compiled out with NDEBUG. */
#ifndef NDEBUG
#define CN_CRYPTO_CHECK_BUFS(in, out, len)                                                  \
	assert(((len) == 0 || (out) != NULL) && "cipher: NULL out with len > 0");           \
	assert(((in) == NULL || (const void *)(in) == (const void *)(out) ||                \
		(uintptr_t)(in) + (len) <= (uintptr_t)(out) ||                              \
		(uintptr_t)(out) + (len) <= (uintptr_t)(in)) &&                             \
	       "cipher: in and out overlap but are not equal")
#else
#define CN_CRYPTO_CHECK_BUFS(in, out, len) ((void)0)
#endif

/* "expand 32-byte k" as four little-endian words (RFC 8439 2.3). */
#define CN_CHACHA_C0 0x61707865u
#define CN_CHACHA_C1 0x3320646eu
#define CN_CHACHA_C2 0x79622d32u
#define CN_CHACHA_C3 0x6b206574u

static inline uint32_t cn__ld32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void cn__st32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Big-endian 64-bit load and store: one load (store) and a BSWAP where
 * the compiler knows the byte order (gcc 12 did not turn the byte loop
 * into one: 8 loads, shifts and ORs per word), the byte loop elsewhere. */
static inline uint64_t cn__ld64be(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;
	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
#else
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
#endif
}

static inline void cn__st64be(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
#else
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
#endif
}

/* XOR n bytes of keystream ks into out from in (in NULL: copy ks). Byte
 * loop for tails only (n < one batch); reads/writes exactly n bytes. */
static inline void cn__xor_tail(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
	if (in) {
		for (size_t i = 0; i < n; i++)
			out[i] = in[i] ^ ks[i];
	} else {
		memcpy(out, ks, n);
	}
}

/* out = in ^ ks over n bytes (in NULL: ks): whole blocks of w bytes (a
 * power of two) by put_block(out, in, ks), then the rest byte-exactly, so
 * nothing past n is touched. put_block is a vector XOR-and-store that
 * inlines (w and put_block are constants at every call). */
static inline __attribute__((always_inline)) void
cn__xor_ks(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n, size_t w,
	   void (*put_block)(uint8_t *out, const uint8_t *in, const uint8_t *ks))
{
	size_t full = n & ~(w - 1);

	for (size_t i = 0; i < full; i += w)
		put_block(out + i, in ? in + i : NULL, ks + i);
	cn__xor_tail(out + full, in ? in + full : NULL, ks + full, n - full);
}

/*
 * The entry point @p fn of a ChaCha20 variant: whole passes of @p w bytes
 * (w / 64 blocks), pass(st, counter, in, out) making w bytes of out = in ^
 * keystream (in NULL: the keystream) from blocks counter.., then the len < w
 * bytes left (none: len 0) by rest(st, counter, in, out, len). A macro, as
 * CN__AES128CTR_ENTRY: the same loop as an always-inline function taking
 * pass and rest as function pointers compiles (gcc 12 -O3) to other
 * register choices and a few more moves and spills.
 */
#define CN__CHACHA20_ENTRY(fn, w, pass, rest)                                             \
	void fn(const struct cn_chacha20 *st, const void *in, void *out, size_t len)      \
	{                                                                                 \
		const uint8_t *ip = in;                                                   \
		uint8_t *op = out;                                                        \
		uint32_t counter = st->counter;                                           \
                                                                                          \
		CN_CRYPTO_CHECK_BUFS(in, out, len);                                       \
		while (len >= (w)) {                                                      \
			pass(st, counter, ip, op);                                        \
			counter += (w) / 64;                                              \
			if (ip)                                                           \
				ip += (w);                                                \
			op += (w);                                                        \
			len -= (w);                                                       \
		}                                                                         \
		rest(st, counter, ip, op, len);                                           \
	}

/* One ChaCha20 block in scalar code: the 16 output words (already added to
 * the input state), for the variants' single-block paths and the per-block
 * step. */
static inline void cn__chacha20_block_words(const struct cn_chacha20 *st, uint32_t counter,
					    uint32_t out[16])
{
	uint32_t in[16] = { CN_CHACHA_C0, CN_CHACHA_C1, CN_CHACHA_C2, CN_CHACHA_C3,
			    st->key[0], st->key[1], st->key[2], st->key[3],
			    st->key[4], st->key[5], st->key[6], st->key[7],
			    counter, st->nonce[0], st->nonce[1], st->nonce[2] };
	uint32_t x[16];

	memcpy(x, in, sizeof(x));
#define CN__ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define CN__QR(a, b, c, d)                                  \
	do {                                                \
		x[a] += x[b]; x[d] ^= x[a]; x[d] = CN__ROTL(x[d], 16); \
		x[c] += x[d]; x[b] ^= x[c]; x[b] = CN__ROTL(x[b], 12); \
		x[a] += x[b]; x[d] ^= x[a]; x[d] = CN__ROTL(x[d], 8);  \
		x[c] += x[d]; x[b] ^= x[c]; x[b] = CN__ROTL(x[b], 7);  \
	} while (0)
	for (int i = 0; i < 10; i++) {
		CN__QR(0, 4, 8, 12);
		CN__QR(1, 5, 9, 13);
		CN__QR(2, 6, 10, 14);
		CN__QR(3, 7, 11, 15);
		CN__QR(0, 5, 10, 15);
		CN__QR(1, 6, 11, 12);
		CN__QR(2, 7, 8, 13);
		CN__QR(3, 4, 9, 14);
	}
#undef CN__QR
#undef CN__ROTL
	for (int i = 0; i < 16; i++)
		out[i] = x[i] + in[i];
}

/* 128-bit big-endian counter block as two host integers. */
struct cn__ctr128 {
	uint64_t hi, lo;
};

static inline struct cn__ctr128 cn__ctr_load(const uint8_t *b)
{
	return (struct cn__ctr128){ cn__ld64be(b), cn__ld64be(b + 8) };
}

static inline void cn__ctr_store(uint8_t *b, struct cn__ctr128 c)
{
	cn__st64be(b, c.hi);
	cn__st64be(b + 8, c.lo);
}

/* c + n modulo 2^128 */
static inline struct cn__ctr128 cn__ctr_add(struct cn__ctr128 c, uint64_t n)
{
	uint64_t lo = c.lo + n;

	return (struct cn__ctr128){ c.hi + (lo < n), lo };
}

/*
 * The entry point @p fn of an AES-128-CTR variant over its key schedule
 * type @p K, with the out-of-line function for the rare call whose low 64
 * counter bits wrap (at most once per call: 2^64 blocks are more bytes than
 * a size_t holds), which runs the blocks up to the wrap, then the rest from
 * (hi + 1, 0). The including file provides K load_keys(const struct
 * cn_aes128_key *) and an always-inline run(const K *, bool has_in, hi, lo,
 * in, out, len); has_in is a constant at each of its calls.
 */
#define CN__AES128CTR_ENTRY(fn, K)                                                        \
	static __attribute__((noinline, cold)) void run_wrapping(                         \
		const struct cn_aes128_key *key, uint64_t hi, uint64_t lo, const uint8_t *ip, \
		uint8_t *op, size_t len, size_t first)                                    \
	{                                                                                 \
		const K kk = load_keys(key), *k = &kk;                                    \
                                                                                          \
		if (ip) {                                                                 \
			run(k, true, hi, lo, ip, op, first);                              \
			run(k, true, hi + 1, 0, ip + first, op + first, len - first);     \
		} else {                                                                  \
			run(k, false, hi, lo, NULL, op, first);                           \
			run(k, false, hi + 1, 0, NULL, op + first, len - first);          \
		}                                                                         \
	}                                                                                 \
                                                                                          \
	void fn(const struct cn_aes128_key *key, const uint8_t *ctr, const void *in,       \
		void *out, size_t len)                                                    \
	{                                                                                 \
		const uint8_t *ip = in;                                                   \
		uint8_t *op = out;                                                        \
		const uint64_t hi = cn__ld64be(ctr), lo = cn__ld64be(ctr + 8);            \
		CN_CRYPTO_CHECK_BUFS(in, out, len);                                       \
		/* blocks before the low 64 bits wrap: 2^64 - lo (room 0: lo = 0, no   \
		 * wrap within any length) */                                            \
		const uint64_t room = 0 - lo;                                             \
		const size_t blocks = len / 16 + (len % 16 != 0);                         \
		if (__builtin_expect(room != 0 && blocks > room, 0)) {                    \
			run_wrapping(key, hi, lo, ip, op, len, (size_t)room * 16);        \
			return;                                                           \
		}                                                                         \
		const K k = load_keys(key);                                               \
		if (in)                                                                   \
			run(&k, true, hi, lo, ip, op, len);                               \
		else                                                                      \
			run(&k, false, hi, lo, NULL, op, len);                            \
	}

#endif /* CN_CRYPTO_IMPL_H */
