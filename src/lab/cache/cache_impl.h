/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/lab/cache: the per-ISA flush loop lives in its own library. */
#ifndef CN_CACHE_IMPL_H
#define CN_CACHE_IMPL_H

#include <stddef.h>

#include "cn_internal.h"

/** CLFLUSHOPT every line of [p, p+len); caller fences. Only call when
 *  cn_cpu_has(CN_CPU_CLFLUSHOPT). */
CN_INTERNAL void cn__cache_flush_clflushopt(const void *p, size_t len, size_t line);

#endif
