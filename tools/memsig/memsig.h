/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memsig internals: the pointer chase, the bandwidth kernels, level
 * detection and the report writers, shared by the tool's source files.
 *
 * Units: sizes are bytes (KB = 1024 in the printed output), latencies are
 * TSC ticks per load (converted to ns with cn_tsc_hz()). The TSC ticks at a
 * constant reference rate, not at the core clock, so nothing here is ever
 * called a "cycle".
 */
#ifndef MEMSIG_H
#define MEMSIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One chase node per cache line: 64 bytes on every x86-64 and most arm64
 * cores. A larger real line only makes the nodes share lines, which shows up
 * as a too-low latency, never as a crash. */
#define MS_LINE 64u
/* The "page" order groups lines by 4 KB, the base page on x86-64, whatever
 * page size backs the buffer (with --huge a 2 MB page holds 512 groups). */
#define MS_PAGE 4096u
#define MS_LINES_PER_PAGE (MS_PAGE / MS_LINE)
/* The chase loop does this many dependent loads per iteration. */
#define MS_UNROLL 32u

enum ms_order { MS_RANDOM = 0, MS_PAGEWISE = 1, MS_NORDERS = 2 };
extern const char *const ms_order_name[MS_NORDERS];

/* ---------------------------------------------------------------- PRNG */

/* splitmix64 (Steele, Lea, Flood 2014): one add and three xor-shift-multiply
 * steps per 64-bit output, equidistributed enough for shuffling, and
 * deterministic from the seed so two runs chase identical cycles. */
struct ms_rng {
	uint64_t s;
};

static inline uint64_t ms_rng_next(struct ms_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) by the multiply-high method (Lemire 2019); the bias is
 * below n / 2^64, far under anything a cache can notice. */
static inline uint64_t ms_rng_below(struct ms_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)ms_rng_next(r) * n) >> 64);
}

/* --------------------------------------------------------------- chase */

/**
 * Link the first @p bytes of @p buf (page aligned, bytes a multiple of
 * MS_LINE, at least two lines) into one cycle through every line, each line's
 * first word pointing at the next line's start.
 * MS_RANDOM: a uniformly random cyclic order of all lines (Fisher-Yates over
 * @p idx, which must hold bytes / MS_LINE entries).
 * MS_PAGEWISE: 4 KB pages in random order, the lines of each page in random
 * order, every line of a page before the next page.
 * @return the cycle's first node.
 */
void *ms_chase_build(void *buf, size_t bytes, enum ms_order order,
		     uint32_t *idx, struct ms_rng *rng);

/** Follow @p loads pointers from @p p (loads a multiple of MS_UNROLL).
 *  @return where the chase stopped, to start the next run from. */
void *ms_chase(void *p, uint64_t loads);

/* ----------------------------------------------------------- bandwidth */

enum ms_bw_op { MS_READ = 0, MS_WRITE = 1, MS_COPY = 2, MS_NOPS = 3 };
extern const char *const ms_bw_op_name[MS_NOPS];

/** Name of the vector width the read/write kernels use ("avx512", ...). */
const char *ms_bw_kernel(void);
/** Sum of the 64-bit words of buf[0..bytes); bytes a multiple of 256,
 *  buf 64-byte aligned. */
uint64_t ms_bw_read(const void *buf, size_t bytes);
/** Store @p pattern over buf[0..bytes); same alignment rules. */
void ms_bw_write(void *buf, size_t bytes, uint64_t pattern);

/* -------------------------------------------------------------- levels */

enum ms_level_id { MS_L1 = 0, MS_L2, MS_LLC, MS_DRAM, MS_NLEVELS };
extern const char *const ms_level_name[MS_NLEVELS];

/* A run of consecutive points of one order whose latencies agree. */
struct ms_plateau {
	unsigned first, last;   /* point indices, inclusive */
	double tsc;             /* median tsc/load of its points */
};

struct ms_level {
	bool found;
	struct ms_plateau p;    /* valid when found */
	char why[160];          /* when not found: the reason */
};

#define MS_MAX_PLATEAUS 64

struct ms_levels {
	struct ms_level lv[MS_NLEVELS];
	/* Plateaus not given a level name (TLB reach, a shoulder before DRAM). */
	struct ms_plateau other[MS_MAX_PLATEAUS];
	unsigned nother;
};

/**
 * Find L1, L2, LLC and DRAM on one latency curve.
 * @param bytes   working-set sizes, ascending
 * @param tsc     tsc/load at each size (all finite and > 0)
 * @param n       number of points
 * @param ppo     points per octave (sets the shortest plateau)
 * @param tsc_hz  for the one absolute rule (DRAM is slower than 45 ns)
 */
void ms_levels_detect(const size_t *bytes, const double *tsc, unsigned n,
		      unsigned ppo, double tsc_hz, struct ms_levels *out);

/** Median of @p n doubles (sorts a copy). */
double ms_median(const double *v, unsigned n);

/* -------------------------------------------------------------- output */

struct ms_bw_point {
	size_t bytes;           /* footprint: copy moves bytes/2 into the other half */
	enum ms_bw_op op;
	double bytes_per_tsc;   /* bytes read, written or copied per TSC tick */
};

#define MS_MAX_BW 32

/* Everything one run measured, for the table and the JSON file. */
struct ms_result {
	double tsc_hz;
	const char *tsc_source;
	const char *cpu;
	bool huge;              /* --huge: THP requested */
	long anon_huge_kb;      /* AnonHugePages after the sweep, -1 unknown */
	const char *bw_kernel;
	unsigned ppo, slices;
	bool measured[MS_NORDERS];
	unsigned npts;          /* sizes measured (all orders) */
	size_t *bytes;
	double *tsc[MS_NORDERS];
	unsigned nbw;
	struct ms_bw_point bw[MS_MAX_BW];
	enum ms_order levels_order;   /* the curve the levels were found on */
	struct ms_levels levels;
	char alloc_note[200];   /* non-empty when the buffer had to shrink */
	double seconds;         /* wall time of the whole run */
	/* Share of the run this thread sat runnable while another task had its
	 * CPU (/proc/self/schedstat), NaN if unknown; and the host's steal time
	 * for that CPU over the run (/proc/stat), NaN if unknown. */
	double wait_frac, steal_frac;
};

/** "1 KB", "1.19 KB", "768 KB", "1 GB" (binary units). */
const char *ms_fmt_size(char *buf, size_t len, size_t bytes);

/** The header of the latency table, then one row per size. */
void ms_print_header(FILE *f, const struct ms_result *r);
void ms_print_point(FILE *f, const struct ms_result *r, unsigned i);
/** Levels, unnamed plateaus and bandwidth, after the sweep. */
void ms_print_summary(FILE *f, const struct ms_result *r);
/** The JSON document (schema in README.md). 0 or -errno. */
int ms_write_json(FILE *f, const struct ms_result *r);

#endif /* MEMSIG_H */
