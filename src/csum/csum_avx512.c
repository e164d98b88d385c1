/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX-512 variant: AVX512F + AVX512BW for byte-masked loads and stores;
 * compiled with -mavx512* -mavx2 -mbmi2 in its own static library
 * (src/meson.build), so csum.c also requires DQ, VL, AVX2 and BMI2.
 *
 * Every load is a 64-byte load from a 64-byte-aligned address: the first and
 * the last block are byte-masked loads (masked-off bytes read as zero and
 * cannot fault), so there is no scalar head or tail, nothing outside the
 * buffer is read, and a misaligned buffer costs at most one more block.
 * Unaligned loads would split every block across two cache lines: measured
 * here, such a loop at buffer+1 is 27% slower at 9000 B and 23% at 65536 B
 * than at buffer+0, while this one is within 0-4%. The lanes therefore sum in
 * the address frame (csum_impl.h) and the result is byte-swapped when the
 * buffer starts at an odd address.
 *
 * Per 64-bit lane, two accumulators: F, the wrapping sum of the words, and
 * H, the exact sum of their high 32-bit halves. The exact sum of the low
 * halves is then L = F - (H << 32) (mod 2^64, exact while it is below 2^64),
 * and the lane's value is H + L modulo 0xffff. That costs one shift and two
 * adds per 64 bytes, against a mask, a shift and two adds for the usual
 * split into two zero-extended halves.
 */
#include "csum_impl.h"

/* x86-64 only (64-bit scalar moves out of vectors, _addcarry_u64 in the
 * scalar helpers); csum.h declares the variant only there. */
#if defined(__x86_64__)

#include "csum_avx512_util.h"

/*
 * Value modulo 0xffff of F/H lane pairs, as a 64-bit scalar. L = F - (H << 32)
 * is the exact sum of the low halves and 2^32 == 1 modulo 0xffff, so a lane
 * is worth L + H. A chunk (CN_CSUM_CHUNK_MAX, 2^32 bytes) gives a lane at
 * most 2^26 words, so L and H stay below 2^58, L + H below 2^59 and the sum
 * of the 8 lanes below 2^62: no carry is lost, and the reduction is three
 * vector operations before the horizontal add.
 */
static inline uint64_t reduce512(__m512i f, __m512i h)
{
	__m512i t = _mm512_add_epi64(_mm512_sub_epi64(f, _mm512_slli_epi64(h, 32)), h);

	return (uint64_t)_mm512_reduce_add_epi64(t);
}

/* Address-frame sum of [buf, buf+len), 1 <= len <= CN_CSUM_CHUNK_MAX. */
static inline __attribute__((always_inline)) uint64_t
sum_chunk(const unsigned char *buf, size_t len)
{
	size_t off = (uintptr_t)buf & 63;
	/* The aligned block start may lie before the object: only masked-off
	 * bytes are ever read there. */
	const unsigned char *p = (const unsigned char *)((uintptr_t)buf - off);
	size_t n = off + len; /* bytes from p to the end */
	__mmask64 m = cn__mask_from(off);
	__m512i x, y, z, w;

	if (n <= 64) {
		x = _mm512_maskz_loadu_epi8(m & cn__mask_below(n), p);
		return reduce512(x, _mm512_srli_epi64(x, 32));
	}
	x = _mm512_maskz_loadu_epi8(m, p);
	__m512i f0 = x, h0 = _mm512_srli_epi64(x, 32);
	__m512i f1 = _mm512_setzero_si512(), h1 = _mm512_setzero_si512();
	p += 64;
	n -= 64;
	/* Two accumulator pairs so that consecutive adds do not wait on each
	 * other; 256 bytes per iteration amortise the loop branch. */
	while (n >= 256) {
		x = cn__load64(p);
		y = cn__load64(p + 64);
		z = cn__load64(p + 128);
		w = cn__load64(p + 192);
		f0 = _mm512_add_epi64(f0, x);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(x, 32));
		f1 = _mm512_add_epi64(f1, y);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(y, 32));
		f0 = _mm512_add_epi64(f0, z);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(z, 32));
		f1 = _mm512_add_epi64(f1, w);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(w, 32));
		/* Keep the four accumulators in registers as four chains: without
		 * this gcc reassociates the adds across iterations and inserts
		 * register copies (3-5% at 1460-9000 B). */
		__asm__("" : "+v"(f0), "+v"(f1), "+v"(h0), "+v"(h1));
		p += 256;
		n -= 256;
	}
	while (n >= 64) {
		x = cn__load64(p);
		f0 = _mm512_add_epi64(f0, x);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(x, 32));
		p += 64;
		n -= 64;
	}
	if (n) {
		x = _mm512_maskz_loadu_epi8(cn__mask_below(n), p);
		f1 = _mm512_add_epi64(f1, x);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(x, 32));
	}
	/* F wraps anyway and H stays exact: pairs add lane-wise. */
	return reduce512(_mm512_add_epi64(f0, f1), _mm512_add_epi64(h0, h1));
}

/* 0 bytes or more than CN_CSUM_CHUNK_MAX, out of line: the common path has
 * a single inlined chunk and makes no call, so it saves no registers and
 * sets up no frame. Chunks are a power of two long, so each starts at the
 * same address parity and all of them sum in the same frame. */
static __attribute__((noinline, cold)) uint32_t
partial_long(const unsigned char *p, size_t len, uint32_t sum)
{
	return cn__csum_finish(cn__csum_pieces(p, len, CN_CSUM_CHUNK_MAX, sum_chunk),
			       (uintptr_t)p & 1, sum);
}

uint32_t cn_csum_partial_avx512(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;

	if (__builtin_expect(len - 1 < CN_CSUM_CHUNK_MAX, 1)) /* 1..CHUNK_MAX */
		return cn__csum_finish(sum_chunk(p, len), (uintptr_t)p & 1, sum);
	return partial_long(p, len, sum);
}

/*
 * Copy: the *destination* is aligned (every store but the first and last is
 * a full aligned 64-byte store, masked stores cover the edges), the source
 * is read with unaligned loads at the same offsets. Lanes follow dst
 * addresses, so the frame is dst's address frame.
 */
static inline __attribute__((always_inline)) uint64_t
copy_chunk(unsigned char *dst, const unsigned char *src, size_t len)
{
	size_t off = (uintptr_t)dst & 63;
	/* As in sum_chunk, both block starts may lie before their objects;
	 * only masked-off bytes are ever at such addresses. */
	unsigned char *d = (unsigned char *)((uintptr_t)dst - off);
	const unsigned char *s = (const unsigned char *)((uintptr_t)src - off);
	size_t n = off + len;
	__m512i x, y, z, w;
	__m512i f0 = _mm512_setzero_si512(), h0 = f0, f1 = f0, h1 = f0;

	/* A destination that starts mid-line gets a masked first block; an
	 * aligned one goes straight to full stores (a masked store costs more
	 * than a plain one, and a 576-byte copy has only nine blocks). */
	if (off) {
		__mmask64 m = cn__mask_from(off);
		if (n < 64)
			m &= cn__mask_below(n);
		x = _mm512_maskz_loadu_epi8(m, s);
		_mm512_mask_storeu_epi8(d, m, x);
		f0 = x;
		h0 = _mm512_srli_epi64(x, 32);
		if (n <= 64)
			goto reduce;
		d += 64;
		s += 64;
		n -= 64;
	}
	while (n >= 256) {
		x = cn__loadu64(s);
		y = cn__loadu64(s + 64);
		z = cn__loadu64(s + 128);
		w = cn__loadu64(s + 192);
		_mm512_store_si512(d, x);
		_mm512_store_si512(d + 64, y);
		_mm512_store_si512(d + 128, z);
		_mm512_store_si512(d + 192, w);
		f0 = _mm512_add_epi64(f0, x);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(x, 32));
		f1 = _mm512_add_epi64(f1, y);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(y, 32));
		f0 = _mm512_add_epi64(f0, z);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(z, 32));
		f1 = _mm512_add_epi64(f1, w);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(w, 32));
		__asm__("" : "+v"(f0), "+v"(f1), "+v"(h0), "+v"(h1)); /* see sum_chunk */
		d += 256;
		s += 256;
		n -= 256;
	}
	while (n >= 64) {
		x = cn__loadu64(s);
		_mm512_store_si512(d, x);
		f0 = _mm512_add_epi64(f0, x);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(x, 32));
		d += 64;
		s += 64;
		n -= 64;
	}
	if (n) {
		__mmask64 m = cn__mask_below(n);
		x = _mm512_maskz_loadu_epi8(m, s);
		_mm512_mask_storeu_epi8(d, m, x);
		f1 = _mm512_add_epi64(f1, x);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(x, 32));
	}
reduce:
	return reduce512(_mm512_add_epi64(f0, f1), _mm512_add_epi64(h0, h1));
}

/* As partial_long, for the copy. */
static __attribute__((noinline, cold)) uint32_t
copy_long(unsigned char *d, const unsigned char *s, size_t len, uint32_t sum)
{
	return cn__csum_finish(cn__csum_copy_pieces(d, s, len, CN_CSUM_CHUNK_MAX, copy_chunk),
			       (uintptr_t)d & 1, sum);
}

uint32_t cn_csum_copy_avx512(void *restrict dst, const void *restrict src, size_t len,
			     uint32_t sum)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;

	if (__builtin_expect(len - 1 < CN_CSUM_CHUNK_MAX, 1))
		return cn__csum_finish(copy_chunk(d, s, len), (uintptr_t)d & 1, sum);
	return copy_long(d, s, len, sum);
}

#endif /* __x86_64__ */
