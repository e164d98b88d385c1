/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Block helpers shared by the two AVX-512 checksum variants (csum_avx512.c,
 * csum_avx512vnni.c). Both read a buffer as 64-byte blocks from 64-byte-
 * aligned addresses: the first and last blocks are byte-masked loads
 * (masked-off bytes read as zero and cannot fault), so nothing outside the
 * buffer is read and a misaligned start costs at most one more block.
 * Included only by files compiled with at least -mavx512f -mavx512bw.
 */
#ifndef CN_CSUM_AVX512_UTIL_H
#define CN_CSUM_AVX512_UTIL_H

#include <immintrin.h>
#include <stddef.h>

/*
 * One aligned 64-byte load into a register. The empty asm pins the value in
 * a register: without it gcc 12 folds the load into more than one of the
 * operations that use it, as memory operands: two loads of the same line
 * per block.
 */
static inline __m512i cn__load64(const unsigned char *p)
{
	__m512i x = _mm512_load_si512(p);
	__asm__("" : "+v"(x));
	return x;
}

static inline __m512i cn__loadu64(const unsigned char *p)
{
	__m512i x = _mm512_loadu_si512(p);
	__asm__("" : "+v"(x));
	return x;
}

static inline __mmask64 cn__mask_from(size_t off) /* bytes off..63 */
{
	return _cvtu64_mask64(~0ull << off);
}

static inline __mmask64 cn__mask_below(size_t n) /* bytes 0..n-1, 1 <= n <= 64 */
{
	return _cvtu64_mask64(~0ull >> (64 - n));
}

#endif /* CN_CSUM_AVX512_UTIL_H */
