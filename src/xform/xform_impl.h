/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private helpers of the copy module (byte swaps, PES). Included by files
 * compiled with different -m flags (one static library per ISA), so all of
 * it is static inline baseline C: each variant gets its own copy.
 *
 * The scalar kernels below are the generic variants and the vector
 * variants' tails. They work on 8-byte blocks (load, transform, store, so
 * in place is safe) and then on what is left; every one of them reads and
 * writes exactly [src, src+len) and [dst, dst+len).
 */
#ifndef CN_COPY_IMPL_H
#define CN_COPY_IMPL_H

#include "cachenet/bswap.h"
#include "cachenet/pes.h"
#include "cn_internal.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>


/* The whole-buffer contract shared by every call: NULL only with len 0,
 * in place or disjoint, and no wrap-around of either range. */
#define CN_COPY_CHECK_ARGS(dst, src, len, fn)                                                   \
	CN_ASSERT((len) == 0 ||                                                            \
			       ((dst) && (src) && (uintptr_t)(src) + (len) > (uintptr_t)(src) && \
				(uintptr_t)(dst) + (len) > (uintptr_t)(dst) &&                    \
				((dst) == (src) || (uintptr_t)(dst) + (len) <= (uintptr_t)(src) || \
				 (uintptr_t)(src) + (len) <= (uintptr_t)(dst))),                  \
		       fn ": NULL buffer, length overflow or partial overlap")

static inline uint64_t cn__copy_ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void cn__copy_st64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Bytes after the last whole unit: copied unchanged, nothing to do in place. */
static inline void cn__copy_rest(unsigned char *d, const unsigned char *s, size_t n)
{
	if (d != s)
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
}

/* Each 32-bit half of a 64-bit block reversed: the 64-bit reversal swaps
 * the halves too, the rotation puts them back (BSWAP + ROR). */
static inline uint64_t cn__bswap32x2(uint64_t x)
{
	x = __builtin_bswap64(x);
	return x >> 32 | x << 32;
}

static inline uint64_t cn__bswap16x4(uint64_t x)
{
	return ((x & 0x00FF00FF00FF00FFull) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFull);
}

/* One PES pair in a 64-bit block: or-ing the block with itself rotated by 32
 * puts w0 | w1 in both halves whatever the byte order; masking once gives
 * both outputs of cn_pes_step(). */
static inline uint64_t cn__pes64(uint64_t x)
{
	return (x | (x >> 32 | x << 32)) & 0xF0F0F0F0F0F0F0F0ull;
}

static inline void cn__bswap16_scalar(unsigned char *d, const unsigned char *s, size_t n)
{
	for (; n >= 8; n -= 8, s += 8, d += 8)
		cn__copy_st64(d, cn__bswap16x4(cn__copy_ld64(s)));
	for (; n >= 2; n -= 2, s += 2, d += 2) {
		unsigned char a = s[0], b = s[1];
		d[0] = b;
		d[1] = a;
	}
	cn__copy_rest(d, s, n);
}

static inline void cn__bswap32_scalar(unsigned char *d, const unsigned char *s, size_t n)
{
	for (; n >= 8; n -= 8, s += 8, d += 8)
		cn__copy_st64(d, cn__bswap32x2(cn__copy_ld64(s)));
	if (n >= 4) {
		uint32_t w;
		memcpy(&w, s, 4);
		w = cn_bswap32_step(w);
		memcpy(d, &w, 4);
		n -= 4;
		s += 4;
		d += 4;
	}
	cn__copy_rest(d, s, n);
}

static inline void cn__pes_scalar(unsigned char *d, const unsigned char *s, size_t n)
{
	for (; n >= 8; n -= 8, s += 8, d += 8)
		cn__copy_st64(d, cn__pes64(cn__copy_ld64(s)));
	cn__copy_rest(d, s, n);
}

/* The vector variants' three transforms; each file's run() takes one, a
 * constant in every caller, so its switches fold away once inlined. */
enum cn__xform_kind { CN__BSWAP16, CN__BSWAP32, CN__PES };

/* The size of kind k's unit: the bytes it transforms as one. */
static inline size_t cn__xform_unit(enum cn__xform_kind k)
{
	return k == CN__BSWAP16 ? 2 : k == CN__BSWAP32 ? 4 : 8;
}

/* The scalar kernel of kind k (the vector variants' tails). */
static inline void cn__xform_scalar(unsigned char *d, const unsigned char *s, size_t n,
				    enum cn__xform_kind k)
{
	if (k == CN__BSWAP16)
		cn__bswap16_scalar(d, s, n);
	else if (k == CN__BSWAP32)
		cn__bswap32_scalar(d, s, n);
	else
		cn__pes_scalar(d, s, n);
}

/* Defines a vector variant's public kernels cn_bswap16_<isa>,
 * cn_bswap32_<isa> and cn_pes_<isa> (declared in bswap.h and pes.h), each
 * the file's run(dst, src, len, kind) inlined. */
#define CN_XFORM_KERNELS(isa)                                                   \
	void cn_bswap16_##isa(void *dst, const void *src, size_t len)         \
	{                                                                     \
		run((unsigned char *)dst, (const unsigned char *)src, len, CN__BSWAP16); \
	}                                                                     \
	void cn_bswap32_##isa(void *dst, const void *src, size_t len)         \
	{                                                                     \
		run((unsigned char *)dst, (const unsigned char *)src, len, CN__BSWAP32); \
	}                                                                     \
	void cn_pes_##isa(void *dst, const void *src, size_t len)             \
	{                                                                     \
		run((unsigned char *)dst, (const unsigned char *)src, len, CN__PES); \
	}

#endif /* CN_COPY_IMPL_H */
