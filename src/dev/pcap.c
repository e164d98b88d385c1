/* SPDX-License-Identifier: BSD-2-Clause */
/* Classic pcap files (the format tcpdump and tshark read by default):
 * a 24-byte global header, then per frame a 16-byte record header. Written
 * in host byte order, which readers detect from the magic number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cachenet/pcap.h"

struct cn_pcap {
	FILE *f;
	uint32_t snaplen;
	uint64_t count;
};

struct cn_pcap *cn_pcap_open(const char *path, uint32_t snaplen)
{
	struct cn_pcap *pc;
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t thiszone;
		uint32_t sigfigs, snaplen, linktype;
	} gh = {0xa1b2c3d4u, 2, 4, 0, 0, snaplen ? snaplen : 65535, 1 /* LINKTYPE_ETHERNET */};

	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->f = fopen(path, "wb");
	if (!pc->f) {
		int e = errno;
		free(pc);
		errno = e;
		return NULL;
	}
	pc->snaplen = gh.snaplen;
	if (fwrite(&gh, sizeof(gh), 1, pc->f) != 1) {
		fclose(pc->f);
		free(pc);
		errno = EIO;
		return NULL;
	}
	return pc;
}

int cn_pcap_write(struct cn_pcap *pc, const uint8_t *frame, uint32_t len, uint64_t ts_ns)
{
	uint32_t cap = len < pc->snaplen ? len : pc->snaplen;
	uint32_t rh[4] = {(uint32_t)(ts_ns / 1000000000u), (uint32_t)(ts_ns % 1000000000u / 1000u),
			  cap, len};

	if (fwrite(rh, sizeof(rh), 1, pc->f) != 1 || fwrite(frame, 1, cap, pc->f) != cap)
		return -EIO;
	pc->count++;
	return 0;
}

int cn_pcap_close(struct cn_pcap *pc)
{
	int rc;

	if (!pc)
		return 0;
	rc = fclose(pc->f) == 0 ? 0 : -EIO;
	free(pc);
	return rc;
}

uint64_t cn_pcap_count(const struct cn_pcap *pc)
{
	return pc->count;
}
