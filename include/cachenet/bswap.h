/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file bswap.h
 * Byte swaps over a buffer: every 16-bit or every 32-bit unit reversed, in
 * place or while copying, and the per-block steps the ILP generator inlines.
 *
 * Conventions of this module (copy / bswap, with pes.h)
 *
 *  - One call for both modes: @p dst == @p src swaps in place; otherwise the
 *    two ranges must not overlap at all (partial overlap is undefined, as
 *    with memcpy; an assertion catches it in debug builds).
 *  - Any length and any alignment. Units are counted from the first byte of
 *    @p src; the bytes after the last whole unit (len % 2 or len % 4) are
 *    copied unchanged (left alone in place). Nothing outside [src, src+len)
 *    is read and nothing outside [dst, dst+len) is written.
 *  - NULL is accepted only with len 0 (asserted in debug builds).
 *  - Variants. The whole-buffer calls dispatch once (at load time or on the
 *    first call) to the best variant the CPU and OS support (cachenet/cpu.h,
 *    honouring CACHENET_CPU_DISABLE); each variant can also be called
 *    directly, see cn_bswap_impls().
 *
 * Per-block steps. cn_bswap32_step() and cn_bswap16_step() transform one
 * 32-bit word held in a register: the ILP generator loads a block once,
 * applies every function's step to the registers and stores once. A
 * composed loop over 8-byte blocks (copy, bswap32, PES, checksum), the
 * pipeline of Ahlgren et al.'s Fig. 5 (docs/papers.md):
 *
 *   uint64_t acc = 0;
 *   for (size_t i = 0; i + 8 <= len; i += 8) {
 *       uint32_t w0, w1;
 *       memcpy(&w0, src + i, 4); memcpy(&w1, src + i + 4, 4);  // copy: load
 *       w0 = cn_bswap32_step(w0); w1 = cn_bswap32_step(w1);     // bswap32
 *       cn_pes_step(&w0, &w1);                                  // PES (pes.h)
 *       acc += (uint64_t)w0 + w1;                               // checksum
 *       memcpy(dst + i, &w0, 4); memcpy(dst + i + 4, &w1, 4);   // copy: store
 *   }
 *   // tail (len % 8) per each function's contract, then
 *   // cn_csum_fold(acc) (csum.h: native 32-bit words summed with '+' in a
 *   // uint64_t are a valid partial sum as stored, up to 2^32 of them).
 *
 * The block of the composition is the least common multiple of the steps'
 * blocks: 4 bytes for the byte swaps, 8 for PES (a pair of words), 2 for the
 * checksum. Ahlgren et al.'s "BSWAP" (Fig. 5) is ((w & 0x00FF00FF) << 8) |
 * ((w & 0xFF00FF00) >> 8): it swaps the bytes of each 16-bit half, which is
 * cn_bswap16_step(), not a 32-bit reversal; use that step to reproduce the
 * paper's loop and its instruction count.
 *
 * Costs (TSC ticks, the project's EPYC VM, Zen 5 class, L1/L2-hot,
 * AVX-512 variant, same run as glibc memcpy; bench/bench_copy.cc): up to
 * 64 bytes one masked load, shuffle and store, 5.1-5.3 per call against
 * memcpy's 5.2-5.7; 1460 B 15.8-16.1 against 16.7-19.8 (one load, one
 * shuffle, one store per 64 bytes); 64 KB the speed of a bare AVX-512 copy
 * loop, 1.3-1.4x memcpy, which is `rep movsb` there.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef CACHENET_BSWAP_H
#define CACHENET_BSWAP_H

#include "cachenet/common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ per block */

/** Reverse the 4 bytes of @p w (one BSWAP/MOVBE on x86). Block: 4 bytes,
 *  no state. */
static inline uint32_t cn_bswap32_step(uint32_t w)
{
	return __builtin_bswap32(w);
}

/** Swap the two bytes of each 16-bit half of @p w: Ahlgren et al.'s BSWAP,
 *  exactly (two masks, two shifts, one or). Block: 4 bytes (two 16-bit
 *  units), no state. */
static inline uint32_t cn_bswap16_step(uint32_t w)
{
	return ((w & 0x00FF00FFu) << 8) | ((w & 0xFF00FF00u) >> 8);
}

/* ------------------------------------------------------------ whole buffers */

/**
 * Swap the bytes of every 16-bit unit of [src, src+len) into dst.
 * @param dst  any alignment; == src for in place, else no overlap
 * @param src  any alignment; NULL only if len is 0
 * @param len  any length; an odd last byte is copied unchanged
 * Cost: dispatched; touches each byte once (one load, one store).
 */
void cn_bswap16(void *dst, const void *src, size_t len);

/**
 * Reverse the bytes of every 32-bit unit of [src, src+len) into dst.
 * @param dst  any alignment; == src for in place, else no overlap
 * @param src  any alignment; NULL only if len is 0
 * @param len  any length; the last len % 4 bytes are copied unchanged
 * Cost: dispatched; touches each byte once (one load, one store).
 */
void cn_bswap32(void *dst, const void *src, size_t len);

/** In-place forms: cn_bswap16(buf, buf, len), cn_bswap32(buf, buf, len). */
static inline void cn_bswap16_inplace(void *buf, size_t len)
{
	cn_bswap16(buf, buf, len);
}

/** cn_bswap32() in place. */
static inline void cn_bswap32_inplace(void *buf, size_t len)
{
	cn_bswap32(buf, buf, len);
}

/* ------------------------------------------------------------ variants */

/** Whole-buffer byte-swap signature (contract of cn_bswap16/cn_bswap32). */
typedef void (*cn_bswap_fn)(void *dst, const void *src, size_t len);

/** One implementation of the byte swaps. */
struct cn_bswap_impl {
	const char *name;   /**< "avx512", "avx2", "neon", "generic" */
	uint64_t features;  /**< CN_CPU_* bits it needs (0 = none) */
	cn_bswap_fn bswap16; /**< its 16-bit swap */
	cn_bswap_fn bswap32; /**< its 32-bit swap */
};

/**
 * The variants this CPU and OS can run, best first (the first is the one
 * dispatched). Writes up to @p n pointers to static descriptors.
 * @return the number of runnable variants (may exceed @p n); at least 1.
 */
size_t cn_bswap_impls(const struct cn_bswap_impl **out, size_t n);

/** The runnable variant called @p name, or NULL (unknown, or this CPU/OS
 *  cannot run it). */
const struct cn_bswap_impl *cn_bswap_impl_find(const char *name) CN_NONNULL_ALL;

/** Name of the variant cn_bswap16()/cn_bswap32() dispatch to. */
const char *cn_bswap_impl_name(void);

/**
 * The variants, callable directly. The _avx2 and _avx512 functions exist on
 * x86-64 builds only and may be called only when cn_bswap_impl_find()
 * returns them.
 */
void cn_bswap16_generic(void *dst, const void *src, size_t len);
/** The portable 32-bit swap (cn_bswap32's contract). */
void cn_bswap32_generic(void *dst, const void *src, size_t len);
#if defined(__x86_64__)
void cn_bswap16_avx2(void *dst, const void *src, size_t len);
void cn_bswap32_avx2(void *dst, const void *src, size_t len);
void cn_bswap16_avx512(void *dst, const void *src, size_t len);
void cn_bswap32_avx512(void *dst, const void *src, size_t len);
#endif
#if defined(__aarch64__) && defined(__AARCH64EL__)
/** aarch64 Advanced SIMD 16-bit swap, REV16 on 64 bytes a step
 *  (cn_bswap16's contract; requires CN_CPU_NEON). */
void cn_bswap16_neon(void *dst, const void *src, size_t len);
/** aarch64 Advanced SIMD 32-bit swap, REV32 on 64 bytes a step
 *  (cn_bswap32's contract; requires CN_CPU_NEON). */
void cn_bswap32_neon(void *dst, const void *src, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_BSWAP_H */
