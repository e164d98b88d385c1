/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Dispatch for the byte swaps and PES, as in src/csum/csum.c: a best-first
 * table per kernel family, the first entry whose features cn_cpu_has()
 * reports (CPUID + XCR0 - CACHENET_CPU_DISABLE) wins, chosen by a
 * constructor and again lazily if a call arrives before it ran (the entry
 * points start out at resolvers). Racing selections store the same
 * pointers, so relaxed atomics suffice.
 *
 * No small-size shortcut: the AVX-512 kernels handle a short buffer with one
 * masked load and store, which is no dearer than the scalar loop even at
 * 20 bytes (bench/bench_copy.cc), and AVX2 runs its scalar tail inline.
 */
#include "xform_impl.h"

#include "cachenet/cpu.h"
#include "../cpu/dispatch.h"

#include <string.h>

/*
 * Features are what the code may contain, not only what it was written for:
 * each ISA list is compiled with a fixed set of -m flags (src/meson.build)
 * that the compiler may use anywhere in those files, so an entry requires
 * every one of them.
 */
#define NEED_AVX512 (CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL | \
		     CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define NEED_AVX2 (CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)

static const struct cn_bswap_impl bswap_table[] = {
#if defined(__x86_64__)
	{ "avx512", NEED_AVX512, cn_bswap16_avx512, cn_bswap32_avx512 },
	{ "avx2", NEED_AVX2, cn_bswap16_avx2, cn_bswap32_avx2 },
#elif defined(CN_NEON)
	{ "neon", CN_CPU_NEON, cn_bswap16_neon, cn_bswap32_neon },
#endif
	{ "generic", 0, cn_bswap16_generic, cn_bswap32_generic },
};

static const struct cn_pes_impl pes_table[] = {
#if defined(__x86_64__)
	{ "avx512", NEED_AVX512, cn_pes_avx512 },
	{ "avx2", NEED_AVX2, cn_pes_avx2 },
#elif defined(CN_NEON)
	{ "neon", CN_CPU_NEON, cn_pes_neon },
#endif
	{ "generic", 0, cn_pes_generic },
};

#define N_BSWAP (sizeof(bswap_table) / sizeof(bswap_table[0]))
#define N_PES (sizeof(pes_table) / sizeof(pes_table[0]))
CN_IMPL_LAYOUT_CHECK(struct cn_bswap_impl);
CN_IMPL_LAYOUT_CHECK(struct cn_pes_impl);

static void bswap16_resolve(void *dst, const void *src, size_t len);
static void bswap32_resolve(void *dst, const void *src, size_t len);
static void pes_resolve(void *dst, const void *src, size_t len);

/* The state every call reads, in one cache line. */
static struct {
	cn_bswap_fn bswap16, bswap32;
	cn_pes_fn pes;
	const struct cn_bswap_impl *bswap_impl;
	const struct cn_pes_impl *pes_impl;
} disp __attribute__((aligned(CN_CACHE_LINE))) = {
	bswap16_resolve, bswap32_resolve, pes_resolve, NULL, NULL,
};

static const struct cn_bswap_impl *select_bswap(void)
{
	const struct cn_bswap_impl *im = cn__impl_best(bswap_table, N_BSWAP, sizeof(bswap_table[0]));

	__atomic_store_n(&disp.bswap16, im->bswap16, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.bswap32, im->bswap32, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.bswap_impl, im, __ATOMIC_RELAXED);
	return im;
}

static const struct cn_pes_impl *select_pes(void)
{
	const struct cn_pes_impl *im = cn__impl_best(pes_table, N_PES, sizeof(pes_table[0]));

	__atomic_store_n(&disp.pes, im->pes, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.pes_impl, im, __ATOMIC_RELAXED);
	return im;
}

__attribute__((constructor)) static void copy_init(void)
{
	select_bswap();
	select_pes();
}

static void bswap16_resolve(void *dst, const void *src, size_t len)
{
	select_bswap()->bswap16(dst, src, len);
}

static void bswap32_resolve(void *dst, const void *src, size_t len)
{
	select_bswap()->bswap32(dst, src, len);
}

static void pes_resolve(void *dst, const void *src, size_t len)
{
	select_pes()->pes(dst, src, len);
}

void cn_bswap16(void *dst, const void *src, size_t len)
{
	CN_COPY_CHECK_ARGS(dst, src, len, "cn_bswap16");
	__atomic_load_n(&disp.bswap16, __ATOMIC_RELAXED)(dst, src, len);
}

void cn_bswap32(void *dst, const void *src, size_t len)
{
	CN_COPY_CHECK_ARGS(dst, src, len, "cn_bswap32");
	__atomic_load_n(&disp.bswap32, __ATOMIC_RELAXED)(dst, src, len);
}

void cn_pes(void *dst, const void *src, size_t len)
{
	CN_COPY_CHECK_ARGS(dst, src, len, "cn_pes");
	__atomic_load_n(&disp.pes, __ATOMIC_RELAXED)(dst, src, len);
}

CN_IMPL_TABLE_API(cn_bswap, struct cn_bswap_impl, bswap_table)

const char *cn_bswap_impl_name(void)
{
	const struct cn_bswap_impl *im = __atomic_load_n(&disp.bswap_impl, __ATOMIC_RELAXED);

	return (im ? im : select_bswap())->name;
}

CN_IMPL_TABLE_API(cn_pes, struct cn_pes_impl, pes_table)

const char *cn_pes_impl_name(void)
{
	const struct cn_pes_impl *im = __atomic_load_n(&disp.pes_impl, __ATOMIC_RELAXED);

	return (im ? im : select_pes())->name;
}
