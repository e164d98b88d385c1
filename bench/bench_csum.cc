// SPDX-License-Identifier: BSD-2-Clause
// The Internet checksum side by side: cachenet's dispatched entry point and
// each variant this CPU runs, DPDK, lwIP, glibc memcpy and two load-sum
// ceilings, all in one binary and run. Independent calls (throughput, as
// when a stack checksums a stream of packets).
//
//   csum/<impl>/<bytes>        sum of a buffer at a 4 KB-aligned address
//   csum/<impl>/<bytes>+1      the same, starting one byte further
//   csum_copy/<impl>/<bytes>   copy + checksum (source +1 for "<bytes>+1")
//   copy/<impl>/<bytes>        the copy alone: glibc (memcpy), the floor, and
//                              loop512 (AVX-512BW CPUs: the bare AVX-512 copy
//                              loop of bench/copyloop512.c, csum_copy's
//                              structure without the checksum)
//   ipv4-hdr/<impl>/20         checksum of a 20-byte IPv4 header
//
// Sizes 20, 40, 64, 128, 576, 1460, 4096, 9000, 65536 (+1: 64 and up,
// 128 excepted). Each impl
// runs hot (the buffer stays in L1/L2 from call to call) and cold, with
// "-cold" appended to the impl: every byte read or written is flushed from
// all cache levels before each call, untimed (Measure::pause/resume).
//
// impl: cachenet (dispatched: cn_csum_partial / cn_csum_copy),
//       cachenet-<variant> (cn_csum_impls(): avx512vnni, avx512, avx2, generic),
//       cachenet-memcpy+csum (csum_copy only: memcpy, then cn_csum_partial,
//       the unfused baseline the fused kernel must beat),
//       dpdk (rte_raw_cksum inline from rte_ip.h in this file, which is
//       built with the flags pkg-config gives for libdpdk, -march=corei7
//       included, as a DPDK application would build it),
//       dpdk-pkgconfig / dpdk-projflags (the same code out of line, built
//       in bench/peer_dpdk.cc with pkg-config's flags and with the
//       project's flags; one call more per op than "dpdk"),
//       lwip (lwip_standard_chksum, the routine inet_chksum() wraps; it is
//       used directly because inet_chksum takes a u16_t length and cannot
//       sum 65536 bytes),
//       glibc (copy only: memcpy),
//       loop256 / loopadd256 (copy only, AVX2 CPUs: bench/copyloop256.c,
//       the AVX2 copy+checksum's structure copying only, and copying plus
//       its lane adds without the reduction and fold: its floors),
//       loadsum64 (csum only: sum of the buffer's 64-bit words with four
//       scalar accumulators, no carries: the scalar load ceiling),
//       loadsum512 (csum only, AVX-512F CPUs: the same with 512-bit loads
//       and four vector accumulators, bench/loadsum512.c: the L1 load
//       ceiling any checksum can at best reach),
//       loadsum256 (csum only, AVX2 CPUs: the same with 256-bit loads,
//       bench/loadsum256.c: the floor of an AVX2 kernel),
//       adc (csum only, x86-64: the add-with-carry loop of the Linux
//       kernel's x86-64 csum_partial, written here as well as we could:
//       the last len % 8 bytes from one load of the buffer's last 8,
//       shifted, then an asm ADC chain over 64-byte blocks and 32, 16, 8
//       bytes (tail first: it does not wait for the chain; faster at
//       20 B than tail last); inline, as DPDK's is).
// Neither peer has a fused copy+checksum (lwIP's lwip_chksum_copy is
// MEMCPY then LWIP_CHKSUM), so csum_copy pits ours against a copy followed
// by each peer's checksum: csum_copy/dpdk = rte_memcpy + rte_raw_cksum,
// csum_copy/lwip = memcpy + lwip_standard_chksum.
//
// Every checksum's result is checked against cachenet's reference
// (cn_csum_partial_ref) before timing; a mismatch skips the benchmark with
// an error instead of timing a wrong answer. Counter: tsc_per_byte.
//
// Destinations sit 2 KB into their page, so source and destination do not
// share a page offset. With both page-aligned every implementation, glibc
// memcpy included, lost a third at some sizes (memcpy of 1500 B: 59 instead
// of 39 ticks; likely 4K aliasing between stores and the loads after them),
// which would hide the differences this program is about.
//
// The goals, ratios from one run:
//   taskset -c 1 build-copy/bench/cachenet-bench-csum --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true --benchmark_min_time=0.05
//   (one line; add --benchmark_filter='^(csum|csum_copy|copy)/' to skip
//   ipv4-hdr).
#include "harness/cn_bench.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cachenet/lab/cache.h"
#include "cachenet/cpu.h"
#include "cachenet/csum.h"

#ifdef CN_HAVE_DPDK
#include <rte_ip.h>
#include <rte_memcpy.h>
extern "C" {
// bench/peer_dpdk.cc, built twice (see the header comment).
uint16_t cnbench_dpdk_pkgconfig_raw_cksum(const void *buf, size_t len);
uint16_t cnbench_dpdk_pkgconfig_copy_cksum(void *dst, const void *src, size_t len);
uint16_t cnbench_dpdk_projflags_raw_cksum(const void *buf, size_t len);
uint16_t cnbench_dpdk_projflags_copy_cksum(void *dst, const void *src, size_t len);
}
#endif
#if defined(__x86_64__)
extern "C" uint64_t cnbench_loadsum512(const void *buf, size_t len); // bench/loadsum512.c
extern "C" uint64_t cnbench_loadsum256(const void *buf, size_t len); // bench/loadsum256.c
extern "C" void cnbench_copyloop512(void *dst, const void *src, size_t len); // bench/copyloop512.c
extern "C" void cnbench_copyloop256(void *dst, const void *src, size_t len); // bench/copyloop256.c
extern "C" uint64_t cnbench_copyadd256(void *dst, const void *src, size_t len);
#endif

#ifdef CN_HAVE_LWIP
// Debian's liblwip-dev ships the port headers lwIP needs (arch/cc.h and
// lwipopts.h, from the Hurd port, in /usr/include/lwip), so the public
// header compiles as it is.
#include "lwip/inet_chksum.h"
extern "C" {
// Exported by liblwip.so but declared only inside lwIP's inet_chksum.c
// (lwIP 2.1.3: LWIP_CHKSUM defaults to it; raw sum, not complemented).
u16_t lwip_standard_chksum(const void *dataptr, int len);
}
#endif

namespace {

const size_t kSizes[] = { 20, 40, 64, 128, 576, 1460, 4096, 9000, 65536 };
const size_t kMisaligned[] = { 64, 576, 1460, 4096, 9000, 65536 };
constexpr size_t kDstOffset = 2048;

// Every checksum under test returns the 16-bit ones'-complement sum, folded,
// not complemented, as stored, so that one check fits all. Each is a lambda
// passed by type into templates, so the timed loop calls the library (or
// runs a peer's inline code) directly, as a user's code would: no function
// pointer or wrapper call that one side pays and the other does not.

uint16_t expected(const void *b, size_t n)
{
	return cn_csum_fold(cn_csum_partial_ref(b, n, 0));
}

// The scalar load ceiling: four independent 64-bit accumulators, no
// carries. The empty asm keeps the compiler from vectorizing the loop,
// which would turn it into a different ceiling.
uint16_t loadsum64(const void *buf, size_t n)
{
	const unsigned char *p = static_cast<const unsigned char *>(buf);
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, t = 0;
	for (; n >= 32; n -= 32, p += 32) {
		uint64_t x0, x1, x2, x3;
		std::memcpy(&x0, p, 8);
		std::memcpy(&x1, p + 8, 8);
		std::memcpy(&x2, p + 16, 8);
		std::memcpy(&x3, p + 24, 8);
		a0 += x0;
		a1 += x1;
		a2 += x2;
		a3 += x3;
		__asm__("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3));
	}
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t x;
		std::memcpy(&x, p, 8);
		a0 += x;
	}
	std::memcpy(&t, p, n);
	return (uint16_t)(a0 + a1 + a2 + a3 + t);
}

#if defined(__x86_64__)
// The "adc" peer (see the header comment). The "m" operands tell the
// compiler which bytes each asm statement reads.
#define ADC_BLOCK(n, text)                                                              \
	__asm__(text : [s] "+r"(s) : [p] "r"(p), "m"(*(const unsigned char(*)[n])p) : "cc")
inline __attribute__((always_inline)) uint16_t adcloop(const void *buf, size_t n)
{
	const unsigned char *p = static_cast<const unsigned char *>(buf);
	uint64_t s = 0;

	if (n < 8) {
		uint64_t t = 0;
		if (n & 4) {
			uint32_t w;
			std::memcpy(&w, p, 4);
			t += w;
			p += 4;
		}
		if (n & 2) {
			uint16_t h;
			std::memcpy(&h, p, 2);
			t += h;
			p += 2;
		}
		if (n & 1)
			t += *p;
		return cn_csum_fold(t);
	}
	// the last len % 8 bytes first: they do not wait for the chain
	if (n & 7) {
		std::memcpy(&s, p + n - 8, 8);
		s >>= 64 - 8 * (n & 7);
	}
	for (; n >= 64; n -= 64, p += 64)
		ADC_BLOCK(64, "addq (%[p]), %[s]\n\tadcq 8(%[p]), %[s]\n\t"
			      "adcq 16(%[p]), %[s]\n\tadcq 24(%[p]), %[s]\n\t"
			      "adcq 32(%[p]), %[s]\n\tadcq 40(%[p]), %[s]\n\t"
			      "adcq 48(%[p]), %[s]\n\tadcq 56(%[p]), %[s]\n\tadcq $0, %[s]");
	if (n & 32) {
		ADC_BLOCK(32, "addq (%[p]), %[s]\n\tadcq 8(%[p]), %[s]\n\t"
			      "adcq 16(%[p]), %[s]\n\tadcq 24(%[p]), %[s]\n\tadcq $0, %[s]");
		p += 32;
	}
	if (n & 16) {
		ADC_BLOCK(16, "addq (%[p]), %[s]\n\tadcq 8(%[p]), %[s]\n\tadcq $0, %[s]");
		p += 16;
	}
	if (n & 8)
		ADC_BLOCK(8, "addq (%[p]), %[s]\n\tadcq $0, %[s]");
	return cn_csum_fold(s);
}
#undef ADC_BLOCK
#endif

template <typename F>
void bm_sum(benchmark::State &st, F fn, bool checks, size_t n, size_t offset, bool cold)
{
	void *buf = cnbench::alloc_buffer(n, offset);
	if (checks && fn(buf, n) != expected(buf, n)) {
		st.SkipWithError("wrong checksum");
		cnbench::free_buffer(buf);
		return;
	}
	{
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			if (cold)
				m.flush(buf, n);
			uint16_t s = fn(buf, n);
			benchmark::DoNotOptimize(s);
		}
		m.finish();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
	cnbench::free_buffer(buf);
}

template <typename F>
void bm_copy(benchmark::State &st, F fn, bool checks, size_t n, size_t offset, bool cold)
{
	void *src = cnbench::alloc_buffer(n, offset);
	void *dst = cnbench::alloc_buffer(n, kDstOffset);
	std::memset(dst, 0, n);
	uint16_t got = fn(dst, src, n);
	if ((checks && got != expected(src, n)) || std::memcmp(dst, src, n) != 0) {
		st.SkipWithError("wrong checksum or copy");
	} else {
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			if (cold)
				m.flush(src, n, dst, n);
			uint16_t s = fn(dst, src, n);
			benchmark::DoNotOptimize(s);
			benchmark::ClobberMemory();
		}
		m.finish();
		st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
	}
	cnbench::free_buffer(src);
	cnbench::free_buffer(dst);
}

// A real IPv4 header (an ICMP echo reply on lo, checksum by Linux; see
// tests/unit/test_csum.c), checksum field zeroed as when building one.
const unsigned char kIpv4Hdr[20] = {
	0x45, 0x00, 0x00, 0x30, 0x7a, 0x60, 0x00, 0x00, 0x40, 0x01,
	0x00, 0x00, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01,
};

template <typename F> void bm_hdr(benchmark::State &st, F fn)
{
	auto *h = static_cast<unsigned char *>(cnbench::alloc_buffer(20, 14)); // after Ethernet
	std::memcpy(h, kIpv4Hdr, 20);
	if (fn(h) != (uint16_t)~expected(h, 20)) {
		st.SkipWithError("wrong header checksum");
	} else {
		cnbench::Measure m(st, 20);
		for (auto _ : st) {
			benchmark::DoNotOptimize(h); // the header may change: recompute
			uint16_t c = fn(h);
			benchmark::DoNotOptimize(c);
		}
		m.finish();
	}
	cnbench::free_buffer(h);
}

struct Case {
	std::string name;
	size_t n, offset;
};

std::vector<Case> cases()
{
	std::vector<Case> v;
	for (size_t n : kSizes)
		v.push_back({ std::to_string(n), n, 0 });
	for (size_t n : kMisaligned)
		v.push_back({ std::to_string(n) + "+1", n, 1 });
	return v;
}

// Hot and cold runs of every case: "<family><impl>[-cold]/<case>".
template <typename F> void add_sum(const std::string &impl, F fn, bool checks = true)
{
	for (int cold = 0; cold < 2; cold++) {
		for (const Case &c : cases()) {
			size_t n = c.n, off = c.offset;
			bool cd = cold != 0;
			cnbench::add("csum/" + impl + (cd ? "-cold" : "") + "/" + c.name,
				     [fn, checks, n, off, cd](benchmark::State &st) {
					     bm_sum(st, fn, checks, n, off, cd);
				     });
		}
	}
}

template <typename F>
void add_copy(const std::string &impl, F fn, bool checks = true, const char *family = "csum_copy/")
{
	for (int cold = 0; cold < 2; cold++) {
		for (const Case &c : cases()) {
			size_t n = c.n, off = c.offset;
			bool cd = cold != 0;
			cnbench::add(family + impl + (cd ? "-cold" : "") + "/" + c.name,
				     [fn, checks, n, off, cd](benchmark::State &st) {
					     bm_copy(st, fn, checks, n, off, cd);
				     });
		}
	}
}

#if defined(__x86_64__)
// A bare copy loop of bench/ (no checksum) as copy/<impl>, called directly.
template <void (*F)(void *, const void *, size_t)> void add_copy_loop(const char *impl)
{
	add_copy(
		impl,
		[](void *d, const void *s, size_t n) {
			F(d, s, n);
			return (uint16_t)0;
		},
		false, "copy/");
}
#endif

// The variant called directly, registered only when this CPU (and
// CACHENET_CPU_DISABLE) allows it.
template <typename S, typename C> void add_variant(const char *name, S sum, C copy)
{
	if (!cn_csum_impl_find(name))
		return;
	add_sum(std::string("cachenet-") + name, sum);
	add_copy(std::string("cachenet-") + name, copy);
}

void register_all()
{
	add_sum("cachenet", [](const void *b, size_t n) { return cn_csum_fold(cn_csum_partial(b, n, 0)); });
	add_copy("cachenet", [](void *d, const void *s, size_t n) {
		return cn_csum_fold(cn_csum_copy(d, s, n, 0));
	});
#if defined(__x86_64__)
	// VNNI has a partial sum of its own only; its copy is avx512's.
	if (cn_csum_impl_find("avx512vnni"))
		add_sum("cachenet-avx512vnni", [](const void *b, size_t n) {
			return cn_csum_fold(cn_csum_partial_avx512vnni(b, n, 0));
		});
	add_variant(
		"avx512", [](const void *b, size_t n) { return cn_csum_fold(cn_csum_partial_avx512(b, n, 0)); },
		[](void *d, const void *s, size_t n) { return cn_csum_fold(cn_csum_copy_avx512(d, s, n, 0)); });
	add_variant(
		"avx2", [](const void *b, size_t n) { return cn_csum_fold(cn_csum_partial_avx2(b, n, 0)); },
		[](void *d, const void *s, size_t n) { return cn_csum_fold(cn_csum_copy_avx2(d, s, n, 0)); });
#endif
	add_variant(
		"generic", [](const void *b, size_t n) { return cn_csum_fold(cn_csum_partial_generic(b, n, 0)); },
		[](void *d, const void *s, size_t n) { return cn_csum_fold(cn_csum_copy_generic(d, s, n, 0)); });
	add_copy("cachenet-memcpy+csum", [](void *d, const void *s, size_t n) {
		std::memcpy(d, s, n);
		return cn_csum_fold(cn_csum_partial(d, n, 0));
	});
	add_copy(
		"glibc",
		[](void *d, const void *s, size_t n) {
			std::memcpy(d, s, n);
			return (uint16_t)0;
		},
		false, "copy/");
#if defined(__x86_64__)
	// The bare AVX-512 copy loop (bench/copyloop512.c): what a vector loop
	// that reads and writes each byte once reaches, the checksum aside.
	if (cn_cpu_has(CN_CPU_AVX512F) && cn_cpu_has(CN_CPU_AVX512BW))
		add_copy_loop<cnbench_copyloop512>("loop512");
	// The AVX2 copy+checksum's floors (bench/copyloop256.c): its structure
	// (head to an aligned destination, 32-byte blocks, tail) copying only,
	// and copying plus the lane adds without the reduction and fold.
	if (cn_cpu_has(CN_CPU_AVX2)) {
		add_copy_loop<cnbench_copyloop256>("loop256");
		add_copy(
			"loopadd256",
			[](void *d, const void *s, size_t n) { return (uint16_t)cnbench_copyadd256(d, s, n); },
			false, "copy/");
	}
#endif
	add_sum("loadsum64", loadsum64, false);
#if defined(__x86_64__)
	add_sum("adc", [](const void *b, size_t n) { return adcloop(b, n); });
	if (cn_cpu_has(CN_CPU_AVX2))
		add_sum("loadsum256", [](const void *b, size_t n) { return (uint16_t)cnbench_loadsum256(b, n); },
			false);
#endif
#if defined(__x86_64__)
	if (cn_cpu_has(CN_CPU_AVX512F))
		add_sum("loadsum512", [](const void *b, size_t n) { return (uint16_t)cnbench_loadsum512(b, n); },
			false);
#endif
	cnbench::add("ipv4-hdr/cachenet/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) { return cn_csum_ipv4_hdr(h, 20); });
	});

#ifdef CN_HAVE_DPDK
	add_sum("dpdk", [](const void *b, size_t n) { return rte_raw_cksum(b, n); });
	add_copy("dpdk", [](void *d, const void *s, size_t n) {
		rte_memcpy(d, s, n);
		return rte_raw_cksum(d, n);
	});
	add_sum("dpdk-pkgconfig", cnbench_dpdk_pkgconfig_raw_cksum);
	add_copy("dpdk-pkgconfig", cnbench_dpdk_pkgconfig_copy_cksum);
	add_sum("dpdk-projflags", cnbench_dpdk_projflags_raw_cksum);
	add_copy("dpdk-projflags", cnbench_dpdk_projflags_copy_cksum);
	cnbench::add("ipv4-hdr/dpdk/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) {
			return rte_ipv4_cksum(reinterpret_cast<const struct rte_ipv4_hdr *>(h));
		});
	});
#endif
#ifdef CN_HAVE_LWIP
	add_sum("lwip", [](const void *b, size_t n) { return lwip_standard_chksum(b, (int)n); });
	add_copy("lwip", [](void *d, const void *s, size_t n) {
		std::memcpy(d, s, n);
		return lwip_standard_chksum(d, (int)n);
	});
	cnbench::add("ipv4-hdr/lwip/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) { return inet_chksum(h, 20); });
	});
#endif
}

} // namespace

CN_BENCH_MAIN(register_all)
