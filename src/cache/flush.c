/* SPDX-License-Identifier: BSD-2-Clause */
#include "cachenet/cache.h"
#include "cachenet/cpu.h"
#include "cache_impl.h"

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
#define LINE 64

#ifdef CN_HAVE_VALGRIND_H
/*
 * Callgrind's cache simulator ignores CLFLUSH: under valgrind a flush would
 * leave the simulated caches warm and a "flushed" benchmark would report
 * hot-cache misses. So under valgrind the range is evicted the way the
 * simulator understands: for each of its lines, read ways-many other lines
 * that map to the same set in the simulated LL (and, the LL way being a
 * multiple of the D1's, in the same D1 set). With LRU replacement that
 * pushes the line out of both. Ranges where that would cost more than a
 * walk over the whole eviction buffer are evicted wholesale instead.
 * The geometry comes from CN_SIM_GEOMETRY (set by cn_sim_exec).
 */
struct sim_evict {
	uint8_t *buf;        /* assoc x way bytes, way-aligned */
	size_t len, way, line, ways, sets;
};
static struct sim_evict sev;
static pthread_once_t sev_once = PTHREAD_ONCE_INIT;

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

	if (parse_level(g, "LL=", ll) < 0 || parse_level(g, "D1=", d1) < 0)
		ll[0] = CN_CACHE_EVICT_WORKING_SET, ll[1] = 16, ll[2] = 64, d1[1] = 8;
	if (!ll[1] || !ll[2])
		return;
	sev.line = (size_t)ll[2];
	sev.ways = (size_t)(ll[1] > d1[1] ? ll[1] : d1[1]);
	sev.way = (size_t)(ll[0] / ll[1]);
	sev.sets = sev.way / sev.line;
	sev.len = sev.way * sev.ways;
	uint8_t *p = mmap(NULL, sev.len + sev.way, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	p = (uint8_t *)(((uintptr_t)p + sev.way - 1) & ~(uintptr_t)(sev.way - 1));
	memset(p, 1, sev.len); /* real pages, not the shared zero page */
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
	size_t lines = (len + sev.line - 1) / sev.line + 1;
	if (lines * sev.ways >= sev.len / sev.line) {
		for (size_t i = 0; i < sev.len; i += sev.line)
			(void)e[i];
		return 1;
	}
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(sev.line - 1);
	for (uintptr_t end = (uintptr_t)p + len; a < end; a += sev.line) {
		size_t set_off = ((a / sev.line) % sev.sets) * sev.line;
		for (size_t k = 0; k < sev.ways; k++)
			(void)e[set_off + k * sev.way];
	}
	return 1;
}
#endif

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

	for (int pass = 0; pass < 2; pass++) {
		for (uintptr_t a = start; a < end; a += LINE) {
			/* The first byte of the line may lie before p; touch a byte
			 * inside the caller's range instead. */
			volatile uint8_t *b = (volatile uint8_t *)(a < (uintptr_t)p ? (uintptr_t)p : a);
			if (for_write)
				__atomic_fetch_add((uint8_t *)b, 0, __ATOMIC_RELAXED);
			else
				(void)*b;
		}
	}
}
