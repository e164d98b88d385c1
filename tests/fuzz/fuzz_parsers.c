/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz target for every parser of untrusted text in the foundation: CPU
 * feature lists (an environment variable), simulator geometries (a command
 * line flag), counter specs (a command line flag; parsed only — the events
 * are not opened) and callgrind output files (written by another program).
 * The first byte picks the parser, the rest is its input. libFuzzer drives
 * it in -Dfuzz=true builds (clang); replay_main.c runs the corpus in every
 * other build, so the corpus is a regression test everywhere.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cachenet/cpu.h"
#include "cachenet/lab/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 16)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	char err[128];

	switch (data[0] % 3) {
	case 0: {
		uint64_t m = 0;
		if (cn_cpu_features_parse(s, &m, err, sizeof(err)) == 0) {
			/* Whatever parsed must print and parse back to itself. */
			char buf[1024];
			uint64_t m2 = 0, known = 0;
			for (int b = 0; b < 64; b++)
				if (cn_cpu_feature_name(1ull << b))
					known |= 1ull << b;
			cn_cpu_features_format(m, buf, sizeof(buf));
			if (cn_cpu_features_parse(buf, &m2, NULL, 0) != 0 || m2 != (m & known))
				abort();
		}
		break;
	}
	case 1: {
		struct cn_sim_geometry g;
		if (cn_sim_geometry_parse(s, &g, err, sizeof(err)) == 0) {
			char buf[256];
			struct cn_sim_geometry h;
			/* Levels left at 0 print as 0 and do not parse back; fill
			 * them so the round trip covers every accepted geometry. */
			struct cn_sim_cache dflt = { 32768, 8, 64 };
			if (!g.i1.size) g.i1 = dflt;
			if (!g.d1.size) g.d1 = dflt;
			if (!g.ll.size) g.ll = dflt;
			cn_sim_geometry_format(&g, buf, sizeof(buf));
			if (cn_sim_geometry_parse(buf, &h, NULL, 0) != 0 || memcmp(&g, &h, sizeof(g)))
				abort();
		}
		break;
	}
	case 2: {
		/* The parser reads a path: hand it an in-memory file. */
		int fd = memfd_create("cn_fuzz", 0);
		if (fd < 0)
			break;
		if (write(fd, data + 1, size - 1) == (ssize_t)(size - 1)) {
			char path[64];
			struct cn_sim_counts c;
			char trig[64];
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			cn_callgrind_parse(path, &c, trig, sizeof(trig));
		}
		close(fd);
		break;
	}
	}
	free(s);
	return 0;
}
