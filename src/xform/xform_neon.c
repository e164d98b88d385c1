/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aarch64 Advanced SIMD (NEON) variants: REV16 / REV32 on byte vectors for
 * the swaps, REV64 on 32-bit lanes + ORR + AND for PES. Advanced SIMD is
 * part of ARMv8-A, so no compiler flag; dispatch asks for CN_CPU_NEON.
 *
 * Loop: 64 bytes per step through LD1/ST1 of four registers, all loads
 * before the stores (in place is safe), then 16-byte steps; the last
 * < 16 bytes go through the scalar kernel, which reads and writes exactly
 * them. Speed not measured (no ARM machine here; see csum_neon.c).
 */
#include "xform_impl.h"

#ifdef CN_NEON

#include <arm_neon.h>

enum kind { K_BSWAP16, K_BSWAP32, K_PES };

static inline __attribute__((always_inline)) uint8x16_t xform(uint8x16_t x, enum kind k)
{
	switch (k) {
	case K_BSWAP16:
		return vrev16q_u8(x);
	case K_BSWAP32:
		return vrev32q_u8(x);
	case K_PES:
	default: {
		/* Swapping the 32-bit halves of each 64-bit block pairs w0 with
		 * w1, whatever the byte order (cn__pes64 in xform_impl.h). */
		uint32x4_t w = vreinterpretq_u32_u8(x);
		w = vandq_u32(vorrq_u32(w, vrev64q_u32(w)), vdupq_n_u32(CN_PES_MASK));
		return vreinterpretq_u8_u32(w);
	}
	}
}

static inline __attribute__((always_inline)) void
run(unsigned char *d, const unsigned char *s, size_t n, enum kind k)
{
	for (; n >= 64; n -= 64, s += 64, d += 64) {
		uint8x16x4_t x = vld1q_u8_x4(s);
		x.val[0] = xform(x.val[0], k);
		x.val[1] = xform(x.val[1], k);
		x.val[2] = xform(x.val[2], k);
		x.val[3] = xform(x.val[3], k);
		vst1q_u8_x4(d, x);
	}
	for (; n >= 16; n -= 16, s += 16, d += 16)
		vst1q_u8(d, xform(vld1q_u8(s), k));
	/* 16 is a multiple of every unit, so the tail starts on a unit; k is a
	 * constant in each caller, so this is a direct (inlined) call. */
	static void (*const tail[])(unsigned char *, const unsigned char *, size_t) = {
		[K_BSWAP16] = cn__bswap16_scalar,
		[K_BSWAP32] = cn__bswap32_scalar,
		[K_PES] = cn__pes_scalar,
	};
	tail[k](d, s, n);
}

void cn_bswap16_neon(void *dst, const void *src, size_t len)
{
	run((unsigned char *)dst, (const unsigned char *)src, len, K_BSWAP16);
}

void cn_bswap32_neon(void *dst, const void *src, size_t len)
{
	run((unsigned char *)dst, (const unsigned char *)src, len, K_BSWAP32);
}

void cn_pes_neon(void *dst, const void *src, size_t len)
{
	run((unsigned char *)dst, (const unsigned char *)src, len, K_PES);
}

#endif /* CN_NEON */
