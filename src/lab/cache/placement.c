/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Placement allocator: buffers at chosen cache colours (set indices), to
 * build or avoid the input/output buffer conflicts of Ahlgren et al. Fig. 6.
 *
 * Colours are computed on virtual addresses. For the L1D of every CPU we
 * run on (32-48 KB, 8-12 ways: a way is 4 KB) the set index bits lie inside
 * the page offset, so virtual colour = physical colour. Larger ways (L2,
 * L3) are physically indexed above bit 12, so the arena asks for 2 MB pages:
 * within one huge page, virtual and physical offsets agree up to 2 MB.
 */
#include "cachenet/lab/cache.h"
#include "cn_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_2M ((size_t)2 << 20)

struct cn_placement {
	uint8_t *map;       /* what mmap returned */
	size_t map_len;
	uint8_t *base;      /* way-aligned start */
	uint8_t *cur;       /* bump pointer */
	uint8_t *end;
	size_t line, sets, way;
	bool huge;
	bool hugetlb;
};

unsigned cn_cache_colour(const struct cn_cache_level *c, const void *addr)
{
	return (unsigned)(((uintptr_t)addr / c->line) % c->sets);
}

/* AnonHugePages of the mapping that contains @addr, in bytes; 0 if unknown. */
static size_t thp_bytes(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	bool in = false;
	size_t kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %zu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb * 1024;
}

struct cn_placement *cn_placement_create(const struct cn_cache_level *c, size_t size)
{
	if (!c || size == 0 || c->line == 0 || (c->line & (c->line - 1)) || c->sets == 0)
		return cn__fail(EINVAL);
	struct cn_placement *pl = calloc(1, sizeof(*pl));
	if (!pl)
		return NULL;
	pl->line = c->line;
	pl->sets = c->sets;
	pl->way = (size_t)c->sets * c->line;

	size_t align = pl->way;
	bool want_huge = pl->way > 4096;
	if (want_huge && align < HUGE_2M)
		align = HUGE_2M;
	size_t len = (size + align - 1) / align * align;

	if (want_huge) {
		pl->map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (pl->map != MAP_FAILED) {
			pl->map_len = len;
			pl->base = pl->map;
			pl->huge = pl->hugetlb = true;
		}
	}
	if (!pl->hugetlb) {
		pl->map_len = len + align;
		pl->map = mmap(NULL, pl->map_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pl->map == MAP_FAILED) {
			free(pl);
			errno = ENOMEM;
			return NULL;
		}
		pl->base = (uint8_t *)(((uintptr_t)pl->map + align - 1) & ~(uintptr_t)(align - 1));
		if (want_huge) {
			/* Ask for THP and fault the arena in now, so smaps can
			 * tell whether the kernel gave huge pages. */
			madvise(pl->base, len, MADV_HUGEPAGE);
			memset(pl->base, 0, len);
			pl->huge = thp_bytes(pl->base) >= HUGE_2M;
		}
	}
	pl->cur = pl->base;
	pl->end = pl->base + len;
	return pl;
}

void cn_placement_destroy(struct cn_placement *pl)
{
	if (!pl)
		return;
	munmap(pl->map, pl->map_len);
	free(pl);
}

bool cn_placement_huge(const struct cn_placement *pl)
{
	return pl->huge;
}

void *cn_placement_alloc(struct cn_placement *pl, size_t len, unsigned colour)
{
	if (len == 0 || colour >= pl->sets)
		return cn__fail(EINVAL);
	uintptr_t a = ((uintptr_t)pl->cur + pl->line - 1) & ~(uintptr_t)(pl->line - 1);
	size_t want = (size_t)colour * pl->line;
	size_t have = (a - (uintptr_t)pl->base) % pl->way;
	a += (want + pl->way - have) % pl->way;
	if (a > (uintptr_t)pl->end || len > (size_t)((uintptr_t)pl->end - a))
		return cn__fail(ENOMEM);
	pl->cur = (uint8_t *)(a + len);
	return (void *)a;
}

size_t cn_placement_remaining(const struct cn_placement *pl)
{
	return (size_t)(pl->end - pl->cur);
}
