/* SPDX-License-Identifier: BSD-2-Clause */
#include "cachenet/lab/cache.h"
#include "cachenet/cpu.h"
#include "cache_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef CN_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

/* Flushes and warms go by the coherence granule; every x86-64 CPU has a
 * 64-byte line, and CLFLUSH's own granule is reported in CPUID.1:EBX[15:8]
 * (also 64 everywhere we run). A smaller value than the truth would only
 * flush lines twice. */
#define LINE CN_CACHE_LINE

#ifdef CN_HAVE_VALGRIND_H
/*
 * Callgrind's cache simulator ignores CLFLUSH: under valgrind a flush would
 * leave the simulated caches warm and a "flushed" benchmark would report
 * hot-cache misses. So under valgrind the range is evicted the way the
 * simulator understands: for each of its lines, read M = LL ways + D1 ways
 * other lines that map to the same simulated LL set (and, the LL way being
 * a multiple of the D1's, to the same D1 set). With LRU that pushes the line
 * out of both — provided every one of those reads reaches the LL, because a
 * read that hits in D1 does not refresh the LL's LRU order (a first version
 * reused the same M lines each time; the D1 kept some of them, too few
 * reached the LL, and the target stayed there). So each set has a pool of
 * 2M lines used in alternate halves: the half read now was last read at
 * least M same-set reads ago, so it is no longer in the D1.
 * Ranges where that would cost more than walking the whole pool are evicted
 * wholesale instead. The geometry comes from CN_SIM_GEOMETRY (cn_sim_exec).
 */
struct sim_evict {
	uint8_t *buf;        /* 2M lines per LL set: pool slot k of set s at s*line + k*way */
	uint8_t *turn;       /* per LL set: which half of its pool to read next */
	size_t len, way, line, m, sets;
};
static struct sim_evict sev;
static pthread_once_t sev_once = PTHREAD_ONCE_INIT;
/* The eviction reads are summed into this: valgrind's JIT drops loads
 * whose result is never used (clang -O2 emits exactly such loads for
 * `(void)volatile_ptr[i]`), and a dropped load evicts nothing. */
static volatile uint8_t sev_sink;

static int parse_level(const char *g, const char *key, unsigned long long v[3])
{
	const char *p = g ? strstr(g, key) : NULL;
	if (!p)
		return -1;
	return sscanf(p + strlen(key), "%llu,%llu,%llu", &v[0], &v[1], &v[2]) == 3 ? 0 : -1;
}

static void sim_evict_init(void)
{
	const char *g = getenv("CN_SIM_GEOMETRY");
	unsigned long long ll[3], d1[3];

	if (parse_level(g, "LL=", ll) < 0 || parse_level(g, "D1=", d1) < 0) {
		ll[0] = CN_CACHE_EVICT_WORKING_SET, ll[1] = 16, ll[2] = 64;
		d1[1] = 8;
	}
	if (!ll[1] || !ll[2] || ll[0] % (ll[1] * ll[2]))
		return;
	sev.line = (size_t)ll[2];
	sev.way = (size_t)(ll[0] / ll[1]);
	sev.sets = sev.way / sev.line;
	sev.m = (size_t)(ll[1] + d1[1]);
	sev.len = 2 * sev.m * sev.way;
	sev.turn = calloc(sev.sets, 1);
	uint8_t *p = mmap(NULL, sev.len + sev.way, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || !sev.turn)
		return;
	/* No memset: the simulator caches virtual addresses, so untouched
	 * (zero-page) lines evict as well as real ones, and faulting 100 MB
	 * in under valgrind costs seconds. */
	p = (uint8_t *)(((uintptr_t)p + sev.way - 1) & ~(uintptr_t)(sev.way - 1));
	sev.buf = p;
}

static int sim_evict(const void *p, size_t len)
{
	if (!RUNNING_ON_VALGRIND)
		return 0;
	pthread_once(&sev_once, sim_evict_init);
	if (!sev.buf)
		return 0;
	volatile const uint8_t *e = sev.buf;
	uint8_t acc = 0;
	size_t lines = (len + sev.line - 1) / sev.line + 1;
	if (lines * sev.m >= sev.len / sev.line) {
		/* Slot by slot across all sets, the first half of the pool:
		 * every set sees M distinct lines in a row, at most D1-ways of
		 * them still in the D1 from an earlier call, so at least
		 * LL-ways reach the LL and push everything else out. */
		for (size_t i = 0; i < sev.len / 2; i += sev.line)
			acc += e[i];
		memset(sev.turn, 1, sev.sets); /* the other half next */
		sev_sink = acc;
		return 1;
	}
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(sev.line - 1);
	for (uintptr_t end = (uintptr_t)p + len; a < end; a += sev.line) {
		size_t set = (a / sev.line) % sev.sets;
		size_t first = sev.turn[set] ? sev.m : 0;
		sev.turn[set] ^= 1;
		for (size_t k = first; k < first + sev.m; k++)
			acc += e[set * sev.line + k * sev.way];
	}
	sev_sink = acc;
	return 1;
}
#endif

static volatile uint8_t warm_sink;

/* The native eviction buffer of cn_cache_evict_data(). */
static uint8_t *evict_buf;
static size_t evict_len;
static pthread_once_t evict_once = PTHREAD_ONCE_INIT;

static void evict_init(void)
{
	struct cn_cache_info info;
	size_t len = CN_CACHE_EVICT_WORKING_SET;

	if (cn_cache_geometry(&info) == 0) {
		const struct cn_cache_level *ll = cn_cache_last_level(&info);
		if (ll && 2 * ll->size > len)
			len = (size_t)(2 * ll->size);
	}
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset(p, 1, len); /* real pages, not the shared zero page */
	evict_buf = p;
	evict_len = len;
}

int cn_cache_evict_data(void)
{
#ifdef CN_HAVE_VALGRIND_H
	if (RUNNING_ON_VALGRIND) {
		/* the whole simulated hierarchy: a range as large as the pool */
		pthread_once(&sev_once, sim_evict_init);
		if (sev.buf && sim_evict(sev.buf, sev.len))
			return 0;
	}
#endif
	pthread_once(&evict_once, evict_init);
	if (!evict_buf)
		return -ENOMEM;
	const volatile uint8_t *e = evict_buf;
	uint8_t acc = 0;
	for (size_t i = 0; i < evict_len; i += LINE)
		acc += e[i];
	warm_sink = acc; /* used, so no compiler or JIT drops the loads */
	return 0;
}

void cn_cache_flush_range(const void *p, size_t len)
{
	if (len == 0)
		return;
#ifdef CN_HAVE_VALGRIND_H
	if (sim_evict(p, len))
		return;
#endif
#if defined(__x86_64__) || defined(__i386__)
	if (cn_cpu_has(CN_CPU_CLFLUSHOPT)) {
		cn__cache_flush_clflushopt(p, len, LINE);
	} else {
		uintptr_t a = (uintptr_t)p & ~(uintptr_t)(LINE - 1);
		for (uintptr_t end = (uintptr_t)p + len; a < end; a += LINE)
			__asm__ volatile("clflush (%0)" :: "r"(a) : "memory");
	}
	__asm__ volatile("mfence" ::: "memory");
#elif defined(__aarch64__)
	/* DC CIVAC is allowed at EL0 on Linux (SCTLR_EL1.UCI). */
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(LINE - 1);
	for (uintptr_t end = (uintptr_t)p + len; a < end; a += LINE)
		__asm__ volatile("dc civac, %0" :: "r"(a) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
#else
#error "cn_cache_flush_range: no flush-by-address for this architecture yet"
#endif
}

void cn_cache_warm_range(void *p, size_t len, bool for_write)
{
	if (len == 0)
		return;
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(LINE - 1);
	uintptr_t end = (uintptr_t)p + len;
	uint8_t acc = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (uintptr_t a = start; a < end; a += LINE) {
			/* The first byte of the line may lie before p; touch a byte
			 * inside the caller's range instead. */
			volatile uint8_t *b = (volatile uint8_t *)(a < (uintptr_t)p ? (uintptr_t)p : a);
			if (for_write)
				__atomic_fetch_add((uint8_t *)b, 0, __ATOMIC_RELAXED);
			else
				acc += *b; /* used, so valgrind's JIT keeps the load */
		}
	}
	warm_sink = acc;
}
