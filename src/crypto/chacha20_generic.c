/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, portable C: one block at a time (RFC 8439 2.3), keystream
 * serialised little-endian and XORed 8 bytes at a time. The reference the
 * tests compare the vector variants with, and the fallback.
 */
#include "crypto_impl.h"

static void keystream_bytes(const struct cn_chacha20 *st, uint32_t counter, uint8_t ks[64])
{
	uint32_t w[16];

	cn__chacha20_block_words(st, counter, w);
	for (int i = 0; i < 16; i++)
		cn__st32le(ks + 4 * i, w[i]);
}

void cn_chacha20_xor_generic(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	uint32_t counter = st->counter;
	uint8_t ks[64];

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	while (len >= 64) {
		keystream_bytes(st, counter++, ks);
		if (ip) {
			/* memcpy'd 64-bit words: byte-wise XOR semantics, any
			 * alignment, in == out safe (each word is loaded before it
			 * is stored). */
			for (int i = 0; i < 64; i += 8) {
				uint64_t a, b;
				memcpy(&a, ip + i, 8);
				memcpy(&b, ks + i, 8);
				a ^= b;
				memcpy(op + i, &a, 8);
			}
			ip += 64;
		} else {
			memcpy(op, ks, 64);
		}
		op += 64;
		len -= 64;
	}
	if (len) {
		keystream_bytes(st, counter, ks);
		cn__xor_tail(op, ip, ks, len);
	}
}
