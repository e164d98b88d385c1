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

static inline __attribute__((always_inline)) uint8x16_t xform(uint8x16_t x, enum cn__xform_kind k)
{
	switch (k) {
	case CN__BSWAP16:
		return vrev16q_u8(x);
	case CN__BSWAP32:
		return vrev32q_u8(x);
	case CN__PES:
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
run(unsigned char *d, const unsigned char *s, size_t n, enum cn__xform_kind k)
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
	/* 16 is a multiple of every unit, so the tail starts on a unit. */
	cn__xform_scalar(d, s, n, k);
}

CN_XFORM_KERNELS(neon)

#endif /* CN_NEON */
