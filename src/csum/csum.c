/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Dispatch: a best-first table of variants, the first one whose CPU features
 * cn_cpu_has() reports (CPUID + XCR0 - CACHENET_CPU_DISABLE) wins. Chosen
 * by a constructor, and again lazily if a call arrives first (another
 * library's constructor may run before ours): the entry points start out
 * pointing at resolvers. Racing selections compute the same answer, and
 * every mix of old and new pointer/threshold values still returns the right
 * sum, so relaxed atomics suffice.
 *
 * Small inputs go straight to the generic kernel, inlined, before the
 * indirect call: for short buffers a vector kernel's setup (masks, head and
 * tail) and final reduction of its lanes cost more instructions than the
 * whole add-with-carry loop. The loop has the longer dependency chain,
 * though, so the thresholds (below) balance throughput against latency.
 */
#define CN__CSUM_DISPATCH_BUILD /* csum.h: declare cn_csum_partial, do not inline it */
#include "csum_impl.h"

#include "cachenet/cpu.h"
#include "../cpu/dispatch.h"

#include <string.h>

static const struct cn_csum_impl impl_table[] = {
#if defined(__x86_64__)
	/*
	 * Features: what the code may contain, not only what it was written
	 * for. src/meson.build compiles each ISA list with a set of -m flags,
	 * and the compiler uses them on its own (gcc emits vextracti64x2, an
	 * AVX512DQ+VL instruction, for a 256->128 extract; shlx/rorx for
	 * shifts), so the masks name AVX512DQ/VL, AVX2 and BMI2 as well.
	 * (The AVX-512 list is also compiled with -mavx512vbmi -mvaes
	 * -mvpclmulqdq; nothing in csum_avx512.c gives the compiler a reason to
	 * use those, checked with objdump, so they are not required here.)
	 *
	 * Small-input thresholds (inclusive): at and below them the dispatcher
	 * runs the generic add-with-carry loop instead: ~96 B for AVX-512
	 * partial sums, ~48 B for its copies, ~224 B and ~160 B for AVX2
	 * (docs/performance.md, Checksum, "Small-input thresholds").
	 */
	/*
	 * VNNI: partial sums from 4096 bytes up only (below, the next entry,
	 * avx512, takes them); its copy is avx512's. From DRAM it runs at the
	 * bare load loop's speed where avx512 is 10-16% slower; on hot data
	 * it is 5-10% slower than avx512 (csum_avx512vnni.c has the figures).
	 * 4 KB is where a checksummed buffer stops being likely to sit in L1:
	 * a whole jumbo frame, a socket-buffer chunk, a file page.
	 */
	{ "avx512vnni",
	  CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL |
		  CN_CPU_AVX512VNNI | CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2,
	  cn_csum_partial_avx512vnni, cn_csum_copy_avx512, 95, 47, 4096 },
	{ "avx512",
	  CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL |
		  CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2,
	  cn_csum_partial_avx512, cn_csum_copy_avx512, 95, 47, 0 },
	{ "avx2", CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2,
	  cn_csum_partial_avx2, cn_csum_copy_avx2, 223, 159, 0 },
#elif defined(CN_NEON)
	/* No thresholds: nothing measured on ARM (csum_neon.c). */
	{ "neon", CN_CPU_NEON, cn_csum_partial_neon, cn_csum_copy_neon, 0, 0, 0 },
#endif
	{ "generic", 0, cn_csum_partial_generic, cn_csum_copy_generic, 0, 0, 0 },
};

#define N_IMPLS (sizeof(impl_table) / sizeof(impl_table[0]))
CN_IMPL_LAYOUT_CHECK(struct cn_csum_impl);

static uint32_t partial_resolve(const void *buf, size_t len, uint32_t sum);
static uint32_t copy_resolve(void *restrict dst, const void *restrict src, size_t len,
			     uint32_t sum);

/*
 * The state every call reads, in one cache line. Partial sums of n bytes go
 * to the inlined generic loop when n <= partial_small_max, to partial_mid
 * when n < partial_min, else to partial. (partial_min starts at 0 so that
 * the first call reaches the resolver.)
 */
static struct {
	cn_csum_partial_fn partial;
	size_t partial_small_max;
	cn_csum_partial_fn partial_mid;
	size_t partial_min;
	cn_csum_copy_fn copy;
	size_t copy_small_max;
	const struct cn_csum_impl *impl;
	bool small_adx; /* the small inputs' loop uses ADX (x86-64 with ADX) */
} disp __attribute__((aligned(CN_CACHE_LINE))) = {
	partial_resolve, 0, partial_resolve, 0, copy_resolve, 0, NULL, false,
};

static const struct cn_csum_impl *select_impl(void)
{
	const struct cn_csum_impl *im = cn__impl_best(impl_table, N_IMPLS, sizeof(impl_table[0]));
	const struct cn_csum_impl *mid = im;

	if (im->partial_min) {
		/* The runnable variant after im takes the inputs below its
		 * partial_min; "generic" always runs, so there is one. */
		/* one spare entry: where the table has only "generic" (not
		 * x86-64), gcc would warn of list[1] past a 1-entry array */
		const struct cn_csum_impl *list[N_IMPLS + 1];
		size_t n = cn__impl_list(impl_table, N_IMPLS, sizeof(impl_table[0]),
					 (const void **)list, N_IMPLS);
		if (n > 1)
			mid = list[1];
	}
#ifdef CN_CSUM_ADC
	__atomic_store_n(&disp.small_adx, cn_cpu_has(CN_CPU_ADX), __ATOMIC_RELAXED);
#endif
	__atomic_store_n(&disp.partial_small_max, im->partial_small_max, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.copy_small_max, im->copy_small_max, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.partial_mid, mid->partial, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.partial_min, im->partial_min, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.partial, im->partial, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.copy, im->copy, __ATOMIC_RELAXED);
	__atomic_store_n(&disp.impl, im, __ATOMIC_RELAXED);
	return im;
}

__attribute__((constructor)) static void csum_init(void)
{
	select_impl();
}

static uint32_t partial_resolve(const void *buf, size_t len, uint32_t sum)
{
	return select_impl()->partial(buf, len, sum);
}

static uint32_t copy_resolve(void *restrict dst, const void *restrict src, size_t len,
			     uint32_t sum)
{
	return select_impl()->copy(dst, src, len, sum);
}

uint32_t cn_csum_partial_dispatch(const void *buf, size_t len, uint32_t sum)
{
	/* The generic kernel inlined rather than called: in the shared
	 * library a call to the exported cn_csum_partial_generic would go
	 * through the PLT. */
	if (len <= __atomic_load_n(&disp.partial_small_max, __ATOMIC_RELAXED)) {
#ifdef CN_CSUM_ADC
		if (__atomic_load_n(&disp.small_adx, __ATOMIC_RELAXED))
			return cn__csum_fold32(cn__csum_adx((const unsigned char *)buf, len, sum));
#endif
		return cn__csum_fold32(cn__csum_scalar((const unsigned char *)buf, len, sum));
	}
	if (len < __atomic_load_n(&disp.partial_min, __ATOMIC_RELAXED))
		return __atomic_load_n(&disp.partial_mid, __ATOMIC_RELAXED)(buf, len, sum);
	return __atomic_load_n(&disp.partial, __ATOMIC_RELAXED)(buf, len, sum);
}

uint32_t cn_csum_partial(const void *buf, size_t len, uint32_t sum)
	__attribute__((alias("cn_csum_partial_dispatch")));

uint32_t cn_csum_copy(void *restrict dst, const void *restrict src, size_t len, uint32_t sum)
{
	CN_ASSERT(len == 0 || (uintptr_t)dst + len <= (uintptr_t)src ||
		       (uintptr_t)src + len <= (uintptr_t)dst,
		       "cn_csum_copy: source and destination overlap");
	if (len <= __atomic_load_n(&disp.copy_small_max, __ATOMIC_RELAXED))
		return cn__csum_fold32(cn__csum_copy_scalar((unsigned char *)dst,
							    (const unsigned char *)src, len, sum));
	return __atomic_load_n(&disp.copy, __ATOMIC_RELAXED)(dst, src, len, sum);
}

CN_IMPL_TABLE_API(cn_csum, struct cn_csum_impl, impl_table)

const char *cn_csum_impl_name(void)
{
	const struct cn_csum_impl *im = __atomic_load_n(&disp.impl, __ATOMIC_RELAXED);

	if (!im)
		im = select_impl();
	return im->name;
}
