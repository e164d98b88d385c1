/* SPDX-License-Identifier: BSD-2-Clause */
/* Send side, spread among cold code like hot_a.c; its static `step` is
 * the twin of hot_a.c's. */
#include "cordtest.h"

CT_HOT(tx_queue, 21)
static CT_COLD(tx_cold_2)

static CT_KEEP uint32_t step(const uint32_t *p, uint32_t s)
{
	CT_WORK(s ^ 0x5au)
	return x;
}

CT_COLD(tx_cold)
CT_HOT(tx_seg, 22)
static CT_COLD(tx_cold_3)

CT_KEEP uint32_t tx_hdr(const uint32_t *p, uint32_t s)
{
	s ^= step(p, s);
	CT_WORK(s)
	return x;
}

static CT_COLD(tx_cold_4)
CT_HOT(tx_csum, 23)
static CT_COLD(tx_cold_5)

uint32_t tx_output(const uint32_t *p, uint32_t s)
{
	s += tx_seg(p, s);
	s ^= tx_hdr(p, s);
	s += tx_csum(p, s);
	s ^= tx_queue(p, s);
	CT_WORK(s)
	return x;
}
