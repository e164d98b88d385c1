/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The floors of the AVX2 copy+checksum (src/csum/csum_avx2.c, copy_chunk)
 * for bench_csum: the kernel's own block loop (src/csum/csum_avx2_loop.h)
 * with the rest of its work taken away.
 *
 *  - cnbench_copyloop256 (copy/loop256): the head up to the first 32-byte
 *    aligned destination address copied in pieces of 16, 8, 4, 2 and 1
 *    bytes, the loop copying only (unaligned 32-byte loads, aligned stores,
 *    four per pass, then one), the tail (< 32 bytes) as the head: the
 *    kernel without any checksum arithmetic.
 *  - cnbench_copyadd256 (copy/loopadd256): the same with the loop's lane
 *    accumulation and plain adds of the head and tail pieces, and no
 *    reduction or fold beyond one sum of the lanes: the kernel's loop
 *    without its fixed costs.
 *
 * Not checksums (the result is not a ones'-complement sum). Built in its
 * own static library with -mavx2 (bench/meson.build) and called only when
 * cn_cpu_has(CN_CPU_AVX2).
 */
#include "../src/csum/csum_avx2_loop.h"

#include <stdint.h>
#include <string.h>

void cnbench_copyloop256(void *dst, const void *src, size_t len);
uint64_t cnbench_copyadd256(void *dst, const void *src, size_t len);

/* n < 32 bytes in pieces of 16, 8, 4, 2, 1 (straight-line once unrolled);
 * returns the plain sum of the pieces' 64-bit words. */
static inline uint64_t copy_small(unsigned char *d, const unsigned char *s, size_t n)
{
	uint64_t t = 0;

#pragma GCC unroll 5
	for (size_t k = 16; k; k >>= 1) {
		if (n & k) {
			uint64_t x[2] = { 0, 0 };
			memcpy(x, s, k);
			memcpy(d, x, k);
			t += x[0] + x[1];
			d += k;
			s += k;
		}
	}
	return t;
}

static inline __attribute__((always_inline)) uint64_t
copy_body(unsigned char *d, const unsigned char *s, size_t n, const int add)
{
	uint64_t t = 0;
	size_t head = (size_t)(-(uintptr_t)d & 31);

	if (head > n)
		head = n;
	if (head) {
		t += copy_small(d, s, head);
		d += head;
		s += head;
		n -= head;
	}
	if (n >= 32) {
		__m256i f0 = _mm256_setzero_si256(), h0 = f0, f1 = f0, h1 = f0;

		cn__avx2_copy_blocks(&d, &s, &n, &f0, &h0, &f1, &h1, add);
		if (add) {
			__m256i v = _mm256_add_epi64(_mm256_add_epi64(f0, f1), _mm256_add_epi64(h0, h1));
			__m128i u = _mm_add_epi64(_mm256_castsi256_si128(v),
						  _mm256_extracti128_si256(v, 1));
			t += (uint64_t)_mm_cvtsi128_si64(_mm_add_epi64(u, _mm_unpackhi_epi64(u, u)));
		}
	}
	return t + copy_small(d, s, n);
}

void cnbench_copyloop256(void *dst, const void *src, size_t len)
{
	copy_body((unsigned char *)dst, (const unsigned char *)src, len, 0);
}

uint64_t cnbench_copyadd256(void *dst, const void *src, size_t len)
{
	return copy_body((unsigned char *)dst, (const unsigned char *)src, len, 1);
}
