/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The 512-bit copy-loop ceiling for bench_copy (copy/loop512): 64-byte
 * unaligned loads stored as they are, four per iteration, masked loads and
 * stores for the last partial block. Not a library kernel: it is what any
 * vector loop that reads and writes every byte once (a byte swap, PES, a
 * copy+checksum) can at best reach, beside glibc's memcpy, which from 8 KB
 * up switches to `rep movsb` (microcoded fast strings, which a transform
 * cannot use). Built in its own static library with -mavx512f -mavx512bw
 * (bench/meson.build) and called only when cn_cpu_has(CN_CPU_AVX512BW).
 */
#include <immintrin.h>
#include <stddef.h>

void cnbench_copyloop512(void *dst, const void *src, size_t len);
void cnbench_store512(void *dst, const void *src, size_t len);

void cnbench_copyloop512(void *dst, const void *src, size_t len)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;

	while (len >= 256) {
		__m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + 64);
		__m512i c = _mm512_loadu_si512(s + 128), e = _mm512_loadu_si512(s + 192);
		_mm512_storeu_si512(d, a);
		_mm512_storeu_si512(d + 64, b);
		_mm512_storeu_si512(d + 128, c);
		_mm512_storeu_si512(d + 192, e);
		d += 256;
		s += 256;
		len -= 256;
	}
	while (len >= 64) {
		_mm512_storeu_si512(d, _mm512_loadu_si512(s));
		d += 64;
		s += 64;
		len -= 64;
	}
	if (len) {
		__mmask64 m = _cvtu64_mask64(~0ull >> (64 - len));
		_mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
	}
}

/*
 * The store half of the copy loop, for bench_copy's touch/store512 rows:
 * every 64-byte line of dst stored once (a constant). Beside the load half
 * (bench/loadsum512.c) it shows whether a copying loop's time is its loads
 * plus its stores, each line it reads and each line it writes brought into
 * L1: the cost rep movsb avoids for the lines it writes.
 */
void cnbench_store512(void *dst, const void *src, size_t len)
{
	unsigned char *d = (unsigned char *)dst;
	const __m512i v = _mm512_set1_epi8((char)0xa5);

	(void)src;
	while (len >= 256) {
		_mm512_storeu_si512(d, v);
		_mm512_storeu_si512(d + 64, v);
		_mm512_storeu_si512(d + 128, v);
		_mm512_storeu_si512(d + 192, v);
		d += 256;
		len -= 256;
	}
	while (len >= 64) {
		_mm512_storeu_si512(d, v);
		d += 64;
		len -= 64;
	}
	if (len)
		_mm512_mask_storeu_epi8(d, _cvtu64_mask64(~0ull >> (64 - len)), v);
}
