/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file tsc.h
 * Reading the time-stamp counter around a region: the unit of the TSC
 * counters the TAP backend keeps (cn_tap_stats.rx_tsc, tx_tsc).
 *
 * A TSC tick is the counter's constant reference rate (invariant TSC), not
 * a core cycle. Its frequency and a calibration are the laboratory's
 * (cachenet/lab/perf.h: cn_tsc_hz, cn_tsc_source).
 *
 * On x86 both reads are inline RDTSC/RDTSCP instructions. On aarch64 they
 * read the generic timer's virtual count (CNTVCT_EL0), which ticks at the
 * constant CNTFRQ_EL0 (tens of MHz: one tick is many cycles); the
 * laboratory's cn_tsc_hz() returns that frequency. Elsewhere a monotonic
 * nanosecond clock (CLOCK_MONOTONIC_RAW) stands in, and cn_tsc_hz()
 * returns 1e9.
 *
 * Thread safety: none needed (no state).
 */
#ifndef CACHENET_TSC_H
#define CACHENET_TSC_H

#include <stdint.h>

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
#include <time.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__x86_64__) || defined(__i386__)
/**
 * Read the TSC at the start of a region: LFENCE first so the read waits for
 * every earlier instruction to complete (Intel SDM Vol. 2 RDTSC; on AMD LFENCE
 * is dispatch-serializing whenever the kernel enables it, which Linux does on
 * every CPU with the Spectre mitigations).
 * @return the TSC. Cost: ~20-40 TSC ticks.
 */
static inline uint64_t cn_tsc_begin(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/**
 * Read the TSC at the end of a region: RDTSCP waits for earlier instructions
 * to execute, and the LFENCE after it keeps later ones from starting before
 * the read. Requires RDTSCP (every x86-64 CPU of the last 15 years:
 * cn_cpu_has(CN_CPU_RDTSCP)).
 * @return the TSC. Cost: ~20-40 TSC ticks.
 */
static inline uint64_t cn_tsc_end(void)
{
	uint32_t lo, hi, aux;

	__asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
/**
 * Read the generic timer at the start of a region: ISB first, so the read
 * is not taken before earlier instructions (Arm ARM, "Reading the generic
 * timer": CNTVCT_EL0 reads may otherwise be speculated early).
 * @return the virtual count. Cost: tens of cycles.
 */
static inline uint64_t cn_tsc_begin(void)
{
	uint64_t v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

/**
 * Read the generic timer at the end of a region: ISB before it (earlier
 * instructions done) and after it (later ones not started before it).
 * @return the virtual count. Cost: tens of cycles.
 */
static inline uint64_t cn_tsc_end(void)
{
	uint64_t v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) :: "memory");
	return v;
}
#else
/** Not x86: CLOCK_MONOTONIC_RAW in nanoseconds. */
static inline uint64_t cn_tsc_begin(void)
{
	struct timespec ts;

#ifdef CLOCK_MONOTONIC_RAW
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
#else
	clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Not x86: CLOCK_MONOTONIC_RAW in nanoseconds. */
static inline uint64_t cn_tsc_end(void)
{
	return cn_tsc_begin();
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_TSC_H */
