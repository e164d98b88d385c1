/* SPDX-License-Identifier: BSD-2-Clause */
/* Runs every file of the given corpus directories through the fuzz target:
 * the fuzz corpus as a regression test in builds without libFuzzer. */
#include <stdint.h>
#include <stdio.h>

#include "corpus_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 16];
	char **paths;
	long n = corpus_list(argv + 1, argc - 1, &paths), ran = 0;

	if (n < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		long len = corpus_read(paths[i], buf, sizeof(buf));
		if (len < 0)
			continue;
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		ran++;
	}
	corpus_free(paths, n);
	printf("replayed %ld inputs\n", ran);
	return ran ? 0 : 1;
}
