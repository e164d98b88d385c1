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
//   csum_copy/<impl>/<bytes>   copy + checksum (source +1 for "<bytes>+1")
//   copy/glibc/<bytes>         glibc memcpy alone, the floor for csum_copy
//
// impl: cachenet (dispatched: cn_csum_partial / cn_csum_copy),
//       cachenet-<variant> (cn_csum_impls(): avx512, avx2, generic),
//       dpdk (rte_raw_cksum, inline from rte_ip.h, built with the flags
//       pkg-config gives, -march=corei7 included),
//       lwip (lwip_standard_chksum, the routine inet_chksum() wraps; it is
//       used directly because inet_chksum takes a u16_t length and cannot
//       sum 65536 bytes).
// Neither peer has a fused copy+checksum (lwIP's lwip_chksum_copy is
// MEMCPY then LWIP_CHKSUM; inet_chksum_pbuf copies nothing), so csum_copy
// pits ours against a copy followed by each peer's checksum:
// csum_copy/dpdk = rte_memcpy + rte_raw_cksum,
// csum_copy/lwip = memcpy + lwip_standard_chksum,
// csum_copy/cachenet-memcpy+csum = memcpy + cn_csum_partial (the unfused
// baseline), and copy/glibc = the copy alone, a floor.
//
// Every implementation's result is checked against cachenet's reference
// (cn_csum_partial_ref) before timing; a mismatch skips the benchmark with
// an error instead of timing a wrong answer.
//
// Destinations sit 2 KB into their page, so source and destination do not
// share a page offset. With both page-aligned every implementation, glibc
// memcpy included, lost a third at some sizes (memcpy of 1500 B: 59 instead
// of 39 ticks; likely 4K aliasing between stores and the loads after them),
// which would hide the differences this program is about.
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

// Every function under test returns the 16-bit ones'-complement sum, folded,
// not complemented, as stored, so that one check fits all. Each is a lambda
// passed by type into templates, so the timed loop calls the library (or
// runs a peer's inline code) directly, as a user's code would: no function
// pointer or wrapper call that one side pays and the other does not.

uint16_t expected(const void *b, size_t n)
{
	return cn_csum_fold(cn_csum_partial_ref(b, n, 0));
}

template <typename F> void bm_sum(benchmark::State &st, F fn, size_t n, size_t offset)
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

template <typename F>
void bm_copy(benchmark::State &st, F fn, bool checks, size_t n, size_t offset)
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

template <typename F> void add_sum(const std::string &impl, F fn)
{
	for (const Case &c : cases()) {
		size_t n = c.n, off = c.offset;
		cnbench::add("csum/" + impl + "/" + c.name,
			     [fn, n, off](benchmark::State &st) { bm_sum(st, fn, n, off); });
	}
}

template <typename F>
void add_copy(const std::string &impl, F fn, bool checks = true, const char *family = "csum_copy/")
{
	for (const Case &c : cases()) {
		size_t n = c.n, off = c.offset;
		cnbench::add(family + impl + "/" + c.name,
			     [fn, checks, n, off](benchmark::State &st) {
				     bm_copy(st, fn, checks, n, off);
			     });
	}
}

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
	cnbench::add("ipv4-hdr/cachenet/20", [](benchmark::State &st) {
		bm_hdr(st, [](const unsigned char *h) { return cn_csum_ipv4_hdr(h, 20); });
	});

#ifdef CN_HAVE_DPDK
	add_sum("dpdk", [](const void *b, size_t n) { return rte_raw_cksum(b, n); });
	add_copy("dpdk", [](void *d, const void *s, size_t n) {
		rte_memcpy(d, s, n);
		return rte_raw_cksum(d, n);
	});
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
