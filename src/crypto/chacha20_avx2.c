/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ChaCha20, AVX2: eight blocks (512 bytes) per pass (chacha20_x8.h).
 * Compiled with -mavx2 -mbmi -mbmi2 (src/meson.build); crypto.c requires
 * exactly those features.
 */
#include "crypto_impl.h"

#if defined(__x86_64__)
#include "chacha20_x8.h"

void cn_chacha20_xor_avx2(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	const uint8_t *ip = in;
	uint8_t *op = out;
	uint32_t counter = st->counter;

	CN_CRYPTO_CHECK_BUFS(in, out, len);
	while (len >= 512) {
		cn__chacha20_x8(st, counter, ip, op);
		counter += 8;
		if (ip)
			ip += 512;
		op += 512;
		len -= 512;
	}
	if (len)
		cn__chacha20_x8_tail(st, counter, ip, op, len);
}
#endif
