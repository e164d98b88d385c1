/* SPDX-License-Identifier: BSD-2-Clause */
#include "dispatch.h"

#include <string.h>

#include "cachenet/cpu.h"

/* Read an entry's head through memcpy: the tables hold other struct types
 * that merely begin like cn__impl_head. */
static struct cn__impl_head head(const void *table, size_t i, size_t stride)
{
	struct cn__impl_head h;

	memcpy(&h, (const char *)table + i * stride, sizeof(h));
	return h;
}

size_t cn__impl_list(const void *table, size_t n, size_t stride, const void **out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!cn_cpu_has(head(table, i, stride).features))
			continue;
		if (k < max)
			out[k] = (const char *)table + i * stride;
		k++;
	}
	return k;
}

const void *cn__impl_find(const void *table, size_t n, size_t stride, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		struct cn__impl_head h = head(table, i, stride);
		if (strcmp(h.name, name) == 0)
			return cn_cpu_has(h.features) ? (const char *)table + i * stride : NULL;
	}
	return NULL;
}

const void *cn__impl_best(const void *table, size_t n, size_t stride)
{
	for (size_t i = 0; i < n; i++)
		if (cn_cpu_has(head(table, i, stride).features))
			return (const char *)table + i * stride;
	return (const char *)table + (n - 1) * stride;
}
