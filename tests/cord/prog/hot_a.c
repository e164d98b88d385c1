/* SPDX-License-Identifier: BSD-2-Clause */
/* Receive side.  Hot functions alternate with ~16 KB cold ones; `step` is
 * static and has a same-named twin in hot_b.c (called a third as often),
 * which the profile and the order must keep apart. */
#include "cordtest.h"

CT_HOT(rx_reasm, 11)
CT_COLD(rx_cold)

static CT_KEEP uint32_t step(const uint32_t *p, uint32_t s)
{
	CT_WORK(s ^ 0xa5u)
	return x;
}

static CT_COLD(rx_cold_2)

CT_KEEP uint32_t rx_parse(const uint32_t *p, uint32_t s)
{
	s += step(p, s);
	CT_WORK(s)
	return x;
}

static CT_COLD(rx_cold_3)
CT_HOT(rx_ack, 13)
static CT_COLD(rx_cold_4)

CT_KEEP uint32_t rx_csum(const uint32_t *p, uint32_t s)
{
	s += step(p, s);
	s ^= step(p, s + 1);
	CT_WORK(s)
	return x;
}

static CT_COLD(rx_cold_5)

uint32_t rx_input(const uint32_t *p, uint32_t s)
{
	s = rx_parse(p, s);
	s ^= rx_csum(p, s);
	s += rx_reasm(p, s);
	s ^= rx_ack(p, s);
	CT_WORK(s)
	return x;
}
