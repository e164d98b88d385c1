/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file perf.h
 * Counting what a code region costs: TSC ticks always, hardware counters
 * where the kernel has a PMU driver, and an honest "unavailable, because..."
 * where it has not.
 *
 * Two clocks, never confused:
 *  - **TSC ticks** (cn_tsc_begin/cn_tsc_end): the time-stamp counter, which on
 *    every CPU cachenet supports ticks at a constant *reference* rate
 *    (invariant TSC), not at the core clock, which may run faster or slower
 *    (a TSC of 2.6 GHz beside cores near 3.6 GHz makes one tick ~1.38 core
 *    cycles). Results are labelled "TSC ticks", never "cycles".
 *  - **core cycles** ("cycles" counter): only from the PMU.
 *
 * Hardware counters are opened by name through libpfm4
 * (pfm_get_os_event_encoding → perf_event_open), so any event libpfm4 knows
 * for the CPU can be asked for ("INST_RETIRED:ANY_P", "perf::L1-DCACHE-LOAD-MISSES",
 * "amd64_fam19h_zen4::..."). Without libpfm4 (built with -Dpfm=disabled) the
 * perf generic names of the default set are still understood. Events are
 * counted in user mode only, in groups of at most CN_COUNTERS_GROUP_MAX read
 * atomically together, and each value is scaled by time_enabled/time_running
 * when the kernel had to multiplex the group.
 *
 * When the kernel has no PMU driver (common in VMs) perf_event_open fails; each affected counter then reports
 * *unavailable* with the reason (the errno and what it usually means). An
 * unavailable counter has no value: cn_counters_get() returns a negative
 * errno and sets value to NaN. It never reads 0.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a counter set counts the thread that opened it (pid 0,
 * cpu -1); use it from that thread.
 */
#ifndef CACHENET_LAB_PERF_H
#define CACHENET_LAB_PERF_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachenet/tsc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ TSC */

/* cn_tsc_begin() and cn_tsc_end() are in cachenet/tsc.h. */

/**
 * TSC frequency in ticks per second. The first call determines it: from
 * CPUID leaf 0x15 (crystal ratio) when the CPU reports it, else by timing the
 * TSC against CLOCK_MONOTONIC_RAW for ~20 ms (median of 3); on aarch64 the
 * generic timer's CNTFRQ_EL0 (timed likewise if firmware left it 0). Later
 * calls are one load. Never 0.
 */
double cn_tsc_hz(void);

/** How cn_tsc_hz() was obtained, e.g. "cpuid 0x15" or
 *  "calibrated against CLOCK_MONOTONIC_RAW (3 x 20 ms)". */
const char *cn_tsc_source(void);

/** TSC ticks → nanoseconds with cn_tsc_hz(). */
static inline double cn_tsc_to_ns(double ticks)
{
	return ticks * 1e9 / cn_tsc_hz();
}

/* ------------------------------------------------------ hardware counters */

/** Most events per perf_event group (read atomically together). A PMU with
 *  fewer counters multiplexes the groups; values are then scaled. */
#define CN_COUNTERS_GROUP_MAX 4
/** Most events in one counter set. */
#define CN_COUNTERS_MAX 32

/**
 * The default set, as "label=event" pairs: the labels are the names every
 * cachenet benchmark reports (see bench/harness/cn_bench.h), the events the
 * perf generic events libpfm4 exposes through its "perf" PMU table.
 */
#define CN_COUNTERS_DEFAULT                                            \
	"cycles=perf::PERF_COUNT_HW_CPU_CYCLES,"                        \
	"instructions=perf::PERF_COUNT_HW_INSTRUCTIONS,"                \
	"branches=perf::PERF_COUNT_HW_BRANCH_INSTRUCTIONS,"             \
	"branch_miss=perf::PERF_COUNT_HW_BRANCH_MISSES,"                \
	"l1i_miss=perf::PERF_COUNT_HW_CACHE_L1I:READ:MISS,"             \
	"l1d_miss=perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS,"             \
	"llc_miss=perf::PERF_COUNT_HW_CACHE_LL:READ:MISS,"              \
	"dtlb_miss=perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS"

struct cn_counters; /**< opaque counter set */

/** One counter's result. */
struct cn_counter_value {
	const char *label;      /**< e.g. "l1d_miss" */
	const char *event;      /**< the event name as given */
	bool available;         /**< false: value is NaN and reason says why */
	double value;           /**< count since the last reset, scaled */
	double running;         /**< time_running/time_enabled, 1.0 = never multiplexed */
	const char *reason;     /**< why unavailable; NULL when available */
};

/**
 * Open a counter set for the calling thread.
 *
 * @param spec  NULL or "" for CN_COUNTERS_DEFAULT; else a comma-separated
 *              list of "label=event" or "event" (label = event). Event names
 *              are libpfm4's (`showevtinfo` from libpfm4's examples lists
 *              them) or, without libpfm4, the perf generic names of the
 *              default set.
 * @return 0 and *out set — also when some or all counters are unavailable
 *         (query them); -EINVAL for a malformed spec or more than
 *         CN_COUNTERS_MAX events; -ENOMEM.
 * Cost: one perf_event_open per event, plus libpfm4's one-time init.
 * The counters start disabled and zeroed.
 */
int cn_counters_open(struct cn_counters **out, const char *spec) CN_NONNULL(1);

/** Close all events and free the set. NULL is accepted. */
void cn_counters_close(struct cn_counters *set);

/** Zero every counter (does not change enabled state). 0 or -errno. */
int cn_counters_reset(struct cn_counters *set) CN_NONNULL_ALL;
/** Start counting (all groups). One ioctl per group. 0 or -errno. */
int cn_counters_enable(struct cn_counters *set) CN_NONNULL_ALL;
/** Stop counting (all groups). One ioctl per group. 0 or -errno. */
int cn_counters_disable(struct cn_counters *set) CN_NONNULL_ALL;
/** Read every group once into the set; call after cn_counters_disable().
 *  0 or -errno (a failed read marks the group's counters unavailable). */
int cn_counters_read(struct cn_counters *set) CN_NONNULL_ALL;

/** Number of counters in the set (available or not). */
unsigned cn_counters_count(const struct cn_counters *set) CN_NONNULL_ALL;
/** Number of counters that can count. */
unsigned cn_counters_available(const struct cn_counters *set) CN_NONNULL_ALL;

/**
 * Result of counter @p i from the last cn_counters_read().
 * @return 0 when available; -EINVAL for a bad index; otherwise the negative
 *         errno that made it unavailable (value = NaN, reason set).
 */
int cn_counters_get(const struct cn_counters *set, unsigned i,
		    struct cn_counter_value *out) CN_NONNULL_ALL;

/** Index of the counter labelled @p label, or -ENOENT. */
int cn_counters_find(const struct cn_counters *set, const char *label) CN_NONNULL_ALL;

/**
 * One line describing the set: "8 hardware counters available" or
 * "hardware counters unavailable: perf_event_open: No such file or directory
 * (the kernel has no PMU driver for this event; common in VMs)", listing
 * per-label reasons when they differ. Written like snprintf.
 */
size_t cn_counters_describe(const struct cn_counters *set, char *buf, size_t len) CN_NONNULL(1);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_LAB_PERF_H */
