/* SPDX-License-Identifier: BSD-2-Clause */
/* Decompression side: zl_inflate is called once per block and loops over
 * it; zl_put is called for every output word but is tiny. */
#include "zl.h"

static ZL_KEEP uint32_t mix(const uint32_t *p, uint32_t s)
{
	uint32_t x = s ^ 0x55u;
	ZL_MIX8(8)
	return x;
}

ZL_KEEP uint32_t zl_put(uint32_t s, uint32_t b)
{
	__asm__ volatile("" : "+r"(s));
	return s + b;
}

ZL_KEEP uint32_t zl_inflate(const uint32_t *p, uint32_t s, uint32_t len)
{
	uint32_t x = s;
	for (uint32_t i = 0; i < len; i++) {
		ZL_MIX32(0)
		x += i;
	}
	return x;
}

ZL_KEEP uint32_t zl_table(const uint32_t *p)
{
	uint32_t x = 9;
	ZL_MIX32(0) ZL_MIX32(32)
	return x;
}

ZL_API uint32_t zl_unpack(const uint32_t *p, uint32_t n)
{
	uint32_t s = zl_table(p);
	for (uint32_t blk = 0; blk < n / 256; blk++) {
		s = zl_inflate(p, s, 256);
		s = mix(p, s);
	}
	for (uint32_t i = 0; i < 16 * n; i++)
		s = zl_put(s, i);
	return s;
}
