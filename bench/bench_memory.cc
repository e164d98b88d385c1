// SPDX-License-Identifier: BSD-2-Clause
// The first benchmark: glibc memcpy and a plain load loop from 64 B to
// 64 MB, with the caches hot and with source and destination flushed before
// every iteration. It exercises the harness, the flush and the counters for
// real, and gives every later result its frame: what moving or reading a
// byte costs at each level of the memory hierarchy on this machine.
//
//   memcpy-hot/glibc/<bytes>      memcpy-flushed/glibc/<bytes>
//   load-hot/c/<bytes>            load-flushed/c/<bytes>
#include "harness/cn_bench.h"

#include <cstdint>
#include <cstring>

namespace {

// Sum of 64-bit words: one load per word, no stores. The compiler may
// vectorise it (it is a read-bandwidth loop); it may not drop it.
__attribute__((noinline)) uint64_t load_loop(const uint64_t *p, size_t words)
{
	uint64_t s0 = 0, s1 = 0;
	size_t i = 0;
	for (; i + 2 <= words; i += 2) {
		s0 += p[i];
		s1 += p[i + 1];
	}
	if (i < words)
		s0 += p[i];
	return s0 + s1;
}

void bm_memcpy(benchmark::State &st, size_t n, bool flushed)
{
	void *src = cnbench::alloc_buffer(n);
	void *dst = cnbench::alloc_buffer(n);
	cn_cache_warm_range(src, n, false);
	cn_cache_warm_range(dst, n, true);
	{
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			if (flushed)
				m.flush(src, n, dst, n);
			std::memcpy(dst, src, n);
			benchmark::ClobberMemory();
		}
		m.finish();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
	cnbench::free_buffer(src);
	cnbench::free_buffer(dst);
}

void bm_load(benchmark::State &st, size_t n, bool flushed)
{
	auto *buf = static_cast<uint64_t *>(cnbench::alloc_buffer(n));
	cn_cache_warm_range(buf, n, false);
	{
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			if (flushed)
				m.flush(buf, n);
			uint64_t s = load_loop(buf, n / sizeof(uint64_t));
			benchmark::DoNotOptimize(s);
		}
		m.finish();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
	cnbench::free_buffer(buf);
}

void register_all()
{
	for (size_t n = 64; n <= ((size_t)64 << 20); n *= 4) {
		std::string sz = std::to_string(n);
		cnbench::add("memcpy-hot/glibc/" + sz, [n](benchmark::State &st) { bm_memcpy(st, n, false); });
		cnbench::add("memcpy-flushed/glibc/" + sz, [n](benchmark::State &st) { bm_memcpy(st, n, true); });
		cnbench::add("load-hot/c/" + sz, [n](benchmark::State &st) { bm_load(st, n, false); });
		cnbench::add("load-flushed/c/" + sz, [n](benchmark::State &st) { bm_load(st, n, true); });
	}
}

} // namespace

CN_BENCH_MAIN(register_all)
