/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Dispatch and the checked entry points of the cipher module.
 *
 * Two best-first tables (ChaCha20, AES-128-CTR): the first entry whose
 * features cn_cpu_has() reports (CPUID + XCR0 - CACHENET_CPU_DISABLE) wins,
 * chosen by a constructor and again lazily if a call comes first (another
 * library's constructor may run before ours). Racing selections compute the
 * same answer, so relaxed atomics suffice.
 *
 * The feature masks name everything the compiler may use in each variant's
 * library, not only what the code was written for (src/meson.build gives
 * each ISA list its -m flags and the compiler uses them where it likes:
 * BMI2 shifts, AVX512DQ/VL forms of 256-bit operations).
 */
#include "crypto_impl.h"

#include "cachenet/cpu.h"
#include "../cpu/dispatch.h"

#include <errno.h>
#include <string.h>

/* Sizes the header states: the ChaCha20 state is 48 bytes (fits one cache
 * line with room for a 16-byte keystream position if a caller adds one);
 * the AES key schedule 176 bytes = 2.75 lines, aligned 16 for AESENC's
 * memory operand; the CTR state adds the counter block: 192 bytes, three
 * lines when the caller aligns it to 64. */
_Static_assert(sizeof(struct cn_chacha20) == 48, "cn_chacha20 layout");
_Static_assert(sizeof(struct cn_aes128_key) == 176, "cn_aes128_key layout");
_Static_assert(sizeof(struct cn_aes128ctr) == 192, "cn_aes128ctr layout");

#define AVX512_FEATURES                                                                     \
	(CN_CPU_AVX512F | CN_CPU_AVX512BW | CN_CPU_AVX512DQ | CN_CPU_AVX512VL | CN_CPU_AVX2 | \
	 CN_CPU_BMI1 | CN_CPU_BMI2)
#define AVX2_FEATURES (CN_CPU_AVX2 | CN_CPU_BMI1 | CN_CPU_BMI2)
#define AESNI_FEATURES (CN_CPU_AESNI | CN_CPU_SSSE3 | CN_CPU_SSE41)

static const struct cn_chacha20_impl chacha_table[] = {
#if defined(__x86_64__)
	{ "avx512", AVX512_FEATURES, cn_chacha20_xor_avx512 },
	{ "avx2", AVX2_FEATURES, cn_chacha20_xor_avx2 },
#endif
	{ "generic", 0, cn_chacha20_xor_generic },
};

static const struct cn_aes128ctr_impl aes_table[] = {
#if defined(__x86_64__)
	/* isa_avx512vaes: AVX-512 flags + -maes -mvaes -mvpclmulqdq; the
	 * key expansion and single block it borrows are AES-NI code. */
	{ "vaes", AVX512_FEATURES | CN_CPU_AESNI | CN_CPU_VAES | CN_CPU_VPCLMULQDQ | AESNI_FEATURES,
	  cn_aes128ctr_xor_vaes, cn_aes128_expand_key_aesni, cn_aes128_encrypt_block_aesni },
	/* isa_avx2vaes: the AVX2 flags + -maes -mvaes (no AVX-512): VAES on
	 * 256-bit registers, for the CPUs with VAES and no AVX-512. */
	{ "vaes256", AVX2_FEATURES | CN_CPU_VAES | AESNI_FEATURES, cn_aes128ctr_xor_vaes256,
	  cn_aes128_expand_key_aesni, cn_aes128_encrypt_block_aesni },
	{ "aesni", AESNI_FEATURES, cn_aes128ctr_xor_aesni, cn_aes128_expand_key_aesni,
	  cn_aes128_encrypt_block_aesni },
#endif
	{ "generic", 0, cn_aes128ctr_xor_generic, cn_aes128_expand_key_generic,
	  cn_aes128_encrypt_block_generic },
};

#define N_CHACHA (sizeof(chacha_table) / sizeof(chacha_table[0]))
CN_IMPL_LAYOUT_CHECK(struct cn_chacha20_impl);
CN_IMPL_LAYOUT_CHECK(struct cn_aes128ctr_impl);
#define N_AES (sizeof(aes_table) / sizeof(aes_table[0]))

/* The chosen entries; NULL until selected. */
static const struct cn_chacha20_impl *chacha_sel;
static cn_chacha20_fn chacha_one_sel; /* the kernel for one block (chacha_for) */
static const struct cn_aes128ctr_impl *aes_sel;

static void select_impls(void)
{
	const struct cn_chacha20_impl *c = cn__impl_best(chacha_table, N_CHACHA, sizeof(chacha_table[0]));
	const struct cn_aes128ctr_impl *a = cn__impl_best(aes_table, N_AES, sizeof(aes_table[0]));

	cn_chacha20_fn one = c->xor_fn;

#if defined(__x86_64__)
	if (one == cn_chacha20_xor_avx512)
		one = cn_chacha20_xor_generic;
#endif
	/* chacha_one_sel first; chacha_sel's release store and chacha()'s
	 * acquire load make a non-NULL chacha_sel imply chacha_one_sel is
	 * set (plain loads and stores on x86). */
	__atomic_store_n(&chacha_one_sel, one, __ATOMIC_RELAXED);
	__atomic_store_n(&chacha_sel, c, __ATOMIC_RELEASE);
	__atomic_store_n(&aes_sel, a, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void crypto_init(void)
{
	select_impls();
}

/* Defines name(), the variant @p sel holds, selected first when a call
 * comes before the constructor ran (from another constructor). @p order:
 * chacha()'s acquire pairs with select_impls' release store. */
#define SELECTED_FN(name, type, sel, order)                       \
	static inline type *name(void)                            \
	{                                                         \
		type *v_ = __atomic_load_n(&(sel), (order));      \
                                                                  \
		if (__builtin_expect(!v_, 0)) {                   \
			select_impls();                           \
			v_ = __atomic_load_n(&(sel), (order));    \
		}                                                 \
		return v_;                                        \
	}

SELECTED_FN(chacha, const struct cn_chacha20_impl, chacha_sel, __ATOMIC_ACQUIRE)
SELECTED_FN(aes, const struct cn_aes128ctr_impl, aes_sel, __ATOMIC_RELAXED)

/*
 * The kernel for a len-byte ChaCha20 call. A vector pass is latency-bound
 * at about the time of one block's 20 rounds, so for one block the choice
 * depends on the variant: the AVX-512 pass costs more than the scalar
 * code, so one block goes to the generic kernel there; the AVX2 variant's
 * one-block path (a pair of blocks in one register set, chacha20_avx2.c)
 * is faster than the scalar code, so it keeps one block (figures:
 * docs/performance.md, Ciphers).
 */
#define CHACHA_SCALAR_MAX 64

static inline cn_chacha20_fn chacha_for(size_t len)
{
	const struct cn_chacha20_impl *c = chacha();

	return len <= CHACHA_SCALAR_MAX ? __atomic_load_n(&chacha_one_sel, __ATOMIC_RELAXED)
					: c->xor_fn;
}

/* ------------------------------------------------------------ checks */

/* 0 if the buffer arguments are acceptable: out non-NULL and in non-NULL
 * (unless keystream_ok) for len > 0, no address-space wrap, and in and out
 * either equal or disjoint. */
static int check_bufs(const void *in, const void *out, size_t len, int keystream_ok)
{
	uintptr_t i = (uintptr_t)in, o = (uintptr_t)out;

	if (len == 0)
		return 0;
	if (!out || (!in && !keystream_ok))
		return -EINVAL;
	if (o + len < o || (in && i + len < i))
		return -EINVAL;
	if (in && i != o && i < o + len && o < i + len)
		return -EINVAL;
	return 0;
}

/* The checks every en/decrypting call makes, in this order: 0 for len 0
 * (the call does nothing, whatever its pointers); -EINVAL when the key
 * material (@p key and @p iv; a stream state passes itself as both) is
 * missing, or check_bufs refuses the buffers; else 1: the call has work
 * to do. The key check stays apart from the buffer checks: merged, gcc
 * turns them into one branchless test, 3 instructions more per call. */
static inline int check_call(const void *key, const void *iv, const void *in, const void *out,
			     size_t len, int keystream_ok)
{
	int rc;

	if (len == 0)
		return 0;
	if (!key || !iv)
		return -EINVAL;
	if ((rc = check_bufs(in, out, len, keystream_ok)) != 0)
		return rc;
	return 1;
}

/* ------------------------------------------------------------ ChaCha20 */

void cn_chacha20_init(struct cn_chacha20 *st, const uint8_t *key, const uint8_t *nonce,
		      uint32_t counter)
{
	for (int i = 0; i < 8; i++)
		st->key[i] = cn__ld32le(key + 4 * i);
	st->counter = counter;
	for (int i = 0; i < 3; i++)
		st->nonce[i] = cn__ld32le(nonce + 4 * i);
}

/* Blocks a message of len bytes uses; 0 if it would run past block
 * 2^32 - 1 (RFC 8439: the counter must not wrap within a message). */
static int chacha_blocks_ok(uint32_t counter, size_t len)
{
	uint64_t blocks = len / 64 + (len % 64 != 0);

	return blocks <= ((uint64_t)1 << 32) - counter;
}

int cn_chacha20_xor(const uint8_t *key, const uint8_t *nonce, uint32_t counter, const void *in,
		    void *out, size_t len)
{
	struct cn_chacha20 st;
	int rc = check_call(key, nonce, in, out, len, 0);

	if (rc <= 0)
		return rc;
	if (!chacha_blocks_ok(counter, len))
		return -EOVERFLOW;
	cn_chacha20_init(&st, key, nonce, counter);
	chacha_for(len)(&st, in, out, len);
	return 0;
}

int cn_chacha20_stream(struct cn_chacha20 *st, const void *in, void *out, size_t len)
{
	int rc = check_call(st, st, in, out, len, 1);

	if (rc <= 0)
		return rc;
	/* One block fewer than cn_chacha20_xor() allows: a state must not
	 * wrap to counter 0, where it would look fresh and a next call would
	 * repeat the keystream of block 0. */
	if (st->counter == UINT32_MAX || !chacha_blocks_ok(st->counter + 1, len))
		return -EOVERFLOW;
	chacha_for(len)(st, in, out, len);
	st->counter += (uint32_t)(len / 64 + (len % 64 != 0));
	return 0;
}

void cn_chacha20_block(struct cn_chacha20 *st, void *out64)
{
	uint32_t w[16];
	uint8_t *o = out64;

	cn__chacha20_block_words(st, st->counter, w);
	for (int i = 0; i < 16; i++)
		cn__st32le(o + 4 * i, w[i]);
	st->counter++;
}

void cn_chacha20_keystream(struct cn_chacha20 *st, void *out, size_t nblocks)
{
	/* Chunks keep len in range where size_t is 32 bits wide. */
	while (nblocks) {
		size_t n = nblocks > ((size_t)1 << 20) ? ((size_t)1 << 20) : nblocks;
		chacha()->xor_fn(st, NULL, out, n * 64);
		st->counter += (uint32_t)n;
		out = (uint8_t *)out + n * 64;
		nblocks -= n;
	}
}

CN_IMPL_TABLE_API(cn_chacha20, struct cn_chacha20_impl, chacha_table)

const char *cn_chacha20_impl_name(void)
{
	return chacha()->name;
}

/* ------------------------------------------------------------ AES-128-CTR */

void cn_aes128_expand_key(struct cn_aes128_key *k, const uint8_t *key)
{
	aes()->expand(k, key);
}

void cn_aes128_encrypt_block(const struct cn_aes128_key *k, const void *in, void *out)
{
	aes()->block(k, in, out);
}

void cn_aes128ctr_init(struct cn_aes128ctr *st, const uint8_t *key, const uint8_t *iv)
{
	aes()->expand(&st->key, key);
	memcpy(st->ctr, iv, 16);
}

int cn_aes128ctr_xor(const struct cn_aes128_key *k, const uint8_t *iv, const void *in, void *out,
		     size_t len)
{
	int rc = check_call(k, iv, in, out, len, 0);

	if (rc <= 0)
		return rc;
	aes()->xor_fn(k, iv, in, out, len);
	return 0;
}

static void ctr_advance(uint8_t ctr[16], uint64_t blocks)
{
	cn__ctr_store(ctr, cn__ctr_add(cn__ctr_load(ctr), blocks));
}

int cn_aes128ctr_stream(struct cn_aes128ctr *st, const void *in, void *out, size_t len)
{
	int rc = check_call(st, st, in, out, len, 1);

	if (rc <= 0)
		return rc;
	aes()->xor_fn(&st->key, st->ctr, in, out, len);
	ctr_advance(st->ctr, len / 16 + (len % 16 != 0));
	return 0;
}

void cn_aes128ctr_block(struct cn_aes128ctr *st, void *out16)
{
	aes()->block(&st->key, st->ctr, out16);
	ctr_advance(st->ctr, 1);
}

void cn_aes128ctr_keystream(struct cn_aes128ctr *st, void *out, size_t nblocks)
{
	while (nblocks) {
		size_t n = nblocks > ((size_t)1 << 20) ? ((size_t)1 << 20) : nblocks;
		aes()->xor_fn(&st->key, st->ctr, NULL, out, n * 16);
		ctr_advance(st->ctr, n);
		out = (uint8_t *)out + n * 16;
		nblocks -= n;
	}
}

CN_IMPL_TABLE_API(cn_aes128ctr, struct cn_aes128ctr_impl, aes_table)

const char *cn_aes128ctr_impl_name(void)
{
	return aes()->name;
}
