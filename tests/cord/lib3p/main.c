/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program around libzl.a:
 *   zltest pack N     N compression steps
 *   zltest unpack N   N words decompressed (zl_inflate over N/256 blocks)
 *   zltest count      the bytes on standard input
 * Prints one line of results (the same for every layout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zl.h"

static const uint32_t data[16] = {
	0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d, 0x13579bdf, 0x2468ace0,
	0xfedcba98, 0x76543210, 0x11111111, 0x22222222, 0x33333333, 0x44444444,
	0x55555555, 0x66666666, 0x77777777, 0x88888888,
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "count") == 0) {
		unsigned long n = 0;
		while (getchar() != EOF)
			n++;
		printf("zltest: %lu bytes on stdin\n", n);
		return 0;
	}
	if (argc != 3)
		return 2;
	uint32_t n = (uint32_t)strtoul(argv[2], NULL, 0);
	if (strcmp(argv[1], "pack") == 0)
		printf("zltest: pack %u -> %08x\n", n, zl_pack(data, n));
	else if (strcmp(argv[1], "unpack") == 0)
		printf("zltest: unpack %u -> %08x\n", n, zl_unpack(data, n));
	else
		return 2;
	return 0;
}
