/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file pes.h
 * PES, the "pseudo-encryption" of Abbott & Peterson's integrated
 * BSWAP/PES/CKSUM loop, exactly as Ahlgren et al. list it in
 * Fig. 5, so that the ILP study reproduces that paper's Table II.
 *
 * PES IS NOT A CIPHER. It has no key, hides nothing and (as listed) cannot
 * even be undone: it exists to give a benchmark loop a realistic amount of
 * per-word computation. Never use it to protect data; cachenet's ciphers are
 * in crypto.h.
 *
 * Definition (Fig. 5, the two-word block the paper uses): the input is a
 * sequence of 32-bit words taken in pairs (w0, w1); each pair becomes
 *
 *     out0 = (w0 & 0xF0F0F0F0) | (w1 & 0xF0F0F0F0)
 *     out1 = (w0 & 0xF0F0F0F0) | (w1 & 0xF0F0F0F0)
 *
 * XXX: the listing gives the same expression for both output words, so they
 * are equal and the low nibble of every byte is lost; there is no
 * decryption. An invertible nibble exchange would use 0x0F0F0F0F on one side
 * of each line, and Abbott & Peterson's original may have; we follow the
 * listing of Ahlgren et al. (the instruction count, which is what
 * Table II depends on, is the same either way).
 *
 * Words are 32-bit values loaded from memory in the CPU's native order (in
 * the paper's loop they come out of BSWAP). Since both outputs are the same
 * symmetric function of w0 and w1, the result does not depend on the byte
 * order of the loads.
 *
 * Whole-buffer conventions are those of bswap.h: dst == src in place,
 * otherwise no overlap; any alignment; the last len % 8 bytes (an unpaired
 * word and any bytes after it) are copied unchanged; nothing outside the
 * ranges is touched; NULL only with len 0.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 */
#ifndef CACHENET_PES_H
#define CACHENET_PES_H

#include "cachenet/common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The mask of Fig. 5: the high nibble of every byte. */
#define CN_PES_MASK 0xF0F0F0F0u

/* ------------------------------------------------------------ per block */

/**
 * One PES block: the pair (*w0, *w1) in registers, replaced by its output
 * pair. Block: 8 bytes in, 8 bytes out, no state between blocks. Three ALU
 * operations (and, and, or) as in the listing, the second output a copy.
 * Compose with the other steps as bswap.h shows.
 */
CN_NONNULL_ALL
static inline void cn_pes_step(uint32_t *w0, uint32_t *w1)
{
	uint32_t first = *w0, second = *w1;

	*w0 = (first & CN_PES_MASK) | (second & CN_PES_MASK);
	*w1 = (first & CN_PES_MASK) | (second & CN_PES_MASK);
}

/**
 * State of PES fed one word at a time: Fig. 5's original one-word block,
 * with the first word of a pair waiting for the second (the paper's
 * firstWord/awaitingSecondWord). Zero-initialise it ({0}) to start.
 */
struct cn_pes_state {
	uint32_t first;   /**< the waiting first word, valid when pending */
	uint32_t pending; /**< 1 after an odd number of words, else 0 */
};

/**
 * Feed one word. The first word of a pair is kept in @p st and nothing is
 * produced; the second produces the pair's two output words in @p out.
 * @return the number of words written to @p out: 0 or 2. A word left
 *         pending at the end of the data produces nothing (the paper's
 *         loop drops it; the whole-buffer call copies it unchanged).
 */
CN_NONNULL_ALL
static inline unsigned cn_pes_word(struct cn_pes_state *st, uint32_t w, uint32_t out[2])
{
	if (!st->pending) {
		st->first = w;
		st->pending = 1;
		return 0;
	}
	st->pending = 0;
	out[0] = st->first;
	out[1] = w;
	cn_pes_step(&out[0], &out[1]);
	return 2;
}

/* ------------------------------------------------------------ whole buffer */

/**
 * PES over [src, src+len) into dst (see the conventions above).
 * @param dst  any alignment; == src for in place, else no overlap
 * @param src  any alignment; NULL only if len is 0
 * @param len  any length; the last len % 8 bytes are copied unchanged
 * Cost: dispatched; one load and one store per byte, a rotate and a
 * three-input logic operation per 64 bytes with AVX-512.
 */
void cn_pes(void *dst, const void *src, size_t len);

/** In place: cn_pes(buf, buf, len). */
static inline void cn_pes_inplace(void *buf, size_t len)
{
	cn_pes(buf, buf, len);
}

/* ------------------------------------------------------------ variants */

/** Whole-buffer PES signature (cn_pes's contract). */
typedef void (*cn_pes_fn)(void *dst, const void *src, size_t len);

/** One implementation of PES. */
struct cn_pes_impl {
	const char *name;   /**< "avx512", "avx2", "neon", "generic" */
	uint64_t features;  /**< CN_CPU_* bits it needs (0 = none) */
	cn_pes_fn pes;      /**< its kernel */
};

/** As cn_bswap_impls(), for PES. */
size_t cn_pes_impls(const struct cn_pes_impl **out, size_t n);
/** As cn_bswap_impl_find(), for PES. */
const struct cn_pes_impl *cn_pes_impl_find(const char *name) CN_NONNULL_ALL;
/** Name of the variant cn_pes() dispatches to. */
const char *cn_pes_impl_name(void);

/** The variants, callable directly (x86-64 ones only when
 *  cn_pes_impl_find() returns them). */
void cn_pes_generic(void *dst, const void *src, size_t len);
#if defined(__x86_64__)
void cn_pes_avx2(void *dst, const void *src, size_t len);
void cn_pes_avx512(void *dst, const void *src, size_t len);
#endif
#if defined(__aarch64__) && defined(__AARCH64EL__)
/** aarch64 Advanced SIMD PES, 64 bytes a step (cn_pes's contract;
 *  requires CN_CPU_NEON). */
void cn_pes_neon(void *dst, const void *src, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_PES_H */
