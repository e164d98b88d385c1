/* SPDX-License-Identifier: BSD-2-Clause */
/* cache: geometry, flush and warm (by their effect on load latency),
 * instruction-cache eviction, and the placement allocator's colours. */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cachenet/lab/cache.h"
#include "cachenet/lab/perf.h"

static void geometry_is_plausible(void **state)
{
	(void)state;
	struct cn_cache_info info;
	assert_int_equal(cn_cache_geometry(&info), 0);
	assert_true(info.n >= 2);
	assert_non_null(info.source);
	print_message("caches from %s:\n", info.source);
	for (unsigned i = 0; i < info.n; i++) {
		const struct cn_cache_level *l = &info.level[i];
		print_message("  L%u type %d %llu B %u-way line %u sets %u shared by %u\n", l->level,
			      l->type, (unsigned long long)l->size, l->ways, l->line, l->sets,
			      l->shared_by);
		assert_true(l->line >= 16 && (l->line & (l->line - 1)) == 0);
		if (l->ways)
			assert_true((uint64_t)l->ways * l->line * l->sets == l->size);
	}
	const struct cn_cache_level *d1 = cn_cache_find(&info, 1, CN_CACHE_DATA);
	const struct cn_cache_level *i1 = cn_cache_find(&info, 1, CN_CACHE_INSTRUCTION);
	const struct cn_cache_level *ll = cn_cache_last_level(&info);
	assert_non_null(d1);
	assert_non_null(i1);
	assert_non_null(ll);
	assert_true(d1->type == CN_CACHE_DATA || d1->type == CN_CACHE_UNIFIED);
	assert_true(d1->size >= 8192 && d1->size <= 256 * 1024);
	assert_true(ll->level >= d1->level && ll->size >= d1->size);
	assert_null(cn_cache_find(&info, 7, CN_CACHE_DATA));
}

static void cpuid_agrees_with_sysfs(void **state)
{
	(void)state;
#if defined(__x86_64__)
	struct cn_cache_info info;
	assert_int_equal(cn_cache_geometry(&info), 0);
	if (strcmp(info.source, "sysfs") != 0)
		skip(); /* nothing to compare with */
	/* The cached geometry is per process: ask a fresh one. */
	char self[4096], cmd[4200];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	snprintf(cmd, sizeof(cmd), "CACHENET_CACHE_SOURCE=cpuid '%s' --print-caches", self);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[256];
	assert_non_null(fgets(line, sizeof(line), p));
	assert_non_null(strstr(line, "cpuid"));
	unsigned n = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned level, type, ways, lsize, sets;
		unsigned long long size;
		assert_int_equal(sscanf(line, "%u %u %llu %u %u %u", &level, &type, &size, &ways,
					&lsize, &sets), 6);
		const struct cn_cache_level *l = cn_cache_find(&info, level, (enum cn_cache_type)type);
		assert_non_null(l);
		if (l->size != size || l->ways != ways || l->line != lsize || l->sets != sets)
			fail_msg("L%u type %u: sysfs %llu/%u/%u/%u, cpuid %llu/%u/%u/%u", level, type,
				 (unsigned long long)l->size, l->ways, l->line, l->sets, size, ways,
				 lsize, sets);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, info.n);
#else
	skip();
#endif
}

/* TSC ticks of one load, fenced on both sides (the fences' cost is in
 * every sample alike). */
static uint64_t timed_load(volatile const uint8_t *p)
{
	uint64_t t0 = cn_tsc_begin();
	(void)*p;
	return cn_tsc_end() - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

#define PAGES 1024

static unsigned page_order[PAGES];

/* A fixed random order of the pages: one line per page, visited out of
 * order, so neither the stream prefetchers (which stop at page boundaries)
 * nor the IP-stride prefetcher (which follows a constant 4 KB stride; it
 * made flushed lines look warm in a first version of this test) can fetch
 * ahead of the loads. */
static void make_page_order(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < PAGES; i++)
		page_order[i] = i;
	for (unsigned i = PAGES - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned j = (unsigned)(x % (i + 1)), t = page_order[i];
		page_order[i] = page_order[j];
		page_order[j] = t;
	}
}

/* Median latency of one load per page over PAGES pages. */
static uint64_t median_page_load(const uint8_t *buf)
{
	static uint64_t t[PAGES];
	for (size_t i = 0; i < PAGES; i++)
		t[i] = timed_load(buf + (size_t)page_order[i] * 4096 + 128);
	qsort(t, PAGES, sizeof(t[0]), cmp_u64);
	return t[PAGES / 2];
}

static void flush_and_warm_move_lines(void **state)
{
	(void)state;
	size_t len = PAGES * 4096;
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	memset(buf, 7, len);
	make_page_order();

	/* Best of three rounds: a noisy neighbour can only make warm loads
	 * look slower, never flushed ones faster than memory. A whole
	 * measurement is repeated (up to 4 times) when it does not show the
	 * three states apart: on this shared machine one of ~10 CI runs saw
	 * all three rounds of re-warmed loads at memory latency. */
	uint64_t best_warm = UINT64_MAX, best_flushed = 0, rewarmed = UINT64_MAX, evicted = 0;
	for (int round = 0, attempt = 0; round < 3; round++) {
		cn_cache_warm_range(buf, len, false);
		uint64_t w = median_page_load(buf);
		cn_cache_flush_range(buf, len);
		uint64_t f = median_page_load(buf);
		cn_cache_flush_range(buf, len);
		cn_cache_warm_range(buf, len, true);
		uint64_t r = median_page_load(buf);
		/* the whole hierarchy emptied by reading, not by address */
		assert_int_equal(cn_cache_evict_data(), 0);
		uint64_t e = median_page_load(buf);
		if (e > evicted) evicted = e;
		if (w < best_warm) best_warm = w;
		if (f > best_flushed) best_flushed = f;
		if (r < rewarmed) rewarmed = r;
		if (round == 2 && ++attempt < 4 &&
		    !(best_flushed > 2 * best_warm && rewarmed * 2 < best_flushed &&
		      evicted > 2 * best_warm)) {
			print_message("attempt %d: warm %llu, flushed %llu, re-warmed %llu, "
				      "evicted %llu: again\n", attempt, (unsigned long long)best_warm,
				      (unsigned long long)best_flushed, (unsigned long long)rewarmed,
				      (unsigned long long)evicted);
			best_warm = UINT64_MAX, best_flushed = 0, rewarmed = UINT64_MAX, evicted = 0;
			round = -1;
		}
	}
	print_message("median load: warm %llu, flushed %llu, re-warmed %llu, after "
		      "cn_cache_evict_data %llu TSC ticks\n",
		      (unsigned long long)best_warm, (unsigned long long)best_flushed,
		      (unsigned long long)rewarmed, (unsigned long long)evicted);
	/* DRAM is ~10x an L2 hit; ask for 2x to stay clear of noise. */
	assert_true(best_flushed > 2 * best_warm);
	assert_true(rewarmed * 2 < best_flushed);
	assert_true(evicted > 2 * best_warm);
	/* Warming for write left the data as it was. */
	for (size_t i = 0; i < len; i += 512)
		assert_int_equal(buf[i], 7);
	cn_cache_flush_range(buf, 0); /* empty range: no-op */
	munmap(buf, len);
}

static void icache_evict_runs(void **state)
{
	(void)state;
	/* Twice: the first call builds the block, the second reuses it. */
	assert_int_equal(cn_cache_evict_icache(), 0);
	uint64_t t0 = cn_tsc_begin();
	assert_int_equal(cn_cache_evict_icache(), 0);
	uint64_t t = cn_tsc_end() - t0;
	/* >= 4 MB of code at one line per fetch: at least 65536 lines. It
	 * cannot have run in less than a tick per line. */
	print_message("icache eviction: %llu TSC ticks\n", (unsigned long long)t);
	assert_true(t > 65536);
}

static void placement_hits_colours(void **state)
{
	(void)state;
	struct cn_cache_info info;
	assert_int_equal(cn_cache_geometry(&info), 0);
	const struct cn_cache_level *levels[2] = {
		cn_cache_find(&info, 1, CN_CACHE_DATA),
		cn_cache_find(&info, 2, CN_CACHE_DATA),
	};
	for (int li = 0; li < 2; li++) {
		const struct cn_cache_level *c = levels[li];
		if (!c)
			continue;
		size_t way = (size_t)c->sets * c->line;
		struct cn_placement *pl = cn_placement_create(c, 8 * way);
		assert_non_null(pl);
		print_message("L%u arena: way %zu B, huge pages: %s\n", c->level, way,
			      cn_placement_huge(pl) ? "yes" : "no");
		unsigned colours[] = { 0, 5, c->sets / 2, c->sets - 1, 5 };
		uint8_t *prev_end = NULL;
		for (size_t i = 0; i < sizeof(colours) / sizeof(colours[0]); i++) {
			size_t remaining = cn_placement_remaining(pl);
			uint8_t *p = cn_placement_alloc(pl, 1500, colours[i]);
			assert_non_null(p);
			assert_int_equal(cn_cache_colour(c, p), colours[i]);
			assert_int_equal((uintptr_t)p % c->line, 0);
			assert_true(prev_end == NULL || p >= prev_end); /* no overlap */
			prev_end = p + 1500;
			assert_true(cn_placement_remaining(pl) < remaining);
			memset(p, 0xab, 1500); /* the memory is really there */
		}
		/* Same colour twice: the two buffers compete for the same sets. */
		uint8_t *a = cn_placement_alloc(pl, 64, 9), *b = cn_placement_alloc(pl, 64, 9);
		assert_int_equal(cn_cache_colour(c, a), cn_cache_colour(c, b));
		assert_true((size_t)(b - a) % way == 0);

		errno = 0;
		assert_null(cn_placement_alloc(pl, 64, c->sets));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(cn_placement_alloc(pl, 0, 1));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(cn_placement_alloc(pl, 64 * way, 0));
		assert_int_equal(errno, ENOMEM);
		/* Exhaust it: ENOMEM, never more than the arena holds. */
		size_t n = 0, before = cn_placement_remaining(pl);
		while (cn_placement_alloc(pl, way / 2, 0))
			n++;
		assert_int_equal(errno, ENOMEM);
		assert_true(n >= 1 && n * (way / 2) <= before);
		cn_placement_destroy(pl);
	}
	errno = 0;
	assert_null(cn_placement_create(NULL, 4096));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_placement_create(levels[0], 0));
	cn_placement_destroy(NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--print-caches") == 0) {
		struct cn_cache_info info;
		if (cn_cache_geometry(&info) < 0)
			return 1;
		printf("%s\n", info.source);
		for (unsigned i = 0; i < info.n; i++)
			printf("%u %u %llu %u %u %u\n", info.level[i].level, info.level[i].type,
			       (unsigned long long)info.level[i].size, info.level[i].ways,
			       info.level[i].line, info.level[i].sets);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		CN_T(geometry_is_plausible), CN_T(cpuid_agrees_with_sysfs),
		CN_T(flush_and_warm_move_lines), CN_T(icache_evict_runs),
		CN_T(placement_hits_colours),
	};
	return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
