/* SPDX-License-Identifier: BSD-2-Clause */
#include "cachenet/cache.h"
#include "cachenet/cpu.h"
#include "cache_impl.h"

#include <stdint.h>

/* Flushes and warms go by the coherence granule; every x86-64 CPU has a
 * 64-byte line, and CLFLUSH's own granule is reported in CPUID.1:EBX[15:8]
 * (also 64 everywhere we run). A smaller value than the truth would only
 * flush lines twice. */
#define LINE 64

void cn_cache_flush_range(const void *p, size_t len)
{
	if (len == 0)
		return;
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
