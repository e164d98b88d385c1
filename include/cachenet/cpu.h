/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file cpu.h
 * Run-time CPU feature detection shared by every cachenet kernel.
 *
 * On x86 it reads CPUID and XCR0, as below. On aarch64 it reads the
 * kernel's hardware capabilities (getauxval(AT_HWCAP)), which already
 * account for what the OS enables: Advanced SIMD (NEON) is CN_CPU_NEON.
 *
 * Every kernel that has ISA variants (csum, bswap, crypto, ...) asks this
 * module once which features the CPU *and the operating system* support, and
 * picks its best variant from a best-first table. A feature is reported only
 * when CPUID says the hardware has it and, for vector state, XCR0 (read with
 * xgetbv) says the OS saves and restores that state on context switch: a CPU
 * with AVX-512 under a kernel that does not enable the ZMM state must not run
 * AVX-512 code, and CPUID alone would not tell (xxHash's dispatcher makes the
 * same point).
 *
 * Forcing: the environment variable CACHENET_CPU_DISABLE, read once on the
 * first call, masks features off, e.g. "avx512" (every AVX-512 subset),
 * "avx2", "vaes", or "all" (generic C only). Tests and benchmarks use it to
 * pit a dispatched kernel's lower tiers against the reference; they can also
 * call each variant directly.
 *
 * Cost: the first call executes a few CPUID instructions (~100-200 cycles on
 * bare metal, more in a VM where CPUID traps); later calls are one load.
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: all functions may be called from any thread at any time.
 */
#ifndef CACHENET_CPU_H
#define CACHENET_CPU_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Feature bits. Stable values: they may be stored and compared. */
enum cn_cpu_feature {
	CN_CPU_SSE2        = 1ull << 0,
	CN_CPU_SSSE3       = 1ull << 1,
	CN_CPU_SSE41       = 1ull << 2,
	CN_CPU_SSE42       = 1ull << 3,
	CN_CPU_PCLMULQDQ   = 1ull << 4,
	CN_CPU_AESNI       = 1ull << 5,
	CN_CPU_AVX         = 1ull << 6,  /**< CPUID and OS (XCR0 SSE+AVX state) */
	CN_CPU_AVX2        = 1ull << 7,  /**< requires CN_CPU_AVX */
	CN_CPU_BMI1        = 1ull << 8,
	CN_CPU_BMI2        = 1ull << 9,
	CN_CPU_ADX         = 1ull << 10,
	CN_CPU_AVX512F     = 1ull << 11, /**< CPUID and OS (XCR0 opmask+ZMM state) */
	CN_CPU_AVX512DQ    = 1ull << 12,
	CN_CPU_AVX512BW    = 1ull << 13,
	CN_CPU_AVX512VL    = 1ull << 14,
	CN_CPU_AVX512VBMI  = 1ull << 15,
	CN_CPU_VAES        = 1ull << 16, /**< VEX/EVEX AES on 256/512-bit vectors */
	CN_CPU_VPCLMULQDQ  = 1ull << 17,
	CN_CPU_CLFLUSHOPT  = 1ull << 18,
	CN_CPU_CLWB        = 1ull << 19,
	CN_CPU_RDTSCP      = 1ull << 20,
	CN_CPU_INVARIANT_TSC = 1ull << 21, /**< TSC ticks at a constant rate in all P/C states */
	CN_CPU_HYPERVISOR  = 1ull << 22, /**< running under a hypervisor (CPUID.1:ECX[31]) */
	CN_CPU_AVX512VNNI  = 1ull << 23, /**< VPDPWSSD/VPDPBUSD on 512-bit vectors */
	CN_CPU_NEON        = 1ull << 30, /**< aarch64 Advanced SIMD (HWCAP_ASIMD) */
};

/** All AVX-512 subsets cachenet knows, for masks. */
#define CN_CPU_AVX512_ALL (CN_CPU_AVX512F | CN_CPU_AVX512DQ | CN_CPU_AVX512BW | \
			   CN_CPU_AVX512VL | CN_CPU_AVX512VBMI | CN_CPU_AVX512VNNI)

/**
 * Features usable now: detected, OS-enabled, minus CACHENET_CPU_DISABLE.
 * On a build for neither x86 nor aarch64 this returns 0.
 */
uint64_t cn_cpu_features(void);

/** Features detected, before CACHENET_CPU_DISABLE is applied. */
uint64_t cn_cpu_features_detected(void);

/** True when every bit of @p mask is in cn_cpu_features(). */
bool cn_cpu_has(uint64_t mask);

/** Short lower-case name of one feature bit ("avx512bw"), or NULL if @p bit
 *  is not exactly one known feature. */
const char *cn_cpu_feature_name(uint64_t bit);

/**
 * Parse a comma-separated list of feature names ("avx2,avx512", "all") into
 * a mask. "avx512" means every AVX-512 subset; NULL or "" is the empty mask.
 * @return 0, or -EINVAL naming the first unknown word in @p err (if non-NULL).
 */
int cn_cpu_features_parse(const char *list, uint64_t *mask, char *err, size_t errlen) CN_NONNULL(2);

/**
 * Write the names of the features in @p mask, space separated, into @p buf.
 * @return the length the full string needs (like snprintf); the output is
 *         always NUL terminated when @p len > 0.
 */
size_t cn_cpu_features_format(uint64_t mask, char *buf, size_t len);

/** CPU vendor string ("GenuineIntel", "AuthenticAMD"), "" if unknown (on
 *  aarch64 always). */
const char *cn_cpu_vendor(void);

/** CPU brand string from CPUID 0x80000002-4, trimmed; "" if unknown (on
 *  aarch64 always). */
const char *cn_cpu_brand(void);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_CPU_H */
