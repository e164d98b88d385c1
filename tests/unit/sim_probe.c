/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The region whose simulated counts test_sim compares two ways:
 *   sim_probe harness OUT  — brackets cn_probe_region() with cn_sim_collect()
 *                            and cn_sim_dump(), writes the counts to OUT
 *                            (run by test_sim through cn_sim_exec());
 *   sim_probe direct       — just runs; the test runs it under a plain
 *                            `callgrind --toggle-collect=cn_probe_region`.
 * Both modes execute the same accesses before the region, so the simulated
 * caches are in the same state when it starts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/lab/sim.h"

#define BUF (512 * 1024)

static uint8_t buf[BUF] __attribute__((aligned(4096)));

/* A strided read-modify-write over 512 KB (larger than the simulated D1,
 * inside the LL) plus a data-dependent branch: reads, writes, D1 misses. */
__attribute__((noinline)) uint64_t cn_probe_region(uint8_t *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i += 40) {
		s += p[i];
		if (p[i] & 1)
			p[i] ^= 0x5a;
	}
	return s;
}

int main(int argc, char **argv)
{
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	uint64_t s;
	if (argc == 3 && strcmp(argv[1], "harness") == 0) {
		struct cn_sim_region r = { 0 };
		struct cn_sim_counts c;
		cn_sim_collect(&r, true);
		s = cn_probe_region(buf, BUF);
		int rc = cn_sim_dump(&r, "probe", &c);
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 3;
		fprintf(f, "%d %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", rc,
			(unsigned long long)c.ir, (unsigned long long)c.dr, (unsigned long long)c.dw,
			(unsigned long long)c.i1mr, (unsigned long long)c.d1mr,
			(unsigned long long)c.d1mw, (unsigned long long)c.ilmr,
			(unsigned long long)c.dlmr, (unsigned long long)c.dlmw);
		fclose(f);
	} else if (argc == 2 && strcmp(argv[1], "direct") == 0) {
		s = cn_probe_region(buf, BUF);
	} else {
		fprintf(stderr, "usage: sim_probe harness OUT | sim_probe direct\n");
		return 2;
	}
	return s == 0xdeadbeef; /* keep s alive; never true */
}
