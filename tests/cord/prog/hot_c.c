/* SPDX-License-Identifier: BSD-2-Clause */
/* Delivery, and a slow path taken by one packet in 64 (warm, not hot). */
#include "cordtest.h"

CT_HOT(dl_timer, 31)
static CT_COLD(dl_cold_2)
CT_HOT(dl_log, 32)
CT_COLD(dl_cold)
CT_HOT(dl_copy, 33)
static CT_COLD(dl_cold_3)

CT_KEEP uint32_t dl_wake(const uint32_t *p, uint32_t s)
{
	s += dl_timer(p, s);
	CT_WORK(s)
	return x;
}

static CT_COLD(dl_cold_4)

uint32_t dl_slow(const uint32_t *p, uint32_t s)
{
	s ^= dl_log(p, s);
	s += dl_copy(p, s);
	CT_WORK(s)
	return x;
}

static CT_COLD(dl_cold_5)

uint32_t dl_deliver(const uint32_t *p, uint32_t s)
{
	s += dl_copy(p, s);
	s ^= dl_wake(p, s);
	CT_WORK(s)
	return x;
}
