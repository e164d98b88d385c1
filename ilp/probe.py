#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Core throughput and latency probe for ilp/model.py's overlap form.

Compiles a small C program (the C compiler in $CC, else cc) whose loops
time, in instructions per TSC tick (best of 200 samples of 20000
iterations; run it pinned, e.g. `taskset -c 0`), on this core:

  dep_add     a chain of dependent adds (latency 1 on every x86 core since
              the P6): core cycles per TSC tick, the clock
  int_add     independent adds on 8 registers: scalar ALU throughput
  int_load    independent 64-bit loads from L1
  int_store   independent 64-bit stores to L1
  mem_mix     three independent 64-bit loads and a store per group, to four
              L1 words: loads and stores per tick together. The loads
              alone run 4 a cycle and the stores 2, the mix 4 (on the
              development machine): the memory pipes are shared (model.py memops)
  st_fwd      store then reload of the same word, chained: store-to-load
              round trips per tick (a spilled state word on a recurrence)
  mix_issue   8 scalar adds and 8 vector adds, all independent: the issue
              (dispatch) width when no single port class is the limit
  dep_vec     a chain of dependent vpxorq zmm (AVX-512 only): dep_add /
              dep_vec is the vector ALU's latency in core cycles (2 on
              the development machine: twice the scalar add's)
  dep_tern    a chain of vpternlogd zmm through a source operand, not the
              destination (AVX-512 only): 3 cycles an instruction on the
              development machine, where through the destination (which it
              also reads) it is dep_vec's 2
  vec_add     independent vpaddq zmm (AVX-512 only)
  vec_shuf    independent vpshufb zmm (AVX-512 only)
  vec_load    independent 64-byte loads from L1 (AVX-512 only)
  vec_store   independent 64-byte stores to L1 (AVX-512 only)
  st_fwd_vec  st_fwd for a zmm register, chained (AVX-512 only): a
              spilled vector state word's round trip (11 core cycles on
              the development machine, where the 64-bit word's is 0.5: the
              core renames that one through memory)
  ld_lat      dependent 64-bit loads from L1 (pointer chase): loads per
              tick, i.e. the inverse of the load-to-use latency
  win_int_L / win_vec_L
              the out-of-order window: iterations per tick of a loop whose
              iterations are independent but each is one dependent chain
              (load a word / a zmm from L1, L dependent adds / vpxorq on
              it, store it), L = 16, 32, 64, 128, 256, 512 (the last two
              for chains as long as a flushed line's latency). A core with an unbounded
              window would overlap the chains and run at its issue rate;
              a real one holds only so many waiting instructions, and
              each chain keeps its iteration's instructions in flight for
              its whole latency, so a long chain caps the iterations per
              cycle at window / (chain latency x instructions per
              iteration) (Little's law). model.py derives the window from
              these (Core.window).
  cold_lat_S, cold_seqlat_S
              TSC ticks per line of a dependent pointer chase through the
              same flushed buffers (prepared as cold_read_S): in a
              scrambled line order within each buffer (cold_lat: the raw
              latency of a flushed line, the prefetchers cannot guess the
              next line), and in address order (cold_seqlat: one line in
              flight at a time, the hardware prefetchers running ahead of
              a sequential stream). model.py's lines-in-flight term.
  cold_read_S, cold_copy_S
              bytes per tick streaming through buffers of S bytes (the
              benchmark's sizes, --sizes) flushed from every cache level
              (clflush) the way bench_ilp.cc prepares its "cold" state
              (32 buffer pairs back to back for S <= 8 KB, else one): the
              sources read, or read while the
              flushed destinations are written (copy), one 64-byte
              AVX-512 load (store) per line where the CPU has it, like
              the generated AVX-512 kernels. The median of 101
              flush-then-time runs. For model.py's cold buffers: memsig's
              64 MB stream pays TLB misses and a prefetch ramp a 64 KB
              buffer does not, and one DRAM latency per 1460-byte stream
              is not what 23 flushed lines cost; this is the rate at the
              benchmark's size and state, first misses included.

  warm_rmw_S, warm_copy_S
              bytes per tick through a warm buffer of S bytes, S > 8 KB
              (AVX-512 only): bench_ilp.cc's "hot" state at 64 KB, where
              the buffers sit in L2. Passes back to back, the median of
              101: in place (each line loaded and stored back: warm_rmw)
              and copied to a second buffer (warm_copy). model.py's rate
              of a loop that reads and writes at L2 at that size: an
              in-place pass reads and writes in parallel (on the
              development machine 0.0135 ticks per byte at 64 KB, where memsig's
              L2 read and write rates at 256 KB, added, make 0.0228).

  cold_pass1_S, cold_pass2_S, cold_pass3_S, cold_passr_S,
  cold_cpass1_S, cold_cpass2_S, cold_cpass3_S, warm_pass_S
              in-place passes over the flushed buffers cold_read_S
              prepares (32 calls in a row at 1460 B), TSC ticks per 64-byte line of
              a call: one rmw pass (load, change, store back; pass1), what
              a second and a third add (pass2, pass3: per line they
              store), a load-only pass after one rmw pass (passr); a copy
              into a flushed destination (cpass1) and the first and second
              rmw pass over that destination after it (cpass2, cpass3);
              warm_pass: a later rmw pass over the same buffers not
              flushed. On the development machine at 1460 B a later pass
              costs 5.5-6.5 (second) and 9-10.5 (third) ticks a line,
              against 0.4-0.8 warm: the memory latency's share per store
              the README's cold rows describe; at 64 KB nothing (0.7-0.9,
              warm 0.8-0.9). model.py charges a flushed sequential call's
              later passes that store the difference (later_pass_extra()).
              The 64-bit form (8 loads, bswaps, stores a line, as the
              scalar kernels) under the same names with the prefix
              "scalar_"; run after the other probes.

Without AVX-512 (cpuid) the vector probes are left out and mix_issue uses
scalar adds only. Prints JSON {name: per-tick rate, ..., "avx512": 0|1}
to stdout (or --json FILE). Standard library only; x86-64 only.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

PROBE_C = r"""
#include <stdint.h>
#include <stdio.h>

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

#include <stdlib.h>
#include <string.h>
#include <emmintrin.h>

#define R4(x) x x x x
#define R8(x) R4(x) R4(x)
#define R16(x) R4(x) R4(x) R4(x) R4(x)
static unsigned char buf[4096] __attribute__((aligned(64)));

/* ops instructions per iteration of body; prints ops per TSC tick */
#define PROBE(name, ops, body, ...) do { \
	uint64_t best = ~0ull; \
	for (int r = 0; r < 200; r++) { \
		uint64_t t0 = tsc(); \
		for (long i = 0; i < 20000; i++) \
			__asm__ volatile(body __VA_ARGS__); \
		uint64_t t = tsc() - t0; \
		if (t < best) \
			best = t; \
	} \
	printf("\"%s\": %.4f,\n", name, 20000.0 * (ops) / (double)best); \
} while (0)

/* One flush-then-time run per sample, the median of NCOLD, prepared as
 * bench_ilp.cc's "cold" state: nb buffer pairs of S bytes (32 for S <= 8
 * KB, else 1), every line flushed, then the nb sources read back to back,
 * or read while the nb destinations are written (copy), with 64-byte
 * AVX-512 loads and stores where the CPU has them (else 16-byte SSE2 ones,
 * four sums). Bytes per tick. */
#define NCOLD 101
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void flush(const unsigned char *p, size_t n)
{
	for (size_t o = 0; o < n; o += 64)
		__asm__ volatile("clflush %0" :: "m"(p[o]));
	__asm__ volatile("mfence" ::: "memory");
}

static uint64_t cold_sink;

static void cold(size_t size, int wide)
{
	int nb = size <= 8192 ? 32 : 1;
	size_t stride = (size + 4095 + 2048) & ~(size_t)4095;
	unsigned char *a = aligned_alloc(4096, stride * nb), *b = aligned_alloc(4096, stride * nb);
	size_t n = size & ~(size_t)63;
	uint64_t t[2][NCOLD];

	memset(a, 1, stride * nb);
	memset(b, 2, stride * nb);
	for (int r = 0; r < NCOLD; r++) {
		for (int w = 0; w < 2; w++) {
			for (int k = 0; k < nb; k++) {
				flush(a + k * stride, size);
				flush(b + k * stride + 2048, size);
			}
			__m128i s0 = _mm_setzero_si128(), s1 = s0, s2 = s0, s3 = s0;
			uint64_t t0 = tsc();
			for (int k = 0; k < nb; k++) {
				const unsigned char *src = a + k * stride;
				unsigned char *dst = b + k * stride + 2048;
				if (wide) {
					/* AVX-512: one 64-byte load (and store) per line,
					 * as the generated AVX-512 kernels do */
					for (size_t o = 0; o < n; o += 64) {
						if (w)
							__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
									 "vpaddq %%zmm0,%%zmm1,%%zmm1\n\t"
									 "vmovdqu64 %%zmm0,(%1)"
									 :: "r"(src + o), "r"(dst + o)
									 : "xmm0", "xmm1", "memory");
						else
							__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
									 "vpaddq %%zmm0,%%zmm1,%%zmm1"
									 :: "r"(src + o) : "xmm0", "xmm1", "memory");
					}
					continue;
				}
				for (size_t o = 0; o < n; o += 64) {
					__m128i v0 = _mm_load_si128((const __m128i *)(const void *)(src + o));
					__m128i v1 = _mm_load_si128((const __m128i *)(const void *)(src + o + 16));
					__m128i v2 = _mm_load_si128((const __m128i *)(const void *)(src + o + 32));
					__m128i v3 = _mm_load_si128((const __m128i *)(const void *)(src + o + 48));
					s0 = _mm_add_epi64(s0, v0);
					s1 = _mm_add_epi64(s1, v1);
					s2 = _mm_add_epi64(s2, v2);
					s3 = _mm_add_epi64(s3, v3);
					if (w) {
						_mm_storeu_si128((__m128i *)(void *)(dst + o), v0);
						_mm_storeu_si128((__m128i *)(void *)(dst + o + 16), v1);
						_mm_storeu_si128((__m128i *)(void *)(dst + o + 32), v2);
						_mm_storeu_si128((__m128i *)(void *)(dst + o + 48), v3);
					}
				}
			}
			s0 = _mm_add_epi64(_mm_add_epi64(s0, s1), _mm_add_epi64(s2, s3));
			__asm__ volatile("" :: "x"(s0) : "memory");
			t[w][r] = tsc() - t0;
			cold_sink += (uint64_t)_mm_cvtsi128_si64(s0);
		}
	}
	qsort(t[0], NCOLD, 8, cmp_u64);
	qsort(t[1], NCOLD, 8, cmp_u64);
	printf("\"cold_read_%zu\": %.4f,\n", size, (double)n * nb / t[0][NCOLD / 2]);
	printf("\"cold_copy_%zu\": %.4f,\n", size, (double)n * nb / t[1][NCOLD / 2]);
	free(a);
	free(b);
}

/* In-place passes over the flushed buffers cold() prepares (nb of S
 * bytes, every line flushed, the median of NCOLD flush-then-time runs of
 * the nb calls back to back), as a sequential kernel makes them on a cold
 * call: each rmw pass loads every line, changes it and stores it back (one
 * 64-byte AVX-512 load and store per line where the CPU has it, else eight
 * 64-bit loads, bswaps and stores: the generated scalar kernels' words);
 * "sum": a load-only pass. Ticks per line (64 bytes) of a call of one,
 * two and three rmw passes (t1, t2, t3) and of one rmw pass then a sum
 * (ts): cold_pass2_S = t2 - t1 and cold_pass3_S = t3 - t2, what the
 * second and third pass cost per 64-byte line they store;
 * cold_passr_S = ts - t1, a load-only pass after the rmw one. The same
 * with the buffers left warm (not flushed between runs): warm_pass_S =
 * (t3 - t1) / 2, what a later pass costs when the lines are cached.
 * The keys of the 64-bit form carry the prefix "scalar_" (measured with
 * or without AVX-512). */
static void rmw_pass(unsigned char *p, size_t n, int wide)
{
	if (wide)
		for (size_t o = 0; o < n; o += 64)
			__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
					 "vpaddq %%zmm0,%%zmm1,%%zmm0\n\t"
					 "vmovdqu64 %%zmm0,(%0)"
					 :: "r"(p + o) : "xmm0", "memory");
	else
		for (size_t o = 0; o < n; o += 8)
			__asm__ volatile("mov (%0),%%rax\n\t"
					 "bswap %%rax\n\t"
					 "mov %%rax,(%0)"
					 :: "r"(p + o) : "rax", "memory");
}

static void sum_pass(const unsigned char *p, size_t n, int wide)
{
	if (wide)
		for (size_t o = 0; o < n; o += 64)
			__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
					 "vpaddq %%zmm0,%%zmm1,%%zmm1"
					 :: "r"(p + o) : "xmm0", "xmm1", "memory");
	else
		for (size_t o = 0; o < n; o += 8)
			__asm__ volatile("add (%0),%%rdx" :: "r"(p + o) : "rdx", "memory");
}

static void copy_pass(const unsigned char *src, unsigned char *dst, size_t n, int wide)
{
	if (wide)
		for (size_t o = 0; o < n; o += 64)
			__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
					 "vmovdqu64 %%zmm0,(%1)"
					 :: "r"(src + o), "r"(dst + o) : "xmm0", "memory");
	else
		for (size_t o = 0; o < n; o += 8)
			__asm__ volatile("mov (%0),%%rax\n\t"
					 "mov %%rax,(%1)"
					 :: "r"(src + o), "r"(dst + o) : "rax", "memory");
}

static void cold_passes(size_t size, int wide)
{
	/* the calls: {copy first, rmw passes, a sum after} */
	static const int var[7][3] = {
		{ 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 }, { 0, 1, 1 },
		{ 1, 0, 0 }, { 1, 1, 0 }, { 1, 2, 0 },
	};
	enum { NV = 7 };
	int nb = size <= 8192 ? 32 : 1;
	size_t stride = (size + 4095 + 2048) & ~(size_t)4095;
	unsigned char *a = aligned_alloc(4096, stride * nb), *b = aligned_alloc(4096, stride * nb);
	size_t n = size & ~(size_t)63;
	double per = (double)(n / 64) * nb, m[2][NV];
	static uint64_t t[NV][NCOLD];
	const char *pre = wide ? "" : "scalar_";

	memset(a, 3, stride * nb);
	memset(b, 4, stride * nb);
	for (int fl = 0; fl < 2; fl++) {
		for (int r = -1; r < NCOLD; r++)
			for (int v = 0; v < NV; v++) {
				if (fl)
					for (int k = 0; k < nb; k++) {
						flush(a + k * stride, size);
						flush(b + k * stride + 2048, size);
					}
				uint64_t t0 = tsc();
				for (int k = 0; k < nb; k++) {
					unsigned char *p = a + k * stride;
					if (var[v][0]) {
						copy_pass(p, b + k * stride + 2048, n, wide);
						p = b + k * stride + 2048;
					}
					for (int q = 0; q < var[v][1]; q++)
						rmw_pass(p, n, wide);
					if (var[v][2])
						sum_pass(p, n, wide);
				}
				if (r >= 0)
					t[v][r] = tsc() - t0;
			}
		for (int v = 0; v < NV; v++) {
			qsort(t[v], NCOLD, 8, cmp_u64);
			m[fl][v] = (double)t[v][NCOLD / 2] / per;
		}
	}
	printf("\"%scold_pass1_%zu\": %.4f,\n", pre, size, m[1][0]);
	printf("\"%scold_pass2_%zu\": %.4f,\n", pre, size, m[1][1] - m[1][0]);
	printf("\"%scold_pass3_%zu\": %.4f,\n", pre, size, m[1][2] - m[1][1]);
	printf("\"%scold_passr_%zu\": %.4f,\n", pre, size, m[1][3] - m[1][0]);
	printf("\"%scold_cpass1_%zu\": %.4f,\n", pre, size, m[1][4]);
	printf("\"%scold_cpass2_%zu\": %.4f,\n", pre, size, m[1][5] - m[1][4]);
	printf("\"%scold_cpass3_%zu\": %.4f,\n", pre, size, m[1][6] - m[1][5]);
	printf("\"%swarm_pass_%zu\": %.4f,\n", pre, size, (m[0][2] - m[0][0]) / 2);
	free(a);
	free(b);
}

/* Load-to-use latency of a flushed line, in the state cold() prepares:
 * a pointer chase through the nb flushed buffers' whole lines, buffer
 * after buffer, every load's address the previous load's result, so one
 * line is in flight at a time. seq: the lines of each buffer in address
 * order (what a streaming kernel asks for, the prefetchers see a
 * sequential stream); otherwise in a fixed scrambled order (odd stride
 * modulo the line count), the raw flushed latency. TSC ticks per line,
 * the median of NCOLD flush-then-time runs. */
static void cold_chase(size_t size, int seq)
{
	int nb = size <= 8192 ? 32 : 1;
	size_t stride = (size + 4095 + 2048) & ~(size_t)4095;
	size_t lines = size / 64, step = 1;
	unsigned char *a = aligned_alloc(4096, stride * nb);
	void **prev = NULL, *first = NULL;
	uint64_t t[NCOLD];

	memset(a, 0, stride * nb);
	if (!seq) /* an odd step coprime to the line count: every line once */
		for (step = lines / 2 + 1; step > 1; step++) {
			size_t x = step, y = lines;
			while (y) { size_t r = x % y; x = y; y = r; }
			if (x == 1)
				break;
		}
	for (int k = 0; k < nb; k++)
		for (size_t i = 0; i < lines; i++) {
			void **q = (void **)(void *)(a + k * stride + (i * step % lines) * 64);
			if (prev)
				*prev = q;
			else
				first = q;
			prev = q;
		}
	*prev = NULL;
	for (int r = 0; r < NCOLD; r++) {
		for (int k = 0; k < nb; k++)
			flush(a + k * stride, size);
		void *q = first;
		uint64_t t0 = tsc();
		while (q)
			q = *(void **)q;
		t[r] = tsc() - t0;
		cold_sink += (uintptr_t)q;
	}
	qsort(t, NCOLD, 8, cmp_u64);
	printf("\"cold_%slat_%zu\": %.4f,\n", seq ? "seq" : "", size,
	       (double)t[NCOLD / 2] / (double)(lines * nb));
	free(a);
}

/* L dependent adds (vpxorq) on a word (zmm) loaded fresh every iteration
 * from one of 64 L1 lines, stored back: iterations independent, each one
 * chain of L + 2 latencies. */
#define WIN_INT(L) PROBE("win_int_" #L, 1, \
	"mov (%1,%0),%%rax\n\t.rept " #L "\n\tadd %%rdx,%%rax\n\t.endr\n\t" \
	"mov %%rax,(%1,%0)\n\tadd $64,%0\n\tand $4032,%0\n\t", \
	: "+r"(idx) : "r"(p) : "rax", "memory")
#define WIN_VEC(L) PROBE("win_vec_" #L, 1, \
	"vmovdqu64 (%1,%0),%%zmm0\n\t.rept " #L "\n\tvpxorq %%zmm16,%%zmm0,%%zmm0\n\t.endr\n\t" \
	"vmovdqu64 %%zmm0,(%1,%0)\n\tadd $64,%0\n\tand $4032,%0\n\t", \
	: "+r"(idx) : "r"(p) : "xmm0", "memory")

#define ADD8 "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\t" \
	     "add $1,%4\n\tadd $1,%5\n\tadd $1,%6\n\tadd $1,%7\n\t"
#define VADD(k) "vpaddq %%zmm16,%%zmm" #k ",%%zmm" #k "\n\t"
#define VSHUF(k) "vpshufb %%zmm16,%%zmm" #k ",%%zmm" #k "\n\t"
#define VADD8 VADD(0) VADD(1) VADD(2) VADD(3) VADD(4) VADD(5) VADD(6) VADD(7)
#define ZCLOB "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7"

/* A buffer of S bytes left warm, as bench_ilp.cc's "hot" state at a size
 * whose buffers exceed L1 (64 KB: in L2): passes over it back to back, the
 * median of NCOLD, bytes per tick. In place (warm_rmw_S: each line loaded
 * and stored back, as the in-place kernels do) and copied to a second
 * buffer (warm_copy_S). One 64-byte load and store per line (AVX-512). */
static void warm(size_t size)
{
	size_t n = size & ~(size_t)63;
	unsigned char *a = aligned_alloc(4096, n + 4096), *b = aligned_alloc(4096, n + 4096);
	uint64_t t[2][NCOLD];

	memset(a, 1, n + 4096);
	memset(b, 2, n + 4096);
	for (int r = -1; r < NCOLD; r++) {
		for (int w = 0; w < 2; w++) {
			unsigned char *dst = w ? b + 2048 : a;
			uint64_t t0 = tsc();
			for (size_t o = 0; o < n; o += 64)
				/* no accumulator: a chain of vpaddq (2 cycles) per
				 * line would bound the pass, not the cache */
				__asm__ volatile("vmovdqu64 (%0),%%zmm0\n\t"
						 "vmovdqu64 %%zmm0,(%1)"
						 :: "r"(a + o), "r"(dst + o)
						 : "xmm0", "memory");
			if (r >= 0)
				t[w][r] = tsc() - t0;
		}
	}
	qsort(t[0], NCOLD, 8, cmp_u64);
	qsort(t[1], NCOLD, 8, cmp_u64);
	printf("\"warm_rmw_%zu\": %.4f,\n", size, (double)n / t[0][NCOLD / 2]);
	printf("\"warm_copy_%zu\": %.4f,\n", size, (double)n / t[1][NCOLD / 2]);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
	void *p = buf;

	__builtin_cpu_init();
	int avx512 = !!__builtin_cpu_supports("avx512f");
	printf("{\n");
	PROBE("dep_add", 16, R16("add $1,%0\n\t"), : "+r"(a));
	PROBE("int_add", 32, R4(ADD8),
	      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
	PROBE("int_load", 16, R16("mov 64(%1),%0\n\t"), : "=r"(a) : "r"(p));
	PROBE("int_store", 16, R16("mov %0,64(%1)\n\t"), : "+r"(a) : "r"(p) : "memory");
	PROBE("mem_mix", 16, R4("mov 64(%1),%0\n\tmov 128(%1),%0\n\tmov 192(%1),%0\n\t"
				"mov %0,256(%1)\n\t"), : "=r"(a) : "r"(p) : "memory");
	PROBE("st_fwd", 4, R4("mov %0,64(%1)\n\tmov 64(%1),%0\n\t"), : "+r"(a) : "r"(p) : "memory");
	{
		void **chase = (void **)(void *)buf;
		void *q = chase;
		*chase = chase; /* a load whose address is its own result */
		PROBE("ld_lat", 16, R16("mov (%0),%0\n\t"), : "+r"(q));
	}
	{
		uintptr_t idx = 0;
		WIN_INT(16);
		WIN_INT(32);
		WIN_INT(64);
		WIN_INT(128);
		WIN_INT(256);
		WIN_INT(512);
		if (avx512) {
			WIN_VEC(16);
			WIN_VEC(32);
			WIN_VEC(64);
			WIN_VEC(128);
			WIN_VEC(256);
			WIN_VEC(512);
		}
	}
	for (int k = 1; k < argc; k++) {
		cold((size_t)strtoul(argv[k], NULL, 10), avx512);
		cold_chase((size_t)strtoul(argv[k], NULL, 10), 0);
		cold_chase((size_t)strtoul(argv[k], NULL, 10), 1);
		if (avx512 && strtoul(argv[k], NULL, 10) > 8192)
			warm((size_t)strtoul(argv[k], NULL, 10));
	}
	/* after the others, which it would otherwise precede at the next size */
	for (int k = 1; k < argc; k++) {
		if (avx512)
			cold_passes((size_t)strtoul(argv[k], NULL, 10), 1);
		cold_passes((size_t)strtoul(argv[k], NULL, 10), 0);
	}
	if (avx512) {
		PROBE("dep_vec", 16, R16("vpxorq %%zmm16,%%zmm0,%%zmm0\n\t"), ::: "xmm0");
		PROBE("dep_tern", 16, R8("vpternlogd $0x96,%%zmm0,%%zmm17,%%zmm1\n\t"
					 "vpternlogd $0x96,%%zmm1,%%zmm17,%%zmm0\n\t"), ::: "xmm0", "xmm1");
		PROBE("vec_add", 32, R4(VADD8), ::: ZCLOB);
		PROBE("vec_shuf", 32, R4(VSHUF(0) VSHUF(1) VSHUF(2) VSHUF(3) VSHUF(4) VSHUF(5)
					 VSHUF(6) VSHUF(7)), ::: ZCLOB);
		PROBE("vec_load", 16, R16("vmovdqu64 64(%0),%%zmm0\n\t"), :: "r"(p) : "xmm0");
		PROBE("vec_store", 16, R16("vmovdqu64 %%zmm0,64(%0)\n\t"), :: "r"(p) : "memory");
		PROBE("st_fwd_vec", 4, R4("vmovdqu64 %%zmm0,64(%0)\n\tvmovdqu64 64(%0),%%zmm0\n\t"),
		      :: "r"(p) : "xmm0", "memory");
		PROBE("mix_issue", 64, R4(ADD8 VADD8),
		      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h)
		      :: ZCLOB);
	} else {
		PROBE("mix_issue", 32, R4(ADD8),
		      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
	}
	printf("\"avx512\": %d,\n\"sink\": %llu\n}\n", avx512,
	       (unsigned long long)(a + b + c + d + e + f + g + h + cold_sink));
	return 0;
}
"""


SIZES = (1460, 65536)  # bench/bench_ilp.cc's buffer sizes


def run(cc=None, sizes=SIZES):
    """Build and run the probe; returns the parsed JSON dict."""
    if platform.machine() not in ('x86_64', 'amd64'):
        raise RuntimeError('the probe is x86-64 only')
    cc = (cc or os.environ.get('CC', 'cc')).split()
    if not shutil.which(cc[0]):
        raise RuntimeError('no C compiler (%s)' % cc[0])
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, 'probe.c'), os.path.join(d, 'probe')
        with open(src, 'w') as fh:
            fh.write(PROBE_C)
        subprocess.run(cc + ['-O2', '-o', exe, src], check=True)
        out = subprocess.run([exe] + [str(int(z)) for z in sizes], check=True,
                             capture_output=True, text=True).stdout
    r = json.loads(out)
    r.pop('sink', None)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--json', help='write the result here (default stdout)')
    ap.add_argument('--sizes', default=','.join(map(str, SIZES)),
                    help='buffer sizes of the flushed-stream probes (default %(default)s)')
    a = ap.parse_args(argv)
    try:
        r = run(sizes=[int(z) for z in a.sizes.split(',') if z])
    except (RuntimeError, subprocess.CalledProcessError) as e:
        sys.stderr.write('probe: %s\n' % e)
        return 1
    text = json.dumps(r, indent=1, sort_keys=True) + '\n'
    if a.json:
        with open(a.json, 'w') as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
