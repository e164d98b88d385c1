/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX2 variants: 256-bit VPSHUFB for the byte swaps, VPSHUFD + or + and for
 * PES. Compiled with -mavx2 -mbmi -mbmi2 in its own static library, so
 * copy.c requires all three.
 *
 * AVX2 has no byte-masked loads or stores, so the last bytes (fewer than
 * 32) go through the scalar kernel, which reads and writes exactly them.
 * Loop: 128 bytes per iteration, loads before stores (in place is safe).
 */
#include "xform_impl.h"

#if defined(__x86_64__)

#include <immintrin.h>

static inline __attribute__((always_inline)) __m256i xform(__m256i x, enum cn__xform_kind k)
{
	const __m256i sh16 = _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15,
					      14, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12,
					      15, 14);
	const __m256i sh32 = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13,
					      12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14,
					      13, 12);

	switch (k) {
	case CN__BSWAP16:
		return _mm256_shuffle_epi8(x, sh16);
	case CN__BSWAP32:
		return _mm256_shuffle_epi8(x, sh32);
	case CN__PES:
	default:
		/* Swapping the dwords of each qword (0xB1) pairs w0 with w1. */
		return _mm256_and_si256(_mm256_or_si256(x, _mm256_shuffle_epi32(x, 0xB1)),
					_mm256_set1_epi32((int)CN_PES_MASK));
	}
}

static inline __attribute__((always_inline)) void
run(unsigned char *d, const unsigned char *s, size_t n, enum cn__xform_kind k)
{
	while (n >= 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s);
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
		_mm256_storeu_si256((__m256i *)d, xform(a, k));
		_mm256_storeu_si256((__m256i *)(d + 32), xform(b, k));
		_mm256_storeu_si256((__m256i *)(d + 64), xform(c, k));
		_mm256_storeu_si256((__m256i *)(d + 96), xform(e, k));
		d += 128;
		s += 128;
		n -= 128;
	}
	while (n >= 32) {
		_mm256_storeu_si256((__m256i *)d, xform(_mm256_loadu_si256((const __m256i *)s), k));
		d += 32;
		s += 32;
		n -= 32;
	}
	/* 32 is a multiple of every unit, so the tail starts on a unit. */
	cn__xform_scalar(d, s, n, k);
}

CN_XFORM_KERNELS(avx2)

#endif /* __x86_64__ */
