/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The 512-bit load ceiling for bench_csum (loadsum512): 64-bit lane adds of
 * every 64-byte block, no carries, no folding. Not a checksum: it bounds
 * what any kernel that must read every byte can reach. Built in its own
 * static library with -mavx512f (bench/meson.build) and called only when
 * cn_cpu_has(CN_CPU_AVX512F).
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t cnbench_loadsum512(const void *buf, size_t len);

uint64_t cnbench_loadsum512(const void *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)buf;
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	uint64_t t = 0;

	/* Four accumulators: the adds never wait for each other, so only the
	 * loads limit the loop. */
	while (len >= 256) {
		a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p));
		a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + 64));
		a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + 128));
		a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + 192));
		p += 256;
		len -= 256;
	}
	while (len >= 64) {
		a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p));
		p += 64;
		len -= 64;
	}
	if (len >= 8) { /* whole qwords: a masked load reads only those */
		__mmask8 m = (__mmask8)((1u << (len / 8)) - 1);
		a1 = _mm512_add_epi64(a1, _mm512_maskz_loadu_epi64(m, p));
		p += len & ~(size_t)7;
		len &= 7;
	}
	if (len) {
		memcpy(&t, p, len);
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
	return (uint64_t)_mm512_reduce_add_epi64(a0) + t;
}
