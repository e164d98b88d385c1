/* SPDX-License-Identifier: BSD-2-Clause */
/* What the hand probes (ilp/README.md) share: a fenced TSC read, so that
 * nothing before it is still executing or after it already started, and a
 * qsort comparison of uint64_t samples for their median. */
#ifndef CN_HAND_PROBE_H
#define CN_HAND_PROBE_H
#include <stdint.h>

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}
#endif
