/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aarch64 Advanced SIMD (NEON) variant. Advanced SIMD is part of ARMv8-A,
 * so this file needs no extra compiler flag; dispatch still asks for
 * CN_CPU_NEON (HWCAP_ASIMD), which CACHENET_CPU_DISABLE=neon masks off.
 *
 * Sums in the buffer's own frame with unaligned 16-byte loads (LD1 has no
 * alignment requirement, and on ARMv8 cores a load that crosses a cache
 * line costs at most an extra cycle), so there is no head, and no byte
 * swap at the end: 16 bytes are a whole number of words, so every load
 * starts at an even offset of the buffer.
 *
 * Lanes: UADALP (vpadalq_u16) adds the two 16-bit words of each 32-bit
 * lane into it, at most 2 * 0xffff a step. Four accumulators take one
 * 16-byte load each per 64 bytes (independent chains for the adds'
 * latency); a block of at most BLOCK bytes gives a lane at most
 * BLOCK / 64 steps, < 2^11 * 2^17 = 2^28, so the four add up in 32 bits,
 * and each block is reduced (UADDLV, widening to 64 bits) into a scalar
 * end-around-carry sum. The last < 16 bytes go through the portable
 * scalar loop (csum_impl.h), from 0, in the same frame.
 *
 * Speed: not measured. This project's machines are x86-64 and qemu-user
 * emulation says nothing about an ARM core's speed (docs/performance.md).
 * So the dispatcher has no small-input thresholds for this variant: the
 * kernel takes every size itself (below 16 bytes it is the scalar loop).
 */
#include "csum_impl.h"

#ifdef CN_NEON

#include <arm_neon.h>

/* 2^17 bytes: at most 2^11 steps of <= 2^17 per lane (see above). */
#define BLOCK ((size_t)1 << 17)

static inline uint16x8_t ld16(const unsigned char *p)
{
	return vreinterpretq_u16_u8(vld1q_u8(p));
}

/* Sum of the four accumulators' lanes, widened: each < 2^28 (see above). */
static inline uint64_t reduce(uint32x4_t a0, uint32x4_t a1, uint32x4_t a2, uint32x4_t a3)
{
	return vaddlvq_u32(vaddq_u32(vaddq_u32(a0, a1), vaddq_u32(a2, a3)));
}

/* The sum of [p, p+n), n <= BLOCK and a multiple of 16. */
static inline uint64_t sum_block(const unsigned char *p, size_t n)
{
	uint32x4_t a0 = vdupq_n_u32(0), a1 = a0, a2 = a0, a3 = a0;

	for (; n >= 64; n -= 64, p += 64) {
		a0 = vpadalq_u16(a0, ld16(p));
		a1 = vpadalq_u16(a1, ld16(p + 16));
		a2 = vpadalq_u16(a2, ld16(p + 32));
		a3 = vpadalq_u16(a3, ld16(p + 48));
	}
	if (n & 32) {
		a0 = vpadalq_u16(a0, ld16(p));
		a1 = vpadalq_u16(a1, ld16(p + 16));
		p += 32;
	}
	if (n & 16)
		a2 = vpadalq_u16(a2, ld16(p));
	return reduce(a0, a1, a2, a3);
}

uint32_t cn_csum_partial_neon(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t vec = len & ~(size_t)15;
	/* blocks of BLOCK bytes, a power of two: each a multiple of 16 */
	uint64_t acc = cn__csum_pieces(p, vec, BLOCK, sum_block);

	acc = cn__csum_scalar(p + vec, len & 15, acc);
	return cn__csum_finish(acc, false, sum);
}

/* As sum_block, storing each vector once it is loaded. */
static inline uint64_t copy_block(unsigned char *d, const unsigned char *s, size_t n)
{
	uint32x4_t a0 = vdupq_n_u32(0), a1 = a0, a2 = a0, a3 = a0;

	for (; n >= 64; n -= 64, s += 64, d += 64) {
		uint8x16x4_t x = vld1q_u8_x4(s);
		vst1q_u8_x4(d, x);
		a0 = vpadalq_u16(a0, vreinterpretq_u16_u8(x.val[0]));
		a1 = vpadalq_u16(a1, vreinterpretq_u16_u8(x.val[1]));
		a2 = vpadalq_u16(a2, vreinterpretq_u16_u8(x.val[2]));
		a3 = vpadalq_u16(a3, vreinterpretq_u16_u8(x.val[3]));
	}
	if (n & 32) {
		uint8x16x2_t x = vld1q_u8_x2(s);
		vst1q_u8_x2(d, x);
		a0 = vpadalq_u16(a0, vreinterpretq_u16_u8(x.val[0]));
		a1 = vpadalq_u16(a1, vreinterpretq_u16_u8(x.val[1]));
		s += 32;
		d += 32;
	}
	if (n & 16) {
		uint8x16_t x = vld1q_u8(s);
		vst1q_u8(d, x);
		a2 = vpadalq_u16(a2, vreinterpretq_u16_u8(x));
	}
	return reduce(a0, a1, a2, a3);
}

uint32_t cn_csum_copy_neon(void *restrict dst, const void *restrict src, size_t len,
			   uint32_t sum)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	size_t vec = len & ~(size_t)15;
	uint64_t acc = cn__csum_copy_pieces(d, s, vec, BLOCK, copy_block);

	acc = cn__csum_copy_scalar(d + vec, s + vec, len & 15, acc);
	return cn__csum_finish(acc, false, sum);
}

#endif /* CN_NEON */
