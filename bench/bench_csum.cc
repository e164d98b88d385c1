// SPDX-License-Identifier: BSD-2-Clause
// The Internet checksum side by side: cachenet's dispatched entry point and
// each variant this CPU runs, DPDK's rte_raw_cksum/rte_ipv4_cksum and lwIP's
// checksum, all in one binary, caches hot (the buffer is summed over and
// over), independent calls (throughput, as when a stack checksums a stream
// of packets).
//
//   csum/<impl>/<bytes>        sum of a buffer at a 4 KB-aligned address
//   csum/<impl>/<bytes>+1      the same, starting one byte further
//   ipv4-hdr/<impl>/20         checksum of a 20-byte IPv4 header
//   csum-copy/<impl>/<bytes>   copy + checksum (source +1 for "<bytes>+1")
//
// impl: cachenet (dispatched: cn_csum_partial / cn_csum_copy),
//       cachenet-<variant> (cn_csum_impls(): avx512, avx2, generic),
//       dpdk (rte_raw_cksum, inline from rte_ip.h, built with the flags
//       pkg-config gives, -march=corei7 included),
//       lwip (lwip_standard_chksum, the routine inet_chksum() wraps; it is
//       used directly because inet_chksum takes a u16_t length and cannot
//       sum 65536 bytes).
// Neither peer has a fused copy+checksum (lwIP's lwip_chksum_copy is
// MEMCPY then LWIP_CHKSUM; inet_chksum_pbuf copies nothing), so csum-copy
// pits ours against a copy followed by each peer's checksum, and the names
// say so: dpdk-memcpy+cksum (rte_memcpy + rte_raw_cksum),
// lwip-memcpy+chksum (memcpy + lwip_standard_chksum),
// cachenet-memcpy+csum (memcpy + cn_csum_partial, the unfused baseline) and
// glibc-memcpy-only (the copy alone, a floor).
//
// Every implementation's result is checked against cachenet's reference
// (cn_csum_partial_ref) before timing; a mismatch skips the benchmark with
// an error instead of timing a wrong answer.
//
// Destinations sit 2 KB into their page, so source and destination never
// share a page offset: with both page-aligned, stores and later loads alias
// in their low 12 address bits and every implementation, memcpy included,
// loses up to 40% at some sizes (1500 B here), which would hide differences.
#include "harness/cn_bench.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cachenet/csum.h"

#ifdef CN_HAVE_DPDK
#include <rte_ip.h>
#include <rte_memcpy.h>
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

const size_t kSizes[] = { 20, 40, 64, 128, 256, 576, 1460, 1500, 4096, 9000, 65536 };
const size_t kMisaligned[] = { 64, 256, 576, 1460, 1500, 4096, 9000, 65536 };
constexpr size_t kDstOffset = 2048;

// Every function under test, as "16-bit ones'-complement sum, folded, not
// complemented, as stored" so that one check fits all.
using SumFn = uint16_t (*)(const void *buf, size_t len);
using CopyFn = uint16_t (*)(void *dst, const void *src, size_t len);

template <cn_csum_partial_fn F> uint16_t ours(const void *b, size_t n)
{
	return cn_csum_fold(F(b, n, 0));
}

template <cn_csum_copy_fn F> uint16_t ours_copy(void *d, const void *s, size_t n)
{
	return cn_csum_fold(F(d, s, n, 0));
}

uint16_t ours_dispatched(const void *b, size_t n)
{
	return cn_csum_fold(cn_csum_partial(b, n, 0));
}

uint16_t ours_copy_dispatched(void *d, const void *s, size_t n)
{
	return cn_csum_fold(cn_csum_copy(d, s, n, 0));
}

uint16_t ours_memcpy_csum(void *d, const void *s, size_t n)
{
	std::memcpy(d, s, n);
	return cn_csum_fold(cn_csum_partial(d, n, 0));
}

uint16_t memcpy_only(void *d, const void *s, size_t n)
{
	std::memcpy(d, s, n);
	return 0;
}

#ifdef CN_HAVE_DPDK
uint16_t dpdk_sum(const void *b, size_t n)
{
	return rte_raw_cksum(b, n);
}

uint16_t dpdk_copy(void *d, const void *s, size_t n)
{
	rte_memcpy(d, s, n);
	return rte_raw_cksum(d, n);
}
#endif

#ifdef CN_HAVE_LWIP
uint16_t lwip_sum(const void *b, size_t n)
{
	return lwip_standard_chksum(b, (int)n);
}

uint16_t lwip_copy(void *d, const void *s, size_t n)
{
	std::memcpy(d, s, n);
	return lwip_standard_chksum(d, (int)n);
}
#endif

uint16_t expected(const void *b, size_t n)
{
	return cn_csum_fold(cn_csum_partial_ref(b, n, 0));
}

void bm_sum(benchmark::State &st, SumFn fn, size_t n, size_t offset)
{
	void *buf = cnbench::alloc_buffer(n, offset);
	if (fn(buf, n) != expected(buf, n)) {
		st.SkipWithError("wrong checksum");
		cnbench::free_buffer(buf);
		return;
	}
	{
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			uint16_t s = fn(buf, n);
			benchmark::DoNotOptimize(s);
		}
		m.finish();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
	cnbench::free_buffer(buf);
}

void bm_copy(benchmark::State &st, CopyFn fn, bool checks, size_t n, size_t offset)
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
			benchmark::DoNotOptimize(h);
			uint16_t c = fn(h);
			benchmark::DoNotOptimize(c);
		}
		m.finish();
	}
	cnbench::free_buffer(h);
}

struct SumImpl {
	std::string name;
	SumFn fn;
};

struct CopyImpl {
	std::string name;
	CopyFn fn;
	bool checks; // false: returns no checksum (memcpy alone)
};

SumFn variant_sum(const char *name)
{
	std::string s(name);
#if defined(__x86_64__) || defined(__i386__)
	if (s == "avx512")
		return ours<cn_csum_partial_avx512>;
	if (s == "avx2")
		return ours<cn_csum_partial_avx2>;
#endif
	if (s == "generic")
		return ours<cn_csum_partial_generic>;
	return nullptr;
}

CopyFn variant_copy(const char *name)
{
	std::string s(name);
#if defined(__x86_64__) || defined(__i386__)
	if (s == "avx512")
		return ours_copy<cn_csum_copy_avx512>;
	if (s == "avx2")
		return ours_copy<cn_csum_copy_avx2>;
#endif
	if (s == "generic")
		return ours_copy<cn_csum_copy_generic>;
	return nullptr;
}

void register_all()
{
	std::vector<SumImpl> sums = { { "cachenet", ours_dispatched } };
	std::vector<CopyImpl> copies = { { "cachenet", ours_copy_dispatched, true } };

	// Only the variants this CPU (and CACHENET_CPU_DISABLE) allows.
	const struct cn_csum_impl *im[8];
	size_t n_im = cn_csum_impls(im, 8);
	for (size_t i = 0; i < n_im && i < 8; i++) {
		SumFn s = variant_sum(im[i]->name);
		CopyFn c = variant_copy(im[i]->name);
		if (s)
			sums.push_back({ std::string("cachenet-") + im[i]->name, s });
		if (c)
			copies.push_back({ std::string("cachenet-") + im[i]->name, c, true });
	}
	copies.push_back({ "cachenet-memcpy+csum", ours_memcpy_csum, true });
	copies.push_back({ "glibc-memcpy-only", memcpy_only, false });
#ifdef CN_HAVE_DPDK
	sums.push_back({ "dpdk", dpdk_sum });
	copies.push_back({ "dpdk-memcpy+cksum", dpdk_copy, true });
#endif
#ifdef CN_HAVE_LWIP
	sums.push_back({ "lwip", lwip_sum });
	copies.push_back({ "lwip-memcpy+chksum", lwip_copy, true });
#endif

	std::vector<std::pair<std::string, std::pair<size_t, size_t>>> cases;
	for (size_t n : kSizes)
		cases.push_back({ std::to_string(n), { n, 0 } });
	for (size_t n : kMisaligned)
		cases.push_back({ std::to_string(n) + "+1", { n, 1 } });

	for (const auto &c : cases) {
		size_t n = c.second.first, off = c.second.second;
		for (const auto &s : sums) {
			SumFn fn = s.fn;
			cnbench::add("csum/" + s.name + "/" + c.first,
				     [fn, n, off](benchmark::State &st) { bm_sum(st, fn, n, off); });
		}
	}
	for (const auto &c : cases) {
		size_t n = c.second.first, off = c.second.second;
		for (const auto &cp : copies) {
			CopyFn fn = cp.fn;
			bool checks = cp.checks;
			cnbench::add("csum-copy/" + cp.name + "/" + c.first,
				     [fn, checks, n, off](benchmark::State &st) {
					     bm_copy(st, fn, checks, n, off);
				     });
		}
	}

	cnbench::add("ipv4-hdr/cachenet/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) { return cn_csum_ipv4_hdr(h, 20); });
	});
#ifdef CN_HAVE_DPDK
	cnbench::add("ipv4-hdr/dpdk/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) {
			return rte_ipv4_cksum(reinterpret_cast<const struct rte_ipv4_hdr *>(h));
		});
	});
#endif
#ifdef CN_HAVE_LWIP
	cnbench::add("ipv4-hdr/lwip/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) { return inet_chksum(h, 20); });
	});
#endif
}

} // namespace

CN_BENCH_MAIN(register_all)
