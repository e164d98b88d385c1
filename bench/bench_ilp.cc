// SPDX-License-Identifier: BSD-2-Clause
// The ILP study (Ahlgren, Björkman, Gunningberg): the generated sequential (seq),
// integrated (int) and integrated-with-prefetch (intpf) kernels of each
// pipeline, over buffers in a chosen cache state.
//
//   ilp/<pipeline>-<form>[-<isa>]/<size>-<cache>[-conflict]
//
//   pipeline  functions joined by '+', e.g. copy+bswap32+pes+csum, or a
//             synthetic one, syn.n3.s4.a10 (ilp/pipelines.txt); chacha20
//             and aes128ctr alone: their seq form is the library's
//             whole-buffer kernel, the reference of the cipher pipelines
//   form      seq | int | intpf
//   isa       absent for AVX-512 (the best this machine has), else scalar
//             or avx2
//   size      1460 | 65536 bytes per buffer
//   cache     hot   buffers in L1 (64 KB ones in L2: 2 x 64 KB > L1);
//                   nothing is done between runs
//             l2    written, then L1 evicted (a 256 KB read)
//             l3    written, then L1 and L2 evicted (an 8 MB read)
//             cold  flushed from every level (cn_cache_flush_range)
//   conflict  source and destination at the same cache colour (same L1
//             and L2 sets, same 4 KB page offset), Ahlgren et al. Fig. 6;
//             otherwise the destination sits half a cache way away
//
// Counter tsc_per_byte (TSC ticks per payload byte). The cache preparation
// runs with timing paused; to keep the two TSC reads around every timed
// stretch from weighing on 1460-byte runs, each timed stretch processes
// kBatch buffers (different ones, all prepared the same way).
// Sequential "cold" flushes once before the whole pipeline, not between its
// loops (a stack's layers run back to back): the first loop pays the
// misses, the others find the destination in cache.
#include "harness/cn_bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "cachenet/lab/cache.h"
#include "cachenet/cpu.h"
#include "cn_ilp.h"
}

namespace {

enum class Cache { hot, l2, l3, cold };
const char *const kCacheName[] = { "hot", "l2", "l3", "cold" };

struct Env {
	cn_cache_info info{};
	const cn_cache_level *l1 = nullptr, *l2 = nullptr;
	std::vector<unsigned char> evict; // read to push lines out of L1/L2
};

Env &env()
{
	static Env e;
	static bool done = false;
	if (!done) {
		done = true;
		if (cn_cache_geometry(&e.info) == 0) {
			e.l1 = cn_cache_find(&e.info, 1, CN_CACHE_DATA);
			e.l2 = cn_cache_find(&e.info, 2, CN_CACHE_DATA);
		}
		e.evict.assign(8u << 20, 1);
	}
	return e;
}

// Read n bytes of the eviction buffer, one load per line: everything that
// was in the levels smaller than n is replaced.
void evict_read(size_t n)
{
	Env &e = env();
	const volatile unsigned char *p = e.evict.data();
	unsigned sum = 0;
	for (size_t i = 0; i < n && i < e.evict.size(); i += 64)
		sum += p[i];
	benchmark::DoNotOptimize(sum);
}

// Buffers for one benchmark: kBatch (src, dst) pairs at chosen colours.
struct Buffers {
	cn_placement *pl = nullptr;
	std::vector<unsigned char *> src, dst;
	std::vector<void *> plain;

	Buffers(size_t size, unsigned batch, bool conflict)
	{
		Env &e = env();
		// The arena holds 2 * batch buffers, each at most one L2 way
		// past the previous (the colour skip), plus 2 MB for THP
		// alignment: sized to the need, because the arena is faulted
		// in (memset) per benchmark, and a fixed 32 MB made that
		// memset two thirds of every run under callgrind.
		if (e.l2) {
			size_t way = (size_t)e.l2->sets * e.l2->line;
			size_t need = 2u * batch * (size + way + 64);
			pl = cn_placement_create(e.l2, (need + (4u << 20)) & ~(size_t)((2u << 20) - 1));
		}
		unsigned sets = e.l2 ? e.l2->sets : 0;
		unsigned lines = (unsigned)((size + 63) / 64);
		for (unsigned k = 0; k < batch; k++) {
			unsigned char *s = nullptr, *d = nullptr;
			if (pl) {
				// Pairs side by side in the L2's sets; the destination at the
				// source's colour (conflict: same L1 and L2 sets, same page
				// offset) or half a way plus half a page further on (a
				// different page offset too: a destination at the source's
				// page offset makes loads wait on the stores before them,
				// "4K aliasing", which cost the hot sequential loop 2x).
				unsigned cs = (unsigned)((2ull * k * (lines + 4)) % sets);
				unsigned cd = conflict ? cs : (cs + sets / 2 + 32) % sets;
				s = (unsigned char *)cn_placement_alloc(pl, size, cs);
				d = (unsigned char *)cn_placement_alloc(pl, size, cd);
			}
			if (!s || !d) {
				s = (unsigned char *)cnbench::alloc_buffer(size);
				d = (unsigned char *)cnbench::alloc_buffer(size, conflict ? 0 : 2048);
				plain.push_back(s);
				plain.push_back(d);
			}
			for (size_t i = 0; i < size; i++)
				s[i] = (unsigned char)(i * 131 + k);
			memcpy(d, s, size);
			src.push_back(s);
			dst.push_back(d);
		}
	}
	~Buffers()
	{
		for (void *p : plain)
			cnbench::free_buffer(p);
		cn_placement_destroy(pl);
	}
};

void prepare(Buffers &b, size_t size, Cache c)
{
	switch (c) {
	case Cache::hot:
		break;
	case Cache::l2:
	case Cache::l3:
		for (size_t k = 0; k < b.src.size(); k++) {
			cn_cache_warm_range(b.src[k], size, true);
			cn_cache_warm_range(b.dst[k], size, true);
		}
		evict_read(c == Cache::l2 ? 256u << 10 : 8u << 20);
		break;
	case Cache::cold:
		for (size_t k = 0; k < b.src.size(); k++) {
			cn_cache_flush_range(b.src[k], size);
			cn_cache_flush_range(b.dst[k], size);
		}
		break;
	}
}

// TSC cost of an empty timed stretch (the two reads), subtracted below.
uint64_t stretch_overhead()
{
	static uint64_t ov = [] {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < 1000; i++) {
			uint64_t t0 = cn_tsc_begin();
			uint64_t t1 = cn_tsc_end();
			best = t1 - t0 < best ? t1 - t0 : best;
		}
		return best;
	}();
	return ov;
}

void run(benchmark::State &st, const cn_ilp_kernel *k, size_t size, Cache c, bool conflict)
{
	// Prepared runs batch enough 1460-byte buffers that the TSC reads around
	// each stretch are noise; hot runs batch as many calls on one pair.
	// This VM's TSC advances in steps of 26 ticks (10 ns; the gcd of
	// back-to-back rdtsc deltas): with 8 calls of 1460 B per stretch a
	// median moved in steps of 0.0022 TSC/B, 3% of the AES-CTR kernel and
	// 8% of copy+csum, so 1460-byte stretches are 64 hot calls (steps of
	// 0.0003 TSC/B) or 32 prepared buffers.
	unsigned batch = size > 8192 ? 1 : c == Cache::hot ? 64 : 32;
	Buffers b(size, c == Cache::hot ? 1 : batch, conflict);
	std::vector<uint64_t> ticks;
	uint64_t r = 0, ov = stretch_overhead();

	// Each call's buffers, looked up before the timed loop: indexing b's
	// vectors with j % size() put a 64-bit DIV (two for a copying kernel)
	// in front of every call, and the kernel's first loads waited on it.
	std::vector<unsigned char *> dsts(batch);
	std::vector<const void *> srcs(batch);
	for (unsigned j = 0; j < batch; j++) {
		dsts[j] = b.dst[j % b.dst.size()];
		srcs[j] = k->copies ? (const void *)b.src[j % b.src.size()] : dsts[j];
	}
	ticks.reserve(1 << 16);
	cnbench::Measure m(st, size * batch);
	for (auto _ : st) {
		if (c != Cache::hot) {
			m.pause();
			prepare(b, size, c);
			m.resume();
		}
		uint64_t t0 = cn_tsc_begin();
		for (unsigned j = 0; j < batch; j++)
			r += k->fn(dsts[j], srcs[j], size);
		uint64_t t1 = cn_tsc_end();
		if (ticks.size() < ticks.capacity())
			ticks.push_back(t1 - t0 > ov ? t1 - t0 - ov : 0);
		benchmark::ClobberMemory();
	}
	m.finish();
	benchmark::DoNotOptimize(r);
	// The machine is shared: a stretch that lost the CPU to another task
	// counts whole time slices in tsc_per_byte (total / iterations). The
	// median stretch is what the study uses; the minimum bounds it below.
	if (!ticks.empty() && !cnbench::simulated()) {
		std::sort(ticks.begin(), ticks.end());
		double per = (double)(size * batch);
		st.counters["tsc_per_byte_med"] = benchmark::Counter((double)ticks[ticks.size() / 2] / per);
		st.counters["tsc_per_byte_min"] = benchmark::Counter((double)ticks[0] / per);
	}
}

void register_all()
{
	const size_t sizes[] = { 1460, 65536 };
	// Real pipelines get every cache state; the cipher-only ones are the
	// reference for their pipelines: their seq form is the library's
	// whole-buffer kernel (cn_chacha20_xor / cn_aes128ctr_xor, in place),
	// e.g. ilp/chacha20-seq/1460-hot beside ilp/copy+chacha20+csum-int/1460-hot.
	const char *const real[] = { "copy+bswap32+pes+csum", "bswap32+pes+csum",
				     "copy+bswap16+pes+csum", "bswap16+pes+csum", "copy+csum",
				     "copy+chacha20+csum",    "chacha20+csum",
				     "chacha20",	      "copy+aes128ctr+csum",
				     "aes128ctr+csum",	      "aes128ctr" };

	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const cn_ilp_kernel *k = &cn_ilp_kernels[i];
		if (!cn_cpu_has(k->features))
			continue;
		std::string isa = strcmp(k->isa, "avx512") == 0 ? "" : std::string("-") + k->isa;
		std::string impl = std::string(k->pipeline) + "-" + k->form + isa;
		bool is_real = false;
		for (const char *p : real)
			is_real |= strcmp(p, k->pipeline) == 0;
		// Synthetic twins of the real loops get every cache state; the
		// state sweep gets hot only (its subject is registers, not memory).
		bool twin = k->synthetic && strstr(k->pipeline, ".o110") != nullptr;
		for (size_t size : sizes) {
			for (int c = 0; c < 4; c++) {
				if (!is_real && !twin && c != 0)
					continue;
				for (int conflict = 0; conflict < 2; conflict++) {
					if (conflict && !is_real)
						continue;
					std::string name = "ilp/" + impl + "/" + std::to_string(size) + "-" +
							   kCacheName[c] + (conflict ? "-conflict" : "");
					auto *bm = cnbench::add(name, [k, size, c, conflict](benchmark::State &st) {
						run(st, k, size, (Cache)c, conflict != 0);
					});
					// Prepared states cost far more untimed than timed time:
					// fix the count instead of letting min_time grow it.
					if (c == 2)
						bm->Iterations(size > 8192 ? 300 : 400);
					else if (c != 0)
						bm->Iterations(size > 8192 ? 1000 : 3000);
				}
			}
		}
	}
}

} // namespace

CN_BENCH_MAIN(register_all)
