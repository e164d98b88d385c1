/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Checks that a fuzz target's inputs are independent of each other: runs
 * every file of the given corpus directories in order, then again in the
 * reverse order, and fails when any input's coverage (the compiler's
 * 8-bit edge counters, bucketed as libFuzzer buckets them) or return value
 * differs between the two runs, i.e. when what earlier inputs left behind
 * steered an input. Needs a build with coverage counters (-Dfuzz=true);
 * a crash found by the fuzzer then reproduces from its file alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);

#define MAX_RANGES 8

static struct {
	uint8_t *start, *stop;
} ranges[MAX_RANGES];
static unsigned nranges;

/* Called by the instrumentation once per module before main. */
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
	if (nranges < MAX_RANGES && start < stop)
		ranges[nranges].start = start, ranges[nranges++].stop = stop;
}

static uint8_t bucket(uint8_t c)
{
	return c == 0 ? 0 : c == 1 ? 1 : c == 2 ? 2 : c == 3 ? 3 : c < 8 ? 4 : c < 16 ? 5 : c < 32 ? 6 : c < 128 ? 7 : 8;
}

/* FNV-1a over the index and bucket of every non-zero counter. */
static uint64_t run(const uint8_t *data, size_t size, int *rc)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (unsigned r = 0; r < nranges; r++)
		memset(ranges[r].start, 0, (size_t)(ranges[r].stop - ranges[r].start));
	*rc = LLVMFuzzerTestOneInput(data, size);
	for (unsigned r = 0; r < nranges; r++)
		for (uint8_t *c = ranges[r].start; c < ranges[r].stop; c++)
			if (*c) {
				uint64_t v = (uint64_t)(c - ranges[r].start) << 8 | r << 4 | bucket(*c);
				for (int i = 0; i < 8; i++)
					h = (h ^ (uint8_t)(v >> (8 * i))) * 0x100000001b3ull;
			}
	return h;
}

/* The input at path, run; exits when it cannot be read. */
static uint64_t run_file(const char *path, int *rc)
{
	static uint8_t buf[1 << 16];
	long len = corpus_read(path, buf, sizeof(buf));

	if (len < 0)
		exit(1);
	return run(buf, (size_t)len, rc);
}

int main(int argc, char **argv)
{
	char **paths;
	long n, bad = 0;

	if (!nranges) {
		fprintf(stderr, "no coverage counters: build with -Dfuzz=true\n");
		return 1;
	}
	n = corpus_list(argv + 1, argc - 1, &paths);
	if (n <= 0)
		return 1;
	uint64_t *hash = malloc((size_t)n * sizeof(*hash));
	int *rcs = malloc((size_t)n * sizeof(*rcs));
	if (!hash || !rcs)
		return 1;
	/* The first input also creates what the target keeps for the
	 * process (the stack, its pools): run one before comparing. */
	(void)run_file(paths[0], &rcs[0]);
	for (long i = 0; i < n; i++)
		hash[i] = run_file(paths[i], &rcs[i]);
	for (long i = n; i-- > 0;) {
		int rc;
		uint64_t h = run_file(paths[i], &rc);
		if (h != hash[i] || rc != rcs[i]) {
			fprintf(stderr, "%s: coverage or result depends on the inputs run before it\n",
				paths[i]);
			bad++;
		}
	}
	printf("%ld inputs, %ld with coverage that depends on earlier inputs\n", n, bad);
	free(hash);
	free(rcs);
	corpus_free(paths, n);
	return bad ? 1 : 0;
}
