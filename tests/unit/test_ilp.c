/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests of the generated ILP kernels (ilp/): every real pipeline,
 * in every form (seq, int, intpf) and every instruction set this CPU runs,
 * against the library's kernels composed by hand (memcpy, cn_bswap32 /
 * cn_bswap16, cn_pes, cn_chacha20_xor / cn_aes128ctr_xor with the study
 * keys of cn_ilp.h, cn_csum_partial), byte for byte and checksum for
 * checksum, at every length 0..4096 with aligned buffers and at odd
 * alignments of source and destination for lengths 0..700 and a few large
 * ones. Guard bytes around the destination catch writes outside it.
 * Synthetic kernels: seq, int and intpf must agree with each other (same
 * output bytes, same state digest), which is what makes their timings
 * comparable.
 *
 * Assertions are cmocka's, which do not depend on NDEBUG.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/bswap.h"
#include "cachenet/cpu.h"
#include "cachenet/crypto.h"
#include "cachenet/csum.h"
#include "cachenet/pes.h"
#include "cn_ilp.h"

#define MAXLEN 4096
#define GUARD 64
#define PAD (MAXLEN + 2 * GUARD + 128)

static unsigned char *g_src, *g_dst, *g_ref;
/* The AES study key expanded by the library, not the generator: the
 * reference does not trust cn_ilp_study_aes_sched. */
static struct cn_aes128_key g_aes_key;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: fixed seed, same data every run */
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return g_rng * 0x2545F4914F6CDD1Dull;
}

static int setup(void **state)
{
	(void)state;
	g_src = malloc(PAD);
	g_dst = malloc(PAD);
	g_ref = malloc(PAD);
	if (!g_src || !g_dst || !g_ref)
		return -1;
	for (size_t i = 0; i < PAD; i++)
		g_src[i] = (unsigned char)rnd();
	cn_aes128_expand_key(&g_aes_key, cn_ilp_study_aes_key);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(g_src);
	free(g_dst);
	free(g_ref);
	return 0;
}

/* The pipeline's functions, composed by hand from the library's whole-
 * buffer kernels: a copy (or the in-place buffer), then each function in
 * order on the destination. Returns the folded checksum (0 if none). */
static uint16_t compose_ref(const char *pipeline, unsigned char *buf, const unsigned char *src,
			    size_t len)
{
	char tmp[128];
	uint16_t folded = 0;

	snprintf(tmp, sizeof(tmp), "%s", pipeline);
	if (strncmp(tmp, "copy", 4) != 0)
		memcpy(buf, src, len); /* in place: the buffer starts as the input */
	for (char *save = NULL, *f = strtok_r(tmp, "+", &save); f; f = strtok_r(NULL, "+", &save)) {
		if (!strcmp(f, "copy"))
			memcpy(buf, src, len);
		else if (!strcmp(f, "bswap32"))
			cn_bswap32(buf, buf, len);
		else if (!strcmp(f, "bswap16"))
			cn_bswap16(buf, buf, len);
		else if (!strcmp(f, "pes"))
			cn_pes(buf, buf, len);
		else if (!strcmp(f, "chacha20"))
			assert_int_equal(cn_chacha20_xor(cn_ilp_study_key, cn_ilp_study_nonce, 1, buf,
							 buf, len),
					 0);
		else if (!strcmp(f, "aes128ctr"))
			assert_int_equal(cn_aes128ctr_xor(&g_aes_key, cn_ilp_study_aes_iv, buf, buf, len),
					 0);
		else if (!strcmp(f, "csum"))
			folded = cn_csum_fold(cn_csum_partial(buf, len, 0));
		else
			fail_msg("unknown function %s in %s", f, pipeline);
	}
	return folded;
}

static void check_one(const struct cn_ilp_kernel *k, size_t len, size_t soff, size_t doff)
{
	const unsigned char *src = g_src + GUARD + soff;
	unsigned char *dst = g_dst + GUARD + doff;
	unsigned char *ref = g_ref + GUARD + doff;

	memset(g_dst, 0xA5, PAD);
	memset(g_ref, 0xA5, PAD);
	uint16_t want = compose_ref(k->pipeline, ref, src, len);
	if (!k->copies)
		memcpy(dst, src, len);
	uint64_t got = k->fn(dst, k->copies ? (const void *)src : (const void *)dst, len);
	if (memcmp(g_dst, g_ref, PAD) != 0) {
		size_t at = 0;
		while (g_dst[at] == g_ref[at])
			at++;
		fail_msg("%s-%s-%s len %zu src+%zu dst+%zu: byte %td differs (%02x, want %02x)",
			 k->pipeline, k->form, k->isa, len, soff, doff,
			 (ptrdiff_t)at - (ptrdiff_t)(GUARD + doff), g_dst[at], g_ref[at]);
	}
	if (k->has_csum && cn_csum_fold(got) != want)
		fail_msg("%s-%s-%s len %zu src+%zu dst+%zu: checksum %04x, want %04x", k->pipeline,
			 k->form, k->isa, len, soff, doff, cn_csum_fold(got), want);
}

static void test_real_aligned(void **state)
{
	(void)state;
	unsigned tested = 0;

	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];

		if (k->synthetic || !cn_cpu_has(k->features))
			continue;
		for (size_t len = 0; len <= MAXLEN; len++)
			check_one(k, len, 0, 0);
		tested++;
	}
	assert_true(tested >= 33); /* at least the scalar forms of 11 pipelines */
}

/* The generator expanded the AES study key itself (functions.py): it must be
 * the library's schedule, and the cipher kernels must be in the table for
 * every isa with and without copy. */
static void test_study_keys(void **state)
{
	(void)state;
	static const char *const pipes[] = { "copy+chacha20+csum", "chacha20+csum", "chacha20",
					     "copy+aes128ctr+csum", "aes128ctr+csum", "aes128ctr" };
	static const char *const isas[] = { "scalar", "avx2", "avx512" };
	static const char *const forms[] = { "seq", "int", "intpf" };

	assert_memory_equal(&cn_ilp_study_aes_sched, &g_aes_key, sizeof(g_aes_key));
	for (size_t p = 0; p < sizeof(pipes) / sizeof(pipes[0]); p++)
		for (size_t i = 0; i < 3; i++)
			for (size_t f = 0; f < 3; f++)
				assert_non_null(cn_ilp_find(pipes[p], forms[f], isas[i]));
}

/* Messages longer than one keystream chunk (CN_ILP_KS_BYTES) at every
 * alignment of the chunk boundary against the tail. */
static void test_cipher_chunks(void **state)
{
	(void)state;
	const size_t lens[] = { CN_ILP_KS_BYTES - 1, CN_ILP_KS_BYTES,	  CN_ILP_KS_BYTES + 1,
				CN_ILP_KS_BYTES + 63, CN_ILP_KS_BYTES + 64, CN_ILP_KS_BYTES + 65,
				2 * CN_ILP_KS_BYTES,  2 * CN_ILP_KS_BYTES + 7, MAXLEN };

	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];

		if (k->synthetic || !cn_cpu_has(k->features) ||
		    (!strstr(k->pipeline, "chacha20") && !strstr(k->pipeline, "aes128ctr")))
			continue;
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			if (lens[l] <= MAXLEN)
				for (size_t o = 0; o < 8; o++)
					check_one(k, lens[l], o, 7 - o);
	}
}

/* Past the VNNI checksum form's widening interval (2^14 registers, 1 MB;
 * functions.py CSUM_VNNI_AVX512): its 32-bit lanes would overflow near 2 MB
 * without it. Every AVX-512 kernel with a checksum, 2 MB + 4101 bytes whose
 * checksummed bytes are all 0xFF, all 0x00 (the lanes' extremes) or random:
 * for a cipher pipeline the input is the study keystream XOR the fill, so
 * that the ciphertext is the fill. */
static void test_csum_long(void **state)
{
	(void)state;
	const size_t len = ((size_t)2 << 20) + 4101;
	unsigned char *src = calloc(1, len), *dst = malloc(len), *ref = malloc(len);
	unsigned char *ks_aes = calloc(1, len), *ks_chacha = calloc(1, len);
	unsigned tested = 0;

	assert_true(src && dst && ref && ks_aes && ks_chacha);
	assert_int_equal(cn_aes128ctr_xor(&g_aes_key, cn_ilp_study_aes_iv, ks_aes, ks_aes, len), 0);
	assert_int_equal(cn_chacha20_xor(cn_ilp_study_key, cn_ilp_study_nonce, 1, ks_chacha,
					 ks_chacha, len),
			 0);
	for (int fill = 0; fill < 3; fill++) {
		for (size_t i = 0; i < cn_ilp_nkernels; i++) {
			const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];

			if (k->synthetic || !k->has_csum || strcmp(k->isa, "avx512") != 0 ||
			    !cn_cpu_has(k->features))
				continue;
			const unsigned char *ks = strstr(k->pipeline, "aes128ctr") ? ks_aes
						  : strstr(k->pipeline, "chacha20") ? ks_chacha
										    : NULL;
			for (size_t j = 0; j < len; j++) {
				unsigned char v = fill == 0 ? 0xff : fill == 1 ? 0x00 : (unsigned char)rnd();
				src[j] = ks ? (unsigned char)(ks[j] ^ v) : v;
			}
			uint16_t want = compose_ref(k->pipeline, ref, src, len);
			if (!k->copies)
				memcpy(dst, src, len);
			uint64_t got = k->fn(dst, k->copies ? (const void *)src : (const void *)dst, len);
			if (memcmp(dst, ref, len) != 0)
				fail_msg("%s-%s-%s len %zu: output differs", k->pipeline, k->form, k->isa,
					 len);
			if (cn_csum_fold(got) != want)
				fail_msg("%s-%s-%s len %zu fill %d: checksum %04x, want %04x", k->pipeline,
					 k->form, k->isa, len, fill, cn_csum_fold(got), want);
			tested++;
		}
	}
	free(src);
	free(dst);
	free(ref);
	free(ks_aes);
	free(ks_chacha);
	if (!tested)
		skip(); /* no AVX-512 here */
}

static void test_real_odd_alignment(void **state)
{
	(void)state;
	static const size_t offs[][2] = { { 1, 0 }, { 0, 3 }, { 5, 7 }, { 3, 3 }, { 63, 1 } };
	static const size_t big[] = { 1460, 1461, 2047, 4093, 4095, 4096 };

	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];

		if (k->synthetic || !cn_cpu_has(k->features))
			continue;
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
			for (size_t len = 0; len <= 700; len++)
				check_one(k, len, offs[o][0], offs[o][1]);
			for (size_t b = 0; b < sizeof(big) / sizeof(big[0]); b++)
				check_one(k, big[b], offs[o][0], offs[o][1]);
		}
	}
}

/* Every isa the CPU runs has the same set of real pipelines, and the
 * table finds them. */
static void test_table(void **state)
{
	(void)state;
	assert_non_null(cn_ilp_find("copy+bswap32+pes+csum", "int", "scalar"));
	assert_non_null(cn_ilp_find("copy+bswap32+pes+csum", "intpf", "avx512"));
	assert_non_null(cn_ilp_find("bswap32+pes+csum", "seq", "avx2"));
	assert_null(cn_ilp_find("copy+bswap32+pes+csum", "int", "sse9"));
	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];
		assert_ptr_equal(cn_ilp_find(k->pipeline, k->form, k->isa), k);
		assert_true(k->block >= 1 && k->block <= 64);
	}
}

static void test_synthetic_forms_agree(void **state)
{
	(void)state;
	static const size_t lens[] = { 0, 7, 8, 9, 63, 64, 65, 127, 200, 1460, 4096 };
	unsigned tested = 0;

	for (size_t i = 0; i < cn_ilp_nkernels; i++) {
		const struct cn_ilp_kernel *k = &cn_ilp_kernels[i];

		if (!k->synthetic || strcmp(k->form, "seq") != 0 || !cn_cpu_has(k->features))
			continue;
		const struct cn_ilp_kernel *ki = cn_ilp_find(k->pipeline, "int", k->isa);
		const struct cn_ilp_kernel *kp = cn_ilp_find(k->pipeline, "intpf", k->isa);
		assert_non_null(ki);
		assert_non_null(kp);
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t len = lens[l];
			const unsigned char *src = g_src + GUARD + 1;
			unsigned char *a = g_dst + GUARD, *b = g_ref + GUARD;

			memset(g_dst, 0x5A, PAD);
			memset(g_ref, 0x5A, PAD);
			if (!k->copies) {
				memcpy(a, src, len);
				memcpy(b, src, len);
			}
			uint64_t ra = k->fn(a, k->copies ? (const void *)src : a, len);
			uint64_t rb = ki->fn(b, k->copies ? (const void *)src : b, len);
			if (ra != rb || memcmp(g_dst, g_ref, PAD) != 0)
				fail_msg("%s (%s) len %zu: seq and int differ", k->pipeline, k->isa, len);
			memset(g_ref, 0x5A, PAD);
			if (!k->copies)
				memcpy(b, src, len);
			rb = kp->fn(b, k->copies ? (const void *)src : b, len);
			if (ra != rb || memcmp(g_dst, g_ref, PAD) != 0)
				fail_msg("%s (%s) len %zu: seq and intpf differ", k->pipeline, k->isa, len);
		}
		tested++;
	}
	assert_true(tested > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_study_keys),
		cmocka_unit_test(test_cipher_chunks),
		cmocka_unit_test(test_real_aligned),
		cmocka_unit_test(test_real_odd_alignment),
		cmocka_unit_test(test_csum_long),
		cmocka_unit_test(test_synthetic_forms_agree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
