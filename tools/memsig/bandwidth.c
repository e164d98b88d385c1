/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Read and write bandwidth kernels. Inside L1 and L2 the bandwidth is set by
 * how many bytes each load or store instruction moves (two or three memory
 * operations per core cycle on current x86 cores), so a scalar loop would
 * measure the instruction width, not the cache. The widest vectors the CPU
 * and OS allow are used, picked once with cn_cpu_has() (which also honours
 * CACHENET_CPU_DISABLE). Several independent accumulators keep the adds
 * off the critical path: one add chain would cap reads at one vector per
 * add latency.
 *
 * Copy is glibc's memcpy, what programs actually call; note that glibc
 * switches to non-temporal stores above a size derived from the LLC size,
 * so large copies do not read the destination for ownership.
 */
#include "memsig.h"

#include "cachenet/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MS_X86 1
#endif

const char *const ms_bw_op_name[MS_NOPS] = { "read", "write", "copy" };

static uint64_t read_generic(const void *buf, size_t bytes)
{
	const uint64_t *p = buf;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;

	for (size_t i = 0; i < bytes / 8; i += 4) {
		a0 += p[i];
		a1 += p[i + 1];
		a2 += p[i + 2];
		a3 += p[i + 3];
	}
	return a0 + a1 + a2 + a3;
}

static void write_generic(void *buf, size_t bytes, uint64_t pattern)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < bytes / 8; i++)
		p[i] = pattern;
}

#ifdef MS_X86
__attribute__((target("avx2")))
static uint64_t read_avx2(const void *buf, size_t bytes)
{
	const __m256i *p = buf;
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;

	for (size_t i = 0; i < bytes / 32; i += 8) {
		a0 = _mm256_add_epi64(a0, _mm256_load_si256(p + i));
		a1 = _mm256_add_epi64(a1, _mm256_load_si256(p + i + 1));
		a2 = _mm256_add_epi64(a2, _mm256_load_si256(p + i + 2));
		a3 = _mm256_add_epi64(a3, _mm256_load_si256(p + i + 3));
		a0 = _mm256_add_epi64(a0, _mm256_load_si256(p + i + 4));
		a1 = _mm256_add_epi64(a1, _mm256_load_si256(p + i + 5));
		a2 = _mm256_add_epi64(a2, _mm256_load_si256(p + i + 6));
		a3 = _mm256_add_epi64(a3, _mm256_load_si256(p + i + 7));
	}
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));

	uint64_t w[4];

	_mm256_storeu_si256((__m256i *)w, a0);
	return w[0] + w[1] + w[2] + w[3];
}

__attribute__((target("avx2")))
static void write_avx2(void *buf, size_t bytes, uint64_t pattern)
{
	__m256i *p = buf;
	__m256i v = _mm256_set1_epi64x((long long)pattern);

	for (size_t i = 0; i < bytes / 32; i += 4) {
		_mm256_store_si256(p + i, v);
		_mm256_store_si256(p + i + 1, v);
		_mm256_store_si256(p + i + 2, v);
		_mm256_store_si256(p + i + 3, v);
	}
}

__attribute__((target("avx512f")))
static uint64_t read_avx512(const void *buf, size_t bytes)
{
	const __m512i *p = buf;
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;

	for (size_t i = 0; i < bytes / 64; i += 4) {
		a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i));
		a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 1));
		a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 2));
		a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 3));
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));

	/* Summed as unsigned: _mm512_reduce_add_epi64 adds signed long longs
	 * in C in GCC's header, and the sum of arbitrary words may wrap. */
	uint64_t w[8], sum = 0;

	_mm512_storeu_si512((void *)w, a0);
	for (unsigned i = 0; i < 8; i++)
		sum += w[i];
	return sum;
}

__attribute__((target("avx512f")))
static void write_avx512(void *buf, size_t bytes, uint64_t pattern)
{
	__m512i *p = buf;
	__m512i v = _mm512_set1_epi64((long long)pattern);

	for (size_t i = 0; i < bytes / 64; i += 4) {
		_mm512_store_si512(p + i, v);
		_mm512_store_si512(p + i + 1, v);
		_mm512_store_si512(p + i + 2, v);
		_mm512_store_si512(p + i + 3, v);
	}
}
#endif

static const struct {
	uint64_t (*read)(const void *, size_t);
	void (*write)(void *, size_t, uint64_t);
	uint64_t needs;
	const char *name;
} kernels[] = {
#ifdef MS_X86
	{ read_avx512, write_avx512, CN_CPU_AVX512F, "avx512" },
	{ read_avx2, write_avx2, CN_CPU_AVX2, "avx2" },
#endif
	{ read_generic, write_generic, 0, "generic" },
};

static unsigned pick(void)
{
	static int chosen = -1;

	if (chosen < 0) {
		unsigned i = 0;

		while (kernels[i].needs && !cn_cpu_has(kernels[i].needs))
			i++;
		chosen = (int)i;
	}
	return (unsigned)chosen;
}

const char *ms_bw_kernel(void)
{
	return kernels[pick()].name;
}

uint64_t ms_bw_read(const void *buf, size_t bytes)
{
	return kernels[pick()].read(buf, bytes);
}

void ms_bw_write(void *buf, size_t bytes, uint64_t pattern)
{
	kernels[pick()].write(buf, bytes, pattern);
}
