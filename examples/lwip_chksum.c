/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cachenet's checksum as lwIP's LWIP_CHKSUM and LWIP_CHKSUM_COPY. In the
 * lwipopts.h of an lwIP build:
 *
 *   u16_t cn_lwip_chksum(const void *data, int len);
 *   u16_t cn_lwip_chksum_copy(void *dst, const void *src, u16_t len);
 *   #define LWIP_CHKSUM                  cn_lwip_chksum
 *   #define LWIP_CHKSUM_COPY_ALGORITHM   1
 *   #define LWIP_CHKSUM_COPY(d, s, len)  cn_lwip_chksum_copy(d, s, len)
 *
 * and link cachenet. lwIP's contract for both: the 16-bit ones'-complement
 * sum of the bytes as they lie in memory, folded, not complemented
 * (inet_chksum() complements it) -- exactly cn_csum_fold() of cachenet's
 * partial sum. This program checks that against the lwIP the system has
 * (Debian's liblwip: its LWIP_CHKSUM is lwIP's own lwip_standard_chksum)
 * at every length 0..2048 and offsets 0..7, plus random lengths.
 *
 *   cc lwip_chksum.c $(pkg-config --cflags --libs cachenet lwip)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cachenet/csum.h>
#include <lwip/inet_chksum.h>

/* Exported by liblwip; declared only inside lwIP's inet_chksum.c. */
u16_t lwip_standard_chksum(const void *dataptr, int len);

u16_t cn_lwip_chksum(const void *data, int len);
u16_t cn_lwip_chksum_copy(void *dst, const void *src, u16_t len);

u16_t cn_lwip_chksum(const void *data, int len)
{
	return cn_csum_fold(cn_csum_partial(data, (size_t)len, 0));
}

u16_t cn_lwip_chksum_copy(void *dst, const void *src, u16_t len)
{
	return cn_csum_fold(cn_csum_copy(dst, src, len, 0));
}

static int check(const uint8_t *buf, uint8_t *dst, int len)
{
	u16_t ours = cn_lwip_chksum(buf, len), lwip = lwip_standard_chksum(buf, len);
	u16_t complemented = (u16_t)~ours;

	if (ours != lwip || complemented != inet_chksum(buf, (u16_t)len)) {
		fprintf(stderr, "LWIP_CHKSUM differs at %p+%d: cachenet %04x, lwIP %04x\n",
			(const void *)buf, len, ours, lwip);
		return 1;
	}
	memset(dst, 0, (size_t)len);
	if (cn_lwip_chksum_copy(dst, buf, (u16_t)len) != lwip || memcmp(dst, buf, (size_t)len)) {
		fprintf(stderr, "LWIP_CHKSUM_COPY differs at length %d\n", len);
		return 1;
	}
	return 0;
}

int main(void)
{
	static uint8_t buf[65536 + 8], dst[65536 + 8];
	unsigned checked = 0;

	srand(1);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (int off = 0; off < 8; off++)
		for (int len = 0; len <= 2048; len++, checked++)
			if (check(buf + off, dst + (7 - off), len))
				return 1;
	for (int i = 0; i < 2000; i++, checked++)
		if (check(buf + rand() % 8, dst + rand() % 8, rand() % 65536))
			return 1;
	printf("LWIP_CHKSUM and LWIP_CHKSUM_COPY equal to lwIP's in %u cases\n", checked);
	return 0;
}
