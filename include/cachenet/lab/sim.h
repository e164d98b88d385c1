/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file sim.h
 * Simulation mode: cache-miss counts for a code region on any machine,
 * PMU or not, from valgrind's callgrind with its cache simulator.
 *
 * How it works. A program that wants simulated counts (every cachenet
 * benchmark does, through `--cn_sim=GEOMETRY`) calls cn_sim_exec(), which
 * runs the same program again, as a child, under
 *
 *     valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no
 *              --I1=... --D1=... --LL=... --callgrind-out-file=DIR/cn.out
 *
 * with CN_SIM_DIR=DIR in the environment. Inside, cn_sim_active() is true;
 * the program brackets exactly the measured region with
 * cn_sim_collect(&r, true/false) (callgrind's TOGGLE_COLLECT client request)
 * and then cn_sim_dump(), which asks callgrind to write the counts collected
 * since the last dump (DUMP_STATS_AT) and parses that file back. Instructions
 * outside the toggles are executed — and move the simulated caches — but are
 * not counted, exactly as a direct `callgrind --toggle-collect=FUNC` run.
 *
 * Geometry: valgrind guesses the host's caches from CPUID and can guess
 * wrong (in some VMs it reports a 256 MB direct-mapped LL), so
 * cachenet always passes all three levels: what the caller gives, else the
 * host's L1I, L1D and last-level cache from cn_cache_geometry().
 *
 * Costs: simulation runs the program ~50-100x slower; counts are exact and
 * repeatable for the same binary and input (not timings: a simulated run
 * reports no TSC ticks).
 *
 * Dead loads: valgrind's JIT removes a load whose value is never used
 * (e.g. clang -O2's code for `(void)volatile_ptr[i]`), so such a load is
 * neither counted nor simulated. Code measured under simulation must use
 * what it reads (sum it into a result), as every cachenet kernel does.
 *
 * Flushes: callgrind does not model CLFLUSH, so under simulation
 * cn_cache_flush_range() evicts the range from the *simulated* caches by
 * reading conflicting lines (see cache.h). Bracket it with collection off,
 * as the benchmark harness's pause() does.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 */
#ifndef CACHENET_LAB_SIM_H
#define CACHENET_LAB_SIM_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One simulated cache level. size 0 = "use the host's". */
struct cn_sim_cache {
	uint64_t size;   /**< bytes */
	unsigned assoc;  /**< ways; 1 = direct mapped */
	unsigned line;   /**< bytes, power of two, >= 16 */
};

/** The three levels callgrind simulates: first-level I and D, one last level. */
struct cn_sim_geometry {
	struct cn_sim_cache i1, d1, ll;
};

/**
 * Parse "I1=16384,1,64:D1=32768,8,64:LL=8388608,16,64" (any subset, any
 * order; sizes may end in K or M) into @p g. Levels not named keep size 0.
 * NULL, "" and "host" leave all three at 0 (the host's geometry).
 * @return 0, or -EINVAL with a message in @p err (may be NULL): unknown level, wrong field
 *         count, line not a power of two, size not a multiple of assoc*line,
 *         or a set count that is not a power of two (callgrind needs one).
 */
int cn_sim_geometry_parse(const char *spec, struct cn_sim_geometry *g,
			  char *err, size_t errlen) CN_NONNULL(2);

/** Fill every size-0 level of @p g from the host (cn_cache_geometry()).
 *  @return 0, or -ENODEV if the host geometry could not be read. */
int cn_sim_geometry_complete(struct cn_sim_geometry *g) CN_NONNULL_ALL;

/** Write @p g as "I1=32768,8,64:D1=...:LL=..." (snprintf semantics). */
size_t cn_sim_geometry_format(const struct cn_sim_geometry *g, char *buf, size_t len) CN_NONNULL(1);

/** Counts of one simulated region; names follow callgrind's events. */
struct cn_sim_counts {
	uint64_t ir;   /**< instructions executed */
	uint64_t dr;   /**< data reads */
	uint64_t dw;   /**< data writes */
	uint64_t i1mr; /**< I1 misses */
	uint64_t d1mr; /**< D1 read misses */
	uint64_t d1mw; /**< D1 write misses */
	uint64_t ilmr; /**< LL misses caused by instruction fetch */
	uint64_t dlmr; /**< LL data read misses */
	uint64_t dlmw; /**< LL data write misses */
};

/**
 * Run argv again, as a child process, under valgrind/callgrind with geometry
 * @p g (completed from the host where 0) and dump files in @p outdir
 * (created if missing; the caller removes it afterwards), and wait for it.
 * The child's environment gets CN_SIM_DIR, CN_SIM_GEOMETRY and "avx512"
 * added to CACHENET_CPU_DISABLE (valgrind implements no AVX-512).
 * The valgrind binary is $CN_VALGRIND, else "valgrind" on PATH.
 * @return the child's exit status (0..255; 128+signal if it was killed),
 *         or -errno if valgrind could not be started (-ENOENT: not
 *         installed), -EINVAL for a bad geometry, -ENODEV if the host
 *         geometry was needed and could not be read.
 */
int cn_sim_exec(int argc, char *const argv[], const struct cn_sim_geometry *g,
		const char *outdir) CN_NONNULL_ALL;

/** True inside a cn_sim_exec() child: under valgrind with CN_SIM_DIR set. */
bool cn_sim_active(void);

/** Collection state of the caller's region; zero-initialise it. */
struct cn_sim_region {
	bool collecting;
};

/**
 * Switch callgrind's collection on or off for the region. Idempotent (the
 * client request is a toggle; the region remembers the state). A no-op, a
 * handful of instructions, when not running under valgrind.
 */
void cn_sim_collect(struct cn_sim_region *r, bool on) CN_NONNULL_ALL;

/**
 * Stop collecting, have callgrind dump the counts collected since the last
 * dump, labelled @p label, and parse them into @p out. The dump file is
 * then deleted, unless CN_SIM_KEEP is set in the environment: then it is
 * renamed to CN_SIM_DIR/LABEL.callgrind (LABEL with every character but
 * letters, digits and ".-+" made '_'), replacing an earlier one of the same
 * label, for callgrind_annotate (a bench's --cn_sim_keep sets it).
 * @return 0; -ENOTSUP when !cn_sim_active(); -EIO/-EBADMSG if the dump file
 *         could not be found or parsed.
 */
int cn_sim_dump(struct cn_sim_region *r, const char *label, struct cn_sim_counts *out)
	CN_NONNULL_ALL;

/**
 * Parse one callgrind output file: the "events:" line and the "totals:"
 * (else "summary:") line. Events the file lacks read 0 (callgrind omits
 * trailing zeros); the cache events are required (--cache-sim=yes).
 * @param trigger  if non-NULL, receives the "desc: Trigger:" text.
 * @return 0, -errno if the file cannot be read, -EBADMSG if it is not a
 *         callgrind file with cache simulation.
 */
int cn_callgrind_parse(const char *path, struct cn_sim_counts *out,
		       char *trigger, size_t triggerlen) CN_NONNULL(1, 2);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_LAB_SIM_H */
