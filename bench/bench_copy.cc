// SPDX-License-Identifier: BSD-2-Clause
// Byte swaps and PES beside glibc memcpy, the floor for any kernel that
// reads and writes every byte once, in one binary and run.
//
//   bswap32/<impl>/<bytes>   cn_bswap32 from a buffer into another
//   bswap16/<impl>/<bytes>   cn_bswap16, the same way
//   pes/<impl>/<bytes>       cn_pes, the same way
//   copy/glibc/<bytes>       memcpy of the same bytes (the reference)
//   copy/loop512/<bytes>     a bare AVX-512 load/store loop (AVX-512BW CPUs,
//                            bench/copyloop512.c): the ceiling of any vector
//                            kernel that reads and writes every byte once
//   copy/repmovsb/<bytes>    an inline `rep movsb` (x86-64)
//   touch/load512/<bytes>    the loop's loads alone: every source line loaded
//                            (bench/loadsum512.c, bench_csum's load ceiling)
//   touch/store512/<bytes>   the loop's stores alone: every destination line
//                            stored (both AVX-512BW CPUs, 4096 B and up)
//
// impl: cachenet (dispatched), cachenet-<variant> (cn_bswap_impls() /
// cn_pes_impls(): avx512, avx2, generic), compiler (a plain C loop of
// __builtin_bswap32 / the Fig. 5 expressions, as the compiler vectorizes it
// with the project's flags: what a user gets without this library), glibc
// (memcpy). A "-cold" suffix on the impl: source and destination are flushed
// from every cache level before each call (untimed, Measure::pause), so the
// call pays for the misses, as for a packet that arrives by DMA.
//
// Sizes 20, 64, 576, 1460, 4096, 9000, 65536; counters tsc_per_byte and
// tsc_per_op. Sources at a 4 KB-aligned address, destinations 2 KB into
// their page (see bench_csum.cc for why not both page-aligned). Every
// kernel's output is checked against a byte-level reference before timing.
//
// Goal: bswap32 hot <= 1.2x copy/glibc at the same size.
//   taskset -c 1 build-copy/bench/cachenet-bench-copy --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one line)
// From 8 KB up glibc's memcpy is `rep movsb` (checked on Debian 12's glibc
// 2.36 with AVX-512: same time as copy/repmovsb at 9000 and 64 KB),
// microcoded fast strings that no byte-transforming loop can use; at 64 KB
// (L2) it takes 0.69-0.77x the time of copy/loop512, which bswap32 matches,
// so there the goal measures rep movsb against vector loops.
//
// Why no loop gets closer at 64 KB (L1D 48 KB here, so every line comes from
// L2): a loop brings each line it stores into L1 before writing it, as well
// as each line it loads, and the two kinds of fill add up. One run
// (2026-11-24, taskset -c 1, medians of 5, TSC ticks a call, AMD EPYC Zen 5
// class): touch/load512 866 + touch/store512 804 = 1670; copy/loop512 1666;
// bswap32/cachenet 1659; copy/glibc 1247, copy/repmovsb 1275. 1.2x memcpy is
// 1496, below the loop's loads and stores alone; rep movsb writes whole lines
// without fetching them. Tried on a standalone copy of the bswap loop (same
// day, 64 KB): prefetchw of the destination 512/1024/2048 B ahead 1711-1863
// against 1687-1708 without, prefetcht0 of the source likewise 1720-2117,
// streaming (non-temporal) stores 3961; destination offsets 0..3584 within
// the page 1697-1711. At 9000 B (L1) the order reverses: rep movsb 142,
// loop512 86, bswap32 85.
#include "harness/cn_bench.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cachenet/bswap.h"
#include "cachenet/lab/cache.h"
#include "cachenet/cpu.h"
#include "cachenet/pes.h"

extern "C" void cnbench_copyloop512(void *dst, const void *src, size_t len); // bench/copyloop512.c
extern "C" uint64_t cnbench_loadsum512(const void *buf, size_t len); // bench/loadsum512.c
extern "C" void cnbench_store512(void *dst, const void *src, size_t len);

namespace {

const size_t kSizes[] = { 20, 64, 576, 1460, 4096, 9000, 65536 };
constexpr size_t kDstOffset = 2048;

using Kernel = void (*)(void *, const void *, size_t);

void ref_bswap16(void *d, const void *s, size_t n)
{
	auto *o = static_cast<unsigned char *>(d);
	auto *i = static_cast<const unsigned char *>(s);
	for (size_t k = 0; k < n; k++)
		o[k] = (k + 1 < n || (n & 1) == 0) ? i[k ^ 1] : i[k];
}

void ref_bswap32(void *d, const void *s, size_t n)
{
	auto *o = static_cast<unsigned char *>(d);
	auto *i = static_cast<const unsigned char *>(s);
	size_t whole = n & ~(size_t)3;
	for (size_t k = 0; k < n; k++)
		o[k] = k < whole ? i[k ^ 3] : i[k];
}

void ref_pes(void *d, const void *s, size_t n)
{
	auto *o = static_cast<unsigned char *>(d);
	auto *i = static_cast<const unsigned char *>(s);
	size_t whole = n & ~(size_t)7;
	for (size_t k = 0; k < n; k++)
		o[k] = k < whole ? (unsigned char)((i[k] | i[k ^ 4]) & 0xF0) : i[k];
}

// The "compiler" peers: straightforward loops a user would write. The
// byte swaps: a word W at a time through @p swap (inlined), the tail
// copied.
inline uint32_t swap32(uint32_t w) { return __builtin_bswap32(w); }
inline uint16_t swap16(uint16_t w) { return __builtin_bswap16(w); }

template <typename W, W (*swap)(W)>
void loop_bswap(void *d, const void *s, size_t n)
{
	auto *o = static_cast<unsigned char *>(d);
	auto *i = static_cast<const unsigned char *>(s);
	size_t k = 0;
	for (; k + sizeof(W) <= n; k += sizeof(W)) {
		W w;
		std::memcpy(&w, i + k, sizeof(W));
		w = swap(w);
		std::memcpy(o + k, &w, sizeof(W));
	}
	for (; k < n; k++)
		o[k] = i[k];
}

void loop_pes(void *d, const void *s, size_t n)
{
	auto *o = static_cast<unsigned char *>(d);
	auto *i = static_cast<const unsigned char *>(s);
	size_t k = 0;
	for (; k + 8 <= n; k += 8) {
		uint32_t w0, w1;
		std::memcpy(&w0, i + k, 4);
		std::memcpy(&w1, i + k + 4, 4);
		cn_pes_step(&w0, &w1);
		std::memcpy(o + k, &w0, 4);
		std::memcpy(o + k + 4, &w1, 4);
	}
	for (; k < n; k++)
		o[k] = i[k];
}

void glibc_copy(void *d, const void *s, size_t n)
{
	std::memcpy(d, s, n);
}

// Calls fn(dst, src, n) in the timed loop; cold: both buffers flushed from
// every cache level before each call, untimed.
void timed(benchmark::State &st, Kernel fn, void *dst, const void *src, size_t n, bool cold)
{
	cnbench::Measure m(st, n);
	for (auto _ : st) {
		if (cold)
			m.flush(src, n, dst, n);
		fn(dst, src, n);
		benchmark::ClobberMemory();
	}
	m.finish();
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
}

#if defined(__x86_64__)
// The instruction glibc's memcpy uses from 8 KB up, inline.
void repmovsb_copy(void *d, const void *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

// touch/<impl>/<bytes>: half a copy, timed like the copies. load512 leaves
// its sum in dst's first 8 bytes; store512 is checked for the stores.
void touch_load512(void *d, const void *s, size_t n)
{
	uint64_t v = cnbench_loadsum512(s, n);
	std::memcpy(d, &v, sizeof(v));
}

void bm_touch(benchmark::State &st, Kernel fn, bool stores, size_t n, bool cold)
{
	void *src = cnbench::alloc_buffer(n, 0);
	void *dst = cnbench::alloc_buffer(n, kDstOffset);
	std::memset(dst, 0, n);
	fn(dst, src, n);
	if (stores && static_cast<unsigned char *>(dst)[n - 1] != 0xa5)
		st.SkipWithError("the stores did not land");
	else
		timed(st, fn, dst, src, n, cold);
	cnbench::free_buffer(src);
	cnbench::free_buffer(dst);
}

void add_touch(const std::string &impl, Kernel fn, bool stores)
{
	for (int cold = 0; cold < 2; cold++) {
		for (size_t n : kSizes) {
			if (n < 4096) // L1-resident: per-call costs, not line fills
				continue;
			bool c = cold != 0;
			cnbench::add("touch/" + impl + (c ? "-cold" : "") + "/" + std::to_string(n),
				     [fn, stores, n, c](benchmark::State &st) { bm_touch(st, fn, stores, n, c); });
		}
	}
}
#endif

void bm(benchmark::State &st, Kernel fn, Kernel ref, size_t n, bool cold)
{
	void *src = cnbench::alloc_buffer(n, 0);
	void *dst = cnbench::alloc_buffer(n, kDstOffset);
	std::vector<unsigned char> want(n);
	ref(want.data(), src, n);
	std::memset(dst, 0, n);
	fn(dst, src, n);
	if (std::memcmp(dst, want.data(), n) != 0)
		st.SkipWithError("wrong output");
	else
		timed(st, fn, dst, src, n, cold);
	cnbench::free_buffer(src);
	cnbench::free_buffer(dst);
}

void add(const std::string &family, const std::string &impl, Kernel fn, Kernel ref)
{
	for (int cold = 0; cold < 2; cold++) {
		for (size_t n : kSizes) {
			bool c = cold != 0;
			cnbench::add(family + "/" + impl + (c ? "-cold" : "") + "/" + std::to_string(n),
				     [fn, ref, n, c](benchmark::State &st) { bm(st, fn, ref, n, c); });
		}
	}
}

void register_all()
{
	add("bswap32", "cachenet", cn_bswap32, ref_bswap32);
	add("bswap16", "cachenet", cn_bswap16, ref_bswap16);
	add("pes", "cachenet", cn_pes, ref_pes);
	const struct cn_bswap_impl *bi[8];
	size_t nb = cn_bswap_impls(bi, 8);
	for (size_t i = 0; i < nb && i < 8; i++) {
		std::string impl = std::string("cachenet-") + bi[i]->name;
		add("bswap32", impl, bi[i]->bswap32, ref_bswap32);
		add("bswap16", impl, bi[i]->bswap16, ref_bswap16);
	}
	const struct cn_pes_impl *pi[8];
	size_t np = cn_pes_impls(pi, 8);
	for (size_t i = 0; i < np && i < 8; i++)
		add("pes", std::string("cachenet-") + pi[i]->name, pi[i]->pes, ref_pes);
	add("bswap32", "compiler", loop_bswap<uint32_t, swap32>, ref_bswap32);
	add("bswap16", "compiler", loop_bswap<uint16_t, swap16>, ref_bswap16);
	add("pes", "compiler", loop_pes, ref_pes);
	add("copy", "glibc", glibc_copy, glibc_copy);
#if defined(__x86_64__)
	add("copy", "repmovsb", repmovsb_copy, glibc_copy);
	if (cn_cpu_has(CN_CPU_AVX512F) && cn_cpu_has(CN_CPU_AVX512BW)) {
		add("copy", "loop512", cnbench_copyloop512, glibc_copy);
		add_touch("load512", touch_load512, false);
		add_touch("store512", cnbench_store512, true);
	}
#endif
}

} // namespace

CN_BENCH_MAIN(register_all)
