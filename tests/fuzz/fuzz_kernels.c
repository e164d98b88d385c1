/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Differential fuzz target for the data-touching kernels: every variant this
 * CPU runs, and the dispatched entry points, against an oracle on the same
 * bytes. The checksum's oracle is cn_csum_partial_ref (RFC 1071's byte
 * pairs); byte swaps, PES and the ciphers are compared with their generic
 * variant, which tests/unit checks against published vectors.
 *
 * Input: byte 0 picks the family, byte 1 the source's offset from a 64-byte
 * boundary, byte 2 the destination's, bytes 3-6 an initial partial sum (or
 * the cipher counter) and a split point; the rest is the data, up to 64 KB.
 * Offsets matter: the vector kernels mask their first and last blocks by
 * address, and an off-by-one there only shows at some alignments.
 * A mismatch prints what differed and aborts. libFuzzer drives it in
 * -Dfuzz=true builds; replay_main.c runs the corpus in every other build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/bswap.h"
#include "cachenet/crypto.h"
#include "cachenet/csum.h"
#include "cachenet/pes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VARIANTS 8
#define HDR 7

static void fail(const char *what, const char *variant, size_t len, unsigned so, unsigned dof)
{
	fprintf(stderr, "fuzz_kernels: %s: variant %s, len %zu, src offset %u, dst offset %u\n", what,
		variant, len, so, dof);
	abort();
}

static void check_csum(const uint8_t *src, size_t n, uint8_t *dst, uint32_t s0, size_t split,
		       unsigned so, unsigned dof)
{
	const struct cn_csum_impl *im[MAX_VARIANTS];
	size_t nv = cn_csum_impls(im, MAX_VARIANTS);
	uint16_t want = cn_csum_fold(cn_csum_partial_ref(src, n, s0));

	/* The variants, then the inline front end (cn_csum_partial) and the
	 * out-of-line dispatcher behind it. */
	for (size_t v = 0; v <= nv + 1 && v <= MAX_VARIANTS + 1; v++) {
		const char *name = v < nv ? im[v]->name : v == nv ? "dispatch" : "dispatch-out-of-line";
		cn_csum_partial_fn partial = v < nv ? im[v]->partial
					     : v == nv ? cn_csum_partial
						       : cn_csum_partial_dispatch;
		cn_csum_copy_fn copy = v < nv ? im[v]->copy : cn_csum_copy;

		if (cn_csum_fold(partial(src, n, s0)) != want)
			fail("csum partial", name, n, so, dof);
		memset(dst, 0xa5, n);
		if (cn_csum_fold(copy(dst, src, n, s0)) != want)
			fail("csum copy sum", name, n, so, dof);
		if (memcmp(dst, src, n) != 0)
			fail("csum copy bytes", name, n, so, dof);
		/* Two pieces, the second summed from its own start. */
		uint32_t a = partial(src, split, s0), b = partial(src + split, n - split, 0);
		if (cn_csum_fold(cn_csum_combine(a, b, split)) != want)
			fail("csum combine", name, n, so, dof);
	}
}

typedef void (*byte_fn)(void *dst, const void *src, size_t len);

/* fns[0..n) against the last (generic), out of place and in place. */
static void check_bytes(const char *what, byte_fn *fns, const char **names, size_t nf,
			const uint8_t *src, size_t n, uint8_t *dst, uint8_t *want, unsigned so,
			unsigned dof)
{
	fns[nf - 1](want, src, n);
	for (size_t v = 0; v < nf; v++) {
		fns[v](dst, src, n);
		if (memcmp(dst, want, n) != 0)
			fail(what, names[v], n, so, dof);
		memcpy(dst, src, n);
		fns[v](dst, dst, n);
		if (memcmp(dst, want, n) != 0)
			fail(what, names[v], n, so, dof);
	}
}

static void check_swaps(const uint8_t *src, size_t n, uint8_t *dst, uint8_t *want, unsigned so,
			unsigned dof)
{
	const struct cn_bswap_impl *bi[MAX_VARIANTS];
	const struct cn_pes_impl *pi[MAX_VARIANTS];
	size_t nb = cn_bswap_impls(bi, MAX_VARIANTS), np = cn_pes_impls(pi, MAX_VARIANTS);
	byte_fn f16[MAX_VARIANTS], f32[MAX_VARIANTS], fp[MAX_VARIANTS];
	const char *nbn[MAX_VARIANTS], *npn[MAX_VARIANTS];

	for (size_t v = 0; v < nb; v++) {
		f16[v] = bi[v]->bswap16;
		f32[v] = bi[v]->bswap32;
		nbn[v] = bi[v]->name;
	}
	for (size_t v = 0; v < np; v++) {
		fp[v] = pi[v]->pes;
		npn[v] = pi[v]->name;
	}
	check_bytes("bswap16", f16, nbn, nb, src, n, dst, want, so, dof);
	check_bytes("bswap32", f32, nbn, nb, src, n, dst, want, so, dof);
	check_bytes("pes", fp, npn, np, src, n, dst, want, so, dof);
}

static void check_ciphers(const uint8_t *src, size_t n, uint8_t *dst, uint8_t *want, uint32_t ctr,
			  unsigned so, unsigned dof)
{
	const struct cn_chacha20_impl *ci[MAX_VARIANTS];
	const struct cn_aes128ctr_impl *ai[MAX_VARIANTS];
	size_t nc = cn_chacha20_impls(ci, MAX_VARIANTS), na = cn_aes128ctr_impls(ai, MAX_VARIANTS);
	uint8_t key[32], iv[16];
	struct cn_chacha20 st;
	struct cn_aes128_key ak;

	/* Key and nonce from the counter, so inputs steer them too. */
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(ctr * 2654435761u >> (i % 25));
	for (int i = 0; i < 16; i++)
		iv[i] = (uint8_t)(ctr >> (i % 4 * 8)) ^ (uint8_t)i;
	/* The raw kernels wrap the 32-bit block counter; so does the oracle. */
	cn_chacha20_init(&st, key, iv, ctr);
	ci[nc - 1]->xor_fn(&st, src, want, n);
	for (size_t v = 0; v < nc; v++) {
		ci[v]->xor_fn(&st, src, dst, n);
		if (memcmp(dst, want, n) != 0)
			fail("chacha20", ci[v]->name, n, so, dof);
		memcpy(dst, src, n);
		ci[v]->xor_fn(&st, dst, dst, n);
		if (memcmp(dst, want, n) != 0)
			fail("chacha20 in place", ci[v]->name, n, so, dof);
	}
	ai[na - 1]->expand(&ak, key);
	ai[na - 1]->xor_fn(&ak, iv, src, want, n);
	for (size_t v = 0; v < na; v++) {
		struct cn_aes128_key k2;
		ai[v]->expand(&k2, key);
		if (memcmp(&k2, &ak, sizeof(ak)) != 0)
			fail("aes128 key expansion", ai[v]->name, n, so, dof);
		ai[v]->xor_fn(&k2, iv, src, dst, n);
		if (memcmp(dst, want, n) != 0)
			fail("aes128ctr", ai[v]->name, n, so, dof);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR || size > HDR + 65536)
		return 0;
	unsigned fam = data[0] % 3, so = data[1] & 63, dof = data[2] & 63;
	uint32_t word = (uint32_t)data[3] | (uint32_t)data[4] << 8 | (uint32_t)data[5] << 16 |
			(uint32_t)data[6] << 24;
	size_t n = size - HDR;
	size_t cap = (n + 64 + 63) & ~(size_t)63; /* aligned_alloc: a multiple of 64 */
	uint8_t *sbuf = aligned_alloc(64, cap), *dbuf = aligned_alloc(64, cap);
	uint8_t *want = malloc(n + 1);

	if (!sbuf || !dbuf || !want) {
		free(sbuf);
		free(dbuf);
		free(want);
		return 0;
	}
	uint8_t *src = sbuf + so, *dst = dbuf + dof;
	if (n)
		memcpy(src, data + HDR, n);
	switch (fam) {
	case 0:
		check_csum(src, n, dst, word, n ? word % (n + 1) : 0, so, dof);
		break;
	case 1:
		check_swaps(src, n, dst, want, so, dof);
		break;
	default:
		check_ciphers(src, n, dst, want, word, so, dof);
		break;
	}
	free(sbuf);
	free(dbuf);
	free(want);
	return 0;
}
