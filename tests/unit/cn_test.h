/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the cmocka test programs. cmocka's assert_* macros are not
 * affected by NDEBUG, so every check here holds in release builds. */
#ifndef CN_TEST_H
#define CN_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
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
 * Under an emulator the program cannot execute itself directly (the host
 * kernel cannot run its ELF): the words of CN_TEST_WRAPPER, when set
 * (tests/meson.build), are run with the program and @arg after them.
 * (tests/unit/cn_test.c, linked into every unit test program.)
 */
int cn_test_rerun(const char *disable, const char *arg, char *out, size_t outlen);

/* cn_test_rerun(@disable, @arg), then require that the child exited 0 and,
 * unless @want is NULL, printed exactly @want (at most 255 bytes). */
void cn_test_rerun_expect(const char *disable, const char *arg, const char *want);

/* The rungs every dispatch fallback test starts with, the child being this
 * program with @arg: every feature masked ("all") must leave @generic. On
 * aarch64 (@neon_cpu nonzero) x86 names mask nothing, so masking "avx2"
 * must leave @neon, and masking "neon" @generic. Returns @neon_cpu: nonzero
 * when the caller's x86 rungs do not apply. */
int cn_test_rerun_common(const char *arg, int neon_cpu, const char *generic, const char *neon);

/*
 * The buffer of an every-length, every-alignment sweep up to @max_len:
 * @max_len + 64 (alignments 0..63) + 64 bytes, 64-byte aligned, every byte
 * @byte, or (@byte < 0) random after cn_test_seed(@seed). Fails the test if
 * it cannot be allocated; free() it.
 */
unsigned char *cn_test_sweep_buf(size_t max_len, int byte, uint64_t seed);

/*
 * A sweep as a test of its own: CN_SWEEP(name, max_len, byte, seed, check)
 * in a test table runs @check(buf, @max_len) on cn_test_sweep_buf(@max_len,
 * @byte, @seed) under the name @name.
 */
struct cn_test_sweep {
	size_t max_len;
	int byte;
	uint64_t seed;
	void (*check)(const unsigned char *buf, size_t max_len);
};
void cn_test_sweep_run(void **state);
#define CN_SWEEP(test, ...)                                                              \
	{                                                                                \
		.name = #test, .test_func = cn_test_sweep_run,                           \
		.initial_state = &(struct cn_test_sweep){__VA_ARGS__}                    \
	}

/* The variant a dispatcher picks for CPU features @f: the name of the
 * first rung of @ladder (ended by need 0) whose features @f has all of,
 * "generic" if none. */
struct cn_test_rung {
	uint64_t need;
	const char *name;
};
const char *cn_test_choice(uint64_t f, const struct cn_test_rung *ladder);

/* mkstemp(@path) (a template ending in XXXXXX), closed again: @path names
 * a new empty file that the test removes. Fails the test if it cannot. */
void cn_test_tmpfile(char *path);

/* system(@cmd): its exit status, 128 if a signal ended it, -1 if it could
 * not run. */
int cn_test_sh(const char *cmd);

/*
 * main() of a test that runs inside a network namespace of its own: with
 * the argument "--inside" returns @inside(); otherwise creates the
 * namespace "<ns_prefix>-<pid>", runs this program again inside it with
 * "--inside" (at most 120 s; SIGTERM/SIGINT kill the child), deletes the
 * namespace and returns the child's exit status (77, skip, where creating
 * a namespace is not allowed; 1 on a setup failure, named on stderr
 * after @prog).
 */
int cn_test_netns_main(const char *prog, const char *ns_prefix, int argc, char **argv,
		       int (*inside)(void));

/*
 * The fixtures' buffer pools (tests/unit/cn_test_lib.c, only in programs
 * that link libcachenet): a small pool of @nsmall mbufs with per-thread
 * caches of @cache, a cluster pool of @nclusters clusters of @cluster_size
 * bytes (0 = CN_MBUF_CLUSTER_SIZE) with caches of @cache / 2. Returns 0, or
 * -1 if either could not be made (the other may be).
 */
struct cn_mbuf_pool;
int cn_test_pools(struct cn_mbuf_pool **mp, struct cn_mbuf_pool **cp, uint32_t nsmall,
		  uint32_t nclusters, uint32_t cache, uint32_t cluster_size);
/* The mbufs (*m) and clusters (*c) in use in the two pools. */
void cn_test_pools_in_use(struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp, uint32_t *m,
			  uint32_t *c);
/* Fails the test unless exactly @m0 mbufs and @c0 clusters are in use (what
 * was in use before the test: 0, or what the fixture's stacks keep; with 0
 * and 0, also unless every object got was put back), then destroys both
 * pools, requiring that each destroy succeeds. */
void cn_test_pools_free(struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp, uint32_t m0,
			uint32_t c0);

/* A fixture that is the two pools alone (*state), and the setup() and
 * teardown() that make and check it: CN_TEST_POOLS_FIXTURE(n, n, cache). */
struct cn_test_pools_fx {
	struct cn_mbuf_pool *mp, *cp;
};
int cn_test_pools_fx_setup(void **state, uint32_t nsmall, uint32_t nclusters, uint32_t cache);
int cn_test_pools_fx_teardown(void **state);
#define CN_TEST_POOLS_FIXTURE(nsmall, nclusters, cache)                          \
	static int setup(void **state)                                           \
	{                                                                        \
		return cn_test_pools_fx_setup(state, nsmall, nclusters, cache);  \
	}                                                                        \
	static int teardown(void **state)                                        \
	{                                                                        \
		return cn_test_pools_fx_teardown(state);                         \
	}

/* A capture into a new file named after the template @path (XXXXXX at its
 * end), open (cn_pcap_open, no snap length); fails the test if it cannot. */
struct cn_pcap;
struct cn_pcap *cn_test_pcap_open(char *path);

/* A test run with the program's setup() and teardown(); one without. */
#define CN_FX(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
#define CN_T(test) cmocka_unit_test(test)

/*
 * skip() the running test under an emulator (CN_TEST_WRAPPER set), saying
 * on stderr that @what is why: on this project's machines qemu-user 7.2
 * hung in every forked child and in every pthread_create(), even in a
 * program that does nothing else (posix_spawn works there).
 */
void cn_test_skip_emulated(const char *what);

/* fork() for a test whose child runs on without exec (to watch it abort);
 * cn_test_skip_emulated() first. */
pid_t cn_test_fork(void);

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

static inline uint64_t cn_test_rnd64(void)
{
	cn_test_rs ^= cn_test_rs >> 12;
	cn_test_rs ^= cn_test_rs << 25;
	cn_test_rs ^= cn_test_rs >> 27;
	return cn_test_rs * 2685821657736338717ull;
}

/* The upper half of cn_test_rnd64(). */
static inline uint32_t cn_test_rnd(void)
{
	return (uint32_t)(cn_test_rnd64() >> 32);
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
