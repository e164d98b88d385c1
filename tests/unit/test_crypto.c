/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests of the crypto module (ChaCha20, AES-128-CTR): published vectors
 * (RFC 8439 2.3.2, 2.4.2, A.1, A.2; FIPS-197 C.1 and A.1; NIST SP 800-38A
 * F.5.1/F.5.2), every variant this CPU runs and the dispatcher against a
 * reference keystream at every length 0..2048 and alignment 0..63, in place
 * and out of place with guard bytes, random long lengths (fixed seeds),
 * counter carries and wrap, argument checks, buffers against guard pages,
 * and dispatcher fallback under CACHENET_CPU_DISABLE (the program re-runs
 * itself with the variable set, since cpu.h reads it once per process).
 *
 * The reference keystreams come from the per-block steps
 * (cn_chacha20_block(); the generic single-block AES on counter blocks that
 * this file increments itself), a different path from every whole-buffer
 * kernel's batching and tail code.
 */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachenet/cpu.h"
#include "cachenet/crypto.h"

#define MAX_IMPLS 8
#define ALIGNS 64
#define MAX_LEN 2048
#define GUARD 64

static void *xmalloc(size_t n)
{
	void *p = NULL;
	assert_int_equal(posix_memalign(&p, 64, n ? n : 1), 0);
	return p;
}

/* Hex string (spaces ignored) to bytes; returns the byte count. */
static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	int hi = -1;

	for (; *s; s++) {
		int v;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return n;
}

/* ------------------------------------------------------------ variants */

struct cvariant {
	const char *name;
	cn_chacha20_fn fn;
};
struct avariant {
	const char *name;
	cn_aes128ctr_fn fn;
	cn_aes128_expand_fn expand;
	cn_aes128_block_fn block;
};

static struct cvariant cvars[MAX_IMPLS + 1];
static size_t n_cvars;
static struct avariant avars[MAX_IMPLS + 1];
static size_t n_avars;

/* The dispatcher under the raw-kernel signature: the checked calls on a
 * copy of the state (so the counter must not wrap: tests of wrap use the
 * variants only). */
static void chacha_dispatch(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	struct cn_chacha20 s = *st;

	assert_int_equal(cn_chacha20_stream(&s, in, out, len), 0);
}

static void aes_dispatch(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			 void *out, size_t len)
{
	if (in) {
		assert_int_equal(cn_aes128ctr_xor(k, ctr, in, out, len), 0);
	} else {
		struct cn_aes128ctr st;
		st.key = *k;
		memcpy(st.ctr, ctr, 16);
		assert_int_equal(cn_aes128ctr_stream(&st, NULL, out, len), 0);
	}
}

static void collect_variants(void)
{
	const struct cn_chacha20_impl *ci[MAX_IMPLS];
	const struct cn_aes128ctr_impl *ai[MAX_IMPLS];
	size_t n = cn_chacha20_impls(ci, MAX_IMPLS);

	n_cvars = 0;
	for (size_t i = 0; i < n && i < MAX_IMPLS; i++)
		cvars[n_cvars++] = (struct cvariant){ ci[i]->name, ci[i]->xor_fn };
	cvars[n_cvars++] = (struct cvariant){ "dispatch", chacha_dispatch };
	n = cn_aes128ctr_impls(ai, MAX_IMPLS);
	n_avars = 0;
	for (size_t i = 0; i < n && i < MAX_IMPLS; i++)
		avars[n_avars++] = (struct avariant){ ai[i]->name, ai[i]->xor_fn, ai[i]->expand,
						      ai[i]->block };
	avars[n_avars++] = (struct avariant){ "dispatch", aes_dispatch, cn_aes128_expand_key,
					      cn_aes128_encrypt_block };
}

/* AES alignment steps: the portable AES is ~300 ticks/byte, so the
 * exhaustive loops give it every length but four alignments (0, 21, 42,
 * 63); the dispatcher, which runs the first variant, gets every seventh. */
static size_t align_step(const char *name)
{
	if (strcmp(name, "generic") == 0)
		return 21;
	/* the dispatcher calls the first variant, already tested at all */
	return strcmp(name, "dispatch") == 0 ? 7 : 1;
}

/* ------------------------------------------------------------ the checker */

/* A cipher call under test, bound to its key and counter. */
typedef void (*run_fn)(const void *ctx, const void *in, void *out, size_t len);

/*
 * For every len 0..max and alignment a (step): out-of-place into a buffer
 * with 0xa5 guards on both sides (destination alignment varied against the
 * source), and in place; both must equal src ^ ks. Above FULL_ALIGN_LEN
 * (past every variant's widest pass, 512 B for VAES and 1 KB for 16-way
 * ChaCha20 once) every 7th alignment only (the portable variants, tested
 * at every 21st below, at 0 and 63): the length's remainder is what still
 * varies there, and the whole sweep took the -O0 sanitizer+fuzzer CI
 * build 180-300 s (it timed out once on a loaded machine).
 */
#define FULL_ALIGN_LEN 1100
static void check_lengths(const char *name, run_fn run, const void *ctx, const uint8_t *ks,
			  size_t max, size_t step)
{
	size_t cap = max + ALIGNS + 2 * GUARD;
	uint8_t *src = xmalloc(cap), *dst = xmalloc(cap), *inpl = xmalloc(cap), *want = xmalloc(cap);

	cn_test_fill_rand(src, cap);
	for (size_t n = 0; n <= max; n++) {
		for (size_t i = 0; i < n; i++)
			want[i] = 0;
		size_t st = n <= FULL_ALIGN_LEN ? step : step < 7 ? 7 : ALIGNS - 1;
		for (size_t a = 0; a < ALIGNS; a += st) {
			const uint8_t *s = src + a;
			for (size_t i = 0; i < n; i++)
				want[i] = s[i] ^ ks[i];
			size_t da = (a * 37 + n * 11) % ALIGNS;
			uint8_t *d = dst + GUARD + da;
			memset(d - GUARD, 0xa5, n + 2 * GUARD);
			run(ctx, s, d, n);
			if (memcmp(d, want, n) != 0)
				fail_msg("%s: len %zu src align %zu dst align %zu: wrong output", name, n, a,
					 da);
			for (size_t g = 0; g < GUARD; g++)
				if (d[-1 - (ptrdiff_t)g] != 0xa5 || d[n + g] != 0xa5)
					fail_msg("%s: len %zu align %zu: wrote outside [out, out+len)", name,
						 n, a);
			/* in place, with guards */
			uint8_t *p = inpl + GUARD + a;
			memset(p - GUARD, 0x5a, n + 2 * GUARD);
			memcpy(p, s, n);
			run(ctx, p, p, n);
			if (memcmp(p, want, n) != 0)
				fail_msg("%s: in place len %zu align %zu: wrong output", name, n, a);
			if (p[-1] != 0x5a || p[n] != 0x5a)
				fail_msg("%s: in place len %zu align %zu: wrote outside", name, n, a);
		}
	}
	free(src);
	free(dst);
	free(inpl);
	free(want);
}

/* ------------------------------------------------------------ ChaCha20 */

struct cctx {
	const struct cvariant *v;
	struct cn_chacha20 st;
};

static void run_chacha(const void *ctx, const void *in, void *out, size_t len)
{
	const struct cctx *c = ctx;

	c->v->fn(&c->st, in, out, len);
}

/* Reference keystream: nblocks per-block steps. */
static void chacha_ref_ks(struct cn_chacha20 st, uint8_t *ks, size_t nblocks)
{
	for (size_t i = 0; i < nblocks; i++)
		cn_chacha20_block(&st, ks + 64 * i);
}

static const char rfc_key_seq[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/* RFC 8439 2.3.2: the block function for counter 1. */
static void test_chacha_rfc_232(void **state)
{
	uint8_t key[32], nonce[12], want[64], got[64 + ALIGNS];
	struct cn_chacha20 st;

	(void)state;
	unhex(rfc_key_seq, key);
	unhex("000000090000004a00000000", nonce);
	unhex("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
	      "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
	      want);
	cn_chacha20_init(&st, key, nonce, 1);
	assert_int_equal(st.key[0], 0x03020100);
	assert_int_equal(st.nonce[0], 0x09000000);
	cn_chacha20_block(&st, got);
	assert_memory_equal(got, want, 64);
	assert_int_equal(st.counter, 2);
	for (size_t v = 0; v < n_cvars; v++) {
		for (size_t a = 0; a < ALIGNS; a++) {
			cn_chacha20_init(&st, key, nonce, 1);
			cvars[v].fn(&st, NULL, got + a, 64);
			if (memcmp(got + a, want, 64) != 0)
				fail_msg("%s: 2.3.2 keystream at align %zu", cvars[v].name, a);
		}
	}
}

/* RFC 8439 2.4.2 "sunscreen" and A.2 vectors: encrypt, and decrypt back, at
 * every alignment, in place and out of place, with every variant. */
struct chacha_vec {
	const char *what, *key, *nonce;
	uint32_t counter;
	const char *pt; /* text, or NULL for zeros of ct's length */
	const char *ct;
};

static const struct chacha_vec chacha_vecs[] = {
	{ "2.4.2", rfc_key_seq, "000000000000004a00000000", 1,
	  "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
	  "future, sunscreen would be it.",
	  "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
	  "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
	  "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
	  "5af90bbf74a35be6b40b8eedf2785e42874d" },
	/* A.1: keystream (plaintext zero) */
	{ "A.1 #1", "00", "00", 0, NULL,
	  "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586" },
	{ "A.1 #2", "00", "00", 1, NULL,
	  "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f" },
	{ "A.1 #3", "0000000000000000000000000000000000000000000000000000000000000001", "00", 1,
	  NULL,
	  "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0" },
	{ "A.1 #4", "00ff000000000000000000000000000000000000000000000000000000000000", "00", 2,
	  NULL,
	  "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096" },
	{ "A.1 #5", "00", "000000000000000000000002", 0, NULL,
	  "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c78a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d" },
	/* A.2 #1: 64 zero bytes, key 0, nonce 0, counter 0 */
	{ "A.2 #1", "00", "00", 0, NULL,
	  "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586" },
	/* A.2 #3: the Jabberwocky */
	{ "A.2 #3", "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
	  "000000000000000000000002", 42,
	  "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were "
	  "the borogoves,\nAnd the mome raths outgrabe.",
	  "62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf"
	  "166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb"
	  "f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77"
	  "04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1" },
};

static void test_chacha_vectors(void **state)
{
	uint8_t key[32], nonce[12], ct[512], pt[512], buf[512 + ALIGNS], buf2[512 + ALIGNS];
	(void)state;

	for (size_t i = 0; i < sizeof(chacha_vecs) / sizeof(chacha_vecs[0]); i++) {
		const struct chacha_vec *tv = &chacha_vecs[i];
		size_t n = unhex(tv->ct, ct);
		memset(key, 0, 32);
		memset(nonce, 0, 12);
		unhex(tv->key, key);
		unhex(tv->nonce, nonce);
		if (tv->pt) {
			assert_int_equal(strlen(tv->pt), n);
			memcpy(pt, tv->pt, n);
		} else {
			memset(pt, 0, n);
		}
		/* the checked whole-buffer call */
		assert_int_equal(cn_chacha20_xor(key, nonce, tv->counter, pt, buf, n), 0);
		if (memcmp(buf, ct, n) != 0)
			fail_msg("%s: cn_chacha20_xor", tv->what);
		struct cn_chacha20 st;
		cn_chacha20_init(&st, key, nonce, tv->counter);
		for (size_t v = 0; v < n_cvars; v++) {
			for (size_t a = 0; a < ALIGNS; a++) {
				cvars[v].fn(&st, pt, buf + a, n);
				if (memcmp(buf + a, ct, n) != 0)
					fail_msg("%s: %s encrypt align %zu", tv->what, cvars[v].name, a);
				memcpy(buf2 + (63 - a), ct, n);
				cvars[v].fn(&st, buf2 + (63 - a), buf2 + (63 - a), n);
				if (memcmp(buf2 + (63 - a), pt, n) != 0)
					fail_msg("%s: %s decrypt in place align %zu", tv->what, cvars[v].name,
						 63 - a);
			}
		}
	}
}

/* A.2 #2: the 375-byte IETF text, key ...01, nonce ...02, counter 1.
 * Checked as agreement of every variant with the dispatcher plus the
 * published first and last 16 bytes of ciphertext (375 bytes: a partial
 * final block after five whole ones). */
static void test_chacha_a22(void **state)
{
	static const char text[] =
		"Any submission to the IETF intended by the Contributor for publication as all or "
		"part of an IETF Internet-Draft or RFC and any statement made within the context "
		"of an IETF activity is considered an \"IETF Contribution\". Such statements "
		"include oral statements in IETF sessions, as well as written and electronic "
		"communications made at any time or place, which are addressed to";
	uint8_t key[32] = { 0 }, nonce[12] = { 0 }, head[16], tail[16], out[400], ref[400];
	size_t n = sizeof(text) - 1;

	(void)state;
	assert_int_equal(n, 375);
	key[31] = 1;
	nonce[11] = 2;
	unhex("a3fbf07df3fa2fde4f376ca23e827370", head);
	unhex("ba5b862f3730e37cfdc4fd806c22f221", tail);
	assert_int_equal(cn_chacha20_xor(key, nonce, 1, text, ref, n), 0);
	assert_memory_equal(ref, head, 16);
	assert_memory_equal(ref + n - 16, tail, 16);
	for (size_t v = 0; v < n_cvars; v++) {
		struct cn_chacha20 st;
		cn_chacha20_init(&st, key, nonce, 1);
		cvars[v].fn(&st, text, out, n);
		assert_memory_equal(out, ref, n);
	}
}

static void test_chacha_all_lengths(void **state)
{
	uint8_t key[32], nonce[12];
	size_t nb = MAX_LEN / 64 + 1;
	uint8_t *ks = xmalloc(nb * 64);

	(void)state;
	cn_test_seed(21);
	cn_test_fill_rand(key, 32);
	cn_test_fill_rand(nonce, 12);
	for (size_t v = 0; v < n_cvars; v++) {
		struct cctx c = { &cvars[v], { { 0 }, 0, { 0 } } };
		cn_chacha20_init(&c.st, key, nonce, (uint32_t)cn_test_rnd64());
		chacha_ref_ks(c.st, ks, nb);
		/* the dispatcher runs the first variant, tested at every alignment */
		check_lengths(cvars[v].name, run_chacha, &c, ks, MAX_LEN, align_step(cvars[v].name));
	}
	free(ks);
}

/* Random lengths up to 65535, random counters (the raw kernels wrap it
 * modulo 2^32 like the per-block step), random alignments. */
static void test_chacha_random_long(void **state)
{
	size_t cap = 65536 + 128;
	uint8_t *src = xmalloc(cap), *dst = xmalloc(cap), *ks = xmalloc(cap);
	uint8_t key[32], nonce[12];

	(void)state;
	cn_test_seed(22);
	cn_test_fill_rand(src, cap);
	for (int it = 0; it < 60; it++) {
		size_t n = cn_test_rnd64() % 65536, a = cn_test_rnd64() % 64, da = cn_test_rnd64() % 64;
		struct cn_chacha20 st;
		cn_test_fill_rand(key, 32);
		cn_test_fill_rand(nonce, 12);
		uint32_t ctr = (it % 4 == 0) ? 0xffffffffu - (uint32_t)(cn_test_rnd64() % 40) : (uint32_t)cn_test_rnd64();
		cn_chacha20_init(&st, key, nonce, ctr);
		chacha_ref_ks(st, ks, (n + 63) / 64);
		for (size_t i = 0; i < n; i++)
			ks[i] ^= src[a + i];
		for (size_t v = 0; v < n_cvars; v++) {
			if (strcmp(cvars[v].name, "dispatch") == 0 &&
			    (uint64_t)ctr + (n + 63) / 64 > ((uint64_t)1 << 32))
				continue; /* the checked call refuses to wrap */
			cvars[v].fn(&st, src + a, dst + da, n);
			if (memcmp(dst + da, ks, n) != 0)
				fail_msg("%s: len %zu counter %#x: wrong output", cvars[v].name, n, ctr);
		}
	}
	free(src);
	free(dst);
	free(ks);
}

/* The 32-bit block counter: the checked calls stop at 2^32 blocks, the
 * stateful ones advance it, the per-block step and keystream agree. */
static void test_chacha_counter(void **state)
{
	uint8_t key[32], nonce[12], buf[2048], ks[2048];
	struct cn_chacha20 st;

	(void)state;
	memset(buf, 0, sizeof(buf));
	cn_test_seed(23);
	cn_test_fill_rand(key, 32);
	cn_test_fill_rand(nonce, 12);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0xffffffffu, buf, buf, 64), 0);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0xffffffffu, buf, buf, 65), -EOVERFLOW);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0xfffffff0u, buf, buf, 1024), 0);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0xfffffff0u, buf, buf, 1025), -EOVERFLOW);
	cn_chacha20_init(&st, key, nonce, 0xfffffff0u);
	assert_int_equal(cn_chacha20_stream(&st, NULL, buf, 900), 0); /* 15 blocks */
	assert_int_equal(st.counter, 0xffffffffu);
	/* the state never wraps to 0 (a fresh-looking counter): its last
	 * block is refused, nothing written, state unchanged */
	memset(buf, 0x33, 64);
	assert_int_equal(cn_chacha20_stream(&st, NULL, buf, 1), -EOVERFLOW);
	assert_int_equal(st.counter, 0xffffffffu);
	assert_int_equal(buf[0], 0x33);
	cn_chacha20_init(&st, key, nonce, 0xfffffff0u);
	assert_int_equal(cn_chacha20_stream(&st, NULL, buf, 1024), -EOVERFLOW);
	assert_int_equal(cn_chacha20_stream(&st, NULL, buf, 1023 - 63), 0);

	/* chunked stream == one call == keystream == per-block steps */
	cn_chacha20_init(&st, key, nonce, 7);
	chacha_ref_ks(st, ks, 32);
	struct cn_chacha20 s2 = st;
	memset(buf, 0, sizeof(buf));
	for (size_t off = 0; off < 2048;) {
		size_t n = 64 * (1 + cn_test_rnd64() % 9);
		if (off + n > 2048)
			n = 2048 - off;
		assert_int_equal(cn_chacha20_stream(&s2, buf + off, buf + off, n), 0);
		off += n;
	}
	assert_memory_equal(buf, ks, 2048);
	assert_int_equal(s2.counter, 7 + 32);
	s2 = st;
	cn_chacha20_keystream(&s2, buf, 32);
	assert_memory_equal(buf, ks, 2048);
	assert_int_equal(s2.counter, 7 + 32);
}

/* ------------------------------------------------------------ AES-128 */

struct actx {
	const struct avariant *v;
	struct cn_aes128_key k;
	uint8_t ctr[16];
};

static void run_aes(const void *ctx, const void *in, void *out, size_t len)
{
	const struct actx *c = ctx;

	c->v->fn(&c->k, c->ctr, in, out, len);
}

/* Big-endian 128-bit increment, written here independently of the
 * library's (byte loop with carry). */
static void be_inc(uint8_t c[16])
{
	for (int i = 15; i >= 0; i--)
		if (++c[i] != 0)
			break;
}

/* Reference keystream: generic single-block AES on counter blocks. */
static void aes_ref_ks(const struct cn_aes128_key *k, const uint8_t iv[16], uint8_t *ks,
		       size_t nblocks)
{
	uint8_t c[16];

	memcpy(c, iv, 16);
	for (size_t i = 0; i < nblocks; i++) {
		cn_aes128_encrypt_block_generic(k, c, ks + 16 * i);
		be_inc(c);
	}
}

/* FIPS-197 C.1 (cipher) and A.1 (key expansion), every variant. */
static void test_aes_fips197(void **state)
{
	uint8_t key[16], pt[16], want[16], got[16], rk10[16], key2[16];
	struct cn_aes128_key k;

	(void)state;
	unhex("000102030405060708090a0b0c0d0e0f", key);
	unhex("00112233445566778899aabbccddeeff", pt);
	unhex("69c4e0d86a7b0430d8cdb78070b4c55a", want);
	unhex("2b7e151628aed2a6abf7158809cf4f3c", key2);
	unhex("d014f9a8c9ee2589e13f0cc8b6630ca6", rk10);
	for (size_t v = 0; v < n_avars; v++) {
		avars[v].expand(&k, key);
		avars[v].block(&k, pt, got);
		if (memcmp(got, want, 16) != 0)
			fail_msg("%s: FIPS-197 C.1", avars[v].name);
		avars[v].block(&k, got, got); /* in == out */
		avars[v].expand(&k, key2);
		assert_memory_equal(k.rk[0], key2, 16);
		if (memcmp(k.rk[10], rk10, 16) != 0)
			fail_msg("%s: FIPS-197 A.1 round key 10", avars[v].name);
		/* every round key equals the generic expansion */
		struct cn_aes128_key g;
		cn_aes128_expand_key_generic(&g, key2);
		assert_memory_equal(&g, &k, sizeof(k));
	}
}

/* SP 800-38A F.5.1 (encrypt) and F.5.2 (decrypt). The initial counter
 * f0...feff also carries from byte 15 into byte 14 at the third block. */
static void test_aes_sp800_38a(void **state)
{
	uint8_t key[16], iv[16], pt[64], ct[64], buf[64 + ALIGNS], buf2[64 + ALIGNS];
	struct cn_aes128_key k;

	(void)state;
	unhex("2b7e151628aed2a6abf7158809cf4f3c", key);
	unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", iv);
	unhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
	      "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
	      pt);
	unhex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
	      "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
	      ct);
	cn_aes128_expand_key(&k, key);
	assert_int_equal(cn_aes128ctr_xor(&k, iv, pt, buf, 64), 0);
	assert_memory_equal(buf, ct, 64);
	for (size_t v = 0; v < n_avars; v++) {
		for (size_t a = 0; a < ALIGNS; a++) {
			for (size_t n = 1; n <= 64; n += (n < 16 ? 15 : 16)) {
				avars[v].fn(&k, iv, pt, buf + a, n); /* F.5.1 */
				if (memcmp(buf + a, ct, n) != 0)
					fail_msg("%s: F.5.1 len %zu align %zu", avars[v].name, n, a);
				memcpy(buf2 + (63 - a), ct, n); /* F.5.2, in place */
				avars[v].fn(&k, iv, buf2 + (63 - a), buf2 + (63 - a), n);
				if (memcmp(buf2 + (63 - a), pt, n) != 0)
					fail_msg("%s: F.5.2 len %zu align %zu", avars[v].name, n, 63 - a);
			}
		}
	}
	/* per-block step and stream state */
	struct cn_aes128ctr st;
	cn_aes128ctr_init(&st, key, iv);
	for (int b = 0; b < 4; b++) {
		uint8_t ks[16];
		cn_aes128ctr_block(&st, ks);
		for (int i = 0; i < 16; i++)
			assert_int_equal(ks[i] ^ pt[16 * b + i], ct[16 * b + i]);
	}
	uint8_t c4[16];
	unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdff03", c4);
	assert_memory_equal(st.ctr, c4, 16);
}

static void test_aes_all_lengths(void **state)
{
	uint8_t key[16], iv[16];
	size_t nb = MAX_LEN / 16 + 1;
	uint8_t *ks = xmalloc(nb * 16);
	struct actx c;

	(void)state;
	cn_test_seed(31);
	cn_test_fill_rand(key, 16);
	cn_test_fill_rand(iv, 16);
	cn_aes128_expand_key_generic(&c.k, key);
	memcpy(c.ctr, iv, 16);
	aes_ref_ks(&c.k, iv, ks, nb);
	for (size_t v = 0; v < n_avars; v++) {
		c.v = &avars[v];
		check_lengths(avars[v].name, run_aes, &c, ks, MAX_LEN, align_step(avars[v].name));
	}
	free(ks);
}

/* Carries out of the low 32 and 64 bits and wrap of all 128, at every
 * starting distance from the carry that matters to the batching (vector
 * variants do 8 or 32 blocks per pass). */
static void test_aes_counter_carry(void **state)
{
	static const char *const bases[] = {
		"0123456789abcdef01234567ffffffff", /* carry into bit 32 */
		"0123456789abcdefffffffffffffffff", /* carry into bit 64 */
		"ffffffffffffffffffffffffffffffff", /* wrap to zero */
		"00000000000000000000000000000000",
	};
	uint8_t key[16], base[16], iv[16], src[1200], out[1200], ks[1200 + 16];
	struct cn_aes128_key k;

	(void)state;
	cn_test_seed(32);
	cn_test_fill_rand(key, 16);
	cn_test_fill_rand(src, sizeof(src));
	cn_aes128_expand_key_generic(&k, key);
	for (size_t b = 0; b < 4; b++) {
		unhex(bases[b], base);
		for (unsigned back = 0; back <= 70; back++) {
			/* iv = base - back + 1, so the carry comes after `back` blocks */
			memcpy(iv, base, 16);
			for (unsigned i = 0; i < back; i++) { /* decrement */
				for (int j = 15; j >= 0; j--)
					if (iv[j]-- != 0)
						break;
			}
			be_inc(iv);
			size_t n = 1100 + back % 17;
			aes_ref_ks(&k, iv, ks, (n + 15) / 16);
			for (size_t v = 0; v < n_avars; v++) {
				if (strcmp(avars[v].name, "generic") == 0 && back % 10)
					continue; /* slow; the others compare with it anyway */
				avars[v].fn(&k, iv, src, out, n);
				for (size_t i = 0; i < n; i++)
					if (out[i] != (src[i] ^ ks[i]))
						fail_msg("%s: base %s back %u: byte %zu wrong", avars[v].name,
							 bases[b], back, i);
				/* keystream only (in NULL): the same carries */
				avars[v].fn(&k, iv, NULL, out, n);
				for (size_t i = 0; i < n; i++)
					if (out[i] != ks[i])
						fail_msg("%s: base %s back %u: keystream byte %zu wrong",
							 avars[v].name, bases[b], back, i);
			}
			/* the stateful call advances the counter the same way */
			struct cn_aes128ctr st;
			st.key = k;
			memcpy(st.ctr, iv, 16);
			assert_int_equal(cn_aes128ctr_stream(&st, src, out, n), 0);
			uint8_t want[16];
			memcpy(want, iv, 16);
			for (size_t i = 0; i < (n + 15) / 16; i++)
				be_inc(want);
			assert_memory_equal(st.ctr, want, 16);
		}
	}
}

/* Every value of the counter's last byte at the start, over lengths that
 * wrap it two to three times, so that every pass shape of every variant
 * (VAES: 8, 4, 2, 1 registers of four blocks; AES-NI: eight blocks) meets
 * the carry out of that byte at every offset. (A kernel that derived a
 * pass's counters from the previous pass's with a byte add, tried in
 * session 8 and not kept, failed here when it let that byte wrap.) */
static void test_aes_low_byte_phases(void **state)
{
	enum { MAXN = 12 * 1024 };
	uint8_t key[16], iv[16];
	uint8_t *src = malloc(MAXN), *out = malloc(MAXN), *ks = malloc(MAXN + 16);
	struct cn_aes128_key k;

	(void)state;
	assert_non_null(src);
	assert_non_null(out);
	assert_non_null(ks);
	cn_test_seed(33);
	cn_test_fill_rand(key, 16);
	cn_test_fill_rand(src, MAXN);
	cn_aes128_expand_key_generic(&k, key);
	for (unsigned lb = 0; lb < 256; lb++) {
		cn_test_fill_rand(iv, 16);
		iv[15] = (uint8_t)lb;
		/* 8 KB plus 0..4095: all tail shapes, 2-3 wraps of the byte */
		size_t n = 8192 + (size_t)(lb * 2654435761u % 4096);
		aes_ref_ks(&k, iv, ks, (n + 15) / 16);
		for (size_t v = 0; v < n_avars; v++) {
			if (strcmp(avars[v].name, "generic") == 0 && lb % 32)
				continue; /* slow; the others compare with the reference anyway */
			avars[v].fn(&k, iv, src, out, n);
			for (size_t i = 0; i < n; i++)
				if (out[i] != (src[i] ^ ks[i]))
					fail_msg("%s: last counter byte %u, %zu bytes: byte %zu wrong",
						 avars[v].name, lb, n, i);
		}
	}
	free(src);
	free(out);
	free(ks);
}

/* Random lengths up to 65535 against one generic reference keystream. */
static void test_aes_random_long(void **state)
{
	size_t cap = 65536 + 128;
	uint8_t *src = xmalloc(cap), *dst = xmalloc(cap), *ks = xmalloc(cap);
	uint8_t key[16], iv[16];
	struct cn_aes128_key k;

	(void)state;
	cn_test_seed(33);
	cn_test_fill_rand(src, cap);
	cn_test_fill_rand(key, 16);
	cn_test_fill_rand(iv, 16);
	iv[8] = iv[9] = iv[10] = iv[11] = 0xff; /* a carry into bit 32 after ~2^31 */
	cn_aes128_expand_key(&k, key);
	aes_ref_ks(&k, iv, ks, 65536 / 16);
	for (int it = 0; it < 80; it++) {
		size_t n = cn_test_rnd64() % 65536, a = cn_test_rnd64() % 64, da = cn_test_rnd64() % 64;
		for (size_t v = 0; v < n_avars; v++) {
			if (strcmp(avars[v].name, "generic") == 0 && it >= 4)
				continue;
			avars[v].fn(&k, iv, src + a, dst + da, n);
			for (size_t i = 0; i < n; i++)
				if (dst[da + i] != (src[a + i] ^ ks[i]))
					fail_msg("%s: len %zu: byte %zu wrong", avars[v].name, n, i);
		}
	}
	/* keystream call == per-block steps */
	struct cn_aes128ctr st, st2;
	st.key = k;
	memcpy(st.ctr, iv, 16);
	st2 = st;
	cn_aes128ctr_keystream(&st, dst, 100);
	assert_memory_equal(dst, ks, 1600);
	for (int b = 0; b < 100; b++)
		cn_aes128ctr_block(&st2, dst + 16 * b);
	assert_memory_equal(dst, ks, 1600);
	assert_memory_equal(st.ctr, st2.ctr, 16);
	free(src);
	free(dst);
	free(ks);
}

/* ------------------------------------------------------------ contracts */

static void test_bad_input(void **state)
{
	uint8_t key[32] = { 0 }, nonce[12] = { 0 }, buf[256] = { 0 };
	struct cn_aes128_key k;
	struct cn_aes128ctr ast;
	struct cn_chacha20 cst;
	void *far = (void *)(UINTPTR_MAX - 10);

	(void)state;
	cn_aes128_expand_key(&k, key);
	cn_aes128ctr_init(&ast, key, buf);
	cn_chacha20_init(&cst, key, nonce, 0);

	/* zero length: anything goes, nothing touched */
	assert_int_equal(cn_chacha20_xor(NULL, NULL, 0, NULL, NULL, 0), 0);
	assert_int_equal(cn_aes128ctr_xor(NULL, NULL, NULL, NULL, 0), 0);
	assert_int_equal(cn_chacha20_stream(NULL, NULL, NULL, 0), 0);
	assert_int_equal(cn_aes128ctr_stream(NULL, NULL, NULL, 0), 0);
	/* NULL pointers with a length */
	assert_int_equal(cn_chacha20_xor(NULL, nonce, 0, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, NULL, 0, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, NULL, buf, 1), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf, NULL, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(NULL, buf, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, NULL, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, buf, NULL, buf, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, buf, buf, NULL, 1), -EINVAL);
	assert_int_equal(cn_chacha20_stream(NULL, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_chacha20_stream(&cst, buf, NULL, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_stream(NULL, buf, buf, 1), -EINVAL);
	assert_int_equal(cn_aes128ctr_stream(&ast, buf, NULL, 1), -EINVAL);
	/* partial overlap (in != out) is refused; in == out is fine */
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf, buf + 1, 64), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf + 63, buf, 64), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, ast.ctr, buf, buf + 15, 32), -EINVAL);
	assert_int_equal(cn_aes128ctr_stream(&ast, buf + 8, buf, 16), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf, buf + 64, 64), 0);
	assert_int_equal(cn_aes128ctr_xor(&k, ast.ctr, buf + 32, buf, 32), 0);
	/* lengths that run past the end of the address space */
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, far, buf, 100), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf, far, 100), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, ast.ctr, far, far, 100), -EINVAL);
	assert_int_equal(cn_chacha20_xor(key, nonce, 0, buf, buf, SIZE_MAX), -EINVAL);
	assert_int_equal(cn_aes128ctr_xor(&k, ast.ctr, buf, buf, SIZE_MAX), -EINVAL);
	/* failures leave the states alone */
	assert_int_equal(cst.counter, 0);
	assert_memory_equal(ast.ctr, (uint8_t[16]){ 0 }, 16);
}

/* Buffers whose last byte is the last byte before a PROT_NONE page, and
 * whose first byte is the first after one: any read or write outside
 * [p, p+len) faults. Every variant of both ciphers, in and out of place. */
static void test_guard_pages(void **state)
{
	size_t span = 3 * (size_t)sysconf(_SC_PAGESIZE);
	static const size_t big[] = { 1023, 1024, 1025, 4095, 4096, 4097, 9000, 3 * 4096 - 1 };
	uint8_t key[32];
	struct cn_test_guarded g;

	(void)state;
	cn_test_guarded_map(&g, 2, span); /* input, output */
	uint8_t *in_lo = g.lo[0], *in_hi = g.hi[0];
	uint8_t *out_lo = g.lo[1], *out_hi = g.hi[1];
	cn_test_seed(41);
	cn_test_fill_rand(in_lo, span);
	cn_test_fill_rand(key, 32);

	struct cn_chacha20 cst;
	struct cn_aes128_key ak;
	uint8_t iv[16] = { 0 };
	cn_chacha20_init(&cst, key, key + 20, 5);
	cn_aes128_expand_key(&ak, key);

	for (size_t i = 0; i < 600 + sizeof(big) / sizeof(big[0]); i++) {
		size_t n = i < 600 ? i : big[i - 600];
		if (n > span)
			continue;
		/* [end - n, end) and [start, start + n) */
		const uint8_t *ins[2] = { in_hi - n, in_lo };
		uint8_t *outs[2] = { out_hi - n, out_lo };
		for (int e = 0; e < 2; e++) {
			for (size_t v = 0; v < n_cvars; v++) {
				cvars[v].fn(&cst, ins[e], outs[e], n);
				cvars[v].fn(&cst, NULL, outs[e], n);
				cvars[v].fn(&cst, outs[e], outs[e], n);
			}
			for (size_t v = 0; v < n_avars; v++) {
				if (strcmp(avars[v].name, "generic") == 0 && n > 300 && n % 7)
					continue;
				avars[v].fn(&ak, iv, ins[e], outs[e], n);
				avars[v].fn(&ak, iv, NULL, outs[e], n);
				avars[v].fn(&ak, iv, outs[e], outs[e], n);
			}
		}
	}
	cn_test_guarded_free(&g);
}

/* ------------------------------------------------------------ dispatch */

#define AVX512_NEED (CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL | \
		     CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define AVX2_NEED (CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define AESNI_NEED (CN_CPU_AESNI | CN_CPU_SSSE3 | CN_CPU_SSE41)
#define VAES_NEED (AVX512_NEED | AESNI_NEED | CN_CPU_VAES | CN_CPU_VPCLMULQDQ)
#define VAES256_NEED (AVX2_NEED | AESNI_NEED | CN_CPU_VAES)

static void test_impl_list(void **state)
{
	const struct cn_chacha20_impl *ci[MAX_IMPLS];
	const struct cn_aes128ctr_impl *ai[MAX_IMPLS];
	size_t nc = cn_chacha20_impls(ci, MAX_IMPLS), na = cn_aes128ctr_impls(ai, MAX_IMPLS);
	uint64_t f = cn_cpu_features();

	(void)state;
	assert_true(nc >= 1 && na >= 1);
	assert_string_equal(cn_chacha20_impl_name(), ci[0]->name);
	assert_string_equal(cn_aes128ctr_impl_name(), ai[0]->name);
	assert_string_equal(ci[nc - 1]->name, "generic");
	assert_string_equal(ai[na - 1]->name, "generic");
	assert_int_equal(cn_chacha20_impls(NULL, 0), nc);
	assert_int_equal(cn_aes128ctr_impls(NULL, 0), na);
	for (size_t i = 0; i < nc; i++)
		assert_ptr_equal(cn_chacha20_impl_find(ci[i]->name), ci[i]);
	for (size_t i = 0; i < na; i++)
		assert_ptr_equal(cn_aes128ctr_impl_find(ai[i]->name), ai[i]);
	assert_null(cn_chacha20_impl_find("nope"));
	assert_null(cn_aes128ctr_impl_find("nope"));
	assert_string_equal(ci[0]->name, cn_test_choice(f, (const struct cn_test_rung[]){
		{AVX512_NEED, "avx512"}, {AVX2_NEED, "avx2"}, {0, NULL}}));
	assert_string_equal(ai[0]->name, cn_test_choice(f, (const struct cn_test_rung[]){
		{VAES_NEED, "vaes"}, {VAES256_NEED, "vaes256"}, {AESNI_NEED, "aesni"}, {0, NULL}}));
}

/* Prints "<chacha choice>: <list> / <aes choice>: <list>" and checks the
 * dispatched calls on the published vectors. */
static int child_main(void)
{
	const struct cn_chacha20_impl *ci[MAX_IMPLS];
	const struct cn_aes128ctr_impl *ai[MAX_IMPLS];
	size_t nc = cn_chacha20_impls(ci, MAX_IMPLS), na = cn_aes128ctr_impls(ai, MAX_IMPLS);
	uint8_t key[32], nonce[12], buf[128], want[128], iv[16];
	struct cn_aes128_key k;
	int bad = 0;

	printf("%s:", cn_chacha20_impl_name());
	for (size_t i = 0; i < nc; i++)
		printf(" %s", ci[i]->name);
	printf(" / %s:", cn_aes128ctr_impl_name());
	for (size_t i = 0; i < na; i++)
		printf(" %s", ai[i]->name);
	printf("\n");

	const struct chacha_vec *tv = &chacha_vecs[0];
	size_t n = unhex(tv->ct, want);
	unhex(tv->key, key);
	unhex(tv->nonce, nonce);
	bad |= cn_chacha20_xor(key, nonce, tv->counter, tv->pt, buf, n) != 0;
	bad |= memcmp(buf, want, n) != 0;

	unhex("2b7e151628aed2a6abf7158809cf4f3c", key);
	unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", iv);
	unhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
	      "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
	      buf);
	unhex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
	      "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
	      want);
	cn_aes128_expand_key(&k, key);
	bad |= cn_aes128ctr_xor(&k, iv, buf, buf, 64) != 0;
	bad |= memcmp(buf, want, 64) != 0;
	fflush(stdout);
	return bad ? 3 : 0;
}

static void expect_child(const char *disable, const char *want)
{
	cn_test_rerun_expect(disable, "--crypto-child", want);
}

static void test_dispatch_fallback(void **state)
{
	uint64_t det = cn_cpu_features_detected();
	int a512 = (det & AVX512_NEED) == AVX512_NEED, a2 = (det & AVX2_NEED) == AVX2_NEED;
	int ni = (det & AESNI_NEED) == AESNI_NEED, va = (det & VAES_NEED) == VAES_NEED;
	int va2 = (det & VAES256_NEED) == VAES256_NEED;

	(void)state;
	expect_child("all", "generic: generic / generic: generic\n");
	/* AES without AES-NI: the portable variant, still correct */
	expect_child("aes", a512 ? "avx512: avx512 avx2 generic / generic: generic\n" : NULL);
	/* no AVX-512: AVX2 ChaCha; VAES on 256-bit registers where the CPU
	 * has VAES, else 128-bit AES-NI */
	if (a2 && va2)
		expect_child("avx512", "avx2: avx2 generic / vaes256: vaes256 aesni generic\n");
	else if (a2 && ni)
		expect_child("avx512", "avx2: avx2 generic / aesni: aesni generic\n");
	/* VAES256 without AVX2 is not runnable */
	if (va2)
		expect_child("avx512,avx2", "generic: generic / aesni: aesni generic\n");
	/* the AVX-512 variants contain AVX2 code: masking AVX2 leaves generic
	 * ChaCha, and AES-NI (VAES needs AVX2 too) */
	if (ni)
		expect_child("avx2", "generic: generic / aesni: aesni generic\n");
	if (a512 && ni)
		expect_child("vaes", "avx512: avx512 avx2 generic / aesni: aesni generic\n");
	else if (a2 && ni)
		expect_child("vaes", "avx2: avx2 generic / aesni: aesni generic\n");
	if (a512 && va)
		expect_child("sse2", "avx512: avx512 avx2 generic / vaes: vaes vaes256 aesni generic\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--crypto-child") == 0)
		return child_main();
	collect_variants();
	fprintf(stderr, "chacha20 variants:");
	for (size_t v = 0; v < n_cvars; v++)
		fprintf(stderr, " %s", cvars[v].name);
	fprintf(stderr, " (dispatch -> %s); aes128ctr variants:", cn_chacha20_impl_name());
	for (size_t v = 0; v < n_avars; v++)
		fprintf(stderr, " %s", avars[v].name);
	fprintf(stderr, " (dispatch -> %s)\n", cn_aes128ctr_impl_name());

	const struct CMUnitTest tests[] = {
		CN_T(test_chacha_rfc_232), CN_T(test_chacha_vectors), CN_T(test_chacha_a22),
		CN_T(test_chacha_all_lengths), CN_T(test_chacha_random_long),
		CN_T(test_chacha_counter), CN_T(test_aes_fips197), CN_T(test_aes_sp800_38a),
		CN_T(test_aes_all_lengths), CN_T(test_aes_counter_carry),
		CN_T(test_aes_low_byte_phases), CN_T(test_aes_random_long), CN_T(test_bad_input),
		CN_T(test_guard_pages), CN_T(test_impl_list), CN_T(test_dispatch_fallback),
	};
	int rc = cmocka_run_group_tests_name("crypto", tests, NULL, NULL);
	return rc;
}
