/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memsig — the memory signature of Nahum et al. (Fig. 3): load
 * latency against working-set size, the plateaus it shows (L1, L2, LLC,
 * DRAM), and read/write/copy bandwidth at a few sizes.
 *
 * Measurement rules, each for a hardware reason:
 *  - one buffer, mapped once at the largest size and reused from its start
 *    for every smaller set, so growing sets start warm and the page tables
 *    are built once;
 *  - 4 KB pages unless --huge: with 2 MB pages the whole gigabyte needs 512
 *    TLB entries and the random curve would hide the TLB reach the paper's
 *    machines had;
 *  - the sizes ascend, and both orders are measured at each size before the
 *    next, so a burst of noise from a VM neighbour hits both curves alike;
 *  - a warm-up of one cycle (or a time budget for sets far beyond the LLC,
 *    where any line is a miss whatever came before), then many short timed
 *    slices (~100 us) continuing along the same cycle;
 *  - the value kept is the median of the fastest half of the slices (their
 *    25th percentile). On the shared VMs this project runs on, the CPU is
 *    often shared: with another task in the guest the scheduler alternates
 *    ~4 ms slices (measured: 4.3 ms away every ~8 ms), and the host steals
 *    time for other tenants; whoever runs meanwhile evicts our L1/L2, the
 *    first slices after each return pay refills, and a busy SMT sibling on
 *    the host slows the rest. Long runs average all of that in (a 1 M-load
 *    run read the 10-tick L2 as 13-30 ticks); short slices and a low
 *    quantile keep the undisturbed latency, and no noise can make a
 *    dependent chain faster than the hardware.
 *    A slice is long enough to bury the ~40-tick TSC read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#include "memsig.h"

#include "cachenet/cpu.h"
#include "cachenet/lab/perf.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)
#define GB ((size_t)1 << 30)

#define EXIT_USAGE 2
#define MAX_SLICES 1024

struct opts {
	size_t min, max;
	bool max_set;
	bool quick, huge, bandwidth;
	bool orders[MS_NORDERS];
	int levels_from;        /* -1: random if measured, else page */
	unsigned ppo, slices;
	double slice_s, warm_s; /* length of one timed slice / warm-up budget */
	uint64_t seed;
	const char *json;
};

static void usage(FILE *f)
{
	fputs("usage: memsig [options]\n"
	      "  --min SIZE          smallest working set (default 1K)\n"
	      "  --max SIZE          largest working set (default 1G; --quick 256M)\n"
	      "  --quick             max 256M, fewer slices and a shorter warm-up (< 15 s)\n"
	      "  --order ORDER       random, page or both (default both)\n"
	      "  --levels-from ORDER curve to find the levels on (default random)\n"
	      "  --per-octave N      points per octave, 1..16 (default 4)\n"
	      "  --slices N          timed ~100 us slices per point, 4..1024 (default 48,\n"
	      "                      --quick 16); the median of the fastest half is kept\n"
	      "  --no-bandwidth      skip the read/write/copy bandwidth\n"
	      "  --huge              ask for transparent huge pages (MADV_HUGEPAGE)\n"
	      "  --seed N            PRNG seed for the chase orders (default 1)\n"
	      "  --json FILE         also write the results as JSON\n"
	      "  -h, --help          this text\n"
	      "SIZE: bytes with an optional K, M or G suffix (powers of 1024), e.g. 64K.\n"
	      "Run pinned for steady numbers: taskset -c 1 memsig\n", f);
}

static void __attribute__((noreturn, format(printf, 1, 2))) bad_arg(const char *fmt, ...)
{
	va_list ap;

	fputs("memsig: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'memsig --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static size_t parse_size(const char *opt, const char *s)
{
	char *end;
	double v;
	double mult = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v > 0))
		bad_arg("%s: '%s' is not a positive size", opt, s);
	switch (*end) {
	case 'k': case 'K': mult = (double)KB; end++; break;
	case 'm': case 'M': mult = (double)MB; end++; break;
	case 'g': case 'G': mult = (double)GB; end++; break;
	default: break;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (mult > 1 && (*end == 'b' || *end == 'B'))
		end++;
	if (*end)
		bad_arg("%s: '%s': unknown unit (use K, M or G)", opt, s);
	v *= mult;
	/* 64 GB keeps every line index in 32 bits (the order arrays) with room. */
	if (v < 256 || v > 64.0 * (double)GB)
		bad_arg("%s: '%s' is outside 256 bytes..64 GB", opt, s);
	return (size_t)v;
}

static unsigned parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi || s[0] == '-')
		bad_arg("%s: '%s' is not a whole number in %u..%u", opt, s, lo, hi);
	return (unsigned)v;
}

static int parse_order(const char *opt, const char *s, bool allow_both)
{
	for (int o = 0; o < MS_NORDERS; o++)
		if (!strcmp(s, ms_order_name[o]))
			return o;
	if (allow_both && !strcmp(s, "both"))
		return MS_NORDERS;
	bad_arg("%s: '%s' is not %s", opt, s, allow_both ? "random, page or both"
							  : "random or page");
}

static FILE *parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_MIN = 256, O_MAX, O_QUICK, O_ORDER, O_LEVELS, O_PPO, O_SLICES,
	       O_NOBW, O_HUGE, O_SEED, O_JSON };
	static const struct option longopts[] = {
		{ "min", required_argument, NULL, O_MIN },
		{ "max", required_argument, NULL, O_MAX },
		{ "quick", no_argument, NULL, O_QUICK },
		{ "order", required_argument, NULL, O_ORDER },
		{ "levels-from", required_argument, NULL, O_LEVELS },
		{ "per-octave", required_argument, NULL, O_PPO },
		{ "slices", required_argument, NULL, O_SLICES },
		{ "no-bandwidth", no_argument, NULL, O_NOBW },
		{ "huge", no_argument, NULL, O_HUGE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "json", required_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool slices_set = false;
	int c, ord;
	FILE *json = NULL;

	*o = (struct opts){
		.min = KB, .max = GB, .bandwidth = true,
		.orders = { true, true }, .levels_from = -1,
		.ppo = 4, .slices = 48, .slice_s = 100e-6, .warm_s = 0.010, .seed = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_MIN: o->min = parse_size("--min", optarg); break;
		case O_MAX: o->max = parse_size("--max", optarg); o->max_set = true; break;
		case O_QUICK: o->quick = true; break;
		case O_ORDER:
			ord = parse_order("--order", optarg, true);
			for (int k = 0; k < MS_NORDERS; k++)
				o->orders[k] = ord == MS_NORDERS || ord == k;
			break;
		case O_LEVELS: o->levels_from = parse_order("--levels-from", optarg, false); break;
		case O_PPO: o->ppo = parse_uint("--per-octave", optarg, 1, 16); break;
		case O_SLICES:
			o->slices = parse_uint("--slices", optarg, 4, MAX_SLICES);
			slices_set = true;
			break;
		case O_NOBW: o->bandwidth = false; break;
		case O_HUGE: o->huge = true; break;
		case O_SEED: o->seed = parse_uint("--seed", optarg, 0, UINT32_MAX); break;
		case O_JSON: o->json = optarg; break;
		case 'h': usage(stdout); exit(0);
		default:
			if (optopt >= O_MIN)
				bad_arg("option '%s' needs an argument", argv[optind - 1]);
			bad_arg("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_arg("unexpected argument '%s'", argv[optind]);
	if (o->quick) {
		if (!o->max_set)
			o->max = 256 * MB;
		if (!slices_set)
			o->slices = 16;
		o->warm_s = 0.005;
	}
	if (o->min > o->max)
		bad_arg("--min is larger than --max");
	if (o->levels_from >= 0 && !o->orders[o->levels_from])
		bad_arg("--levels-from %s, but --order does not measure it",
			ms_order_name[o->levels_from]);
	if (o->json) {
		/* Opened now so a bad path fails before a minute of measuring. */
		json = fopen(o->json, "w");
		if (!json)
			bad_arg("--json %s: %s", o->json, strerror(errno));
	}
	return json;
}

/* ---------------------------------------------------------- allocation */

static void *map_region(size_t bytes, bool huge)
{
	/* A 2 MB-aligned start lets THP back the whole buffer with huge pages;
	 * without --huge the alignment is harmless. */
	size_t align = 2 * MB, len = bytes + align;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));

	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + bytes, len - bytes - (size_t)(a - p));
	if (madvise(a, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
		fprintf(stderr, "memsig: madvise(%s): %s; page size is the system default\n",
			huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
	return a;
}

/* AnonHugePages of the whole process, to tell whether --huge got them. */
static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Contention. When another task shares our CPU, the scheduler alternates
 * slices of a few ms; the other task refills L1/L2 and part of the LLC with
 * its own lines each time, and a dependent chase refills ours one miss at a
 * time (a 4 MB set takes ~7 ms at DRAM latency), so LLC-sized sets never
 * get back to steady state. The fastest-half rule cannot repair that, so
 * the run measures how long it waited and says so.
 */
static double runqueue_wait_s(void)
{
	FILE *f = fopen("/proc/self/schedstat", "r");
	unsigned long long run, wait;
	int n;

	if (!f)
		return NAN;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait * 1e-9 : NAN;
}

/* Steal time of @p cpu in seconds: the host ran someone else while this
 * vCPU wanted to run (only when the hypervisor reports it). */
static double steal_s(int cpu)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512], want[16];
	unsigned long long v[8];
	double s = NAN;

	if (!f || cpu < 0) {
		if (f)
			fclose(f);
		return NAN;
	}
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)) == 0 &&
		    sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			s = (double)v[7] / (double)sysconf(_SC_CLK_TCK);
			break;
		}
	}
	fclose(f);
	return s;
}

/* -------------------------------------------------------------- timing */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t round_up(uint64_t v, uint64_t m)
{
	return (v + m - 1) / m * m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the fastest half of @p v (sorted in place): slices that
 * lost the CPU or ran on a freshly evicted cache sit in the slow half. */
static double fast_half_median(double *v, unsigned n)
{
	unsigned h = (n + 1) / 2;

	qsort(v, n, sizeof(*v), cmp_double);
	return h % 2 ? v[h / 2] : 0.5 * (v[h / 2 - 1] + v[h / 2]);
}

/*
 * Latency of one built cycle, in TSC ticks per load.
 * Warm-up: one full cycle, which leaves every line of a set that fits in a
 * level resident there; stopped early by the time budget only for sets so
 * large that each load takes ~100 ns, i.e. far beyond the LLC, where the
 * cache content before the run no longer matters.
 * Slices: slice_s worth of loads each (at least 1 K), continuing along the
 * cycle, so a large set is sampled at many places.
 */
static double chase_point(void *head, size_t lines, const struct opts *o, double hz)
{
	const uint64_t chunk = 1u << 12;
	uint64_t warm_want = round_up(lines > 65536 ? lines : 65536, chunk);
	uint64_t warm_max = (uint64_t)(o->warm_s * hz), done = 0;
	uint64_t t0 = cn_tsc_begin(), t1 = t0;
	void *p = head;
	double v[MAX_SLICES];

	while (done < warm_want && t1 - t0 < warm_max) {
		p = ms_chase(p, chunk);
		done += chunk;
		t1 = cn_tsc_end();
	}

	double want = o->slice_s * hz / ((double)(t1 - t0) / (double)done);
	uint64_t loads = round_up(want < 1024 ? 1024 : (uint64_t)want, MS_UNROLL);

	for (unsigned k = 0; k < o->slices; k++) {
		uint64_t a = cn_tsc_begin();

		p = ms_chase(p, loads);
		uint64_t b = cn_tsc_end();

		v[k] = (double)(b - a) / (double)loads;
	}
	/* Keep p alive so the chase cannot be dropped as dead code. */
	__asm__ volatile("" :: "r"(p));
	return fast_half_median(v, o->slices);
}

static volatile uint64_t bw_sink;

/* One op over buf[off, off + len) (copy: len/2 bytes from the lower half of
 * the set to the same offset in the upper half). */
static void bw_op(enum ms_bw_op op, char *buf, size_t set, size_t off, size_t len,
		  uint64_t pat)
{
	if (op == MS_READ)
		bw_sink += ms_bw_read(buf + off, len);
	else if (op == MS_WRITE)
		ms_bw_write(buf + off, len, pat);
	else
		memcpy(buf + set / 2 + off / 2, buf + off / 2, len / 2);
}

/*
 * Bandwidth of one op on a working set, in bytes per TSC tick.
 * A whole pass over 512 MB takes ~40 ms, long enough to lose a shared CPU
 * several times, so sets above 1 MB are timed one 1 MB window per
 * slice, the windows walking the set in order: a window is touched again
 * only after the whole set has been, so it comes from the same level as in
 * a full pass. Smaller sets are timed as whole passes repeated for a slice.
 */
static double bw_point(enum ms_bw_op op, char *buf, size_t bytes, const struct opts *o,
		       double hz)
{
	size_t win = bytes < MB ? bytes : MB, off = 0;
	uint64_t pat = 0x0123456789abcdefull, t0, t1, passes;
	double moved = op == MS_COPY ? (double)win / 2 : (double)win;
	double v[MAX_SLICES];

	/* A full pass warms the set into whichever level holds it. */
	for (size_t w = 0; w < bytes; w += win)
		bw_op(op, buf, bytes, w, win, pat++);
	t0 = cn_tsc_begin();
	bw_op(op, buf, bytes, 0, win, pat++);
	t1 = cn_tsc_end();
	passes = (uint64_t)(o->slice_s * hz / (double)(t1 > t0 ? t1 - t0 : 1)) + 1;
	for (unsigned k = 0; k < o->slices; k++) {
		t0 = cn_tsc_begin();
		for (uint64_t i = 0; i < passes; i++) {
			bw_op(op, buf, bytes, off, win, pat++);
			off = off + win < bytes ? off + win : 0;
		}
		t1 = cn_tsc_end();
		v[k] = (double)(t1 - t0) / ((double)passes * moved);
	}
	return 1.0 / fast_half_median(v, o->slices);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct opts o;
	FILE *json = parse_args(argc, argv, &o);
	struct ms_result r = { 0 };
	double t_start = now_s();
	char s1[32], s2[32];

	r.tsc_hz = cn_tsc_hz();
	r.tsc_source = cn_tsc_source();
	r.cpu = cn_cpu_brand();
	r.huge = o.huge;
	r.ppo = o.ppo;
	r.slices = o.slices;
	r.bw_kernel = ms_bw_kernel();
	for (unsigned k = 0; k < MS_NORDERS; k++)
		r.measured[k] = o.orders[k];

	/* Sizes: min * 2^(k/ppo), whole lines, ascending, distinct. */
	unsigned cap_pts = (unsigned)(o.ppo * (log2((double)o.max / (double)o.min) + 1)) + 2;

	r.bytes = calloc(cap_pts, sizeof(*r.bytes));
	for (unsigned k = 0; k < MS_NORDERS; k++)
		r.tsc[k] = calloc(cap_pts, sizeof(double));
	if (!r.bytes || !r.tsc[0] || !r.tsc[1]) {
		fputs("memsig: out of memory\n", stderr);
		return 1;
	}
	size_t sizes_n = 0;

	for (unsigned k = 0; sizes_n < cap_pts; k++) {
		double v = (double)o.min * exp2((double)k / o.ppo);
		size_t s = (size_t)llround(v / MS_LINE) * MS_LINE;

		if (s > o.max)
			break;
		if (s < 2 * MS_LINE || (sizes_n && s <= r.bytes[sizes_n - 1]))
			continue;
		r.bytes[sizes_n++] = s;
	}
	/* --max off the grid still gets measured, unless the grid already
	 * ended within a quarter of a step of it. */
	size_t top = o.max / MS_LINE * MS_LINE;

	if (sizes_n < cap_pts && (sizes_n == 0 ||
	    (double)top > (double)r.bytes[sizes_n - 1] * exp2(0.25 / o.ppo)))
		r.bytes[sizes_n++] = top;

	/* The buffer, and the order array (one 32-bit line index per line).
	 * A gigabyte may not be there: halve until it is, and say so. */
	size_t want = r.bytes[sizes_n - 1], got = want;
	char *buf = NULL;
	uint32_t *idx = NULL;

	for (;;) {
		buf = map_region(got, o.huge);
		idx = buf ? mmap(NULL, got / MS_LINE * sizeof(uint32_t), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
		if (buf && idx != MAP_FAILED)
			break;
		int err = errno;

		if (buf)
			munmap(buf, got);
		idx = NULL;
		buf = NULL;
		if (got / 2 < r.bytes[0]) {
			fprintf(stderr, "memsig: cannot allocate even %s (%s)\n",
				ms_fmt_size(s1, sizeof(s1), got), strerror(err));
			return 1;
		}
		fprintf(stderr, "memsig: cannot allocate %s (%s); trying %s\n",
			ms_fmt_size(s1, sizeof(s1), got), strerror(err),
			ms_fmt_size(s2, sizeof(s2), got / 2));
		got /= 2;
	}
	if (got < want) {
		while (sizes_n > 0 && r.bytes[sizes_n - 1] > got)
			sizes_n--;
		snprintf(r.alloc_note, sizeof(r.alloc_note),
			 "allocating %s failed; stopped at %s, the largest working set that "
			 "could be allocated", ms_fmt_size(s1, sizeof(s1), want),
			 ms_fmt_size(s2, sizeof(s2), r.bytes[sizes_n - 1]));
	}

	int cpu0 = sched_getcpu();
	double wait0 = runqueue_wait_s(), steal0 = steal_s(cpu0);

	ms_print_header(stdout, &r);
	for (unsigned i = 0; i < sizes_n; i++) {
		for (unsigned k = 0; k < MS_NORDERS; k++) {
			if (!o.orders[k])
				continue;
			/* Same seed per (size, order): a rerun with --order page
			 * chases the very cycle the full run chased. */
			struct ms_rng rng = { o.seed * 0x100000001b3ull + r.bytes[i] * 2 + k };
			void *head = ms_chase_build(buf, r.bytes[i], (enum ms_order)k, idx, &rng);

			r.tsc[k][i] = chase_point(head, r.bytes[i] / MS_LINE, &o, r.tsc_hz);
		}
		r.npts = i + 1;
		ms_print_point(stdout, &r, i);
	}
	munmap(idx, got / MS_LINE * sizeof(uint32_t));
	r.anon_huge_kb = anon_huge_kb();

	/* Bandwidth: one size inside each level of a current server core
	 * (L1 >= 32 KB, L2 >= 512 KB, LLC >= 8 MB) and two beyond any LLC; the
	 * table names the level each one actually landed in. */
	static const size_t bw_sizes[] = { 16 * KB, 256 * KB, 4 * MB, 64 * MB, 512 * MB };

	for (unsigned i = 0; o.bandwidth && i < sizeof(bw_sizes) / sizeof(bw_sizes[0]); i++) {
		if (bw_sizes[i] > r.bytes[r.npts - 1])
			break;
		for (unsigned op = 0; op < MS_NOPS && r.nbw < MS_MAX_BW; op++) {
			r.bw[r.nbw].bytes = bw_sizes[i];
			r.bw[r.nbw].op = (enum ms_bw_op)op;
			r.bw[r.nbw].bytes_per_tsc = bw_point((enum ms_bw_op)op, buf, bw_sizes[i],
							     &o, r.tsc_hz);
			r.nbw++;
		}
	}
	munmap(buf, got);

	/* Levels come from the random curve by default: in page order the
	 * next/previous-line and region prefetchers learn that the rest of the
	 * page is coming and fetch it early (on Zen 4 the page-order "L2" reads
	 * ~6.6 ticks, below the 14-cycle L2 hit), so that curve is not a latency. */
	r.levels_order = o.levels_from >= 0 ? (enum ms_order)o.levels_from
		       : o.orders[MS_RANDOM] ? MS_RANDOM : MS_PAGEWISE;
	ms_levels_detect(r.bytes, r.tsc[r.levels_order], r.npts, o.ppo, r.tsc_hz, &r.levels);
	r.seconds = now_s() - t_start;
	r.wait_frac = (runqueue_wait_s() - wait0) / r.seconds;
	r.steal_frac = sched_getcpu() == cpu0 ? (steal_s(cpu0) - steal0) / r.seconds : NAN;
	ms_print_summary(stdout, &r);
	printf("\nrun time %.1f s\n", r.seconds);

	if (json) {
		int err = ms_write_json(json, &r);

		if (fclose(json) != 0 && !err)
			err = -errno;
		if (err) {
			fprintf(stderr, "memsig: writing %s: %s\n", o.json, strerror(-err));
			return 1;
		}
	}
	free(r.bytes);
	free(r.tsc[0]);
	free(r.tsc[1]);
	return 0;
}
