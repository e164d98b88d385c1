/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Passes over a flushed 1408-byte buffer (22 lines, no byte tail), as the
 * `seq` kernels make them at 1460 B cold: each rmw pass loads every line,
 * shuffles it (bswap32) and stores it back in place; "sum" loads every
 * line into a vector sum; "prefetchw" asks for every line for writing;
 * "on the next lines" is an rmw pass over the 1408 bytes after the
 * buffer, which nothing before it touched. 32 buffers (2 x 1408 bytes
 * each) flushed (clflushopt) before each batch of 32 calls, as
 * bench_ilp prepares its cold rows; ticks per call, median of 201 batches.
 * It shows what a second and third pass over lines the first pass is still
 * fetching cost, against one pass (ilp/README.md, cold rows).
 *
 *   gcc -O2 -mavx512f -mavx512bw -mclflushopt -mprfchw coldpasses.c -o coldpasses
 *   taskset -c 1 ./coldpasses
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

enum { LEN = 1408, B = 32, R = 201 };
enum { SUM_FIRST = 1, PREFETCHW_FIRST = 2, SUM_AFTER = 4, OTHER = 8 };

static const unsigned char swap[16] = { 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12 };

static __attribute__((noinline)) uint64_t passes(unsigned char *d, int rmw, int how)
{
	const __m512i idx = _mm512_broadcast_i32x4(_mm_loadu_si128((const void *)swap));
	__m512i acc = _mm512_setzero_si512();

	if (how & SUM_FIRST)
		for (size_t i = 0; i < LEN; i += 64)
			acc = _mm512_add_epi64(acc, _mm512_loadu_si512(d + i));
	if (how & PREFETCHW_FIRST)
		for (size_t i = 0; i < LEN; i += 64)
			_m_prefetchw(d + i);
	for (int p = 0; p < rmw; p++)
		for (size_t i = 0; i < LEN; i += 64)
			_mm512_storeu_si512(d + i, _mm512_shuffle_epi8(_mm512_loadu_si512(d + i), idx));
	if (how & OTHER) /* an rmw pass over the next LEN bytes, flushed too */
		for (size_t i = LEN; i < 2 * LEN; i += 64)
			_mm512_storeu_si512(d + i, _mm512_shuffle_epi8(_mm512_loadu_si512(d + i), idx));
	if (how & SUM_AFTER)
		for (size_t i = 0; i < LEN; i += 64)
			acc = _mm512_add_epi64(acc, _mm512_loadu_si512(d + i));
	return (uint64_t)_mm512_reduce_add_epi64(acc);
}

int main(void)
{
	static const struct {
		int rmw, how;
		const char *what;
	} v[] = {
		{ 0, SUM_AFTER, "sum" },
		{ 1, 0, "1 rmw" },
		{ 2, 0, "2 rmw" },
		{ 3, 0, "3 rmw" },
		{ 1, OTHER, "1 rmw, 1 rmw on the next lines" },
		{ 1, SUM_AFTER, "1 rmw, sum" },
		{ 1, SUM_FIRST, "sum, 1 rmw" },
		{ 2, SUM_FIRST, "sum, 2 rmw" },
		{ 1, PREFETCHW_FIRST, "prefetchw, 1 rmw" },
		{ 3, PREFETCHW_FIRST, "prefetchw, 3 rmw" },
	};
	enum { NV = sizeof(v) / sizeof(v[0]) };
	static uint64_t t[NV][R];
	unsigned char *buf[B];
	uint64_t sink = 0;

	for (int k = 0; k < B; k++) {
		buf[k] = aligned_alloc(4096, 8192);
		if (!buf[k])
			return 1;
		memset(buf[k], k, 8192);
	}
	for (int r = 0; r < R; r++)
		for (int f = 0; f < NV; f++) {
			for (int k = 0; k < B; k++)
				for (size_t i = 0; i < 2 * LEN; i += 64)
					_mm_clflushopt(buf[k] + i);
			_mm_mfence();
			uint64_t a = tsc();
			for (int k = 0; k < B; k++)
				sink += passes(buf[k], v[f].rmw, v[f].how);
			t[f][r] = tsc() - a;
		}
	for (int f = 0; f < NV; f++) {
		qsort(t[f], R, sizeof(t[f][0]), cmp);
		printf("%-32s %6.1f ticks a call\n", v[f].what, (double)t[f][R / 2] / B);
	}
	return sink == 1;
}
