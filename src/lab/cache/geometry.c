/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cache geometry. sysfs first: it is what the kernel derived from CPUID
 * (or firmware tables) and it is present on every Linux. CPUID leaf 4
 * (Intel deterministic cache parameters) or 0x8000001D (AMD, same layout)
 * is the fallback, e.g. in containers with /sys masked.
 */
#include "cachenet/lab/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CN_X86 1
#endif

static struct cn_cache_info cached;
static int cached_rc;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int read_sysfs_str(const char *dir, const char *file, char *buf, size_t len)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static long read_sysfs_num(const char *dir, const char *file)
{
	char buf[64];
	if (read_sysfs_str(dir, file, buf, sizeof(buf)) < 0)
		return -1;
	char *end;
	long v = strtol(buf, &end, 10);
	if (end == buf)
		return -1;
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

/* Number of CPUs in a sysfs cpulist such as "0-1,4". */
static unsigned count_cpulist(const char *s)
{
	unsigned n = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += (unsigned)(b - a + 1);
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return n;
}

static int from_sysfs(struct cn_cache_info *info)
{
	for (unsigned i = 0; i < 16 && info->n < CN_CACHE_LEVELS_MAX; i++) {
		char dir[96], type[32], list[256];
		snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu0/cache/index%u", i);
		if (read_sysfs_str(dir, "type", type, sizeof(type)) < 0)
			break;
		struct cn_cache_level *l = &info->level[info->n];
		memset(l, 0, sizeof(*l));
		long level = read_sysfs_num(dir, "level");
		long size = read_sysfs_num(dir, "size");
		long ways = read_sysfs_num(dir, "ways_of_associativity");
		long line = read_sysfs_num(dir, "coherency_line_size");
		long sets = read_sysfs_num(dir, "number_of_sets");
		if (level <= 0 || size <= 0 || line <= 0)
			continue;
		l->level = (unsigned)level;
		l->type = strcmp(type, "Data") == 0 ? CN_CACHE_DATA
			: strcmp(type, "Instruction") == 0 ? CN_CACHE_INSTRUCTION : CN_CACHE_UNIFIED;
		l->size = (uint64_t)size;
		l->line = (unsigned)line;
		l->ways = ways > 0 ? (unsigned)ways : 0;
		l->sets = sets > 0 ? (unsigned)sets
			: (unsigned)(l->size / ((uint64_t)(l->ways ? l->ways : 1) * l->line));
		if (read_sysfs_str(dir, "shared_cpu_list", list, sizeof(list)) == 0)
			l->shared_by = count_cpulist(list);
		info->n++;
	}
	info->source = "sysfs";
	return info->n ? 0 : -ENODEV;
}

#ifdef CN_X86
static int from_cpuid(struct cn_cache_info *info)
{
	unsigned a, b, c, d, max;
	char vendor[13] = { 0 };

	if (!__get_cpuid(0, &max, &b, &c, &d))
		return -ENODEV;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	unsigned leaf = 4;
	info->source = "cpuid leaf 4";
	if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
		leaf = 0x8000001d;
		info->source = "cpuid 0x8000001d";
		__get_cpuid(0x80000000u, &max, &b, &c, &d);
	}
	if (max < leaf)
		return -ENODEV;
	for (unsigned i = 0; i < 16 && info->n < CN_CACHE_LEVELS_MAX; i++) {
		__cpuid_count(leaf, i, a, b, c, d);
		unsigned type = a & 0x1f;
		if (type == 0)
			break;
		struct cn_cache_level *l = &info->level[info->n++];
		memset(l, 0, sizeof(*l));
		l->level = (a >> 5) & 7;
		l->type = type == 1 ? CN_CACHE_DATA : type == 2 ? CN_CACHE_INSTRUCTION : CN_CACHE_UNIFIED;
		l->line = (b & 0xfff) + 1;
		unsigned parts = ((b >> 12) & 0x3ff) + 1;
		l->ways = (a & (1u << 9)) ? 0 : ((b >> 22) & 0x3ff) + 1;
		l->sets = c + 1;
		l->size = (uint64_t)(l->ways ? l->ways : 1) * parts * l->line * l->sets;
		l->shared_by = ((a >> 14) & 0xfff) + 1;
	}
	return info->n ? 0 : -ENODEV;
}
#endif

static void detect(void)
{
	/* CACHENET_CACHE_SOURCE=cpuid skips sysfs (tests compare the two). */
	const char *src = getenv("CACHENET_CACHE_SOURCE");
	bool cpuid_only = src && strcmp(src, "cpuid") == 0;

	memset(&cached, 0, sizeof(cached));
	cached_rc = cpuid_only ? -ENODEV : from_sysfs(&cached);
#ifdef CN_X86
	if (cached_rc < 0) {
		memset(&cached, 0, sizeof(cached));
		cached_rc = from_cpuid(&cached);
	}
#endif
}

int cn_cache_geometry(struct cn_cache_info *info)
{
	pthread_once(&once, detect);
	*info = cached;
	return cached_rc;
}

const struct cn_cache_level *cn_cache_find(const struct cn_cache_info *info, unsigned level,
					   enum cn_cache_type type)
{
	for (unsigned i = 0; i < info->n; i++) {
		const struct cn_cache_level *l = &info->level[i];
		if (l->level == level && (l->type == type || l->type == CN_CACHE_UNIFIED))
			return l;
	}
	return NULL;
}

const struct cn_cache_level *cn_cache_last_level(const struct cn_cache_info *info)
{
	const struct cn_cache_level *best = NULL;

	for (unsigned i = 0; i < info->n; i++) {
		const struct cn_cache_level *l = &info->level[i];
		if (l->type != CN_CACHE_INSTRUCTION && (!best || l->level > best->level))
			best = l;
	}
	return best;
}
