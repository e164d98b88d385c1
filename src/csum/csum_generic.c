/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Generic variant: baseline instructions only (no -m flags). On x86-64 an
 * add-with-carry chain over unaligned 64-bit loads (csum_impl.h); elsewhere
 * portable C that counts carries. This is also the dispatcher's path for
 * short inputs on every CPU.
 */
#include "csum_impl.h"

uint32_t cn_csum_partial_generic(const void *buf, size_t len, uint32_t sum)
{
	/* Summing in the buffer's own frame with unaligned loads: no head, no
	 * byte swap. */
	return cn__csum_fold32(cn__csum_scalar((const unsigned char *)buf, len, sum));
}

uint32_t cn_csum_copy_generic(void *restrict dst, const void *restrict src, size_t len,
			      uint32_t sum)
{
	return cn__csum_fold32(cn__csum_copy_scalar((unsigned char *)dst,
						    (const unsigned char *)src, len, sum));
}
