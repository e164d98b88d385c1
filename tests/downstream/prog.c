/* SPDX-License-Identifier: BSD-2-Clause */
/* A program outside the tree that uses the product library only, built as
 * a user would:
 *   cc prog.c $(pkg-config --cflags --libs cachenet)
 * It must compile, link and run against an installed cachenet, and the
 * laboratory (libcachenet-lab, libpfm) must not be in its link. */
#include <cachenet/cachenet.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	char buf[512];
	uint8_t pkt[1500];
	uint64_t t0, t1;

	if (strcmp(cn_version(), CN_VERSION_STRING) != 0) {
		fprintf(stderr, "header %s, library %s\n", CN_VERSION_STRING, cn_version());
		return 1;
	}
	cn_cpu_features_format(cn_cpu_features(), buf, sizeof(buf));
	printf("cachenet %s\nfeatures: %s\n", cn_version(), buf);

	/* A block that carries its own checksum verifies to 0. */
	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 7 + 3);
	pkt[10] = pkt[11] = 0;
	t0 = cn_tsc_begin();
	uint16_t c = cn_csum(pkt, sizeof(pkt));
	t1 = cn_tsc_end();
	memcpy(&pkt[10], &c, 2);
	if (cn_csum(pkt, sizeof(pkt)) != 0) {
		fprintf(stderr, "checksum does not verify\n");
		return 1;
	}
	printf("checksum 0x%04x verified (%llu TSC ticks)\n", c, (unsigned long long)(t1 - t0));
	return 0;
}
