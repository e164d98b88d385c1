/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file csum.h
 * The Internet checksum (RFC 1071) with partial sums that combine at any
 * offset, pseudo-header sums, RFC 1624 incremental update and a fused
 * copy+checksum.
 *
 * Conventions of this module
 *
 *  - Byte order. Every sum and checksum here is "as stored": 16-bit words
 *    are loaded from memory in the CPU's native order, so the 16-bit result
 *    is written into a header field with a plain store, never with htons().
 *    On a little-endian CPU the RFC 1071 example (bytes 00 01 f2 03 f4 f5
 *    f6 f7, sum 0xddf2 in network order) gives cn_csum_fold() == 0xf2dd,
 *    whose bytes in memory are dd f2. Field values passed in (addresses,
 *    old/new field contents) are likewise the values as they sit in the
 *    packet (network byte order); lengths are plain host integers.
 *
 *  - Partial sums. A partial sum is a uint32_t holding an *unfolded*
 *    ones'-complement sum: its value modulo 0xffff is what counts, and any
 *    uint32_t is a valid partial sum (0 is the sum of nothing). Two variants
 *    may return different 32-bit values for the same bytes; their folds
 *    (cn_csum_fold) are always equal, including the 0x0000/0xffff
 *    distinction: a fold is 0 only when every byte summed (and every sum
 *    passed in) is 0. Partial sums may be added with cn_csum_add(), or
 *    accumulated with plain '+' in a uint64_t (up to 2^32 of them) and
 *    folded once with cn_csum_fold().
 *
 *  - Offsets. A partial sum is relative to its first byte. Combining the sum
 *    of a block that starts at an odd offset of the packet needs its bytes
 *    swapped (RFC 1071 section 2(B)); cn_csum_combine() does it.
 *
 *  - Variants. cn_csum_partial() and cn_csum_copy() dispatch once (at load
 *    time or on the first call) to the best variant the CPU and OS support
 *    (cachenet/cpu.h, honouring CACHENET_CPU_DISABLE), and keep inputs below
 *    a measured size on a scalar path because the vector variants' final
 *    horizontal reduction costs more than a short add-with-carry loop.
 *    Each variant can also be called directly; see cn_csum_impls().
 *
 *  - Costs below are TSC ticks, L1-hot unless said; the machine and the
 *    commands are in docs/performance.md, Checksum.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef CACHENET_CSUM_H
#define CACHENET_CSUM_H

#include "cachenet/common.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#define CN__CSUM_RESTRICT __restrict
#else
#define CN__CSUM_RESTRICT restrict
#endif

/* ------------------------------------------------------------ arithmetic */

/** Fold a 64-bit unfolded sum to a 32-bit partial sum (internal helper). */
static inline uint32_t cn__csum_fold32(uint64_t sum)
{
	/* 2^32 == 2^16 == 1 modulo 0xffff, so adding halves keeps the value:
	 * add the halves, wrap the carry around (add, adc). */
	uint32_t lo = (uint32_t)sum, hi = (uint32_t)(sum >> 32);
	uint32_t s = lo + hi;

	return s + (s < lo); /* end-around carry: never 0 unless sum is 0 */
}

/** Fold a 32-bit partial sum to 16 bits (internal helper; a sum of a few
 *  16-bit values needs no 64 -> 32 step). The upper half of s + rotl(s,
 *  16) is hi16 + lo16 plus the carry out of the lower half, i.e. the
 *  end-around-carry sum (three instructions instead of two rounds of
 *  mask, shift, add). */
static inline uint16_t cn__csum_fold16(uint32_t s)
{
	return (uint16_t)((s + (s << 16 | s >> 16)) >> 16);
}

/**
 * Fold an unfolded sum to 16 bits with end-around carries (not
 * complemented). Accepts a uint64_t so that up to 2^32 partial sums can be
 * added with plain '+' first.
 * @return the ones'-complement sum in 0..0xffff; 0 only if @p sum is 0.
 * Cost: a few ALU operations.
 */
static inline uint16_t cn_csum_fold(uint64_t sum)
{
	return cn__csum_fold16(cn__csum_fold32(sum));
}

/**
 * Ones'-complement addition of two partial sums.
 * @return a partial sum of both (0 only if both are 0).
 */
static inline uint32_t cn_csum_add(uint32_t a, uint32_t b)
{
	uint32_t r = a + b;

	return r + (r < a); /* end-around carry */
}

/**
 * Partial sum of a block whose first byte sits at an odd offset, seen from
 * the start of the enclosing packet: the bytes of every 16-bit word trade
 * places (RFC 1071 2(B)). Rotating the 32-bit value by 8 does this without
 * folding, because 2^32 - 1 is a multiple of 0xffff.
 */
static inline uint32_t cn_csum_swab(uint32_t sum)
{
	return (sum >> 8) | (sum << 24);
}

/**
 * Combine partial sums: the sum of a||b from sum(a), sum(b) and len(a).
 * @param sum_a    partial sum of the first block (or of everything so far)
 * @param sum_b    partial sum of the next block, computed from its own start
 * @param len_a    length of the first block in bytes (any value; only its
 *                 parity matters)
 * @return the partial sum of the concatenation.
 */
static inline uint32_t cn_csum_combine(uint32_t sum_a, uint32_t sum_b, size_t len_a)
{
	return cn_csum_add(sum_a, (len_a & 1) ? cn_csum_swab(sum_b) : sum_b);
}

/* ------------------------------------------------------------ whole buffers */

/** Inputs of up to this many bytes are summed inline by cn_csum_partial(),
 *  in the caller, without a call; longer ones go to the dispatcher. */
#define CN_CSUM_INLINE_MAX 64

/**
 * The dispatcher: cn_csum_partial() without the inline short path, out of
 * line, for any length (same contract and result).
 * Cost: one call; up to the variant's partial_small_max (95 B for AVX-512,
 * 223 B for AVX2) the scalar add-with-carry loop (two carry chains, ADCX
 * and ADOX, on CPUs with ADX), above it the vector variant. Measured on
 * ~0.01-0.02 ticks/byte hot from 576 B (docs/performance.md, Checksum).
 * From 4096 B up, on CPUs with AVX512_VNNI, the VNNI kernel, which keeps
 * more loads in flight when the data comes from memory. Reads each byte
 * once, never outside the buffer.
 */
uint32_t cn_csum_partial_dispatch(const void *buf, size_t len, uint32_t sum);

/* The inline short path. At 32 bytes on x86-64 with GNU C
 * (cn__csum_short_adc; from 33 bytes cn__csum_short_adc64, below): the last n % 8 bytes from one load of the 8 that
 * end the buffer, shifted down (they start at an even offset, so they keep
 * their places in the 16-bit words), then one ADC chain per block of 64,
 * 32, 16 and 8 bytes picked by the bits of n, so a constant n leaves just
 * the chain; the "m" operands name the bytes each asm statement reads.
 * Elsewhere, and below 32 bytes: 64-bit words into one accumulator, the
 * carries out of bit 63 counted in a second one (two short chains, which
 * beat the single ADC chain below 32 bytes; docs/performance.md,
 * Checksum), both added with the end-around carry at the end: 2^64 == 1
 * modulo 0xffff; the last n % 8 bytes as above from 8 bytes up. Reads
 * exactly n bytes. */
#if defined(__x86_64__) && defined(__GNUC__)
#define CN__CSUM_ADC_BLOCK(nb, text)                                                  \
	__asm__(text : [a] "+r"(acc) : [p] "r"(p), "m"(*(const unsigned char(*)[nb])p) : "cc")
#define CN__CSUM_ADC2 "adcq 8(%[p]), %[a]\n\t"
#define CN__CSUM_ADC4 CN__CSUM_ADC2 "adcq 16(%[p]), %[a]\n\tadcq 24(%[p]), %[a]\n\t"
#define CN__CSUM_ADC8                                                                  \
	CN__CSUM_ADC4 "adcq 32(%[p]), %[a]\n\tadcq 40(%[p]), %[a]\n\t"                \
		      "adcq 48(%[p]), %[a]\n\tadcq 56(%[p]), %[a]\n\t"
static inline uint64_t cn__csum_short_adc(const unsigned char *p, size_t n, uint64_t acc)
{
	if (n & 7) {
		uint64_t t;
		memcpy(&t, p + n - 8, 8);
		t >>= 64 - 8 * (n & 7);
		__asm__("addq %[t], %[a]\n\tadcq $0, %[a]" : [a] "+r"(acc) : [t] "r"(t) : "cc");
	}
	for (; n >= 64; n -= 64, p += 64)
		CN__CSUM_ADC_BLOCK(64, "addq (%[p]), %[a]\n\t" CN__CSUM_ADC8 "adcq $0, %[a]");
	if (n & 32) {
		CN__CSUM_ADC_BLOCK(32, "addq (%[p]), %[a]\n\t" CN__CSUM_ADC4 "adcq $0, %[a]");
		p += 32;
	}
	if (n & 16) {
		CN__CSUM_ADC_BLOCK(16, "addq (%[p]), %[a]\n\t" CN__CSUM_ADC2 "adcq $0, %[a]");
		p += 16;
	}
	if (n & 8)
		CN__CSUM_ADC_BLOCK(8, "addq (%[p]), %[a]\n\tadcq $0, %[a]");
	return acc;
}

/* 33..64 bytes (the inline path's range above 32), with as few taken
 * branches as the sizes allow, since a call this short is bound by the
 * front end: 64 bytes as one 64-byte block; otherwise the last 1..8 bytes
 * (never none, so no test of n % 8) from one load of the 8 that end the
 * buffer, shifted, go into the same ADC chain as the first 32, and the 0..3
 * whole words between them (8 * (((n - 1) >> 3) & 3) bytes from byte 32)
 * sit behind two branches laid out as not taken, as at 40 bytes (a TCP
 * header with options) they are not. */
static inline __attribute__((always_inline)) uint64_t
cn__csum_short_adc64(const unsigned char *p, size_t n, uint64_t acc)
{
	uint64_t t;
	size_t m = ((n - 1) >> 3) & 3;

	if (n == 64) {
		CN__CSUM_ADC_BLOCK(64, "addq (%[p]), %[a]\n\t" CN__CSUM_ADC8 "adcq $0, %[a]");
		return acc;
	}
	memcpy(&t, p + n - 8, 8);
	t >>= 8 * (7 - ((n - 1) & 7));
	__asm__("addq %[t], %[a]\n\tadcq (%[p]), %[a]\n\t" CN__CSUM_ADC4 "adcq $0, %[a]"
		: [a] "+r"(acc)
		: [t] "r"(t), [p] "r"(p), "m"(*(const unsigned char(*)[32])p)
		: "cc");
	p += 32;
	if (__builtin_expect(m & 2, 0)) {
		CN__CSUM_ADC_BLOCK(16, "addq (%[p]), %[a]\n\t" CN__CSUM_ADC2 "adcq $0, %[a]");
		p += 16;
	}
	if (__builtin_expect(m & 1, 0))
		CN__CSUM_ADC_BLOCK(8, "addq (%[p]), %[a]\n\tadcq $0, %[a]");
	return acc;
}
#undef CN__CSUM_ADC_BLOCK
#undef CN__CSUM_ADC2
#undef CN__CSUM_ADC4
#undef CN__CSUM_ADC8
#endif

/* n <= CN_CSUM_INLINE_MAX (64). Always inlined where the compiler allows
 * it: gcc would otherwise split the path from 32 bytes off into a call. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint64_t cn__csum_short(const unsigned char *p, size_t n, uint64_t acc)
{
	uint64_t carries = 0, t = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (n >= 32)
		return n > 32 ? cn__csum_short_adc64(p, n, acc) : cn__csum_short_adc(p, 32, acc);
#endif
	if (n >= 8) {
		/* the last n % 8 bytes from one load of the 8 that end the
		 * buffer, shifted down: they start at an even offset, so they
		 * keep their places in the 16-bit words (little-endian) */
		const unsigned char *end = p + n;
		for (; n >= 8; n -= 8, p += 8) {
			uint64_t x;
			memcpy(&x, p, 8);
			carries += __builtin_add_overflow(acc, x, &acc);
		}
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
		if (n) {
			uint64_t x;
			memcpy(&x, end - 8, 8);
			t = x >> (64 - 8 * n);
		}
		n = 0; /* taken: the pieces below are skipped */
#endif
	}
	if (n & 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		t += w;
		p += 4;
	}
	if (n & 2) {
		uint16_t h;
		memcpy(&h, p, 2);
		t += h;
		p += 2;
	}
	if (n & 1) /* the first byte of a 16-bit word: low half on little-endian */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		t += (uint64_t)*p << 8;
#else
		t += *p;
#endif
	carries += __builtin_add_overflow(acc, t, &acc);
	acc += carries;
	return acc + (acc < carries);
}

/**
 * Add the bytes of [buf, buf+len) to a partial sum.
 * @param buf  any alignment; may be NULL when @p len is 0
 * @param len  any length, 0 included (no upper limit)
 * @param sum  partial sum to continue (0 to start)
 * @return the partial sum of @p sum and the bytes.
 * Cost: up to CN_CSUM_INLINE_MAX bytes inline in the caller, no call: an
 * add and an adc per 8 bytes (with a constant length gcc unrolls it to
 * just those; with a variable one, a compare and branch per word), and
 * from 8 bytes up the last len % 8 bytes from one load of the buffer's
 * last 8, shifted (no branch per 4-, 2- and 1-byte piece).
 * About 2.5 ticks at 20 B and 4.4 at 64 B (docs/performance.md, Checksum).
 * Longer inputs call cn_csum_partial_dispatch().
 */
#ifndef CN__CSUM_DISPATCH_BUILD
/* Always inlined where the compiler allows it: an out-of-line copy would be
 * a second, local symbol named cn_csum_partial beside the library's export
 * (which tools that look functions up by name, such as cachenet-cord,
 * cannot tell apart), and a call that the inline path exists to avoid. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint32_t cn_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	if (len <= CN_CSUM_INLINE_MAX)
		return cn__csum_fold32(cn__csum_short((const unsigned char *)buf, len, sum));
	return cn_csum_partial_dispatch(buf, len, sum);
}
#else
/* The library's own out-of-line copy, exported under the old name for
 * programs built against headers without the inline path. */
uint32_t cn_csum_partial(const void *buf, size_t len, uint32_t sum);
#endif

/**
 * The Internet checksum of a buffer: complement of the folded sum, ready to
 * store (see byte order above).
 * To verify a received block that contains its checksum, test the result
 * for 0.
 */
static inline uint16_t cn_csum(const void *buf, size_t len)
{
	return (uint16_t)~cn_csum_fold(cn_csum_partial(buf, len, 0));
}

/**
 * Copy [src, src+len) to dst and add the copied bytes to a partial sum, in
 * one pass over the data.
 * @param dst  any alignment
 * @param src  any alignment; [src, src+len) and [dst, dst+len) must not
 *             overlap (checked by an assertion in debug builds only; the
 *             result is undefined otherwise, as with memcpy)
 * @param len  any length, 0 included
 * @param sum  partial sum to continue
 * @return the partial sum of @p sum and the bytes copied, equal (after
 *         folding) to cn_csum_partial(src, len, sum).
 * Cost: dispatched like cn_csum_partial (scalar up to copy_small_max, 47 B
 * for AVX-512); touches each byte once (one load, one store), aligns the
 * stores. With AVX-512, L1/L2-hot, on the EPYC VM (same run, medians of 9):
 * 12.2-12.7 ticks for 576 B, 22.8 for 1460 B, 54.5 for 4096 B, 111 for
 * 9000 B, against glibc memcpy alone 6.8, 17.5, 82 and 162: faster than
 * memcpy from 4 KB up, 1.3x its time at 1460 B and 1.8x at 576 B, where a
 * fixed ~5 ticks (the lanes' reduction and fold, which memcpy does not
 * have) weigh most.
 */
uint32_t cn_csum_copy(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src, size_t len,
		      uint32_t sum);

/* ------------------------------------------------------------ headers */

/**
 * Checksum of an IPv4 header of @p ihl_bytes bytes (IHL * 4), computed over
 * the header as it is. To fill in the field, zero it first and store the
 * result; to verify a received header, test the result for 0.
 * @param hdr        the header, any alignment
 * @param ihl_bytes  normally 20..60 and a multiple of 4; any other length
 *                   is summed as a plain buffer (no validation here: the
 *                   caller parses IHL)
 * @return the checksum, as stored.
 * Cost: inline; 20 bytes take five 32-bit loads and ~10 ALU operations,
 * other lengths call cn_csum_partial().
 */
CN_NONNULL_ALL
static inline uint16_t cn_csum_ipv4_hdr(const void *hdr, size_t ihl_bytes)
{
	if (ihl_bytes == 20) {
		uint32_t w[5];
		memcpy(w, hdr, sizeof(w));
		return (uint16_t)~cn_csum_fold((uint64_t)w[0] + w[1] + w[2] + w[3] + w[4]);
	}
	return (uint16_t)~cn_csum_fold(cn_csum_partial(hdr, ihl_bytes, 0));
}

/** 16-bit value as stored in network byte order, from a host integer. */
static inline uint16_t cn__csum_be16(uint16_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v;
#else
	return (uint16_t)((v >> 8) | (v << 8));
#endif
}

/**
 * Partial sum of the IPv4 pseudo-header of TCP/UDP (RFC 793, RFC 768):
 * source, destination, zero, protocol, L4 length.
 * @param saddr   source address as stored (network byte order)
 * @param daddr   destination address as stored
 * @param proto   IP protocol number (6 TCP, 17 UDP)
 * @param l4_len  length of L4 header plus payload, host order
 * @return a partial sum; add the L4 header+payload sum (checksum field
 *         zeroed) and store ~cn_csum_fold(). A UDP checksum that comes out
 *         0x0000 is sent as 0xffff (RFC 768). For checksum offload, the
 *         NIC wants cn_csum_fold() of this value, not complemented.
 */
static inline uint32_t cn_csum_pseudo_ipv4(cn_be32_t saddr, cn_be32_t daddr,
					   uint8_t proto, uint16_t l4_len)
{
	uint64_t s = (uint64_t)CN_BE32_RAW(saddr) + CN_BE32_RAW(daddr) + cn__csum_be16(proto) +
		     cn__csum_be16(l4_len);

	return cn__csum_fold32(s);
}

/**
 * Partial sum of the IPv6 pseudo-header (RFC 8200 section 8.1): source,
 * destination, 32-bit upper-layer length, three zero bytes, next header.
 * @param saddr    16 bytes, any alignment
 * @param daddr    16 bytes, any alignment
 * @param next_hdr final next-header value (6, 17, 58)
 * @param l4_len   upper-layer packet length, host order
 * @return a partial sum, used as for cn_csum_pseudo_ipv4().
 */
CN_NONNULL_ALL
static inline uint32_t cn_csum_pseudo_ipv6(const void *saddr, const void *daddr,
					   uint8_t next_hdr, uint32_t l4_len)
{
	uint32_t a[4], b[4];
	uint64_t s;

	memcpy(a, saddr, sizeof(a));
	memcpy(b, daddr, sizeof(b));
	s = (uint64_t)a[0] + a[1] + a[2] + a[3] + b[0] + b[1] + b[2] + b[3];
	/* 2^16 == 1 modulo 0xffff: the two halves of the 32-bit length add
	 * as two 16-bit words, each as stored. */
	s += cn__csum_be16((uint16_t)(l4_len >> 16)) + cn__csum_be16((uint16_t)l4_len);
	s += cn__csum_be16(next_hdr);
	return cn__csum_fold32(s);
}

/* ------------------------------------------------------------ RFC 1624 */

/**
 * Incremental update of a checksum field after a 16-bit word of the covered
 * data changed from @p old_val to @p new_val (all three as stored), with
 * RFC 1624 equation 3, HC' = ~(~HC + ~m + m'). Unlike equation 2 it never
 * yields 0xffff where recomputation would give 0x0000 (RFC 1624 section 3).
 * The word must sit at an even offset of the covered data; for an odd
 * offset pass both values byte-swapped.
 * @return the new checksum, equal to a full recomputation unless every
 *         covered byte is zero.
 */
static inline uint16_t cn_csum_update16(uint16_t old_csum, uint16_t old_val,
					uint16_t new_val)
{
	uint32_t s = (uint32_t)(uint16_t)~old_csum + (uint16_t)~old_val + new_val;

	return (uint16_t)~cn_csum_fold(s);
}

/**
 * As cn_csum_update16() for a 32-bit field at an offset that is a multiple
 * of two (IPv4 address, TCP sequence number), both values as stored.
 */
static inline uint16_t cn_csum_update32(uint16_t old_csum, uint32_t old_val,
					uint32_t new_val)
{
	/* ~old_val is the ones' complement of both of its 16-bit halves. */
	uint64_t s = (uint64_t)(uint16_t)~old_csum + (uint32_t)~old_val + new_val;

	return (uint16_t)~cn_csum_fold(s);
}

/* ------------------------------------------------------------ variants */

/** Partial-sum kernel signature (same contract as cn_csum_partial()). */
typedef uint32_t (*cn_csum_partial_fn)(const void *buf, size_t len, uint32_t sum);
/** Copy+checksum kernel signature (same contract as cn_csum_copy()). */
typedef uint32_t (*cn_csum_copy_fn)(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src,
				    size_t len, uint32_t sum);

/** One implementation of the kernels. */
struct cn_csum_impl {
	const char *name;          /**< "avx512vnni", "avx512", "avx2", "neon", "generic" */
	uint64_t features;         /**< CN_CPU_* bits it needs (0 = none) */
	cn_csum_partial_fn partial; /**< its partial-sum kernel */
	cn_csum_copy_fn copy;       /**< its copy+checksum kernel */
	/** Inputs of at most this many bytes the dispatcher sends to the
	 *  generic variant instead (0 for generic itself), because below
	 *  them this variant's setup and final lane reduction cost more than
	 *  the scalar loop (docs/performance.md, Checksum). */
	size_t partial_small_max;
	/** The same threshold for cn_csum_copy(). */
	size_t copy_small_max;
	/** When non-zero, partial sums of fewer bytes than this go to the
	 *  next runnable variant in the table: this one is better only on
	 *  large inputs (measured, see src/csum/csum.c). */
	size_t partial_min;
};

/**
 * The variants this CPU and OS can run, best first (the first one is the
 * one dispatched). Writes up to @p n pointers to static descriptors.
 * @return the number of runnable variants (may exceed @p n, like snprintf);
 *         at least 1, since "generic" always runs.
 */
size_t cn_csum_impls(const struct cn_csum_impl **out, size_t n);

/** The runnable variant called @p name, or NULL if it is unknown or this
 *  CPU/OS cannot run it. */
const struct cn_csum_impl *cn_csum_impl_find(const char *name) CN_NONNULL_ALL;

/** Name of the variant cn_csum_partial()/cn_csum_copy() dispatch to. */
const char *cn_csum_impl_name(void);

/**
 * The variants, callable directly. The _avx2 and _avx512 functions exist on
 * x86-64 builds only and must be called only when cn_csum_impl_find() returns
 * them (they execute instructions the CPU may lack). None of them has a
 * small-size shortcut: they are the pure kernels that the dispatcher picks.
 */
uint32_t cn_csum_partial_generic(const void *buf, size_t len, uint32_t sum);
/** The portable copy+checksum kernel (cn_csum_copy's contract). */
uint32_t cn_csum_copy_generic(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src,
			      size_t len, uint32_t sum);
#if defined(__x86_64__)
uint32_t cn_csum_partial_avx2(const void *buf, size_t len, uint32_t sum);
uint32_t cn_csum_copy_avx2(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src,
			   size_t len, uint32_t sum);
uint32_t cn_csum_partial_avx512(const void *buf, size_t len, uint32_t sum);
uint32_t cn_csum_copy_avx512(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src,
			     size_t len, uint32_t sum);
/* AVX-512 + VNNI (needs CN_CPU_AVX512VNNI too): one VPDPWSSD and one XOR
 * per 64 bytes where the avx512 kernel needs an add, a shift and an add.
 * Faster on data that comes from memory, slower on L1-resident data; the
 * "avx512vnni" variant's copy is cn_csum_copy_avx512. */
uint32_t cn_csum_partial_avx512vnni(const void *buf, size_t len, uint32_t sum);
#endif
#if defined(__aarch64__) && defined(__AARCH64EL__)
/** aarch64 Advanced SIMD partial sum: UADALP into four 32-bit-lane
 *  accumulators, 64 bytes a step (cn_csum_partial's contract; requires
 *  CN_CPU_NEON). */
uint32_t cn_csum_partial_neon(const void *buf, size_t len, uint32_t sum);
/** aarch64 Advanced SIMD copy+checksum: each 64 bytes loaded once, stored
 *  and summed (cn_csum_copy's contract; requires CN_CPU_NEON). */
uint32_t cn_csum_copy_neon(void *CN__CSUM_RESTRICT dst, const void *CN__CSUM_RESTRICT src,
			   size_t len, uint32_t sum);
#endif

/**
 * Reference implementation: network-order byte pairs, one at a time, as
 * RFC 1071 writes it. Slow (~1 tick/byte); the oracle the tests compare
 * every variant with. Same contract as cn_csum_partial().
 */
uint32_t cn_csum_partial_ref(const void *buf, size_t len, uint32_t sum);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_CSUM_H */
