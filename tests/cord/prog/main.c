/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Driver: runs every cold function once (an "init" phase, so they exist in
 * the profile with weight 1), then N packets through the hot path, and
 * prints a checksum so that a relinked program can be checked for the
 * same output.  Usage: cordtest [packets]   (default 5000)
 */
#include <stdio.h>
#include <stdlib.h>

#include "cordtest.h"

static uint32_t data[16] = {
	0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d, 0x13579bdf, 0x2468ace0,
	0xfedcba98, 0x76543210, 0x11111111, 0x22222222, 0x33333333, 0x44444444,
	0x55555555, 0x66666666, 0x77777777, 0x88888888,
};

/* A packet: receive, send the reply, deliver; one packet in 64 also takes
 * the slow path (counts in the tests depend on this rule). */
CT_KEEP uint32_t ct_packet(const uint32_t *p, uint32_t i)
{
	uint32_t s = rx_input(p, i);
	s ^= tx_output(p, s);
	s += dl_deliver(p, s);
	if ((i & 63) == 0)
		s ^= dl_slow(p, s);
	return s;
}

CT_KEEP static uint32_t ct_init(const uint32_t *p)
{
	static ct_cold_fn *const cold[] = {
		pad0_a, pad0_b, rx_cold, pad1_a, pad1_b, tx_cold, pad2_a, pad2_b, dl_cold,
	};
	uint32_t s = 0;
	for (unsigned i = 0; i < sizeof(cold) / sizeof(cold[0]); i++)
		s += cold[i](p);
	return s;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000;
	uint32_t sum = ct_init(data);

	for (unsigned long i = 0; i < n; i++)
		sum += ct_packet(data, (uint32_t)i);
	printf("cordtest: %lu packets, sum %08x\n", n, sum);
	return 0;
}
