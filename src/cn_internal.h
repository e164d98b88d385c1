/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by every src/ module; never installed. */
#ifndef CN_INTERNAL_H
#define CN_INTERNAL_H

/* Functions named cn__* cross files (and ISA libraries) inside the library
 * but are not part of the ABI: hidden, so the shared object does not export
 * them although they match the version script's cn_* pattern. */
#define CN_INTERNAL __attribute__((visibility("hidden")))

/* A static function in a private header that not every includer calls
 * (such headers are how the laboratory library runs product code without
 * the product exporting internal names: src/dev/impair.h,
 * src/buf/sbchain_impl.h). */
#define CN__UNUSED __attribute__((unused))

#include <stdint.h>
#include <string.h>

/* Loads from wire data at any alignment, in memory order (no swap). */
static inline uint16_t cn__ld16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t cn__ld32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

#endif
