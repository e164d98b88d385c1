/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The dependent-load chase. Every load's address is the value of the
 * previous load, so the core cannot overlap two misses and cannot guess the
 * next address: the time per load is the load-to-use latency of whichever
 * level holds the line. The order is random because every hardware
 * prefetcher (next-line, stride, stream) learns a constant stride within a
 * few accesses and would hide the latency we want to see.
 */
#include "memsig.h"

#include <string.h>

const char *const ms_order_name[MS_NORDERS] = { "random", "page" };

static inline void link_line(char *buf, uint32_t from, uint32_t to)
{
	*(void **)(buf + (size_t)from * MS_LINE) = buf + (size_t)to * MS_LINE;
}

static void shuffle(uint32_t *v, uint32_t n, struct ms_rng *rng)
{
	/* Fisher-Yates: every permutation equally likely. */
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)ms_rng_below(rng, (uint64_t)i + 1);
		uint32_t t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

void *ms_chase_build(void *vbuf, size_t bytes, enum ms_order order,
		     uint32_t *idx, struct ms_rng *rng)
{
	char *buf = vbuf;
	uint32_t lines = (uint32_t)(bytes / MS_LINE);

	if (order == MS_RANDOM) {
		for (uint32_t i = 0; i < lines; i++)
			idx[i] = i;
		shuffle(idx, lines, rng);
		/* idx is one random sequence of all lines; closing it into a
		 * ring makes a single cycle, so the chase never gets stuck in
		 * a short sub-cycle that would fit in a smaller cache. */
		for (uint32_t i = 0; i + 1 < lines; i++)
			link_line(buf, idx[i], idx[i + 1]);
		link_line(buf, idx[lines - 1], idx[0]);
		return buf + (size_t)idx[0] * MS_LINE;
	}

	/* Page order: the page sequence in idx, the lines within the page in a
	 * 64-entry scratch array; the last page may be partial. Every line of
	 * a page is visited before the next page, so one TLB miss is shared by
	 * up to 64 loads and the curve shows the caches alone. */
	uint32_t pages = (lines + MS_LINES_PER_PAGE - 1) / MS_LINES_PER_PAGE;
	uint32_t in_page[MS_LINES_PER_PAGE];
	uint32_t first = UINT32_MAX, prev = UINT32_MAX;

	for (uint32_t i = 0; i < pages; i++)
		idx[i] = i;
	shuffle(idx, pages, rng);
	for (uint32_t p = 0; p < pages; p++) {
		uint32_t base = idx[p] * MS_LINES_PER_PAGE;
		uint32_t n = lines - base < MS_LINES_PER_PAGE ? lines - base
							       : MS_LINES_PER_PAGE;

		for (uint32_t k = 0; k < n; k++)
			in_page[k] = base + k;
		shuffle(in_page, n, rng);
		for (uint32_t k = 0; k < n; k++) {
			if (prev == UINT32_MAX)
				first = in_page[k];
			else
				link_line(buf, prev, in_page[k]);
			prev = in_page[k];
		}
	}
	link_line(buf, prev, first);
	return buf + (size_t)first * MS_LINE;
}

/*
 * 32 loads per iteration: the loop's add, compare and branch execute in the
 * shadow of the load chain (they do not depend on it), so even an L1 hit of
 * ~4 core cycles is not inflated by loop overhead. noinline keeps the
 * compiler from merging the chase into the timed caller and reordering the
 * TSC reads around it.
 */
#define HOP(q) q = *(void *const *)(q)
#define HOP4(q) HOP(q); HOP(q); HOP(q); HOP(q)
#define HOP32(q) HOP4(q); HOP4(q); HOP4(q); HOP4(q); HOP4(q); HOP4(q); HOP4(q); HOP4(q)

__attribute__((noinline)) void *ms_chase(void *p, uint64_t loads)
{
	const void *q = p;

	for (uint64_t i = loads / MS_UNROLL; i > 0; i--) {
		HOP32(q);
	}
	return (void *)q;
}
