// SPDX-License-Identifier: BSD-2-Clause
// DPDK's checksum, out of line, compiled twice by bench/meson.build: with the
// flags pkg-config gives for libdpdk (-march=corei7 among them) and with the
// project's own target (x86-64 baseline), so bench_csum can show what each
// build of the same inline code does. CN_DPDK_FLAVOUR names the copy.
//
// rte_memcpy.h cannot be built for the baseline target (it uses SSSE3's
// PALIGNR unconditionally, since DPDK's rte_config.h assumes corei7), so the
// projflags copy pairs rte_raw_cksum with glibc memcpy instead.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <rte_ip.h>
#if defined(__SSSE3__)
#include <rte_memcpy.h>
#define CN_DPDK_MEMCPY rte_memcpy
#else
#define CN_DPDK_MEMCPY std::memcpy
#endif

#define CN_CAT2(a, b) a##b
#define CN_CAT(a, b) CN_CAT2(a, b)
#define CN_FN(name) CN_CAT(CN_CAT(cnbench_dpdk_, CN_DPDK_FLAVOUR), name)

extern "C" {
uint16_t CN_FN(_raw_cksum)(const void *buf, size_t len);
uint16_t CN_FN(_copy_cksum)(void *dst, const void *src, size_t len);

uint16_t CN_FN(_raw_cksum)(const void *buf, size_t len)
{
	return rte_raw_cksum(buf, len);
}

// DPDK has no fused copy+checksum: a copy, then rte_raw_cksum.
uint16_t CN_FN(_copy_cksum)(void *dst, const void *src, size_t len)
{
	CN_DPDK_MEMCPY(dst, src, len);
	return rte_raw_cksum(dst, len);
}
}
