/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests of the csum module: every variant this CPU can run, and the
 * dispatcher, against the byte-pair reference (cn_csum_partial_ref) on
 * random data with fixed seeds at all lengths 0..2048 and all alignments
 * 0..63, carry storms (all-0xff), large lengths, known vectors, combining
 * at odd split points, copy+checksum with guard bytes, buffers against
 * PROT_NONE pages, RFC 1624 updates,
 * and dispatcher fallback under CACHENET_CPU_DISABLE (the program re-runs
 * itself with the variable set, since cpu.h reads it once per process).
 *
 * Assertions are cmocka's, which do not depend on NDEBUG.
 */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachenet/cpu.h"
#include "cachenet/csum.h"

#define MAX_IMPLS 8
#define ALIGNS 64
#define SMALL_MAX_LEN 2048

/* What each vector variant needs (src/csum/csum.c explains the masks). */
#define AVX512_NEED (CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL | \
		     CN_CPU_AVX2 | CN_CPU_BMI2)
#define AVX2_NEED (CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define VNNI_NEED (AVX512_NEED | CN_CPU_AVX512VNNI)

/* Variants under test: the runnable ones plus the dispatcher itself. */
struct variant {
	const char *name;
	cn_csum_partial_fn partial;
	cn_csum_copy_fn copy;
};

static struct variant variants[MAX_IMPLS + 2];
static size_t n_variants;

/* Every variant, and the dispatched one, into variants[]; named on stderr. */
static void collect_variants(void)
{
	const struct cn_csum_impl *im[MAX_IMPLS];
	size_t n = cn_csum_impls(im, MAX_IMPLS);

	n_variants = 0;
	for (size_t i = 0; i < n && i < MAX_IMPLS; i++)
		variants[n_variants++] = (struct variant){ im[i]->name, im[i]->partial, im[i]->copy };
	variants[n_variants++] = (struct variant){ "dispatch", cn_csum_partial, cn_csum_copy };
	variants[n_variants++] = (struct variant){ "dispatch-out-of-line", cn_csum_partial_dispatch,
						   cn_csum_copy };
	fprintf(stderr, "csum variants under test:");
	for (size_t v = 0; v < n_variants; v++)
		fprintf(stderr, " %s", variants[v].name);
	fprintf(stderr, " (dispatch -> %s)\n", cn_csum_impl_name());
}

/* A 16-bit value as stored from its two bytes in memory order. */
static uint16_t stored16(unsigned char b0, unsigned char b1)
{
	unsigned char b[2] = { b0, b1 };
	uint16_t v;
	memcpy(&v, b, 2);
	return v;
}

static void *xmalloc(size_t n)
{
	void *p = NULL;
	/* 64-byte aligned, so offsets 0..63 are the alignments tested. */
	assert_int_equal(posix_memalign(&p, 64, n), 0);
	return p;
}

/* Every variant's partial sum of [p, p + len) from s0 against the
 * reference; pass and a (the alignment) name the case in a failure (pass
 * -1: no pattern pass). */
static void check_partial(const unsigned char *p, size_t len, uint32_t s0, int pass, size_t a)
{
	uint16_t want = cn_csum_fold(cn_csum_partial_ref(p, len, s0));

	for (size_t v = 0; v < n_variants; v++) {
		uint16_t got = cn_csum_fold(variants[v].partial(p, len, s0));
		if (got != want)
			fail_msg("%s: pass %d align %zu len %zu start %#x: got %#06x want %#06x",
				 variants[v].name, pass, a, len, s0, got, want);
	}
}

/* Compare every variant with the reference over [buf+a, +n) for a = 0..63,
 * n = 0..max, with a few starting sums. */
static void check_all_lengths(const unsigned char *buf, size_t max)
{
	static const uint32_t starts[] = { 0, 0xffffffffu, 0x0001fffeu };

	for (size_t n = 0; n <= max; n++)
		for (size_t a = 0; a < ALIGNS; a++)
			check_partial(buf + a, n, starts[(n + a) % 3], -1, a);
}

/* ------------------------------------------------------------------ tests */

static void test_fold_and_add(void **state)
{
	(void)state;
	assert_int_equal(cn_csum_fold(0), 0);
	assert_int_equal(cn_csum_fold(0xffff), 0xffff);
	assert_int_equal(cn_csum_fold(0x10000), 1);
	assert_int_equal(cn_csum_fold(0x1fffe), 0xffff);
	assert_int_equal(cn_csum_fold(0xffffffffu), 0xffff);
	assert_int_equal(cn_csum_fold(UINT64_MAX), 0xffff);
	assert_int_equal(cn_csum_fold(0x0001000000000000ull), 1);
	assert_int_equal(cn_csum_add(0xffffffffu, 1), 1);
	assert_int_equal(cn_csum_add(0xffffffffu, 0xffffffffu), 0xffffffffu);
	assert_int_equal(cn_csum_add(0, 0), 0);
	/* The fast fold against the textbook loop, on random and edge values. */
	cn_test_seed(10);
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = cn_test_rnd64();
		if (i < 64)
			v = ~0ull >> i;
		else if (i < 128)
			v = 1ull << (i - 64);
		else if (i & 1)
			v >>= cn_test_rnd64() % 64;
		uint64_t w = v;
		while (w >> 16)
			w = (w & 0xffff) + (w >> 16);
		if (cn_csum_fold(v) != w)
			fail_msg("fold(%#llx) = %#x, want %#llx", (unsigned long long)v, cn_csum_fold(v),
				 (unsigned long long)w);
		if (cn_csum_fold(cn_csum_add((uint32_t)v, (uint32_t)(v >> 32))) != w)
			fail_msg("add/fold of %#llx", (unsigned long long)v);
	}
	/* swab is a byte swap after folding */
	assert_int_equal(cn_csum_fold(cn_csum_swab(0x1234)), 0x3412);
	assert_int_equal(cn_csum_fold(cn_csum_swab(0xabcd0000u)), 0xcdab);
}

/* RFC 1071 section 3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2. */
static void test_rfc1071_example(void **state)
{
	static const unsigned char ex[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t want = stored16(0xdd, 0xf2);
	unsigned char buf[64 + 8];

	(void)state;
	assert_int_equal(cn_csum_fold(cn_csum_partial_ref(ex, 8, 0)), want);
	for (size_t a = 0; a < 64; a++) {
		memcpy(buf + a, ex, 8);
		for (size_t v = 0; v < n_variants; v++)
			assert_int_equal(cn_csum_fold(variants[v].partial(buf + a, 8, 0)), want);
	}
	assert_int_equal(cn_csum(ex, 8), (uint16_t)~want);
	/* Split after the odd byte 3: 00 01 f2 | 03 f4 f5 f6 f7. */
	uint32_t a = cn_csum_partial(ex, 3, 0), b = cn_csum_partial(ex + 3, 5, 0);
	assert_int_equal(cn_csum_fold(cn_csum_combine(a, b, 3)), want);
}

/*
 * Real packets captured with an AF_PACKET socket on lo of the project's VM
 * (Linux 6.18), checksums computed by the kernel, not by us:
 *  - an ICMP echo reply to 127.0.0.1: IPv4 header checksum 0x026b (Linux
 *    ip_send_check) and ICMP checksum 0x1cdf over 28 bytes;
 *  - an ICMPv6 echo request to ::1 sent on a raw ICMPv6 socket, whose
 *    checksum 0x907f the kernel computes over the IPv6 pseudo-header and 29
 *    (odd) bytes of ICMPv6 (RFC 3542 3.1).
 * Plus the header of the widely reproduced example in Wikipedia's "Internet
 * checksum" article (192.168.0.1 -> 192.168.0.199, checksum 0xb861).
 */
static const unsigned char pkt_icmp4_reply[48] = {
	0x45, 0x00, 0x00, 0x30, 0x7a, 0x60, 0x00, 0x00, 0x40, 0x01, 0x02, 0x6b,
	0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x1c, 0xdf, 0x43, 0x21, 0x00, 0x07, 'c', 'a', 'c', 'h',
	'e', 'n', 'e', 't', ' ', 'i', 'p', 'v', '4', ' ', 'v', 'e', 'c', 't', 'o', 'r',
};

static const unsigned char pkt_icmp6_request[69] = {
	0x60, 0x0d, 0x2a, 0xb0, 0x00, 0x1d, 0x3a, 0x40,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0x80, 0x00, 0x90, 0x7f, 0x12, 0x34, 0x00, 0x01, 'c', 'a', 'c', 'h', 'e', 'n',
	'e', 't', ' ', 'c', 's', 'u', 'm', ' ', 'v', 'e', 'c', 't', 'o', 'r', 0x01,
};

static const unsigned char hdr_wikipedia[20] = {
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
};

static void check_ipv4_header(const unsigned char *hdr_in, unsigned char c0, unsigned char c1)
{
	unsigned char buf[64 + 60];

	for (size_t a = 0; a < 64; a++) {
		unsigned char *h = buf + a;
		memcpy(h, hdr_in, 20);
		assert_int_equal(cn_csum_ipv4_hdr(h, 20), 0);   /* verifies */
		h[10] = h[11] = 0;
		uint16_t c = cn_csum_ipv4_hdr(h, 20);
		assert_int_equal(c, stored16(c0, c1));           /* recomputes */
		assert_int_equal(cn_csum(h, 20), c);
		assert_int_equal(cn_csum_fold(cn_csum_partial_ref(h, 20, 0)), (uint16_t)~c);
	}
}

static void test_real_packets(void **state)
{
	unsigned char buf[64 + 128];

	(void)state;
	check_ipv4_header(pkt_icmp4_reply, 0x02, 0x6b);
	check_ipv4_header(hdr_wikipedia, 0xb8, 0x61);

	/* ICMPv4 (no pseudo-header): 28 bytes verify to zero, recompute. */
	for (size_t a = 0; a < 64; a++) {
		unsigned char *icmp = buf + a;
		memcpy(icmp, pkt_icmp4_reply + 20, 28);
		for (size_t v = 0; v < n_variants; v++)
			assert_int_equal(cn_csum_fold(variants[v].partial(icmp, 28, 0)), 0xffff);
		icmp[2] = icmp[3] = 0;
		assert_int_equal(cn_csum(icmp, 28), stored16(0x1c, 0xdf));
	}

	/* ICMPv6: pseudo-header + 29 odd bytes, at every alignment. */
	const unsigned char *ip6 = pkt_icmp6_request;
	uint16_t plen = (uint16_t)(ip6[4] << 8 | ip6[5]);
	assert_int_equal(plen, 29);
	for (size_t a = 0; a < 64; a++) {
		unsigned char *icmp = buf + a;
		memcpy(icmp, ip6 + 40, plen);
		uint32_t ph = cn_csum_pseudo_ipv6(ip6 + 8, ip6 + 24, ip6[6], plen);
		for (size_t v = 0; v < n_variants; v++)
			assert_int_equal(cn_csum_fold(variants[v].partial(icmp, plen, ph)), 0xffff);
		icmp[2] = icmp[3] = 0;
		assert_int_equal((uint16_t)~cn_csum_fold(cn_csum_partial(icmp, plen, ph)),
				 stored16(0x90, 0x7f));
	}
}

/* Pseudo-header helpers against the RFC layouts written out as bytes. */
static void test_pseudo_headers(void **state)
{
	(void)state;
	cn_test_seed(11);
	for (int i = 0; i < 2000; i++) {
		unsigned char ph4[12], ph6[40];
		cn_be32_t sa, da;
		uint8_t proto = (uint8_t)cn_test_rnd64();
		uint16_t len4 = (uint16_t)cn_test_rnd64();
		uint32_t len6 = (i & 1) ? (uint32_t)cn_test_rnd64() : (uint16_t)cn_test_rnd64();

		cn_test_fill_rand(ph4, 8);
		memcpy(&sa, ph4, 4);
		memcpy(&da, ph4 + 4, 4);
		ph4[8] = 0;
		ph4[9] = proto;
		ph4[10] = (unsigned char)(len4 >> 8);
		ph4[11] = (unsigned char)len4;
		assert_int_equal(cn_csum_fold(cn_csum_pseudo_ipv4(sa, da, proto, len4)),
				 cn_csum_fold(cn_csum_partial_ref(ph4, 12, 0)));

		cn_test_fill_rand(ph6, 32);
		ph6[32] = (unsigned char)(len6 >> 24);
		ph6[33] = (unsigned char)(len6 >> 16);
		ph6[34] = (unsigned char)(len6 >> 8);
		ph6[35] = (unsigned char)len6;
		ph6[36] = ph6[37] = ph6[38] = 0;
		ph6[39] = proto;
		assert_int_equal(cn_csum_fold(cn_csum_pseudo_ipv6(ph6, ph6 + 16, proto, len6)),
				 cn_csum_fold(cn_csum_partial_ref(ph6, 40, 0)));
	}
}

static void test_ipv4_hdr_options(void **state)
{
	unsigned char h[61];

	(void)state;
	cn_test_seed(12);
	for (size_t ihl = 20; ihl <= 60; ihl += 4) {
		for (int i = 0; i < 200; i++) {
			cn_test_fill_rand(h + 1, ihl);
			assert_int_equal(cn_csum_ipv4_hdr(h + 1, ihl),
					 (uint16_t)~cn_csum_fold(cn_csum_partial_ref(h + 1, ihl, 0)));
		}
	}
}


/* Carry storms: all-0xff data makes every add carry. Up to past the
 * AVX-512 kernels' straight-line ranges (block offset + length <= 2047,
 * csum_avx512.c): their largest groups at their largest lane values. */
#define ALL_ONES_MAX_LEN 2100
static void test_all_ones(void **state)
{
	unsigned char *buf = cn_test_sweep_buf(ALL_ONES_MAX_LEN, 0xff, 0);

	(void)state;
	check_all_lengths(buf, ALL_ONES_MAX_LEN);
	/* Nonzero data never folds to +0, and all-ones sums to -0. */
	for (size_t v = 0; v < n_variants; v++)
		for (size_t len = 2; len <= ALL_ONES_MAX_LEN; len += 2)
			assert_int_equal(cn_csum_fold(variants[v].partial(buf + 1, len, 0)), 0xffff);
	free(buf);
}

/* Zeros fold to +0 (0x0000), not -0, in every variant. */
static void test_all_zeros(void **state)
{
	unsigned char *buf = cn_test_sweep_buf(SMALL_MAX_LEN, 0, 0);

	(void)state;
	for (size_t v = 0; v < n_variants; v++) {
		for (size_t len = 0; len <= SMALL_MAX_LEN; len += 7)
			for (size_t a = 0; a < ALIGNS; a += 5)
				assert_int_equal(variants[v].partial(buf + a, len, 0), 0);
		assert_int_equal(variants[v].partial(NULL, 0, 0x1234), 0x1234);
		assert_int_equal(variants[v].copy(NULL, NULL, 0, 0x1234), 0x1234);
	}
	free(buf);
}

/* Few-nonzero-bytes data: a lone byte at each position catches lanes or
 * bytes summed with the wrong weight (which random data may average out). */
static void test_single_byte(void **state)
{
	unsigned char *buf = xmalloc(512);

	(void)state;
	for (size_t len = 1; len <= 300; len += (len < 140 ? 1 : 37)) {
		for (size_t a = 0; a < ALIGNS; a += 3) {
			for (size_t k = 0; k < len; k++) {
				memset(buf, 0, 512);
				buf[a + k] = (unsigned char)(0x80 | k);
				uint16_t want = cn_csum_fold(cn_csum_partial_ref(buf + a, len, 0));
				for (size_t v = 0; v < n_variants; v++)
					if (cn_csum_fold(variants[v].partial(buf + a, len, 0)) != want)
						fail_msg("%s: len %zu align %zu byte %zu", variants[v].name,
							 len, a, k);
			}
		}
	}
	free(buf);
}

/*
 * Partial sums whose block offset + length (the bytes from the buffer's
 * 64-byte block start to its end) lies just below, at and just above the
 * edges of the AVX-512 kernel's straight-line range (65..2047) and of its
 * groups of 1, 2, 4, 8 and 16 blocks after the first, at alignments that
 * put the head block's mask at its extremes: random, all-0xff and
 * alternating 0xff/0x00 blocks (carries in some lanes only), from three
 * starting sums.
 */
#define EDGE_BUF (2048 + 3 + 64)
static void test_partial_range_edges(void **state)
{
	static const size_t edges[] = { 64, 65, 128, 129, 192, 320, 576, 1024, 1088, 1984, 2047, 2048 };
	static const size_t aligns[] = { 0, 1, 2, 7, 31, 32, 33, 62, 63 };
	static const uint32_t starts[] = { 0, 0xffffffffu, 0x0001fffeu };
	unsigned char *buf = xmalloc(EDGE_BUF);

	(void)state;
	cn_test_seed(13);
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 0)
			cn_test_fill_rand(buf, EDGE_BUF);
		for (size_t i = 0; pass > 0 && i < EDGE_BUF; i++)
			buf[i] = pass == 1 || (i / 64) % 2 == 0 ? 0xff : 0x00;
		for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
			for (size_t j = 0; j < sizeof(aligns) / sizeof(aligns[0]); j++) {
				size_t a = aligns[j];
				for (size_t span = edges[e] - 3; span <= edges[e] + 3; span++) {
					if (span < a)
						continue;
					check_partial(buf + a, span - a, starts[(span + a) % 3], pass, a);
				}
			}
		}
	}
	free(buf);
}

static void test_large_lengths(void **state)
{
	/* Past 1 MB the VNNI kernel works in 1 MB pieces whose 32-bit lanes
	 * must not overflow: all-0x00 and all-0xFF words are its extremes. Up
	 * to 2^11 blocks (128 KB) it adds its 16 lanes as one int32_t, beyond
	 * it widens them first: lengths on both sides of that edge. */
	static const size_t lens[] = { 65535, 65536, 65537, 100000, 100001, 131008, 131071,
				       131072, 131073, 131135, (size_t)1 << 20,
				       ((size_t)1 << 20) + 3, ((size_t)3 << 20) + 5 };
	static const size_t aligns[] = { 0, 1, 2, 7, 32, 63 };
	size_t cap = ((size_t)3 << 20) + 128;
	unsigned char *buf = xmalloc(cap), *dst = xmalloc(cap);

	(void)state;
	cn_test_seed(2);
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 0)
			cn_test_fill_rand(buf, cap);
		else
			memset(buf, pass == 1 ? 0xff : 0x00, cap);
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (size_t j = 0; j < sizeof(aligns) / sizeof(aligns[0]); j++) {
				const unsigned char *p = buf + aligns[j];
				uint16_t want = cn_csum_fold(cn_csum_partial_ref(p, lens[i], 7));
				for (size_t v = 0; v < n_variants; v++) {
					assert_int_equal(cn_csum_fold(variants[v].partial(p, lens[i], 7)), want);
					unsigned char *d = dst + aligns[(j + 1) % 6];
					assert_int_equal(cn_csum_fold(variants[v].copy(d, p, lens[i], 7)), want);
					assert_memory_equal(d, p, lens[i]);
				}
			}
		}
	}
	free(buf);
	free(dst);
}

/* sum(a||b) from sum(a), sum(b), len(a): every split point, odd ones
 * included, three-way splits, and the documented even-offset shortcut of
 * continuing a partial sum. */
static void test_combine(void **state)
{
	size_t n = 3001;
	unsigned char *buf = xmalloc(n + 64);

	(void)state;
	cn_test_seed(3);
	cn_test_fill_rand(buf, n + 64);
	for (size_t a = 0; a < 3; a++) {
		const unsigned char *p = buf + a;
		for (size_t len = 0; len <= n; len += (len < 300 ? 1 : 97)) {
			uint16_t want = cn_csum_fold(cn_csum_partial_ref(p, len, 0));
			for (size_t k = 0; k <= len; k += (len < 80 ? 1 : 13)) {
				for (size_t v = 0; v < n_variants; v++) {
					uint32_t sa = variants[v].partial(p, k, 0);
					uint32_t sb = variants[v].partial(p + k, len - k, 0);
					if (cn_csum_fold(cn_csum_combine(sa, sb, k)) != want)
						fail_msg("%s: combine len %zu split %zu", variants[v].name, len, k);
					if (!(k & 1))
						assert_int_equal(cn_csum_fold(variants[v].partial(p + k, len - k, sa)),
								 want);
				}
				/* three pieces, the middle one at an odd offset */
				size_t m = k + (len - k) / 3;
				uint32_t s1 = cn_csum_partial(p, k, 0);
				uint32_t s2 = cn_csum_partial(p + k, m - k, 0);
				uint32_t s3 = cn_csum_partial(p + m, len - m, 0);
				uint32_t s12 = cn_csum_combine(s1, s2, k);
				assert_int_equal(cn_csum_fold(cn_csum_combine(s12, s3, m)), want);
			}
		}
	}
	free(buf);
}

/* Copy+checksum: dst byte-exact, guard bytes around dst untouched, sum equal
 * to the reference over src, at all lengths 0..2048 with all source
 * alignments and destination alignments that vary against them. */
#define GUARD 64
static void check_copy(const unsigned char *src_base, size_t max)
{
	unsigned char *dbuf = xmalloc(max + 2 * GUARD + ALIGNS);
	unsigned char pattern[GUARD];

	memset(pattern, 0xa5, GUARD);
	for (size_t n = 0; n <= max; n++) {
		for (size_t a = 0; a < ALIGNS; a++) {
			const unsigned char *src = src_base + a;
			size_t da = (a * 37 + n * 11) % ALIGNS;
			uint32_t s0 = (uint32_t)(n * 2654435761u);
			uint16_t want = cn_csum_fold(cn_csum_partial_ref(src, n, s0));
			for (size_t v = 0; v < n_variants; v++) {
				/* 0xa5 guards on both sides. A store that spills
				 * stays within its 64-byte block, so inside the
				 * guards, and it writes source bytes, which are not
				 * all 0xa5 (random or all-0xff data). */
				unsigned char *d = dbuf + GUARD + da;
				memset(d - GUARD, 0xa5, n + 2 * GUARD);
				uint16_t got = cn_csum_fold(variants[v].copy(d, src, n, s0));
				if (got != want)
					fail_msg("%s: copy len %zu src align %zu dst align %zu: %#06x != %#06x",
						 variants[v].name, n, a, da, got, want);
				if (memcmp(d, src, n) != 0)
					fail_msg("%s: copy len %zu src align %zu dst align %zu: data differs",
						 variants[v].name, n, a, da);
				if (memcmp(d - GUARD, pattern, GUARD) != 0)
					fail_msg("%s: copy len %zu src align %zu dst align %zu: wrote before dst",
						 variants[v].name, n, a, da);
				if (memcmp(d + n, pattern, GUARD) != 0)
					fail_msg("%s: copy len %zu src align %zu dst align %zu: wrote after dst",
						 variants[v].name, n, a, da);
			}
		}
	}
	free(dbuf);
}

/* Every (src, dst) alignment pair, at lengths around the vector block sizes
 * and the edges of the AVX-512 copy's straight-line range (65..2047 bytes
 * from dst's block start). */
#define PAIRS_BUF 2304
static void test_copy_alignment_pairs(void **state)
{
	static const size_t lens[] = { 1,   2,    3,    31,   32,   33,   63,   64,  65,
				       127, 128,  129,  191,  255,  256,  257,  300, 511,
				       512, 513,  576,  959,  960,  1023, 1024, 1025, 1460,
				       1983, 1984, 1985, 2047, 2048, 2049 };
	unsigned char *src = xmalloc(PAIRS_BUF), *dst = xmalloc(PAIRS_BUF + 2 * GUARD);

	(void)state;
	cn_test_seed(5);
	cn_test_fill_rand(src, PAIRS_BUF);
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = lens[li];
		for (size_t a = 0; a < ALIGNS; a++) {
			uint16_t want = cn_csum_fold(cn_csum_partial_ref(src + a, n, 0));
			for (size_t da = 0; da < ALIGNS; da++) {
				for (size_t v = 0; v < n_variants; v++) {
					memset(dst, 0x5a, PAIRS_BUF + 2 * GUARD);
					unsigned char *d = dst + GUARD + da;
					if (cn_csum_fold(variants[v].copy(d, src + a, n, 0)) != want ||
					    memcmp(d, src + a, n) != 0 || dst[GUARD + da - 1] != 0x5a ||
					    d[n] != 0x5a)
						fail_msg("%s: copy len %zu src %zu dst %zu", variants[v].name, n,
							 a, da);
				}
			}
		}
	}
	free(src);
	free(dst);
}

/* RFC 1624: HC' = ~(~HC + ~m + m'). */
static void test_update_rfc1624(void **state)
{
	(void)state;
	/* Section 3's example: other words sum to 0xcd7a, m 0x5555 -> 0x3285.
	 * HC = ~(0xcd7a + 0x5555) = 0xdd2f; recomputation gives 0x0000, which
	 * equation 3 reproduces (equation 2 would give 0xffff). Byte order
	 * does not matter: the same arithmetic holds on swapped values. */
	assert_int_equal(cn_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	assert_int_equal(cn_csum_update16(0x2fdd, 0x5555, 0x8532), 0x0000);

	/* The same as a packet in memory: a 20-byte header whose sum without
	 * the field comes to 0xcd7a. */
	unsigned char h[20] = { 0x45, 0x00, 0x00, 0x14, 0, 0, 0, 0, 0x40, 0x06 };
	/* choose bytes 12..13 so that the words other than [4..5] sum to 0xcd7a */
	uint32_t s = 0;
	for (int i = 0; i < 20; i += 2)
		if (i != 4)
			s += (uint32_t)(h[i] << 8 | h[i + 1]);
	s = (s & 0xffff) + (s >> 16);
	uint16_t fill = (uint16_t)(0xcd7a - s);
	h[12] = (unsigned char)(fill >> 8);
	h[13] = (unsigned char)fill;
	h[4] = 0x55;
	h[5] = 0x55;
	h[10] = h[11] = 0;
	uint16_t hc = cn_csum_ipv4_hdr(h, 20);
	assert_int_equal(hc, stored16(0xdd, 0x2f));
	memcpy(h + 10, &hc, 2);
	uint16_t m = stored16(0x55, 0x55), m2 = stored16(0x32, 0x85);
	uint16_t hc2 = cn_csum_update16(hc, m, m2);
	h[4] = 0x32;
	h[5] = 0x85;
	h[10] = h[11] = 0;
	assert_int_equal(cn_csum_ipv4_hdr(h, 20), 0x0000); /* recomputed */
	assert_int_equal(hc2, 0x0000);                      /* incremental */

	/* Edge values of the field and of the checksum. */
	static const uint16_t edge[] = { 0x0000, 0xffff, 0x0001, 0xfffe, 0x8000, 0x7fff };
	for (size_t i = 0; i < 6; i++)
		for (size_t j = 0; j < 6; j++)
			for (size_t k = 0; k < 6; k++) {
				/* HC 0xffff with m 0xffff cannot come from a real
				 * header (it would need the covered sum to be 0 while
				 * containing 0xffff); with m' 0 it yields -0. */
				if (edge[k] == 0xffff && edge[i] == 0xffff && edge[j] == 0)
					continue;
				uint16_t r = cn_csum_update16(edge[k], edge[i], edge[j]);
				/* ~r must be congruent to ~HC - m + m' modulo 0xffff */
				uint32_t lhs = (uint16_t)~r;
				uint32_t rhs = (uint32_t)(uint16_t)~edge[k] + (uint16_t)~edge[i] + edge[j];
				assert_int_equal(lhs % 0xffff, rhs % 0xffff);
				/* never -0 as a result unless only zeros are covered */
				assert_int_not_equal(r, 0xffff);
			}
}

/* Incremental updates on random headers equal full recomputation, for 16-bit
 * fields at even offsets, 16-bit fields at odd offsets (values swapped),
 * and 32-bit fields; edge values included. */
static void test_update_random(void **state)
{
	unsigned char h[60];

	(void)state;
	cn_test_seed(6);
	for (int it = 0; it < 20000; it++) {
		size_t len = 20 + 4 * (cn_test_rnd64() % 11);
		cn_test_fill_rand(h, len);
		h[0] = 0x45; /* never an all-zero header */
		h[10] = h[11] = 0;
		uint16_t hc = cn_csum(h, len);
		memcpy(h + 10, &hc, 2);

		size_t off = 2 * (cn_test_rnd64() % (len / 2));
		if (off == 10)
			off = 12;
		int kind = (int)(cn_test_rnd64() % 3);
		uint16_t nv16 = (uint16_t)cn_test_rnd64();
		if (it % 7 == 0)
			nv16 = (it & 8) ? 0xffff : 0x0000;
		if (kind == 0) { /* 16-bit at even offset */
			uint16_t ov;
			memcpy(&ov, h + off, 2);
			hc = cn_csum_update16(hc, ov, nv16);
			memcpy(h + off, &nv16, 2);
		} else if (kind == 1 && off + 3 <= len && off != 8) {
			/* 16-bit at odd offset off+1: pass both byte-swapped */
			uint16_t ov;
			memcpy(&ov, h + off + 1, 2);
			uint16_t ovs = (uint16_t)(ov >> 8 | ov << 8), nvs = (uint16_t)(nv16 >> 8 | nv16 << 8);
			hc = cn_csum_update16(hc, ovs, nvs);
			memcpy(h + off + 1, &nv16, 2);
		} else if (off + 4 <= len && off != 8 && off != 10) {
			uint32_t ov, nv = (uint32_t)cn_test_rnd64();
			if (it % 5 == 0)
				nv = (it & 16) ? 0xffffffffu : 0;
			memcpy(&ov, h + off, 4);
			hc = cn_csum_update32(hc, ov, nv);
			memcpy(h + off, &nv, 4);
		} else {
			continue;
		}
		h[10] = h[11] = 0;
		uint16_t full = cn_csum(h, len);
		if (hc != full)
			fail_msg("iteration %d kind %d off %zu: incremental %#06x, recomputed %#06x", it,
				 kind, off, hc, full);
	}
}

/*
 * Buffers whose first byte is the first after a PROT_NONE page, or whose
 * last byte is the last before one, for the sum and both sides of the copy:
 * the vector kernels load whole aligned 64-byte blocks with byte masks at
 * both ends, and a mask that let one byte too many through would fault
 * here. Every variant, every length 0..GUARD_ALL_LEN (one block past the
 * AVX-512 straight-line ranges, 2047 bytes from the block start: against
 * the upper page their last group of blocks ends at the guard, from every
 * block offset) and larger ones up to the region.
 */
#define GUARD_ALL_LEN 2112
static void test_guard_pages(void **state)
{
	size_t span = 4 * (size_t)sysconf(_SC_PAGESIZE);
	static const size_t big[] = { 4095, 4096, 4097, 9000, 16383 };
	struct cn_test_guarded g;

	(void)state;
	cn_test_guarded_map(&g, 2, span); /* source, destination */
	cn_test_seed(43);
	cn_test_fill_rand(g.lo[0], span);
	for (size_t i = 0; i <= GUARD_ALL_LEN + sizeof(big) / sizeof(big[0]); i++) {
		size_t n = i <= GUARD_ALL_LEN ? i : big[i - GUARD_ALL_LEN - 1];
		if (n > span)
			continue;
		const unsigned char *srcs[2] = { g.lo[0], g.hi[0] - n };
		unsigned char *dsts[2] = { g.hi[1] - n, g.lo[1] };
		for (int e = 0; e < 2; e++) {
			uint16_t want = cn_csum_fold(cn_csum_partial_ref(srcs[e], n, 0));
			for (size_t v = 0; v < n_variants; v++) {
				if (cn_csum_fold(variants[v].partial(srcs[e], n, 0)) != want)
					fail_msg("%s partial at a guard: len %zu end %d", variants[v].name,
						 n, e);
				if (cn_csum_fold(variants[v].copy(dsts[e], srcs[e], n, 0)) != want)
					fail_msg("%s copy at a guard: len %zu end %d", variants[v].name, n, e);
				assert_memory_equal(dsts[e], srcs[e], n);
			}
		}
	}
	cn_test_guarded_free(&g);
}

static void test_impl_list(void **state)
{
	const struct cn_csum_impl *im[MAX_IMPLS];
	size_t n;

	(void)state;
	n = cn_csum_impls(im, MAX_IMPLS);
	assert_true(n >= 1 && n <= MAX_IMPLS);
	assert_string_equal(cn_csum_impl_name(), im[0]->name);
	assert_string_equal(im[n - 1]->name, "generic");
	assert_int_equal(cn_csum_impls(NULL, 0), n);
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(cn_csum_impl_find(im[i]->name), im[i]);
		assert_true(cn_cpu_has(im[i]->features));
	}
	assert_null(cn_csum_impl_find("no-such-variant"));
	/* What the CPU detects decides the first choice. */
	uint64_t f = cn_cpu_features();
	assert_string_equal(im[0]->name, cn_test_choice(f, (const struct cn_test_rung[]){
		{VNNI_NEED, "avx512vnni"}, {AVX512_NEED, "avx512"}, {AVX2_NEED, "avx2"},
		{CN_CPU_NEON, "neon"}, {0, NULL}}));
}

static void test_dispatch_fallback(void **state)
{
	uint64_t det = cn_cpu_features_detected();
	const char *a512 = (det & AVX512_NEED) == AVX512_NEED ? "avx512: avx512 avx2 generic\n" : NULL;

	(void)state;
	if (cn_test_rerun_common("--csum-child", (det & CN_CPU_NEON) != 0, "generic: generic\n",
				 "neon: neon generic\n"))
		return;
	/* The AVX-512 variant is compiled with -mavx2 and may contain AVX2
	 * instructions, so masking AVX2 off leaves only generic. */
	cn_test_rerun_expect("avx2", "--csum-child", "generic: generic\n");
	cn_test_rerun_expect("avx512", "--csum-child",
			     (det & AVX2_NEED) == AVX2_NEED ? "avx2: avx2 generic\n" : "generic: generic\n");
	cn_test_rerun_expect("vaes", "--csum-child",
			     (det & VNNI_NEED) == VNNI_NEED ? "avx512vnni: avx512vnni avx512 avx2 generic\n"
							    : a512);
	/* Without VNNI the plain AVX-512 kernel is chosen. */
	cn_test_rerun_expect("avx512vnni", "--csum-child", a512);
}

/* The child part of test_dispatch_fallback (cn_test_rerun_expect): prints
 * the dispatched variant and the list, then self-checks. */
static int child_main(void)
{
	const struct cn_csum_impl *im[MAX_IMPLS];
	size_t n = cn_csum_impls(im, MAX_IMPLS);
	unsigned char *buf = malloc(5000), *dst = malloc(5000);
	int bad = 0;

	printf("%s:", cn_csum_impl_name());
	for (size_t i = 0; i < n; i++)
		printf(" %s", im[i]->name);
	printf("\n");
	cn_test_seed(7);
	cn_test_fill_rand(buf, 5000);
	for (size_t len = 0; len < 4990; len += 13) {
		uint16_t want = cn_csum_fold(cn_csum_partial_ref(buf + 1, len, 0));
		bad |= cn_csum_fold(cn_csum_partial(buf + 1, len, 0)) != want;
		bad |= cn_csum_fold(cn_csum_copy(dst + 3, buf + 1, len, 0)) != want;
		bad |= memcmp(dst + 3, buf + 1, len) != 0;
	}
	free(buf);
	free(dst);
	fflush(stdout);
	return bad ? 3 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--csum-child") == 0)
		return child_main();
	collect_variants();

	const struct CMUnitTest tests[] = {
		CN_T(test_fold_and_add), CN_T(test_rfc1071_example), CN_T(test_real_packets),
		CN_T(test_pseudo_headers), CN_T(test_ipv4_hdr_options),
		/* every variant, every length 0..2048, every alignment 0..63 */
		CN_SWEEP(test_random_all_lengths, SMALL_MAX_LEN, -1, 1, check_all_lengths),
		CN_T(test_all_ones), CN_T(test_all_zeros), CN_T(test_single_byte),
		CN_T(test_partial_range_edges), CN_T(test_large_lengths), CN_T(test_combine),
		CN_SWEEP(test_copy_random, SMALL_MAX_LEN, -1, 4, check_copy),
		/* all-0xff up to past the AVX-512 copy's straight-line range (dst
		 * block offset + length <= 2047, csum_avx512.c): its largest
		 * groups at their largest lane values */
		CN_SWEEP(test_copy_all_ones, ALL_ONES_MAX_LEN, 0xff, 0, check_copy),
		CN_T(test_copy_alignment_pairs), CN_T(test_update_rfc1624),
		CN_T(test_update_random), CN_T(test_guard_pages), CN_T(test_impl_list),
		CN_T(test_dispatch_fallback),
	};
	int rc = cmocka_run_group_tests_name("csum", tests, NULL, NULL);
	return rc;
}
