/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU feature detection: CPUID for what the silicon has, XCR0 for what the
 * operating system saves on a context switch (x86); the kernel's hardware
 * capabilities, which say both at once (aarch64). Detected once, on first use,
 * and published with a release store; a racing second detection computes
 * the same value, so no lock is needed.
 */
#include "cachenet/cpu.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CN_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define CN_ARM64 1
#endif

static const struct {
	uint64_t bit;
	const char *name;
} feature_names[] = {
	{ CN_CPU_SSE2, "sse2" },         { CN_CPU_SSSE3, "ssse3" },
	{ CN_CPU_SSE41, "sse4.1" },      { CN_CPU_SSE42, "sse4.2" },
	{ CN_CPU_PCLMULQDQ, "pclmulqdq" }, { CN_CPU_AESNI, "aes" },
	{ CN_CPU_AVX, "avx" },           { CN_CPU_AVX2, "avx2" },
	{ CN_CPU_BMI1, "bmi1" },         { CN_CPU_BMI2, "bmi2" },
	{ CN_CPU_ADX, "adx" },           { CN_CPU_AVX512F, "avx512f" },
	{ CN_CPU_AVX512DQ, "avx512dq" }, { CN_CPU_AVX512BW, "avx512bw" },
	{ CN_CPU_AVX512VL, "avx512vl" }, { CN_CPU_AVX512VBMI, "avx512vbmi" },
	{ CN_CPU_VAES, "vaes" },         { CN_CPU_VPCLMULQDQ, "vpclmulqdq" },
	{ CN_CPU_CLFLUSHOPT, "clflushopt" }, { CN_CPU_CLWB, "clwb" },
	{ CN_CPU_RDTSCP, "rdtscp" },     { CN_CPU_INVARIANT_TSC, "invariant_tsc" },
	{ CN_CPU_HYPERVISOR, "hypervisor" }, { CN_CPU_AVX512VNNI, "avx512vnni" },
	{ CN_CPU_NEON, "neon" },
};

#define N_FEATURES (sizeof(feature_names) / sizeof(feature_names[0]))

/* Bit 63 marks "detected"; no feature uses it ("all" masks stay clear of it). */
#define DETECTED (1ull << 63)

static uint64_t detected_cache;   /* CPUID & XCR0 */
static uint64_t usable_cache;     /* detected minus CACHENET_CPU_DISABLE */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char vendor[13];
static char brand[49];

#ifdef CN_X86
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static void detect_strings(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid(0, &a, &b, &c, &d)) {
		memcpy(vendor + 0, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &c, 4);
		vendor[12] = '\0';
	}
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
		unsigned r[12];
		for (unsigned i = 0; i < 3; i++)
			__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1],
				    &r[4 * i + 2], &r[4 * i + 3]);
		memcpy(brand, r, 48);
		brand[48] = '\0';
		/* Brand strings are padded with spaces on both ends. */
		char *s = brand;
		while (*s == ' ')
			s++;
		memmove(brand, s, strlen(s) + 1);
		for (size_t n = strlen(brand); n > 0 && brand[n - 1] == ' '; n--)
			brand[n - 1] = '\0';
	}
}

static uint64_t detect(void)
{
	unsigned a, b, c, d, max_leaf;
	uint64_t f = 0;

	if (!__get_cpuid(0, &max_leaf, &b, &c, &d))
		return DETECTED;
	__get_cpuid(1, &a, &b, &c, &d);
	if (d & bit_SSE2)      f |= CN_CPU_SSE2;
	if (c & bit_SSSE3)     f |= CN_CPU_SSSE3;
	if (c & bit_SSE4_1)    f |= CN_CPU_SSE41;
	if (c & bit_SSE4_2)    f |= CN_CPU_SSE42;
	if (c & bit_PCLMUL)    f |= CN_CPU_PCLMULQDQ;
	if (c & bit_AES)       f |= CN_CPU_AESNI;
	if (c & (1u << 31))    f |= CN_CPU_HYPERVISOR;

	/* XCR0: bit 1 SSE, bit 2 AVX (YMM upper), bits 5-7 opmask/ZMM. */
	uint64_t xcr0 = (c & bit_OSXSAVE) ? xgetbv0() : 0;
	bool os_avx = (xcr0 & 0x6) == 0x6;
	bool os_avx512 = (xcr0 & 0xe6) == 0xe6;

	if ((c & bit_AVX) && os_avx)
		f |= CN_CPU_AVX;

	if (max_leaf >= 7) {
		__get_cpuid_count(7, 0, &a, &b, &c, &d);
		if (b & bit_BMI)        f |= CN_CPU_BMI1;
		if (b & bit_BMI2)       f |= CN_CPU_BMI2;
		if (b & bit_ADX)        f |= CN_CPU_ADX;
		if (b & bit_CLFLUSHOPT) f |= CN_CPU_CLFLUSHOPT;
		if (b & bit_CLWB)       f |= CN_CPU_CLWB;
		if (os_avx) {
			if (b & bit_AVX2)        f |= CN_CPU_AVX2;
			if (c & bit_VAES)        f |= CN_CPU_VAES;
			if (c & bit_VPCLMULQDQ)  f |= CN_CPU_VPCLMULQDQ;
		}
		if (os_avx512 && (b & bit_AVX512F)) {
			f |= CN_CPU_AVX512F;
			if (b & bit_AVX512DQ)  f |= CN_CPU_AVX512DQ;
			if (b & bit_AVX512BW)  f |= CN_CPU_AVX512BW;
			if (b & bit_AVX512VL)  f |= CN_CPU_AVX512VL;
			if (c & bit_AVX512VBMI) f |= CN_CPU_AVX512VBMI;
			if (c & bit_AVX512VNNI) f |= CN_CPU_AVX512VNNI;
		}
	}
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d)) {
		unsigned max_ext = a;
		if (max_ext >= 0x80000001u) {
			__get_cpuid(0x80000001u, &a, &b, &c, &d);
			if (d & (1u << 27)) f |= CN_CPU_RDTSCP;
		}
		if (max_ext >= 0x80000007u) {
			__get_cpuid(0x80000007u, &a, &b, &c, &d);
			if (d & (1u << 8)) f |= CN_CPU_INVARIANT_TSC;
		}
	}
	detect_strings();
	return f | DETECTED;
}
#elif defined(CN_ARM64)
/* Linux sets HWCAP_ASIMD only where the CPU has Advanced SIMD and the
 * kernel saves its registers; there is no user-space view of the ID
 * registers to cross-check without HWCAP_CPUID's trap-and-emulate. */
static uint64_t detect(void)
{
	unsigned long hw = getauxval(AT_HWCAP);
	uint64_t f = 0;

	if (hw & HWCAP_ASIMD)
		f |= CN_CPU_NEON;
	return f | DETECTED;
}
#else
static uint64_t detect(void)
{
	return DETECTED;
}
#endif

static void init(void)
{
	uint64_t f = detect() & ~DETECTED;
	uint64_t usable = f;
	const char *env = getenv("CACHENET_CPU_DISABLE");

	if (env && *env) {
		uint64_t off = 0;
		char err[64];
		if (cn_cpu_features_parse(env, &off, err, sizeof(err)) < 0)
			fprintf(stderr, "cachenet: CACHENET_CPU_DISABLE: %s (ignored)\n", err);
		else
			usable &= ~off;
	}
	usable_cache = usable;
	detected_cache = f;
}

static uint64_t detected(void)
{
	pthread_once(&once, init);
	return detected_cache;
}

uint64_t cn_cpu_features_detected(void)
{
	return detected();
}

uint64_t cn_cpu_features(void)
{
	detected();
	return usable_cache;
}

bool cn_cpu_has(uint64_t mask)
{
	return (cn_cpu_features() & mask) == mask;
}

const char *cn_cpu_feature_name(uint64_t bit)
{
	for (size_t i = 0; i < N_FEATURES; i++)
		if (feature_names[i].bit == bit)
			return feature_names[i].name;
	return NULL;
}

int cn_cpu_features_parse(const char *list, uint64_t *mask, char *err, size_t errlen)
{
	uint64_t m = 0;
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ", ");
		if (n == 0) {
			p++;
			continue;
		}
		uint64_t bit = 0;
		if (n == 3 && strncasecmp(p, "all", 3) == 0)
			bit = ~DETECTED;
		else if (n == 6 && strncasecmp(p, "avx512", 6) == 0)
			bit = CN_CPU_AVX512_ALL;
		else
			for (size_t i = 0; i < N_FEATURES; i++)
				if (strlen(feature_names[i].name) == n &&
				    strncasecmp(p, feature_names[i].name, n) == 0)
					bit = feature_names[i].bit;
		if (!bit) {
			if (err && errlen)
				snprintf(err, errlen, "unknown CPU feature '%.*s'", (int)n, p);
			return -EINVAL;
		}
		m |= bit;
		p += n;
	}
	*mask = m;
	return 0;
}

size_t cn_cpu_features_format(uint64_t mask, char *buf, size_t len)
{
	size_t need = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < N_FEATURES; i++) {
		if (!(mask & feature_names[i].bit))
			continue;
		int w = snprintf(need < len ? buf + need : NULL,
				 need < len ? len - need : 0, "%s%s",
				 need ? " " : "", feature_names[i].name);
		need += (size_t)w;
	}
	return need;
}

const char *cn_cpu_vendor(void)
{
	detected();
	return vendor;
}

const char *cn_cpu_brand(void)
{
	detected();
	return brand;
}
