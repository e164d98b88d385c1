/* SPDX-License-Identifier: BSD-2-Clause */
/* A program outside the tree that uses the laboratory, built as a user
 * would:
 *   cc prog_lab.c $(pkg-config --cflags --libs cachenet-lab)
 * (cachenet-lab's .pc requires cachenet's). */
#include <cachenet/lab.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	char buf[512];
	struct cn_counters *c;

	if (strcmp(cn_version(), CN_VERSION_STRING) != 0) {
		fprintf(stderr, "header %s, library %s\n", CN_VERSION_STRING, cn_version());
		return 1;
	}
	printf("cachenet-lab %s\n", cn_version());
	printf("TSC %.3f GHz (%s)\n", cn_tsc_hz() / 1e9, cn_tsc_source());
	if (cn_counters_open(&c, NULL) != 0)
		return 1;
	cn_counters_describe(c, buf, sizeof(buf));
	printf("%s\n", buf);
	cn_counters_close(c);
	return 0;
}
