/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Variant tables, walked generically. Every kernel module keeps a best-first
 * table of `struct cn_<kernel>_impl` whose first two members are
 *     const char *name;  uint64_t features;
 * (CN_IMPL_LAYOUT_CHECK asserts it), and answers the same three questions
 * about it: which variants can run here (cn_<kernel>_impls), which one is
 * named X (cn_<kernel>_impl_find), and which one to dispatch to. The
 * answers are the same code for every table, so they live here once.
 */
#ifndef CN_CPU_DISPATCH_H
#define CN_CPU_DISPATCH_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "cn_internal.h"

struct cn__impl_head {
	const char *name;
	uint64_t features;
};

/** Fails to compile unless @p type starts like struct cn__impl_head. */
#define CN_IMPL_LAYOUT_CHECK(type)                                                   \
	static_assert(offsetof(type, name) == offsetof(struct cn__impl_head, name) &&  \
			      offsetof(type, features) ==                               \
				      offsetof(struct cn__impl_head, features),         \
		      #type " must begin with name and features")

/** Store up to @p max runnable entries of the @p n-entry table in @p out,
 *  best first; return how many there are (may exceed @p max). */
CN_INTERNAL size_t cn__impl_list(const void *table, size_t n, size_t stride,
				 const void **out, size_t max);

/** The entry called @p name if this CPU (and CACHENET_CPU_DISABLE) lets it
 *  run, else NULL. */
CN_INTERNAL const void *cn__impl_find(const void *table, size_t n, size_t stride,
				      const char *name);

/** The first runnable entry; the last one (the generic variant, which needs
 *  nothing) when none is. */
CN_INTERNAL const void *cn__impl_best(const void *table, size_t n, size_t stride);

/** Define the public listing and lookup of a variant table: @p prefix_impls()
 *  (cn__impl_list) and @p prefix_impl_find() (cn__impl_find) over @p table,
 *  an array of @p type (contracts in the module's public header). */
#define CN_IMPL_TABLE_API(prefix, type, table)                                              \
	size_t prefix##_impls(const type **out, size_t n)                                  \
	{                                                                                   \
		return cn__impl_list(table, sizeof(table) / sizeof(table[0]), sizeof(table[0]), \
				     (const void **)out, n);                                      \
	}                                                                                   \
	const type *prefix##_impl_find(const char *name)                                   \
	{                                                                                   \
		return cn__impl_find(table, sizeof(table) / sizeof(table[0]), sizeof(table[0]), \
				     name);                                                       \
	}

#endif
