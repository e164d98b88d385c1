/* SPDX-License-Identifier: BSD-2-Clause */
/* Compression side: zl_match and zl_emit alternate; zl_spare between them
 * is never run (ZL_GAP bytes, chosen by the test so that the two are a
 * multiple of 16 KB apart in the default link order). */
#include "zl.h"

#ifndef ZL_GAP
#define ZL_GAP 15000
#endif

/* same name as a static in zl_unpack.c: kept apart by address */
static ZL_KEEP uint32_t mix(const uint32_t *p, uint32_t s)
{
	uint32_t x = s;
	ZL_MIX8(0)
	return x;
}

ZL_KEEP uint32_t zl_match(const uint32_t *p, uint32_t s)
{
	uint32_t x = s + 3;
	ZL_MIX32(0) ZL_MIX8(32) ZL_MIX8(40)
	return x;
}

ZL_KEEP uint32_t zl_spare(const uint32_t *p)
{
	const volatile uint32_t *vp = p;
	uint32_t x = 5;
	if (vp[15] == 0)
		__asm__ volatile(".skip " ZL_STR(ZL_GAP));
	x ^= vp[3];
	return x;
}

ZL_KEEP uint32_t zl_emit(const uint32_t *p, uint32_t s)
{
	uint32_t x = s + 7;
	ZL_MIX32(0) ZL_MIX8(32) ZL_MIX8(40)
	return x;
}

ZL_API uint32_t zl_pack(const uint32_t *p, uint32_t n)
{
	uint32_t s = 1;
	for (uint32_t i = 0; i < n; i++) {
		s = zl_match(p, s + i);
		s = zl_emit(p, s);
		s = mix(p, s);
	}
	return s;
}
