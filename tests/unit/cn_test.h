/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the cmocka test programs. cmocka's assert_* macros are not
 * affected by NDEBUG, so every check here holds in release builds. */
#ifndef CN_TEST_H
#define CN_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Sanitizer builds cannot run under valgrind. */
#if defined(__SANITIZE_ADDRESS__)
#define CN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CN_TEST_SANITIZED 1
#endif
#endif

/*
 * Run this test program again as a child with CACHENET_CPU_DISABLE=@disable
 * and the single argument @arg (the program's main() recognises it and runs
 * its child part), capture the child's stdout into @out (NUL terminated,
 * truncated to @outlen - 1 bytes) and return its wait status. A variant
 * table is chosen once per process, so a forced fallback needs a new one.
 * (tests/unit/cn_test.c, linked into every unit test program.)
 */
int cn_test_rerun(const char *disable, const char *arg, char *out, size_t outlen);

/*
 * @regions read-write regions of @len bytes each (a whole number of pages),
 * each between two PROT_NONE pages, for tests that a kernel reads and writes
 * nothing outside [p, p+len): put a buffer's first byte at lo[i] or its last
 * byte just before hi[i], and any access past that end faults. Sanitizers
 * cannot see what a masked vector load reads; the MMU can. Fails the test
 * if the mapping cannot be made. Release with cn_test_guarded_free().
 */
#define CN_TEST_GUARDED_MAX 4
struct cn_test_guarded {
	unsigned char *map;
	size_t map_len;
	unsigned char *lo[CN_TEST_GUARDED_MAX]; /* first byte of region i */
	unsigned char *hi[CN_TEST_GUARDED_MAX]; /* one past its last byte */
};
void cn_test_guarded_map(struct cn_test_guarded *g, unsigned regions, size_t len);
void cn_test_guarded_free(struct cn_test_guarded *g);

/*
 * Turn the TX checksum offload of interface @ifname off (ethtool's
 * ETHTOOL_STXCSUM through SIOCETHTOOL), so that the frames it sends carry
 * complete checksums: a veth otherwise leaves them partial, and a reader
 * below the kernel's stack (AF_XDP, AF_PACKET) sees them wrong.
 * Returns 0, or -1 with errno.
 */
int cn_test_tx_csum_off(const char *ifname);

/*
 * xorshift64*: fixed seeds give the same sequence on every machine. One
 * state per test program (static in each file that includes this header);
 * seed it with cn_test_seed() — a zero seed would stay zero.
 */
static uint64_t cn_test_rs = 1;

static inline void cn_test_seed(uint64_t seed)
{
	cn_test_rs = seed ? seed : 1;
}

static inline uint32_t cn_test_rnd(void)
{
	cn_test_rs ^= cn_test_rs >> 12;
	cn_test_rs ^= cn_test_rs << 25;
	cn_test_rs ^= cn_test_rs >> 27;
	return (uint32_t)((cn_test_rs * 2685821657736338717ull) >> 32);
}

/* Uniform-ish in [0, n); 0 when n is 0. */
static inline uint32_t cn_test_rndn(uint32_t n)
{
	return n ? cn_test_rnd() % n : 0;
}

static inline void cn_test_fill_rand(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)cn_test_rnd();
}

#endif
