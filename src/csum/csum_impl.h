/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private helpers shared by the checksum variants. Included by files
 * compiled with different -m flags (src/meson.build builds one static
 * library per ISA), so everything here is static inline and uses baseline
 * instructions only: each variant gets its own copy, compiled for its ISA.
 *
 * Two frames of reference appear in the kernels:
 *  - the *buffer frame*: 16-bit words start at the buffer's first byte; this
 *    is what a partial sum means (csum.h);
 *  - the *address frame*: words start at even addresses. Vector kernels
 *    load from aligned addresses, so their lanes sum in the address frame.
 *    The two agree when the buffer starts at an even address and differ by a
 *    byte swap (cn_csum_swab) when it starts at an odd one.
 */
#ifndef CN_CSUM_IMPL_H
#define CN_CSUM_IMPL_H

#include "cachenet/csum.h"
#include "cn_internal.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* CN_CSUM_NO_ADC builds the portable scalar path on x86-64 too, to test it. */
#if defined(__x86_64__) && !defined(CN_CSUM_NO_ADC)
#include <x86intrin.h> /* _addcarry_u64: plain ADC, no -madx needed */
#define CN_CSUM_ADC 1
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CN_CSUM_BIG_ENDIAN 1
#endif

/* Vector kernels keep per-lane 64-bit sums that must stay exact through
 * their reduction: they take inputs in chunks of at most this many bytes
 * (4 GiB, far above any packet), so that a lane never sees more than 2^27
 * words and its sums stay below 2^60 (see reduce512() in csum_avx512.c). */
#ifndef CN_CSUM_CHUNK_MAX /* overridable to test the chunk loop: -DCN_CSUM_CHUNK_MAX=320 */
#define CN_CSUM_CHUNK_MAX ((size_t)1 << 32)
#endif


static inline uint64_t cn__csum_ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t cn__csum_ld32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t cn__csum_ld16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* A lone byte at an even position of the frame is the first byte of a
 * 16-bit word, at an odd position the second; which of them is the
 * low-order half of a native load depends on the byte order. */
static inline uint64_t cn__csum_byte_even(unsigned char b)
{
#ifdef CN_CSUM_BIG_ENDIAN
	return (uint64_t)b << 8;
#else
	return b;
#endif
}

static inline uint64_t cn__csum_byte_odd(unsigned char b)
{
#ifdef CN_CSUM_BIG_ENDIAN
	return b;
#else
	return (uint64_t)b << 8;
#endif
}

/* acc + x with the carry out of bit 63 wrapped around to bit 0: 2^64 == 1
 * modulo 0xffff, so the value is preserved and never becomes 0 unless both
 * are 0. */
static inline uint64_t cn__csum_add64(uint64_t acc, uint64_t x)
{
	acc += x;
	return acc + (acc < x);
}

/*
 * The last n < 8 bytes, starting at an even position of the frame, as one
 * value < 2^33 whose sum-of-words equals theirs. Reads exactly n bytes.
 */
static inline uint64_t cn__csum_tail8(const unsigned char *p, size_t n)
{
	uint64_t t = 0;

	if (n & 4) {
		t += cn__csum_ld32(p);
		p += 4;
	}
	if (n & 2) {
		t += cn__csum_ld16(p);
		p += 2;
	}
	if (n & 1)
		t += cn__csum_byte_even(*p);
	return t;
}

/*
 * Add [p, p+n) to acc in the frame of p: unaligned 64-bit loads into one
 * add-with-carry chain. The carry flag makes it one dependency chain, one
 * ADC per 8 bytes per cycle (~12 B/tick here), but it has no setup and no
 * reduction, which is what short inputs and vector heads/tails need.
 * Unaligned loads cost nothing extra here: the chain, not the loads, is the
 * bottleneck.
 */
static inline uint64_t cn__csum_scalar(const unsigned char *p, size_t n, uint64_t acc)
{
#ifdef CN_CSUM_ADC
	/* From 8 bytes, the header's inline path: the last n % 8 bytes first
	 * from one shifted load, then one ADC chain per 64-, 32-, 16- and
	 * 8-byte block, in asm. The same chain written with _addcarry_u64
	 * depended on gcc: in one build of this file gcc 12 stored the
	 * accumulator to the stack after every ADC (the static library's
	 * copy, not the shared one's), about doubling the time of short
	 * inputs. */
	if (n >= 8)
		return cn__csum_short_adc(p, n, acc);
	return cn__csum_add64(acc, cn__csum_tail8(p, n));
#else
	/* Portable: count the carries instead of chaining them; two
	 * independent accumulators so the adds can overlap. */
	uint64_t a0 = acc, a1 = 0, c0 = 0, c1 = 0;

	while (n >= 16) {
		uint64_t x = cn__csum_ld64(p), y = cn__csum_ld64(p + 8);
		a0 += x;
		c0 += a0 < x;
		a1 += y;
		c1 += a1 < y;
		p += 16;
		n -= 16;
	}
	if (n & 8) {
		uint64_t x = cn__csum_ld64(p);
		a0 += x;
		c0 += a0 < x;
		p += 8;
	}
	a0 = cn__csum_add64(a0, cn__csum_tail8(p, n & 7));
	a0 = cn__csum_add64(a0, a1);
	return cn__csum_add64(a0, c0 + c1); /* c0 + c1 < 2^61: no overflow */
#endif
}

#ifdef CN_CSUM_ADC
/*
 * As cn__csum_scalar, for CPUs with ADX (only there: the caller checks
 * CN_CPU_ADX): 64-byte blocks in two carry chains at once, ADCX through
 * the carry flag on the even words and ADOX through the overflow flag on
 * the odd ones, so a block's eight words take four steps of latency
 * instead of eight; each block starts both chains from cleared flags
 * (XOR) and ends them by adding the flags back. The rest, < 64 bytes,
 * goes as in cn__csum_scalar. adcx/adox are written in asm, so no -madx
 * flag is needed.
 */
static inline uint64_t cn__csum_adx(const unsigned char *p, size_t n, uint64_t acc)
{
	uint64_t odd = 0, z;

	if (n < 64)
		return cn__csum_scalar(p, n, acc);
	if (n & 7) {
		acc = cn__csum_add64(acc, cn__csum_ld64(p + n - 8) >> (64 - 8 * (n & 7)));
		n &= ~(size_t)7;
	}
	for (; n >= 64; n -= 64, p += 64)
		__asm__("xorl %k[z], %k[z]\n\t"
			"adcx (%[p]), %[a]\n\tadox 8(%[p]), %[b]\n\t"
			"adcx 16(%[p]), %[a]\n\tadox 24(%[p]), %[b]\n\t"
			"adcx 32(%[p]), %[a]\n\tadox 40(%[p]), %[b]\n\t"
			"adcx 48(%[p]), %[a]\n\tadox 56(%[p]), %[b]\n\t"
			"adcx %[z], %[a]\n\tadox %[z], %[b]"
			: [a] "+r"(acc), [b] "+r"(odd), [z] "=&r"(z)
			: [p] "r"(p), "m"(*(const unsigned char(*)[64])p)
			: "cc");
	if (n)
		acc = cn__csum_short_adc(p, n, acc);
	return cn__csum_add64(acc, odd);
}
#endif

/*
 * Copy and add [src, src+n) to acc, frame of src (== frame of dst). Same
 * structure as cn__csum_scalar; loads go to registers, are stored, then
 * added, so each byte is read once.
 */
static inline uint64_t cn__csum_copy_scalar(unsigned char *dst, const unsigned char *src,
					    size_t n, uint64_t acc)
{
	uint64_t acc64 = acc;

#ifdef CN_CSUM_ADC
	while (n >= 32) {
		uint64_t x0 = cn__csum_ld64(src), x1 = cn__csum_ld64(src + 8);
		uint64_t x2 = cn__csum_ld64(src + 16), x3 = cn__csum_ld64(src + 24);
		unsigned long long a = acc64; /* block-local, see cn__csum_scalar */
		unsigned char c;
		memcpy(dst, &x0, 8);
		memcpy(dst + 8, &x1, 8);
		memcpy(dst + 16, &x2, 8);
		memcpy(dst + 24, &x3, 8);
		c = _addcarry_u64(0, a, x0, &a);
		c = _addcarry_u64(c, a, x1, &a);
		c = _addcarry_u64(c, a, x2, &a);
		c = _addcarry_u64(c, a, x3, &a);
		_addcarry_u64(c, a, 0, &a);
		acc64 = a;
		src += 32;
		dst += 32;
		n -= 32;
	}
#endif
#ifndef CN_CSUM_ADC
	while (n >= 32) {
		uint64_t x0 = cn__csum_ld64(src), x1 = cn__csum_ld64(src + 8);
		uint64_t x2 = cn__csum_ld64(src + 16), x3 = cn__csum_ld64(src + 24);
		memcpy(dst, &x0, 8);
		memcpy(dst + 8, &x1, 8);
		memcpy(dst + 16, &x2, 8);
		memcpy(dst + 24, &x3, 8);
		acc64 = cn__csum_add64(acc64, x0);
		acc64 = cn__csum_add64(acc64, x1);
		acc64 = cn__csum_add64(acc64, x2);
		acc64 = cn__csum_add64(acc64, x3);
		src += 32;
		dst += 32;
		n -= 32;
	}
#endif
	/* n < 32 now. Straight-line code, not a loop: clang recognises an
	 * 8-byte copy loop as memcpy and calls it, for a handful of bytes. */
	if (n & 16) {
		uint64_t x0 = cn__csum_ld64(src), x1 = cn__csum_ld64(src + 8);
		memcpy(dst, &x0, 8);
		memcpy(dst + 8, &x1, 8);
		acc64 = cn__csum_add64(acc64, x0);
		acc64 = cn__csum_add64(acc64, x1);
		src += 16;
		dst += 16;
	}
	if (n & 8) {
		uint64_t x = cn__csum_ld64(src);
		memcpy(dst, &x, 8);
		acc64 = cn__csum_add64(acc64, x);
		src += 8;
		dst += 8;
	}
	uint64_t t = 0;
	if (n & 4) {
		uint32_t x = cn__csum_ld32(src);
		memcpy(dst, &x, 4);
		t += x;
		src += 4;
		dst += 4;
	}
	if (n & 2) {
		uint16_t x = cn__csum_ld16(src);
		memcpy(dst, &x, 2);
		t += x;
		src += 2;
		dst += 2;
	}
	if (n & 1) {
		*dst = *src;
		t += cn__csum_byte_even(*src);
	}
	return cn__csum_add64(acc64, t);
}

/*
 * A vector kernel's input of any length as pieces of at most @p piece bytes
 * (the bound under which its lanes stay exact), summed by @p fn and added
 * with end-around carry. @p piece is a power of two, so every piece starts
 * at the same address parity and all of them sum in the same frame. Meant
 * for a kernel's out-of-line path beyond one piece: with a constant @p fn,
 * always_inline lets the compiler inline the piece kernel here.
 */
typedef uint64_t (*cn__csum_piece_fn)(const unsigned char *p, size_t n);
typedef uint64_t (*cn__csum_copy_piece_fn)(unsigned char *d, const unsigned char *s, size_t n);

static inline __attribute__((always_inline)) uint64_t
cn__csum_pieces(const unsigned char *p, size_t len, size_t piece, cn__csum_piece_fn fn)
{
	uint64_t acc = 0;

	while (len) {
		size_t n = len < piece ? len : piece;
		acc = cn__csum_add64(acc, fn(p, n));
		p += n;
		len -= n;
	}
	return acc;
}

static inline __attribute__((always_inline)) uint64_t
cn__csum_copy_pieces(unsigned char *d, const unsigned char *s, size_t len, size_t piece,
		     cn__csum_copy_piece_fn fn)
{
	uint64_t acc = 0;

	while (len) {
		size_t n = len < piece ? len : piece;
		acc = cn__csum_add64(acc, fn(d, s, n));
		d += n;
		s += n;
		len -= n;
	}
	return acc;
}

/* Finish a kernel: fold its 64-bit address-frame sum to 32 bits, move it to
 * the buffer frame, add the caller's sum. */
static inline uint32_t cn__csum_finish(uint64_t acc, bool odd_start, uint32_t sum)
{
	uint32_t r = cn__csum_fold32(acc);

	if (odd_start)
		r = cn_csum_swab(r);
	return cn_csum_add(r, sum);
}

#endif /* CN_CSUM_IMPL_H */
