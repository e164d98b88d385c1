/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests of the copy module (bswap.h, pes.h): every variant this CPU runs
 * and the dispatcher, against byte-level references written from the
 * definitions, at all lengths 0..2048 and source alignments 0..63, copying
 * (with destination alignments varied against them and guard bytes around
 * the destination) and in place; random long inputs with fixed seeds;
 * known vectors (PES's hand-computed from Ahlgren et al. Fig. 5); the per-block
 * steps, PES's word-at-a-time state and the composed loop bswap.h shows;
 * buffers ending at a guard page; dispatcher fallback under
 * CACHENET_CPU_DISABLE (the program re-runs itself with it set).
 *
 * Assertions are cmocka's, which do not depend on NDEBUG.
 */
#include "cn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachenet/bswap.h"
#include "cachenet/cpu.h"
#include "cachenet/csum.h"
#include "cachenet/pes.h"

#define MAX_IMPLS 8
#define ALIGNS 64
#define SMALL_MAX_LEN 2048
#define GUARD 64

#define AVX512_NEED (CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL | \
		     CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define AVX2_NEED (CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)

typedef void (*kernel_fn)(void *dst, const void *src, size_t len);

/* The functions under test: three kernels, each with its variants and the
 * dispatched entry point. */
enum { F_BSWAP16, F_BSWAP32, F_PES, N_FUNCS };
static const char *const func_names[N_FUNCS] = { "bswap16", "bswap32", "pes" };

struct variant {
	const char *name;
	kernel_fn fn;
};

static struct variant variants[N_FUNCS][MAX_IMPLS + 1];
static size_t n_variants[N_FUNCS];

static void collect_variants(void)
{
	const struct cn_bswap_impl *bi[MAX_IMPLS];
	const struct cn_pes_impl *pi[MAX_IMPLS];
	size_t nb = cn_bswap_impls(bi, MAX_IMPLS), np = cn_pes_impls(pi, MAX_IMPLS);

	for (size_t f = 0; f < N_FUNCS; f++)
		n_variants[f] = 0;
	for (size_t i = 0; i < nb && i < MAX_IMPLS; i++) {
		variants[F_BSWAP16][n_variants[F_BSWAP16]++] = (struct variant){ bi[i]->name, bi[i]->bswap16 };
		variants[F_BSWAP32][n_variants[F_BSWAP32]++] = (struct variant){ bi[i]->name, bi[i]->bswap32 };
	}
	for (size_t i = 0; i < np && i < MAX_IMPLS; i++)
		variants[F_PES][n_variants[F_PES]++] = (struct variant){ pi[i]->name, pi[i]->pes };
	variants[F_BSWAP16][n_variants[F_BSWAP16]++] = (struct variant){ "dispatch", cn_bswap16 };
	variants[F_BSWAP32][n_variants[F_BSWAP32]++] = (struct variant){ "dispatch", cn_bswap32 };
	variants[F_PES][n_variants[F_PES]++] = (struct variant){ "dispatch", cn_pes };
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	assert_non_null(p);
	return p;
}

/* ------------------------------------------------------------ references */

/* Byte-level, from the definitions; independent of the library's helpers. */
static void ref_bswap16(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t i = 0;

	for (; i + 2 <= n; i += 2) {
		d[i] = s[i + 1];
		d[i + 1] = s[i];
	}
	for (; i < n; i++)
		d[i] = s[i];
}

static void ref_bswap32(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		for (size_t j = 0; j < 4; j++)
			d[i + j] = s[i + 3 - j];
	for (; i < n; i++)
		d[i] = s[i];
}

/* Ahlgren et al. Fig. 5's PES, transcribed: firstWord/secondWord, two outputs. */
static void ref_pes(unsigned char *d, const unsigned char *s, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint32_t firstWord, secondWord, DataWord;
		memcpy(&firstWord, s + i, 4);
		memcpy(&secondWord, s + i + 4, 4);
		DataWord = (firstWord & 0xF0F0F0F0) | (secondWord & 0xF0F0F0F0);
		memcpy(d + i, &DataWord, 4);
		DataWord = (firstWord & 0xF0F0F0F0) | (secondWord & 0xF0F0F0F0);
		memcpy(d + i + 4, &DataWord, 4);
	}
	for (; i < n; i++)
		d[i] = s[i];
}

static void (*const refs[N_FUNCS])(unsigned char *, const unsigned char *, size_t) = {
	ref_bswap16, ref_bswap32, ref_pes,
};

/* ------------------------------------------------------------ checks */

/*
 * Every function and variant at every length 0..max and source alignment
 * 0..63: copying into a destination whose alignment varies against the
 * source, with 0xa5 guards on both sides, and in place.
 */
static void check_all(const unsigned char *src_base, size_t max)
{
	unsigned char *want = xmalloc(max + 1);
	unsigned char *dbuf = xmalloc(max + 2 * GUARD + ALIGNS);
	unsigned char *ibuf = xmalloc(max + ALIGNS);
	unsigned char pattern[GUARD];

	memset(pattern, 0xa5, GUARD);
	for (size_t f = 0; f < N_FUNCS; f++) {
		for (size_t n = 0; n <= max; n++) {
			for (size_t a = 0; a < ALIGNS; a++) {
				const unsigned char *src = src_base + a;
				size_t da = (a * 37 + n * 11) % ALIGNS;
				refs[f](want, src, n);
				for (size_t v = 0; v < n_variants[f]; v++) {
					const struct variant *vr = &variants[f][v];
					unsigned char *d = dbuf + GUARD + da;
					memset(d - GUARD, 0xa5, n + 2 * GUARD);
					vr->fn(d, src, n);
					if (memcmp(d, want, n) != 0)
						fail_msg("%s/%s: len %zu src align %zu dst align %zu: wrong",
							 func_names[f], vr->name, n, a, da);
					if (memcmp(d - GUARD, pattern, GUARD) != 0 ||
					    memcmp(d + n, pattern, GUARD) != 0)
						fail_msg("%s/%s: len %zu src align %zu dst align %zu: wrote outside",
							 func_names[f], vr->name, n, a, da);
					/* In place at the source's alignment. */
					unsigned char *ip = ibuf + a;
					memcpy(ip, src, n);
					vr->fn(ip, ip, n);
					if (memcmp(ip, want, n) != 0)
						fail_msg("%s/%s: in place len %zu align %zu: wrong",
							 func_names[f], vr->name, n, a);
				}
			}
		}
	}
	free(want);
	free(dbuf);
	free(ibuf);
}

/* Patterns where a wrong lane or byte order shows at once. */
static void test_all_lengths_counting(void **state)
{
	size_t n = 600 + ALIGNS + 64;
	unsigned char *buf = xmalloc(n);

	(void)state;
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	check_all(buf, 600);
	free(buf);
}

/* Random long inputs and random lengths up to 65535+, fixed seeds. */
static void test_random_long(void **state)
{
	const size_t max = 70000;
	unsigned char *src = xmalloc(max + ALIGNS), *want = xmalloc(max);
	unsigned char *dst = xmalloc(max + ALIGNS);

	(void)state;
	cn_test_seed(2);
	cn_test_fill_rand(src, max + ALIGNS);
	for (int iter = 0; iter < 40; iter++) {
		size_t n = iter < 4 ? (size_t[]){ 65535, 65536, 65537, 70000 - 1 }[iter]
				    : (size_t)(cn_test_rnd64() % 65536);
		size_t a = (size_t)(cn_test_rnd64() % ALIGNS), da = (size_t)(cn_test_rnd64() % ALIGNS);
		for (size_t f = 0; f < N_FUNCS; f++) {
			refs[f](want, src + a, n);
			for (size_t v = 0; v < n_variants[f]; v++) {
				variants[f][v].fn(dst + da, src + a, n);
				if (memcmp(dst + da, want, n) != 0)
					fail_msg("%s/%s: len %zu src %zu dst %zu", func_names[f],
						 variants[f][v].name, n, a, da);
				memcpy(dst + a, src + a, n);
				variants[f][v].fn(dst + a, dst + a, n);
				if (memcmp(dst + a, want, n) != 0)
					fail_msg("%s/%s: in place len %zu align %zu", func_names[f],
						 variants[f][v].name, n, a);
			}
		}
	}
	free(src);
	free(want);
	free(dst);
}

/* Known vectors, computed by hand. */
static void test_vectors(void **state)
{
	static const unsigned char in[11] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
					      0x06, 0x07, 0x08, 0x09, 0x0a };
	static const unsigned char b16[11] = { 0x01, 0x00, 0x03, 0x02, 0x05, 0x04,
					       0x07, 0x06, 0x09, 0x08, 0x0a };
	static const unsigned char b32[11] = { 0x03, 0x02, 0x01, 0x00, 0x07, 0x06,
					       0x05, 0x04, 0x08, 0x09, 0x0a };
	unsigned char out[11];

	(void)state;
	assert_int_equal(cn_bswap32_step(0x11223344u), 0x44332211u);
	assert_int_equal(cn_bswap16_step(0x11223344u), 0x22114433u);
	for (size_t v = 0; v < n_variants[F_BSWAP16]; v++) {
		variants[F_BSWAP16][v].fn(out, in, sizeof(in));
		assert_memory_equal(out, b16, sizeof(b16));
	}
	for (size_t v = 0; v < n_variants[F_BSWAP32]; v++) {
		variants[F_BSWAP32][v].fn(out, in, sizeof(in));
		assert_memory_equal(out, b32, sizeof(b32));
	}
}

/*
 * PES, Fig. 5, by hand: w0 = 0xA1B2C3D4, w1 = 0x15263748.
 *   w0 & F0F0F0F0 = A0B0C0D0, w1 & F0F0F0F0 = 10203040,
 *   or: A0|10 = B0, B0|20 = B0, C0|30 = F0, D0|40 = D0 -> B0B0F0D0,
 * and both output words are that value. In memory (any byte order) each
 * output byte is (byte of w0 | same byte of w1) & 0xF0.
 */
static void test_pes_paper_vector(void **state)
{
	uint32_t w0 = 0xA1B2C3D4u, w1 = 0x15263748u;
	uint32_t words[3] = { 0xA1B2C3D4u, 0x15263748u, 0xCAFEF00Du }, out[3];

	(void)state;
	cn_pes_step(&w0, &w1);
	assert_int_equal(w0, 0xB0B0F0D0u);
	assert_int_equal(w1, 0xB0B0F0D0u);
	for (size_t v = 0; v < n_variants[F_PES]; v++) {
		variants[F_PES][v].fn(out, words, sizeof(words));
		assert_int_equal(out[0], 0xB0B0F0D0u);
		assert_int_equal(out[1], 0xB0B0F0D0u);
		assert_int_equal(out[2], 0xCAFEF00Du); /* unpaired: unchanged */
	}
}

/*
 * As the seed lists it, PES has no decryption: its two outputs are equal
 * and the low nibbles are gone. What holds instead: the outputs are equal,
 * every low nibble is 0, and PES is idempotent (PES(PES(x)) == PES(x),
 * since (o | o) & mask == o). A round trip is therefore not testable; these
 * properties are, on random data for every variant.
 */
static void test_pes_properties(void **state)
{
	const size_t n = 4096;
	unsigned char *src = xmalloc(n), *once = xmalloc(n), *twice = xmalloc(n);

	(void)state;
	cn_test_seed(3);
	cn_test_fill_rand(src, n);
	for (size_t v = 0; v < n_variants[F_PES]; v++) {
		variants[F_PES][v].fn(once, src, n);
		for (size_t i = 0; i < n; i += 8) {
			assert_memory_equal(once + i, once + i + 4, 4);
			for (size_t j = 0; j < 8; j++)
				assert_int_equal(once[i + j] & 0x0f, 0);
		}
		variants[F_PES][v].fn(twice, once, n);
		assert_memory_equal(once, twice, n);
	}
	free(src);
	free(once);
	free(twice);
}

/* The word-at-a-time form (explicit state) against the whole-buffer call,
 * including an odd word count (the last word produces nothing). */
static void test_pes_word_state(void **state)
{
	uint32_t in[33], want[33], got[34];
	struct cn_pes_state st = { 0, 0 };
	size_t k = 0;

	(void)state;
	cn_test_seed(4);
	for (size_t i = 0; i < 33; i++)
		in[i] = (uint32_t)cn_test_rnd64();
	cn_pes(want, in, sizeof(in));
	for (size_t i = 0; i < 33; i++)
		k += cn_pes_word(&st, in[i], &got[k]);
	assert_int_equal(k, 32);
	assert_int_equal(st.pending, 1);
	assert_int_equal(st.first, in[32]);
	assert_memory_equal(got, want, 32 * sizeof(uint32_t));
}

/* The composed loop of bswap.h (copy, bswap32, PES, checksum per 8-byte
 * block) equals the sequential composition of the whole-buffer calls. */
static void test_composed_loop(void **state)
{
	const size_t n = 1464; /* a multiple of 8, as the example assumes */
	unsigned char *src = xmalloc(n), *seq = xmalloc(n), *ilp = xmalloc(n);
	uint64_t acc = 0;

	(void)state;
	cn_test_seed(5);
	cn_test_fill_rand(src, n);
	cn_bswap32(seq, src, n);
	cn_pes(seq, seq, n);
	uint16_t want = cn_csum_fold(cn_csum_partial(seq, n, 0));
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint32_t w0, w1;
		memcpy(&w0, src + i, 4);
		memcpy(&w1, src + i + 4, 4);
		w0 = cn_bswap32_step(w0);
		w1 = cn_bswap32_step(w1);
		cn_pes_step(&w0, &w1);
		acc += (uint64_t)w0 + w1;
		memcpy(ilp + i, &w0, 4);
		memcpy(ilp + i + 4, &w1, 4);
	}
	assert_memory_equal(ilp, seq, n);
	assert_int_equal(cn_csum_fold(acc), want);
	free(src);
	free(seq);
	free(ilp);
}

/*
 * Buffers whose last byte is the last byte before a PROT_NONE page (source
 * and destination), and whose first byte is the first after one: a read or
 * write past either end faults. Sanitizers cannot see reads that masked
 * vector loads would do past the end, the MMU can.
 */
static void test_guard_pages(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct cn_test_guarded g;

	(void)state;
	cn_test_guarded_map(&g, 2, 2 * pg); /* source, destination */
	unsigned char *s_lo = g.lo[0], *s_hi = g.hi[0];
	unsigned char *d_lo = g.lo[1], *d_hi = g.hi[1];
	unsigned char want[600];

	cn_test_seed(6);
	cn_test_fill_rand(s_lo, 2 * pg);
	for (size_t n = 0; n <= 520; n++) {
		for (size_t f = 0; f < N_FUNCS; f++) {
			for (size_t v = 0; v < n_variants[f]; v++) {
				kernel_fn fn = variants[f][v].fn;
				/* Both ends against the guards after them. */
				refs[f](want, s_hi - n, n);
				fn(d_hi - n, s_hi - n, n);
				assert_memory_equal(d_hi - n, want, n);
				fn(d_hi - n, d_hi - n, n); /* in place, twice: */
				fn(d_hi - n, d_hi - n, n); /* no fault is the test */
				/* Both starts right after the guards before them. */
				refs[f](want, s_lo, n);
				fn(d_lo, s_lo, n);
				assert_memory_equal(d_lo, want, n);
			}
		}
	}
	cn_test_guarded_free(&g);
}

static void test_impl_lists(void **state)
{
	const struct cn_bswap_impl *bi[MAX_IMPLS];
	const struct cn_pes_impl *pi[MAX_IMPLS];
	size_t nb, np;
	uint64_t f = cn_cpu_features();
	const char *best = (f & AVX512_NEED) == AVX512_NEED ? "avx512"
			   : (f & AVX2_NEED) == AVX2_NEED   ? "avx2"
			   : (f & CN_CPU_NEON)              ? "neon"
							    : "generic";

	(void)state;
	nb = cn_bswap_impls(bi, MAX_IMPLS);
	np = cn_pes_impls(pi, MAX_IMPLS);
	assert_true(nb >= 1 && nb <= MAX_IMPLS && np >= 1 && np <= MAX_IMPLS);
	assert_int_equal(cn_bswap_impls(NULL, 0), nb);
	assert_int_equal(cn_pes_impls(NULL, 0), np);
	assert_string_equal(cn_bswap_impl_name(), bi[0]->name);
	assert_string_equal(cn_pes_impl_name(), pi[0]->name);
	assert_string_equal(bi[0]->name, best);
	assert_string_equal(pi[0]->name, best);
	assert_string_equal(bi[nb - 1]->name, "generic");
	assert_string_equal(pi[np - 1]->name, "generic");
	for (size_t i = 0; i < nb; i++) {
		assert_ptr_equal(cn_bswap_impl_find(bi[i]->name), bi[i]);
		assert_true(cn_cpu_has(bi[i]->features));
	}
	for (size_t i = 0; i < np; i++) {
		assert_ptr_equal(cn_pes_impl_find(pi[i]->name), pi[i]);
		assert_true(cn_cpu_has(pi[i]->features));
	}
	assert_null(cn_bswap_impl_find("no-such-variant"));
	assert_null(cn_pes_impl_find("no-such-variant"));
}

/* The child part of test_dispatch_fallback (cn_test_rerun_expect): prints
 * the dispatched variants and self-checks the dispatched calls. */
static int child_main(void)
{
	unsigned char *buf = malloc(5000), *dst = malloc(5000), *want = malloc(5000);
	kernel_fn fns[N_FUNCS] = { cn_bswap16, cn_bswap32, cn_pes };
	int bad = 0;

	if (!buf || !dst || !want)
		return 2;
	printf("%s %s\n", cn_bswap_impl_name(), cn_pes_impl_name());
	cn_test_seed(7);
	cn_test_fill_rand(buf, 5000);
	for (size_t len = 0; len < 4990; len += 13) {
		for (size_t f = 0; f < N_FUNCS; f++) {
			refs[f](want, buf + 1, len);
			fns[f](dst + 3, buf + 1, len);
			bad |= memcmp(dst + 3, want, len) != 0;
		}
	}
	free(buf);
	free(dst);
	free(want);
	fflush(stdout);
	return bad ? 3 : 0;
}

static void test_dispatch_fallback(void **state)
{
	uint64_t det = cn_cpu_features_detected();

	(void)state;
	if (cn_test_rerun_common("--bswap-child", (det & CN_CPU_NEON) != 0, "generic generic\n",
				 "neon neon\n"))
		return;
	cn_test_rerun_expect("avx512", "--bswap-child",
			     (det & AVX2_NEED) == AVX2_NEED ? "avx2 avx2\n" : "generic generic\n");
	/* The AVX-512 list is compiled with -mavx2 as well. */
	cn_test_rerun_expect("avx2", "--bswap-child", "generic generic\n");
	cn_test_rerun_expect("vaes", "--bswap-child",
			     (det & AVX512_NEED) == AVX512_NEED ? "avx512 avx512\n" : NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--bswap-child") == 0)
		return child_main();
	collect_variants();
	fprintf(stderr, "bswap/pes variants under test:");
	for (size_t v = 0; v < n_variants[F_BSWAP32]; v++)
		fprintf(stderr, " %s", variants[F_BSWAP32][v].name);
	fprintf(stderr, " (dispatch -> %s, pes -> %s)\n", cn_bswap_impl_name(), cn_pes_impl_name());

	const struct CMUnitTest tests[] = {
		CN_T(test_vectors), CN_T(test_pes_paper_vector), CN_T(test_pes_properties),
		CN_T(test_pes_word_state), CN_T(test_composed_loop),
		CN_SWEEP(test_all_lengths_random, SMALL_MAX_LEN, -1, 1, check_all),
		CN_T(test_all_lengths_counting), CN_T(test_random_long), CN_T(test_guard_pages),
		CN_T(test_impl_lists), CN_T(test_dispatch_fallback),
	};
	int rc = cmocka_run_group_tests_name("bswap", tests, NULL, NULL);
	return rc;
}
