/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Level detection on a latency curve.
 *
 * The cache sizes the OS reports are not used: in a VM the LLC the guest
 * sees may be the whole socket's while neighbours own most of it, and
 * physically indexed caches lose capacity to page colouring well before
 * their nominal size. Only the curve is trusted.
 *
 * Method: each level is a plateau — a run of working sets whose latencies
 * agree within 25% — and the steps between levels are 2.5x or more on every
 * CPU of the last two decades (L1 ~4-5 core cycles, L2 ~12-16, LLC 40-120,
 * DRAM 250+). So:
 *  1. work on log latency, smoothed by a 3-point running median so one noisy
 *     point (a neighbour's burst on a shared VM) neither breaks nor creates
 *     a plateau;
 *  2. grow plateaus greedily from the small end: a run of at least half an
 *     octave whose smoothed latencies stay within a factor of 1.25; points
 *     belonging to no run are transitions;
 *  3. merge neighbouring plateaus whose medians are within a factor of 1.6,
 *     as long as the merged run spans at most a factor of 2: smaller steps
 *     than that are TLB reach (an L1 DTLB miss that hits the STLB adds ~7
 *     core cycles) or a slow drift, not a new level, while a long steady
 *     climb (an LLC eroded by neighbours) is a transition, not a plateau;
 *  4. name them: the first plateau is L1 if it starts at or below 8 KB (every
 *     L1D since the 1990s is at least that big); DRAM is the longest plateau
 *     slower than 45 ns (no on-chip cache level is that slow for a local
 *     hit, and no DRAM is faster); of the faster plateaus between them L2 is
 *     the first at least 2x slower than L1, and the LLC the longest at
 *     least 2x slower than L2. Anything else is reported unnamed.
 * A level's latency is the median of the raw (unsmoothed) points in its
 * plateau. What cannot be named is left not found, with the reason.
 */
#include "memsig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ms_level_name[MS_NLEVELS] = { "L1", "L2", "LLC", "DRAM" };

#define PLATEAU_TOL 1.25
#define MERGE_RATIO 1.6
#define MERGE_SPAN 2.0
#define LEVEL_STEP 2.0
#define L1_MAX_START (8u << 10)
#define DRAM_MIN_NS 45.0

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double ms_median(const double *v, unsigned n)
{
	double *tmp, m;

	if (n == 0)
		return NAN;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return v[n / 2];  /* out of memory: the middle point, unsorted */
	memcpy(tmp, v, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	m = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
	free(tmp);
	return m;
}

static double med3(double a, double b, double c)
{
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) { double t = b; b = c; c = t; }
	return a > b ? a : b;
}

static void not_found(struct ms_level *l, const char *why)
{
	l->found = false;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

void ms_levels_detect(const size_t *bytes, const double *tsc, unsigned n,
		      unsigned ppo, double tsc_hz, struct ms_levels *out)
{
	struct ms_plateau p[MS_MAX_PLATEAUS];
	unsigned np = 0, min_len = ppo / 2 + 1 < 2 ? 2 : ppo / 2 + 1;
	double *ys = malloc((n ? n : 1) * sizeof(*ys));
	char a[32], b[32], why[160];

	memset(out, 0, sizeof(*out));
	if (!ys || n < 2) {
		for (unsigned l = 0; l < MS_NLEVELS; l++)
			not_found(&out->lv[l], ys ? "too few points" : "out of memory");
		free(ys);
		return;
	}

	/* 1. smoothed log latency */
	for (unsigned i = 0; i < n; i++) {
		double lo = log(tsc[i > 0 ? i - 1 : i]);
		double hi = log(tsc[i + 1 < n ? i + 1 : i]);

		ys[i] = med3(lo, log(tsc[i]), hi);
	}

	/* 2. greedy plateaus */
	for (unsigned i = 0; i < n && np < MS_MAX_PLATEAUS;) {
		unsigned j = i;
		double lo = ys[i], hi = ys[i];

		while (j + 1 < n) {
			double nlo = fmin(lo, ys[j + 1]), nhi = fmax(hi, ys[j + 1]);

			if (nhi - nlo > log(PLATEAU_TOL))
				break;
			lo = nlo;
			hi = nhi;
			j++;
		}
		if (j - i + 1 >= min_len) {
			p[np].first = i;
			p[np].last = j;
			p[np].tsc = ms_median(tsc + i, j - i + 1);
			np++;
			i = j + 1;
		} else {
			i++;
		}
	}
	/* 3. merge small steps, repeatedly, closest pair first so a slow drift
	 * collapses into one plateau without swallowing a real step */
	for (;;) {
		unsigned best = np;
		double best_r = MERGE_RATIO;

		for (unsigned k = 0; k + 1 < np; k++) {
			double r = p[k + 1].tsc / p[k].tsc, lo = ys[p[k].first], hi = lo;

			if (r < 1)
				r = 1 / r;
			for (unsigned i = p[k].first; i <= p[k + 1].last; i++) {
				lo = fmin(lo, ys[i]);
				hi = fmax(hi, ys[i]);
			}
			if (r < best_r && hi - lo <= log(MERGE_SPAN)) {
				best_r = r;
				best = k;
			}
		}
		if (best == np)
			break;
		p[best].last = p[best + 1].last;
		p[best].tsc = ms_median(tsc + p[best].first, p[best].last - p[best].first + 1);
		memmove(&p[best + 1], &p[best + 2], (np - best - 2) * sizeof(*p));
		np--;
	}
	free(ys);

	/* 4. names */
	struct ms_level *lv = out->lv;
	bool named[MS_MAX_PLATEAUS] = { false };
	unsigned start = 0;

	ms_fmt_size(a, sizeof(a), bytes[0]);
	ms_fmt_size(b, sizeof(b), bytes[n - 1]);
	if (np > 0 && bytes[p[0].first] <= L1_MAX_START) {
		lv[MS_L1].found = true;
		lv[MS_L1].p = p[0];
		named[0] = true;
		start = 1;
	} else if (bytes[0] > L1_MAX_START) {
		snprintf(why, sizeof(why), "not measured: the smallest working set, %s, "
			 "is above 8 KB (lower --min)", a);
		not_found(&lv[MS_L1], why);
	} else {
		not_found(&lv[MS_L1], "the smallest working sets form no plateau (too noisy?)");
	}

	/* DRAM is the longest plateau slower than any cache (ties: the later).
	 * Not simply the first: just past the LLC a short shoulder of partial
	 * hits can already be slower than 45 ns, and in random order the curve
	 * keeps climbing past DRAM as the page walks themselves start missing
	 * (1 GB of 4 KB pages has 2 MB of page-table entries, more under a
	 * hypervisor's nested paging) and can step again. Both stay unnamed. */
	unsigned dram = np;

	for (unsigned k = start; k < np; k++)
		if (p[k].tsc * 1e9 / tsc_hz >= DRAM_MIN_NS &&
		    (dram == np || p[k].last - p[k].first >= p[dram].last - p[dram].first))
			dram = k;
	if (dram < np) {
		lv[MS_DRAM].found = true;
		lv[MS_DRAM].p = p[dram];
		named[dram] = true;
	} else if (np > start) {
		snprintf(why, sizeof(why), "not reached: the slowest plateau is %.1f ns, "
			 "faster than any DRAM (45 ns); raise --max above %s",
			 p[np - 1].tsc * 1e9 / tsc_hz, b);
		not_found(&lv[MS_DRAM], why);
	} else {
		snprintf(why, sizeof(why), "not reached: no plateau above L1 up to %s", b);
		not_found(&lv[MS_DRAM], why);
	}

	/* Cache plateaus: after L1, before DRAM, faster than 45 ns. */
	unsigned cache[MS_MAX_PLATEAUS], nc = 0;

	for (unsigned k = start; k < (dram < np ? dram : np); k++)
		if (p[k].tsc * 1e9 / tsc_hz < DRAM_MIN_NS)
			cache[nc++] = k;

	if (!lv[MS_L1].found) {
		/* Without L1 as an anchor the plateaus cannot be counted: the
		 * first one seen might be L2 or the LLC. */
		not_found(&lv[MS_L2], "not named: no L1 plateau to count from");
		not_found(&lv[MS_LLC], "not named: no L1 plateau to count from");
	} else if (nc == 0) {
		not_found(&lv[MS_L2], lv[MS_DRAM].found ? "no plateau between L1 and DRAM"
							 : "no plateau above L1 (raise --max)");
		not_found(&lv[MS_LLC], lv[MS_DRAM].found ? "no plateau between L1 and DRAM"
							  : "not reached (raise --max)");
	} else {
		/* Each cache level is at least twice as slow as the one below
		 * it; a plateau closer than that is a shoulder of the level
		 * below (part of its lines already evicted), not a level. */
		unsigned l2 = nc, llc = nc;

		for (unsigned i = 0; i < nc && l2 == nc; i++)
			if (p[cache[i]].tsc >= LEVEL_STEP * lv[MS_L1].p.tsc)
				l2 = i;
		for (unsigned i = l2 + 1; i < nc; i++)
			if (p[cache[i]].tsc >= LEVEL_STEP * p[cache[l2]].tsc &&
			    (llc == nc || p[cache[i]].last - p[cache[i]].first >
					  p[cache[llc]].last - p[cache[llc]].first))
				llc = i;
		if (l2 < nc) {
			lv[MS_L2].found = true;
			lv[MS_L2].p = p[cache[l2]];
			named[cache[l2]] = true;
		} else {
			not_found(&lv[MS_L2], "no plateau at least 2x slower than L1 below DRAM");
		}
		if (llc < nc) {
			/* The longest qualifying plateau: a short one beside it
			 * is a TLB-reach step, or the shoulder where neighbours'
			 * lines push ours out of a shared LLC. */
			lv[MS_LLC].found = true;
			lv[MS_LLC].p = p[cache[llc]];
			named[cache[llc]] = true;
		} else if (l2 == nc) {
			not_found(&lv[MS_LLC], "no L2 plateau to count from");
		} else if (lv[MS_DRAM].found) {
			not_found(&lv[MS_LLC], "no plateau at least 2x slower than L2 below DRAM");
		} else {
			snprintf(why, sizeof(why), "not reached: no plateau at least 2x slower "
				 "than L2 up to %s (raise --max)", b);
			not_found(&lv[MS_LLC], why);
		}
	}
	for (unsigned k = 0; k < np; k++)
		if (!named[k])
			out->other[out->nother++] = p[k];
}
