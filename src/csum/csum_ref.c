/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The oracle: RFC 1071 as written, one network-order byte pair at a time,
 * no word loads, no tricks. Kept apart from the kernels so that a mistake
 * shared by the fast paths (frames, swaps, tails) cannot hide here.
 */
#include "csum_impl.h"

uint32_t cn_csum_partial_ref(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;
	uint32_t s = 0; /* network-order 16-bit sum, folded as it goes */
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		s += (uint32_t)p[i] << 8 | p[i + 1];
		s = (s & 0xffff) + (s >> 16);
	}
	if (len & 1) { /* a last odd byte is the high half of a zero-padded word */
		s += (uint32_t)p[len - 1] << 8;
		s = (s & 0xffff) + (s >> 16);
	}
	/* To "as stored" (csum.h): the network-order value, loaded natively. */
	unsigned char be[2] = { (unsigned char)(s >> 8), (unsigned char)s };
	uint16_t stored;
	memcpy(&stored, be, 2);
	return cn_csum_add(stored, sum);
}
