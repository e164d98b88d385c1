/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file crypto.h
 * Stream ciphers for the data path: ChaCha20 (RFC 8439) and AES-128 in
 * counter mode (NIST SP 800-38A), each as a whole-buffer call and as a
 * per-block step with explicit state.
 *
 * Conventions of this module
 *
 *  - Both ciphers are keystream generators: out = in XOR keystream, so the
 *    same call encrypts and decrypts. in == out (in place) is allowed; any
 *    other overlap of [in, in+len) and [out, out+len) is rejected by the
 *    checked calls (-EINVAL) and undefined for the raw variants.
 *    When @p in is NULL the variants write the keystream itself to out.
 *
 *  - Lengths are bytes, any value including 0 and a partial final block.
 *    A partial final block uses (and the stateful calls consume) a whole
 *    block of keystream: only calls whose lengths are multiples of the block
 *    size (64 B for ChaCha20, 16 B for AES) can be chained on one state.
 *
 *  - Checked vs raw. cn_chacha20_xor(), cn_chacha20_stream(),
 *    cn_aes128ctr_xor() and cn_aes128ctr_stream() validate their arguments
 *    and return 0 or a negative errno:
 *      -EINVAL     a NULL key/state/out with len > 0, NULL in is allowed
 *                  only for the keystream calls; in and out overlap but are
 *                  not equal; in + len or out + len wraps the address space
 *      -EOVERFLOW  ChaCha20 only: the message needs more blocks than are
 *                  left in the 32-bit block counter (RFC 8439 section 2.4:
 *                  at most 2^32 blocks, 256 GiB, per key and nonce); nothing
 *                  is written. AES-CTR's 128-bit counter wraps modulo 2^128
 *                  (SP 800-38A B.1) and cannot run out in practice.
 *    The variants (cn_chacha20_xor_avx2() etc.) and the per-block steps
 *    trust the caller: no checks, the counter wraps silently.
 *
 *  - Variants are chosen once (constructor or first call) from a best-first
 *    table by cn_cpu_has() (CPUID + XCR0, minus CACHENET_CPU_DISABLE); each
 *    can also be called directly when cn_chacha20_impl_find() /
 *    cn_aes128ctr_impl_find() returns it. Nothing reads or writes outside
 *    [in, in+len) and [out, out+len): tails use byte-masked loads/stores or
 *    go through a stack buffer.
 *
 *  - Without AES-NI the AES functions use a portable, table-free "generic"
 *    variant (S-box computed by inversion in GF(2^8) on 8 bytes at once, so
 *    no secret-dependent memory access or branch; constant-time as far as
 *    the compiler keeps it so, not audited). It is correct but slow
 *    (several hundred ticks per byte); it never returns -ENOTSUP and never a
 *    wrong result.
 *
 *  - Costs are given as same-run ratios to OpenSSL 3.0 (EVP) on the
 *    project's EPYC VMs (Zen 4, then Zen 5 class), L1/L2-hot, because the shared VM's absolute
 *    figures moved by 2x with load; bench/bench_crypto.cc measures them.
 *
 * Using the per-block steps inside an integrated (ILP) loop
 *
 *   The ILP generator fuses several data manipulations (copy, byte swap,
 *   checksum, cipher) into one loop over a block of B bytes (the least
 *   common multiple of the functions' blocks: 64 for ChaCha20, 16 for AES).
 *   A cipher step there produces keystream for one block into a small
 *   buffer that stays in L1 and the loop XORs it into each word while the
 *   word is in a register:
 *
 *     struct cn_chacha20 st;
 *     cn_chacha20_init(&st, key, nonce, 1);
 *     for (size_t off = 0; off + 64 <= len; off += 64) {
 *         uint32_t ks[16];
 *         cn_chacha20_block(&st, ks);       // 64 B keystream, counter++
 *         for (int i = 0; i < 16; i++) {
 *             uint32_t w = load32(src + off + 4 * i);
 *             w = bswap32(w) ^ ks[i];         // ...other functions' steps
 *             sum += w;                       // checksum of what is stored
 *             store32(dst + off + 4 * i, w);
 *         }
 *     }
 *
 *   cn_chacha20_block() and cn_aes128ctr_block() are scalar/one-block steps
 *   (no vector state to set up); for higher throughput a loop can take the
 *   keystream of 8-16 blocks at once with cn_chacha20_keystream() /
 *   cn_aes128ctr_keystream() (dispatched, vectorised) and walk it.
 *   Keystream words are little-endian byte images: ks[i] XORed into a
 *   native (little-endian) load of the same 4 bytes is the cipher.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: the functions keep no state besides the caller's; any
 * number of threads may use them on distinct states.
 */
#ifndef CACHENET_CRYPTO_H
#define CACHENET_CRYPTO_H

#include "cachenet/common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================== ChaCha20 */

#define CN_CHACHA20_KEY_LEN 32   /**< ChaCha20 key bytes */
#define CN_CHACHA20_NONCE_LEN 12 /**< ChaCha20 nonce bytes */
#define CN_CHACHA20_BLOCK_LEN 64 /**< ChaCha20 block bytes */

/**
 * ChaCha20 state between blocks (RFC 8439 section 2.3), 48 bytes: the key
 * and nonce as little-endian words and the 32-bit block counter of the
 * next block. The constants are not stored. Words 4..15 of the RFC's
 * initial state are key[0..7], counter, nonce[0..2].
 */
struct cn_chacha20 {
	uint32_t key[8];  /**< the key, little-endian words */
	uint32_t counter; /**< block counter of the next block */
	uint32_t nonce[3]; /**< the nonce, little-endian words */
};

/** Load key (32 bytes) and nonce (12 bytes), any alignment, and counter. */
void cn_chacha20_init(struct cn_chacha20 *st, const uint8_t *key, const uint8_t *nonce,
		      uint32_t counter) CN_NONNULL_ALL;

/**
 * Encrypt or decrypt @p len bytes with key, nonce and initial block counter
 * (RFC 8439 section 2.4; counter 1 for AEAD payloads, 0 for section 2.4.2's
 * first block in A.2 test 1).
 * @param key    32 bytes (any alignment)
 * @param nonce  12 bytes (any alignment)
 * @param counter  block counter of the first block
 * @param len    bytes
 * @param in     source, or == @p out for in place; may be NULL if len is 0
 * @param out    destination
 * @return 0; -EINVAL or -EOVERFLOW (see conventions), nothing written then.
 * Cost: dispatched. AVX-512: up to 64 B (one block) the scalar kernel,
 * ~245 TSC ticks (OpenSSL 3.0 ~380); above, 32 blocks per pass in two
 * interleaved groups, a partly used pass for the rest (one pass costs about
 * the same however much of it is used: 65-1023 B ~390 ticks, 1025-2047 B
 * ~570); against OpenSSL 3.0's AVX-512 path 1.0x at 576 B, 1.4-2.1x from
 * 1460 B. AVX2 only: eight blocks per pass, pairs of blocks up to 384 B
 * (one block included); against OpenSSL's AVX2 path on a Zen 3 class CPU
 * 1.0x at 64 B and 16 KB, 1.2-1.3x at 576 and 1460 B. Figures:
 * docs/performance.md, Ciphers.
 */
int cn_chacha20_xor(const uint8_t *key, const uint8_t *nonce, uint32_t counter, const void *in,
		    void *out, size_t len);

/**
 * As cn_chacha20_xor() on a state, advancing st->counter by the number of
 * blocks used (len / 64 rounded up). NULL @p in writes keystream.
 * @return 0, -EINVAL (st NULL too), -EOVERFLOW (state unchanged then). -EOVERFLOW comes
 * one block earlier than for cn_chacha20_xor(): the counter may reach
 * 2^32 - 1 but a call never uses that last block, so a state never wraps
 * back to 0 and repeats keystream.
 */
int cn_chacha20_stream(struct cn_chacha20 *st, const void *in, void *out, size_t len);

/**
 * Per-block step: the 64-byte keystream block for st->counter, then
 * st->counter++ (wrapping modulo 2^32, unchecked). Scalar code, no
 * dispatch, ~250 ticks. @p out64 any alignment.
 */
void cn_chacha20_block(struct cn_chacha20 *st, void *out64) CN_NONNULL_ALL;

/**
 * @p nblocks keystream blocks (64 bytes each) into @p out, dispatched
 * (vector variants make 8 or 16 at once), st->counter += nblocks
 * (wrapping, unchecked).
 */
void cn_chacha20_keystream(struct cn_chacha20 *st, void *out, size_t nblocks) CN_NONNULL(1);

/** Raw kernel: out = in XOR keystream(st) for len bytes, st not advanced,
 *  no checks (in NULL: keystream; in == out allowed; counter wraps). */
typedef void (*cn_chacha20_fn)(const struct cn_chacha20 *st, const void *in, void *out,
			       size_t len);

/** A ChaCha20 variant. */
struct cn_chacha20_impl {
	const char *name;  /**< "avx512", "avx2", "generic" */
	uint64_t features; /**< CN_CPU_* bits it needs */
	cn_chacha20_fn xor_fn; /**< its raw kernel */
};

/** Runnable variants, best first; like cn_csum_impls(). */
size_t cn_chacha20_impls(const struct cn_chacha20_impl **out, size_t n);
/** The runnable variant called @p name, or NULL. */
const struct cn_chacha20_impl *cn_chacha20_impl_find(const char *name) CN_NONNULL_ALL;
/** Name of the dispatched variant. */
const char *cn_chacha20_impl_name(void);

/** The portable ChaCha20 kernel (a cn_chacha20_fn), on every CPU. */
void cn_chacha20_xor_generic(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
	CN_NONNULL(1);
#if defined(__x86_64__)
/* Call only when cn_chacha20_impl_find() returns them. */
void cn_chacha20_xor_avx2(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
	CN_NONNULL(1);
void cn_chacha20_xor_avx512(const struct cn_chacha20 *st, const void *in, void *out, size_t len)
	CN_NONNULL(1);
#endif

/* =========================================================== AES-128-CTR */

#define CN_AES128_KEY_LEN 16 /**< AES-128 key bytes */
#define CN_AES_BLOCK_LEN 16  /**< AES block bytes */

/**
 * Expanded AES-128 encryption key: the 11 round keys as byte strings in
 * FIPS-197 order (round key i is bytes 16i..16i+15 of the key schedule
 * w[4i..4i+3]), which is what AESENC takes from memory. 176 bytes, 16-byte
 * aligned for aligned vector loads.
 */
struct cn_aes128_key {
	uint8_t rk[11][16] __attribute__((aligned(16))); /**< round keys 0..10 */
};

/**
 * Counter-mode state, 192 bytes: the key schedule and the next counter
 * block. Counter block layout (SP 800-38A section 6.5 and B.1): the
 * 16-byte block is one 128-bit big-endian integer incremented by 1 per
 * block, carrying through all 128 bits and wrapping modulo 2^128. A caller
 * that wants the common nonce||counter split (e.g. 96-bit nonce + 32-bit
 * counter as in RFC 3686) sets the bytes so; the carry out of the low
 * 32 bits then reaches the nonce, which only a message of 2^32 blocks would
 * do.
 */
struct cn_aes128ctr {
	struct cn_aes128_key key; /**< the expanded key */
	uint8_t ctr[16]; /**< next counter block, big-endian */
};

/** Expand a 16-byte key (any alignment). Dispatched (AESKEYGENASSIST with
 *  AES-NI, ~40 ticks; the portable code otherwise, ~4000 ticks). */
void cn_aes128_expand_key(struct cn_aes128_key *k, const uint8_t *key) CN_NONNULL_ALL;

/** Encrypt one 16-byte block (ECB; in == out allowed). Dispatched. */
void cn_aes128_encrypt_block(const struct cn_aes128_key *k, const void *in, void *out)
	CN_NONNULL_ALL;

/** Expand @p key and copy the initial counter block @p iv (16 bytes). */
void cn_aes128ctr_init(struct cn_aes128ctr *st, const uint8_t *key, const uint8_t *iv)
	CN_NONNULL_ALL;

/**
 * Encrypt or decrypt @p len bytes in counter mode from counter block @p iv
 * (SP 800-38A 6.5) with an expanded key (expand it once per key, outside
 * any per-packet path).
 * @return 0 or -EINVAL (k or iv NULL too; nothing written).
 * Cost: dispatched; VAES (4 blocks per instruction, 8 vectors in flight,
 * the last < 512 bytes in passes of exactly the vectors they need):
 * ~0.05-0.06 ticks per byte from 576 B, 0.21 at 64 B, about 4x OpenSSL
 * 3.0's AES-NI path (docs/performance.md, Ciphers); the AES-NI variant
 * (no VAES) about OpenSSL's speed; without AVX-512 but with VAES, the
 * vaes256 variant (2 blocks per instruction, 16 blocks in flight), about
 * 2x OpenSSL's AES-NI path from 64 B to 16 KB (docs/performance.md,
 * Ciphers); generic: hundreds of ticks per byte.
 */
int cn_aes128ctr_xor(const struct cn_aes128_key *k, const uint8_t *iv, const void *in, void *out,
		     size_t len);

/** As cn_aes128ctr_xor() on a state, advancing st->ctr by len / 16 rounded
 *  up blocks. NULL @p in writes keystream. @return 0 or -EINVAL (st NULL
 *  too). */
int cn_aes128ctr_stream(struct cn_aes128ctr *st, const void *in, void *out, size_t len);

/** Per-block step: the 16-byte keystream block E(K, st->ctr), then
 *  st->ctr += 1 (128-bit big-endian). Dispatched single-block encryption. */
void cn_aes128ctr_block(struct cn_aes128ctr *st, void *out16) CN_NONNULL_ALL;

/** @p nblocks keystream blocks into @p out, dispatched; st->ctr advances. */
void cn_aes128ctr_keystream(struct cn_aes128ctr *st, void *out, size_t nblocks) CN_NONNULL(1);

/** Raw kernel: out = in XOR E(K, ctr), E(K, ctr+1), ... for len bytes; no
 *  checks (in NULL: keystream; in == out allowed). ctr is 16 bytes. */
typedef void (*cn_aes128ctr_fn)(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
				void *out, size_t len);
/** Key expansion kernel: the 16-byte @p key into @p k. */
typedef void (*cn_aes128_expand_fn)(struct cn_aes128_key *k, const uint8_t *key);
/** Single-block kernel: @p out = E(K, @p in), 16 bytes each. */
typedef void (*cn_aes128_block_fn)(const struct cn_aes128_key *k, const void *in, void *out);

/** An AES-128 variant. */
struct cn_aes128ctr_impl {
	const char *name;  /**< "vaes", "vaes256", "aesni", "generic" */
	uint64_t features; /**< CN_CPU_* bits it needs */
	cn_aes128ctr_fn xor_fn;      /**< counter-mode kernel */
	cn_aes128_expand_fn expand;  /**< key expansion */
	cn_aes128_block_fn block;    /**< one block */
};

/** Runnable variants, best first, into @p out (up to @p n); @return how
 *  many there are (call with n 0 to count). Like cn_csum_impls(). */
size_t cn_aes128ctr_impls(const struct cn_aes128ctr_impl **out, size_t n);
/** The runnable variant called @p name, or NULL. */
const struct cn_aes128ctr_impl *cn_aes128ctr_impl_find(const char *name) CN_NONNULL_ALL;
/** Name of the dispatched variant. */
const char *cn_aes128ctr_impl_name(void);

/** The portable counter-mode kernel (a cn_aes128ctr_fn), on every CPU. */
void cn_aes128ctr_xor_generic(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			      void *out, size_t len) CN_NONNULL(1, 2);
/** The portable key expansion (a cn_aes128_expand_fn). */
void cn_aes128_expand_key_generic(struct cn_aes128_key *k, const uint8_t *key) CN_NONNULL_ALL;
/** The portable single-block encryption (a cn_aes128_block_fn). */
void cn_aes128_encrypt_block_generic(const struct cn_aes128_key *k, const void *in, void *out)
	CN_NONNULL_ALL;
#if defined(__x86_64__)
/* Call only when cn_aes128ctr_impl_find() returns them. */
void cn_aes128ctr_xor_aesni(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			    void *out, size_t len) CN_NONNULL(1, 2);
void cn_aes128_expand_key_aesni(struct cn_aes128_key *k, const uint8_t *key) CN_NONNULL_ALL;
void cn_aes128_encrypt_block_aesni(const struct cn_aes128_key *k, const void *in, void *out)
	CN_NONNULL_ALL;
void cn_aes128ctr_xor_vaes(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			   void *out, size_t len) CN_NONNULL(1, 2);
void cn_aes128ctr_xor_vaes256(const struct cn_aes128_key *k, const uint8_t *ctr, const void *in,
			      void *out, size_t len) CN_NONNULL(1, 2);
#endif

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_CRYPTO_H */
