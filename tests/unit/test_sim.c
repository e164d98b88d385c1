/* SPDX-License-Identifier: BSD-2-Clause */
/* sim: geometry parsing, the callgrind-format reader on a recorded file,
 * and agreement between cachenet's in-program region toggling and a direct
 * callgrind run of the same region. */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachenet/lab/sim.h"

#ifndef CN_SOURCE_ROOT
#error "CN_SOURCE_ROOT must name the source tree"
#endif

static void geometry_parses(void **state)
{
	(void)state;
	struct cn_sim_geometry g;
	char err[160];

	assert_int_equal(cn_sim_geometry_parse("I1=16384,1,64:D1=32768,8,64:LL=8M,16,64", &g,
					       err, sizeof(err)), 0);
	assert_true(g.i1.size == 16384 && g.i1.assoc == 1 && g.i1.line == 64);
	assert_true(g.d1.size == 32768 && g.d1.assoc == 8 && g.d1.line == 64);
	assert_true(g.ll.size == (8u << 20) && g.ll.assoc == 16);

	assert_int_equal(cn_sim_geometry_parse("D1=64K,2,32", &g, err, sizeof(err)), 0);
	assert_true(g.d1.size == 65536 && g.d1.assoc == 2 && g.d1.line == 32);
	assert_true(g.i1.size == 0 && g.ll.size == 0);
	assert_int_equal(cn_sim_geometry_parse("", &g, err, sizeof(err)), 0);
	assert_int_equal(cn_sim_geometry_parse("host", &g, err, sizeof(err)), 0);
	assert_true(g.d1.size == 0);

	static const struct { const char *spec, *msg; } bad[] = {
		{ "L2=32768,8,64", "unknown cache level" },
		{ "D1=32768,8", "expected SIZE,ASSOC,LINE" },
		{ "D1=32768,8,48", "power of two" },
		{ "D1=32768,7,64", "multiple of assoc*line" },
		{ "D1=24576,8,64", "not a power of two" },
		{ "D1=32768,8,64x", "unexpected" },
		{ "D1=0,8,64", "size must be > 0" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(cn_sim_geometry_parse(bad[i].spec, &g, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].msg);
	}

	/* Completing from the host fills every level with something callgrind
	 * accepts, and format → parse is the identity. */
	memset(&g, 0, sizeof(g));
	g.d1 = (struct cn_sim_cache){ 16384, 4, 64 };
	assert_int_equal(cn_sim_geometry_complete(&g), 0);
	assert_true(g.d1.size == 16384 && g.d1.assoc == 4);
	assert_true(g.i1.size > 0 && g.ll.size > g.d1.size);
	char buf[200];
	cn_sim_geometry_format(&g, buf, sizeof(buf));
	struct cn_sim_geometry h;
	assert_int_equal(cn_sim_geometry_parse(buf, &h, err, sizeof(err)), 0);
	assert_memory_equal(&g, &h, sizeof(g));
}

static void callgrind_file_parses(void **state)
{
	(void)state;
	struct cn_sim_counts c;
	char trig[128];

	/* Recorded from a callgrind 3.19 run (see tests/data/README). */
	assert_int_equal(cn_callgrind_parse(CN_SOURCE_ROOT "/tests/data/callgrind.out.1", &c,
					    trig, sizeof(trig)), 0);
	assert_string_equal(trig, "Client Request: first");
	assert_true(c.ir == 114695 && c.dr == 16386 && c.dw == 16386);
	assert_true(c.i1mr == 1 && c.d1mr == 16385 && c.d1mw == 0);
	assert_true(c.ilmr == 1 && c.dlmr == 16384 && c.dlmw == 0);

	/* summary only, trailing zero columns omitted. */
	assert_int_equal(cn_callgrind_parse(CN_SOURCE_ROOT "/tests/data/callgrind.summary-only", &c,
					    NULL, 0), 0);
	assert_true(c.ir == 114704 && c.d1mw == 1 && c.ilmr == 2 && c.dlmr == 0 && c.dlmw == 0);

	/* Without --cache-sim there are no miss columns: refused, not zero. */
	assert_int_equal(cn_callgrind_parse(CN_SOURCE_ROOT "/tests/data/callgrind.nocache", &c,
					    NULL, 0), -EBADMSG);
	assert_int_equal(cn_callgrind_parse(CN_SOURCE_ROOT "/tests/meson.build", &c, NULL, 0),
			 -EBADMSG);
	assert_int_equal(cn_callgrind_parse("/nonexistent/cn", &c, NULL, 0), -ENOENT);
}

static void not_active_outside_valgrind(void **state)
{
	(void)state;
	struct cn_sim_region r = { 0 };
	struct cn_sim_counts c;
	assert_false(cn_sim_active());
	cn_sim_collect(&r, true);
	assert_true(r.collecting);
	cn_sim_collect(&r, true);   /* idempotent */
	assert_true(r.collecting);
	assert_int_equal(cn_sim_dump(&r, "x", &c), -ENOTSUP);
	assert_false(r.collecting);
}

/* Columns of the "events:" line and values of "totals:", read here
 * independently of cachenet's parser. */
static int read_totals(const char *path, unsigned long long *ir, unsigned long long *d1mr,
		       unsigned long long *d1mw, unsigned long long *dlmr)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[4096], names[32][16];
	int n = 0, found = 0;
	unsigned long long v[32] = { 0 };
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "events:", 7) == 0) {
			char *save, *t;
			n = 0;
			for (t = strtok_r(line + 7, " \n", &save); t && n < 32; t = strtok_r(NULL, " \n", &save))
				snprintf(names[n++], sizeof(names[0]), "%s", t);
		} else if (strncmp(line, "totals:", 7) == 0) {
			char *p = line + 7;
			for (int i = 0; i < n; i++)
				v[i] = strtoull(p, &p, 10);
			found = 1;
		}
	}
	fclose(f);
	for (int i = 0; i < n; i++) {
		if (!strcmp(names[i], "Ir")) *ir = v[i];
		if (!strcmp(names[i], "D1mr")) *d1mr = v[i];
		if (!strcmp(names[i], "D1mw")) *d1mw = v[i];
		if (!strcmp(names[i], "DLmr")) *dlmr = v[i];
	}
	return found ? 0 : -1;
}

static int have_valgrind(void)
{
	return system("valgrind --version >/dev/null 2>&1") == 0;
}

static void region_counts_match_direct_callgrind(void **state)
{
	(void)state;
#ifdef CN_TEST_SANITIZED
	print_message("skipped: a sanitizer build cannot run under valgrind "
		      "(the release build runs this test)\n");
	skip();
#endif
	const char *probe = getenv("CN_SIM_PROBE");
	assert_non_null(probe);
	if (!have_valgrind()) {
		print_message("skipped: valgrind is not installed\n");
		skip();
	}
	char dir[] = "/tmp/cn_test_sim.XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* A small D1 so the 512 KB region misses plenty, an LL that holds it. */
	const char *spec = "I1=32768,8,64:D1=16384,4,64:LL=4194304,16,64";
	struct cn_sim_geometry g;
	assert_int_equal(cn_sim_geometry_parse(spec, &g, NULL, 0), 0);

	/* 1: through cachenet (cn_sim_exec → toggles → dump → parse). */
	char out[256];
	snprintf(out, sizeof(out), "%s/harness.txt", dir);
	char *const args[] = { (char *)probe, "harness", out, NULL };
	assert_int_equal(cn_sim_exec(3, args, &g, dir), 0);
	FILE *f = fopen(out, "r");
	assert_non_null(f);
	int rc;
	unsigned long long h[9];
	assert_int_equal(fscanf(f, "%d %llu %llu %llu %llu %llu %llu %llu %llu %llu", &rc, &h[0],
				&h[1], &h[2], &h[3], &h[4], &h[5], &h[6], &h[7], &h[8]), 10);
	fclose(f);
	assert_int_equal(rc, 0);

	/* 2: plain callgrind, collection toggled by function name. */
	char cmd[1024], direct[256];
	snprintf(direct, sizeof(direct), "%s/direct.out", dir);
	snprintf(cmd, sizeof(cmd),
		 "valgrind -q --tool=callgrind --cache-sim=yes --collect-atstart=no "
		 "--toggle-collect=cn_probe_region --I1=32768,8,64 --D1=16384,4,64 "
		 "--LL=4194304,16,64 --callgrind-out-file=%s '%s' direct 2>/dev/null",
		 direct, probe);
	assert_int_equal(system(cmd), 0);
	unsigned long long ir = 0, d1mr = 0, d1mw = 0, dlmr = 0;
	assert_int_equal(read_totals(direct, &ir, &d1mr, &d1mw, &dlmr), 0);

	print_message("harness: Ir %llu D1mr %llu D1mw %llu DLmr %llu\n", h[0], h[4], h[5], h[7]);
	print_message("direct:  Ir %llu D1mr %llu D1mw %llu DLmr %llu\n", ir, d1mr, d1mw, dlmr);
	/* The region: 13108 iterations; the data misses are the point. */
	assert_true(ir > 13108 * 4);
	assert_true(d1mr > 5000);
	/* The harness region also holds the call, the return and the
	 * toggles' few instructions (~34 here) and their handful of stack
	 * accesses, which may miss; the region itself must be identical. */
	assert_true(h[0] >= ir && h[0] - ir <= 64);
	assert_true(h[4] <= d1mr + 8 && d1mr <= h[4] + 8);
	assert_true(h[5] <= d1mw + 8 && d1mw <= h[5] + 8);
	assert_true(h[7] <= dlmr + 8 && dlmr <= h[7] + 8);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_T(geometry_parses), CN_T(callgrind_file_parses),
		CN_T(not_active_outside_valgrind), CN_T(region_counts_match_direct_callgrind),
	};
	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
