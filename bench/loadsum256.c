/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The 256-bit load floor for bench_csum (loadsum256): 64-bit lane adds of
 * every 32-byte block, no carries, no folding; the AVX2 analogue of
 * loadsum512.c. Not a checksum: it bounds what any AVX2 kernel that must
 * read every byte can reach. Built in its own static library with -mavx2
 * (bench/meson.build) and called only when cn_cpu_has(CN_CPU_AVX2).
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t cnbench_loadsum256(const void *buf, size_t len);

uint64_t cnbench_loadsum256(const void *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)buf;
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	uint64_t t = 0;

	/* Four accumulators: the adds never wait for each other, so only the
	 * loads limit the loop. */
	while (len >= 128) {
		a0 = _mm256_add_epi64(a0, _mm256_loadu_si256((const __m256i *)p));
		a1 = _mm256_add_epi64(a1, _mm256_loadu_si256((const __m256i *)(p + 32)));
		a2 = _mm256_add_epi64(a2, _mm256_loadu_si256((const __m256i *)(p + 64)));
		a3 = _mm256_add_epi64(a3, _mm256_loadu_si256((const __m256i *)(p + 96)));
		p += 128;
		len -= 128;
	}
	while (len >= 32) {
		a0 = _mm256_add_epi64(a0, _mm256_loadu_si256((const __m256i *)p));
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		t += x;
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t x = 0;
		memcpy(&x, p, len);
		t += x;
	}
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	__m128i s = _mm_add_epi64(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1) + t;
}
