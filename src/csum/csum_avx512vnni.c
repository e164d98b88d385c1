/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX-512 VNNI variant of the partial sum: two vector operations per 64 bytes
 * instead of three. (Its copy+checksum is csum_avx512.c's: the same idea
 * measured no faster there, hot or cold, since the stores bound that loop.)
 * Compiled with -mavx512vnni on top of the AVX-512 flags, in its own static
 * library (src/meson.build), so its dispatch entry in csum.c requires
 * AVX512_VNNI as well as everything the "avx512" variant requires.
 *
 * The plain AVX-512 kernel (csum_avx512.c) spends an add, a shift and an add
 * on every block. Here each block costs an XOR and one VPDPWSSD:
 *
 *   VPDPWSSD acc, x ^ 0x8000.., 1..   adds, to each 32-bit lane of acc, the
 *                                     two signed 16-bit words of x's lane
 *                                     times 1
 *
 * A 16-bit word w XORed with 0x8000 and read as signed is exactly w - 32768,
 * so a block adds its 32 words minus 32 * 32768 = 2^20, whatever they are
 * (masked-off bytes read as zero and count as words too). The exact word sum
 * of the n blocks loaded is therefore the lanes' total plus n * 2^20: no
 * carry is lost and nothing needs counting.
 *
 * Where it pays: on data flushed to DRAM it keeps more loads in flight and
 * runs at the speed of a bare 512-bit load loop; on hot data it is slower
 * than the avx512 kernel (the dot product issues at most once per cycle).
 * The dispatcher therefore sends it inputs of at least 4096 bytes only
 * (partial_min in csum.c; figures in docs/performance.md, Checksum).
 *
 * Range: a block moves a lane by at most 2 * 32768, so a signed 32-bit lane
 * holds 2^15 blocks. The kernel takes inputs in pieces of CN_CSUM_VNNI_PIECE
 * bytes (2^14 blocks, plus one more for a misaligned start), adds the four
 * accumulators' lanes as 32-bit values (still exact) and widens once per
 * piece. Pieces are a power of two long, so each starts at the same address
 * parity and all of them sum in the same frame.
 *
 * Blocks, masks and lanes follow the address frame as in csum_avx512.c: the
 * result is byte-swapped when the buffer starts at an odd address.
 */
#include "csum_impl.h"

#if defined(__x86_64__)

#include "csum_avx512_util.h"

#ifndef CN_CSUM_VNNI_PIECE /* overridable to test the piece loop */
#define CN_CSUM_VNNI_PIECE ((size_t)1 << 20)
#endif

_Static_assert(CN_CSUM_VNNI_PIECE >= 64 && CN_CSUM_VNNI_PIECE <= ((size_t)1 << 20) &&
		       (CN_CSUM_VNNI_PIECE & (CN_CSUM_VNNI_PIECE - 1)) == 0,
	       "a piece is a power of two of at most 2^14 blocks");

/* acc += the block's 16-bit words, each minus 32768. */
static inline __m512i vnni_step(__m512i acc, __m512i x)
{
	const __m512i bias = _mm512_set1_epi16((short)0x8000);
	const __m512i ones = _mm512_set1_epi16(1);

	return _mm512_dpwssd_epi32(acc, _mm512_xor_si512(x, bias), ones);
}

/*
 * The exact word sum of n_blocks blocks whose biased sums are in the 32-bit
 * lanes of a (at most 2^14 + 1 blocks: every lane stays below 2^31 in
 * magnitude). Each 64-bit lane's halves are sign-extended and added, the 8
 * lanes summed, and the bias of 2^20 per block given back.
 */
static inline uint64_t vnni_reduce(__m512i a, size_t n_blocks)
{
	int64_t s;

	/* Up to 2^11 blocks (128 KB) a lane holds at most 2^11 * 2^16 in
	 * magnitude and the 16 lanes' total fits an int32_t: one horizontal
	 * 32-bit sum, widened once. Beyond, each 64-bit lane's halves are
	 * sign-extended and added first. */
	if (n_blocks <= ((size_t)1 << 11)) {
		s = _mm512_reduce_add_epi32(a);
	} else {
		__m512i lo = _mm512_srai_epi64(_mm512_slli_epi64(a, 32), 32);
		__m512i hi = _mm512_srai_epi64(a, 32);
		s = _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi));
	}
	return (uint64_t)(s + ((int64_t)n_blocks << 20));
}

/* Word sum (address frame) of [buf, buf+len), 1 <= len <= CN_CSUM_VNNI_PIECE. */
static inline __attribute__((always_inline)) uint64_t
sum_piece(const unsigned char *buf, size_t len)
{
	size_t off = (uintptr_t)buf & 63;
	/* The aligned block start may lie before the object: only masked-off
	 * bytes are ever read there. */
	const unsigned char *p = (const unsigned char *)((uintptr_t)buf - off);
	size_t n = off + len; /* bytes from p to the end */
	size_t n_blocks = (n + 63) / 64;
	__mmask64 m = cn__mask_from(off);
	__m512i a0, a1, a2, a3;

	if (n <= 64) {
		a0 = _mm512_maskz_loadu_epi8(m & cn__mask_below(n), p);
		return vnni_reduce(vnni_step(_mm512_setzero_si512(), a0), 1);
	}
	a0 = vnni_step(_mm512_setzero_si512(), _mm512_maskz_loadu_epi8(m, p));
	a1 = a2 = a3 = _mm512_setzero_si512();
	p += 64;
	n -= 64;
	/* Four accumulators, so that consecutive dot products do not wait on
	 * each other's latency. */
	while (n >= 256) {
		a0 = vnni_step(a0, cn__load64(p));
		a1 = vnni_step(a1, cn__load64(p + 64));
		a2 = vnni_step(a2, cn__load64(p + 128));
		a3 = vnni_step(a3, cn__load64(p + 192));
		/* Four chains in four registers: without this gcc 12 moves
		 * one accumulator through a second register every iteration,
		 * lengthening its chain. */
		__asm__("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3));
		p += 256;
		n -= 256;
	}
	while (n >= 64) {
		a1 = vnni_step(a1, cn__load64(p));
		p += 64;
		n -= 64;
	}
	if (n)
		a2 = vnni_step(a2, _mm512_maskz_loadu_epi8(cn__mask_below(n), p));
	a0 = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
	return vnni_reduce(a0, n_blocks);
}

/* 0 bytes or more than one piece, out of line: the common path makes no
 * call, so it saves no registers and sets up no frame. */
static __attribute__((noinline, cold)) uint32_t
partial_long(const unsigned char *p, size_t len, uint32_t sum)
{
	return cn__csum_finish(cn__csum_pieces(p, len, CN_CSUM_VNNI_PIECE, sum_piece),
			       (uintptr_t)p & 1, sum);
}

uint32_t cn_csum_partial_avx512vnni(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;

	if (__builtin_expect(len - 1 < CN_CSUM_VNNI_PIECE, 1)) /* 1..PIECE */
		return cn__csum_finish(sum_piece(p, len), (uintptr_t)p & 1, sum);
	return partial_long(p, len, sum);
}

#endif /* __x86_64__ */
