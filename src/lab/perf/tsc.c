/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TSC frequency. CPUID leaf 0x15 gives it exactly on recent Intel parts
 * (crystal frequency x TSC/crystal ratio); AMD and most hypervisors leave
 * the leaf empty, so the fallback times the TSC against CLOCK_MONOTONIC_RAW
 * (not NTP-slewed) over 3 x 20 ms and keeps the median. On aarch64 the
 * counter cn_tsc_begin() reads (CNTVCT_EL0) states its own frequency in
 * CNTFRQ_EL0, which firmware sets and user space may read.
 */
#include "cachenet/lab/perf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CN_X86 1
#endif

static double tsc_hz_cache;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static char tsc_src[96];

/* The calibration: where the counter's rate is not stated. */
#if defined(CN_X86) || defined(__aarch64__)
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double calibrate_once(uint64_t ns_window)
{
	uint64_t n0 = mono_ns(), t0 = cn_tsc_begin(), n1, t1;

	do {
		n1 = mono_ns();
	} while (n1 - n0 < ns_window);
	t1 = cn_tsc_end();
	return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double calibrate(void)
{
	double r[3];

	for (int i = 0; i < 3; i++)
		r[i] = calibrate_once(20 * 1000 * 1000);
	qsort(r, 3, sizeof(r[0]), cmp_double);
	snprintf(tsc_src, sizeof(tsc_src),
		 "calibrated against CLOCK_MONOTONIC_RAW (median of 3 x 20 ms)");
	return r[1];
}
#endif

static double determine(void)
{
#ifdef CN_X86
	unsigned a, b, c, d;

	if (__get_cpuid(0, &a, &b, &c, &d) && a >= 0x15) {
		__get_cpuid(0x15, &a, &b, &c, &d);
		/* EAX = denominator, EBX = numerator, ECX = crystal Hz (may be 0). */
		if (a && b && c) {
			snprintf(tsc_src, sizeof(tsc_src), "cpuid 0x15 (crystal %u Hz x %u/%u)", c, b, a);
			return (double)c * b / a;
		}
	}
	return calibrate();
#elif defined(__aarch64__)
	uint64_t f;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	if (f == 0) /* firmware that did not set it */
		return calibrate();
	snprintf(tsc_src, sizeof(tsc_src), "aarch64 generic timer, CNTFRQ_EL0 = %llu Hz",
		 (unsigned long long)f);
	return (double)f;
#else
	snprintf(tsc_src, sizeof(tsc_src), "no TSC on this architecture: CLOCK_MONOTONIC_RAW ns");
	return 1e9;
#endif
}

static void init(void)
{
	tsc_hz_cache = determine();
}

double cn_tsc_hz(void)
{
	pthread_once(&tsc_once, init);
	return tsc_hz_cache;
}

const char *cn_tsc_source(void)
{
	cn_tsc_hz();
	return tsc_src;
}
