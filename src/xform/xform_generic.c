/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Generic variants: baseline instructions only (no -m flags), one 64-bit
 * load, transform and store per 8 bytes (xform_impl.h).
 */
#include "xform_impl.h"

void cn_bswap16_generic(void *dst, const void *src, size_t len)
{
	cn__bswap16_scalar((unsigned char *)dst, (const unsigned char *)src, len);
}

void cn_bswap32_generic(void *dst, const void *src, size_t len)
{
	cn__bswap32_scalar((unsigned char *)dst, (const unsigned char *)src, len);
}

void cn_pes_generic(void *dst, const void *src, size_t len)
{
	cn__pes_scalar((unsigned char *)dst, (const unsigned char *)src, len);
}
