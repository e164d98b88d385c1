/* SPDX-License-Identifier: BSD-2-Clause */
/* Compiled with -mclflushopt in its own static library (src/meson.build). */
#include "../cache/cache_impl.h"

#include <immintrin.h>
#include <stdint.h>

void cn__cache_flush_clflushopt(const void *p, size_t len, size_t line)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(line - 1);
	uintptr_t end = (uintptr_t)p + len;

	/* CLFLUSHOPT is weakly ordered against other flushes, so many lines
	 * are in flight at once; the caller's MFENCE waits for all of them. */
	for (; a < end; a += line)
		_mm_clflushopt((void *)a);
}
