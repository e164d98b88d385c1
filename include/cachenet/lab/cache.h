/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file cache.h
 * Cache control for experiments: what the caches are, how to empty or fill
 * them for a byte range, how to empty the instruction cache, and where to
 * put buffers so that they do (or do not) compete for the same cache sets.
 *
 * These are the knobs behind every "hot vs cold" and "conflict vs no
 * conflict" result in cachenet's benchmarks (the hot and cold caches of
 * Nahum et al., "Cache Behavior of Network Protocols", Tables 3-5; the
 * buffer placement of Ahlgren et al., "The Applicability of Integrated
 * Layer Processing", Fig. 6). They are measurement tools, not fast-path
 * code.
 *
 * A virtual machine may report a last-level cache far larger than the one
 * its latency shows (docs/performance.md, "Cache control"). Never size
 * an eviction from the reported LLC; cn_cache_flush_range() evicts by
 * address, and CN_CACHE_EVICT_WORKING_SET is the working set to use when a
 * range cannot be flushed by address.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 */
#ifndef CACHENET_LAB_CACHE_H
#define CACHENET_LAB_CACHE_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A working set certain to exceed any cache on the machines we run on (64 MB). */
#define CN_CACHE_EVICT_WORKING_SET ((size_t)64 << 20)

enum cn_cache_type {
	CN_CACHE_DATA = 1,
	CN_CACHE_INSTRUCTION = 2,
	CN_CACHE_UNIFIED = 3,
};

/** One cache as the CPU (or the kernel) describes it. */
struct cn_cache_level {
	unsigned level;          /**< 1, 2, 3, ... */
	enum cn_cache_type type;
	uint64_t size;           /**< bytes */
	unsigned ways;           /**< 0 = fully associative */
	unsigned line;           /**< bytes */
	unsigned sets;           /**< size / (ways * line) */
	unsigned shared_by;      /**< logical CPUs sharing it, 0 if unknown */
};

#define CN_CACHE_LEVELS_MAX 8

struct cn_cache_info {
	unsigned n;                                     /**< entries used */
	struct cn_cache_level level[CN_CACHE_LEVELS_MAX]; /**< L1D, L1I, L2, L3 order as found */
	const char *source;     /**< "sysfs", "cpuid leaf 4", "cpuid 0x8000001d" */
};

/**
 * Describe the caches of CPU 0: from sysfs (/sys/devices/system/cpu/cpu0/
 * cache), else CPUID leaf 4 (Intel) or 0x8000001D (AMD). Cached after the
 * first call. CACHENET_CACHE_SOURCE=cpuid in the environment skips sysfs.
 * @return 0, or -ENODEV when neither source describes any cache.
 */
int cn_cache_geometry(struct cn_cache_info *info) CN_NONNULL_ALL;

/** The first level matching @p level and @p type (unified matches either
 *  data or instruction lookups), or NULL. */
const struct cn_cache_level *cn_cache_find(const struct cn_cache_info *info,
					   unsigned level, enum cn_cache_type type) CN_NONNULL_ALL;

/** The highest-level data or unified cache, or NULL. */
const struct cn_cache_level *cn_cache_last_level(const struct cn_cache_info *info) CN_NONNULL_ALL;

/**
 * Write back and invalidate every cache line of [p, p+len) in every cache
 * level of the coherence domain: CLFLUSHOPT where present (several in
 * flight), else CLFLUSH, then MFENCE so the flushes complete before any later
 * load. Costs roughly 10-100 TSC ticks per line (one round trip per dirty
 * line); a 1 MB range is ~16k lines. Not a fast-path function.
 *
 * Under valgrind (simulation mode, sim.h), whose cache simulator ignores
 * CLFLUSH, it evicts the range from the *simulated* D1 and LL instead, by
 * reading, for each line, ways-many lines of an eviction buffer that map to
 * the same sets (LRU replacement pushes the line out); large ranges evict
 * the whole simulated hierarchy. The geometry is CN_SIM_GEOMETRY's. Switch
 * collection off around it (the harness's pause() does).
 */
void cn_cache_flush_range(const void *p, size_t len);

/**
 * Bring [p, p+len) into the caches by reading one byte per line, twice (the
 * second pass finds lines the first evicted from L1 still in L2/L3 if the
 * range exceeds L1). With @p for_write, also write each line back unchanged
 * (atomically, so concurrent writers are not lost) so the lines are held
 * modified/exclusive, as a just-written packet would be.
 */
void cn_cache_warm_range(void *p, size_t len, bool for_write);

/**
 * Empty the instruction caches and the uop cache: execute a generated block
 * of code (one 2-byte jump per cache line, so one fetch per line) that is
 * larger than the L2 (at least 2x L2, at least 4 MB) and is kept for later
 * calls. The data side is barely touched. ~0.2-1 ms per call. Under
 * valgrind, where only the simulated I1 is there to empty, it runs the
 * block's last 256 KB (4x any I1 we simulate): the whole block would be
 * retranslated by valgrind at every call (~0.5 s).
 * @return 0; -ENOMEM if the block cannot be mapped executable (a hardened
 *         kernel refusing PROT_EXEC anonymous memory); -ENOTSUP off x86.
 */
int cn_cache_evict_icache(void);

/**
 * Empty the data caches of every level: read one byte of every line of an
 * eviction buffer of max(CN_CACHE_EVICT_WORKING_SET, 2 x the reported
 * last-level size), twice the largest cache, so that even a replacement
 * policy that is not LRU keeps none of the old lines (test_cache checks
 * that loads after it take memory latency). Dirty lines of the caller's
 * data are written back on the way out; the TLB is emptied too. Use it
 * with cn_cache_evict_icache() for the "cold cache" of Nahum et al.
 * (everything the next packet touches comes from memory). The buffer
 * (64 MB here) is mapped and faulted in on the first call and kept for the
 * process.
 * Costs ~5-15 ms per call natively (memory bandwidth); under valgrind it
 * evicts the *simulated* D1 and LL (CN_SIM_GEOMETRY's) wholesale instead,
 * reading (LL ways + D1 ways) lines per LL set. Not a fast-path function.
 * @return 0, or -ENOMEM if the buffer cannot be mapped.
 */
int cn_cache_evict_data(void);

/* ------------------------------------------------------ placement */

/** A placement arena: memory from which buffers are carved at chosen cache
 *  colours. */
struct cn_placement;

/**
 * The colour of @p addr in a cache of geometry @p c: its set index,
 * (addr / line) mod sets. Two addresses with the same colour compete for the
 * same set. For a physically indexed cache the virtual colour equals the
 * physical one only below the page size — see cn_placement_create().
 */
unsigned cn_cache_colour(const struct cn_cache_level *c, const void *addr) CN_NONNULL(1);

/**
 * Create an arena of @p size bytes for placement in cache @p c. The arena is
 * aligned to the cache's way size (size / ways) so that colours are exact in
 * virtual addresses. If the way size is larger than 4 KB the arena asks for
 * 2 MB pages (MAP_HUGETLB, else transparent huge pages via madvise), because
 * only then are virtual colours physical colours for the L2/L3; cn_placement_
 * huge() says whether it got them.
 * @return the arena, or NULL with errno EINVAL (c NULL, bad geometry, size 0) or
 *         ENOMEM.
 */
struct cn_placement *cn_placement_create(const struct cn_cache_level *c, size_t size);

/** Free the arena and every buffer carved from it. NULL is accepted. */
void cn_placement_destroy(struct cn_placement *pl);

/** Whether the arena is backed by 2 MB pages (huge TLB or THP). For THP this
 *  is what /proc/self/smaps reports for the arena after it was touched. */
bool cn_placement_huge(const struct cn_placement *pl) CN_NONNULL_ALL;

/**
 * Carve @p len bytes whose first byte has colour @p colour (0 .. sets-1).
 * Buffers never overlap; consecutive calls move forward through the arena
 * (a bump allocator: memory is reclaimed only by destroying the arena).
 * @return the buffer, or NULL with errno EINVAL (colour out of range,
 *         len 0) or ENOMEM (the arena has no room at that colour left).
 */
void *cn_placement_alloc(struct cn_placement *pl, size_t len, unsigned colour) CN_NONNULL_ALL;

/** Bytes of the arena still free (from the bump pointer to the end). */
size_t cn_placement_remaining(const struct cn_placement *pl) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_LAB_CACHE_H */
