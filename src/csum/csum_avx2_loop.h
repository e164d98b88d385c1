/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The AVX2 copy+checksum's block loop, shared by the kernel
 * (csum_avx2.c, copy_chunk) and by its floors in the benchmark
 * (bench/copyloop256.c), so that a floor runs the very loop it bounds.
 * Include only in files compiled with -mavx2; baseline C otherwise, no
 * library headers.
 *
 * Lanes: f sums the blocks' 64-bit lanes (wrapping), h the high 32-bit
 * halves (exact); csum_avx2.c turns them into the sum (L = f - (h << 32)).
 */
#ifndef CN_CSUM_AVX2_LOOP_H
#define CN_CSUM_AVX2_LOOP_H

#include <immintrin.h>
#include <stddef.h>

/* One 32-byte load into a register; see load64() in csum_avx512.c for why
 * the empty asm is there (gcc would otherwise load each block twice). */
static inline __m256i cn__avx2_load32(const unsigned char *p)
{
	__m256i x = _mm256_load_si256((const __m256i *)p);
	__asm__("" : "+x"(x));
	return x;
}

static inline __m256i cn__avx2_loadu32(const unsigned char *p)
{
	__m256i x = _mm256_loadu_si256((const __m256i *)p);
	__asm__("" : "+x"(x));
	return x;
}

/* f += x; h += x >> 32, in asm: x is shifted in place (the block is dead
 * after it), and gcc cannot reassociate the sums, which it otherwise did
 * (a pass's two blocks of a pair added first, then the accumulator, into
 * another register moved back: four register moves per 128 bytes, slots
 * of the front end the loop needs). */
#define CN__AVX2_ACC(f_, h_, x_)                                                \
	__asm__("vpaddq %[x], %[f], %[f]\n\tvpsrlq $32, %[x], %[x]\n\t"            \
		"vpaddq %[x], %[h], %[h]"                                       \
		: [f] "+x"(f_), [h] "+x"(h_), [x] "+x"(x_))

/*
 * Copy the whole 32-byte blocks of *n bytes from *s to *d (*d 32-byte
 * aligned: aligned stores; *s unaligned loads), four per pass, then one per
 * pass, advancing *d, *s and leaving *n < 32; with @p add (a constant),
 * accumulate each block into f0/h0 and f1/h1 (alternately).
 */
static inline __attribute__((always_inline)) void
cn__avx2_copy_blocks(unsigned char **d, const unsigned char **s, size_t *n, __m256i *f0,
		     __m256i *h0, __m256i *f1, __m256i *h1, const int add)
{
	unsigned char *dp = *d;
	const unsigned char *sp = *s;
	size_t k = *n;
	__m256i a0 = *f0, b0 = *h0, a1 = *f1, b1 = *h1;

	while (k >= 128) {
		__m256i x = cn__avx2_loadu32(sp), y = cn__avx2_loadu32(sp + 32);
		__m256i z = cn__avx2_loadu32(sp + 64), w = cn__avx2_loadu32(sp + 96);
		_mm256_store_si256((__m256i *)dp, x);
		_mm256_store_si256((__m256i *)(dp + 32), y);
		_mm256_store_si256((__m256i *)(dp + 64), z);
		_mm256_store_si256((__m256i *)(dp + 96), w);
		if (add) {
			CN__AVX2_ACC(a0, b0, x);
			CN__AVX2_ACC(a1, b1, y);
			CN__AVX2_ACC(a0, b0, z);
			CN__AVX2_ACC(a1, b1, w);
		}
		dp += 128;
		sp += 128;
		k -= 128;
	}
	while (k >= 32) {
		__m256i x = cn__avx2_loadu32(sp);
		_mm256_store_si256((__m256i *)dp, x);
		if (add)
			CN__AVX2_ACC(a0, b0, x);
		dp += 32;
		sp += 32;
		k -= 32;
	}
	*d = dp;
	*s = sp;
	*n = k;
	*f0 = a0;
	*h0 = b0;
	*f1 = a1;
	*h1 = b1;
}

#endif /* CN_CSUM_AVX2_LOOP_H */
