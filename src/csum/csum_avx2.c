/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX2 variant. Compiled with -mavx2 in its own static library
 * (src/meson.build).
 *
 * AVX2 has no byte-masked loads, so the head (up to 31 bytes, until the
 * 32-byte-aligned address) and the tail (under 32 bytes) go through the
 * scalar add-with-carry path and the vector loop only ever does aligned
 * 32-byte loads, never a load split across two cache lines (the cost of
 * those is measured in csum_avx512.c). The head is summed in the address
 * frame (an odd first byte is the high half of its word), so the whole
 * result is byte-swapped once at the end when the buffer starts at an odd
 * address. Compiled with -mavx2 -mbmi -mbmi2 (src/meson.build), hence the
 * BMI1/BMI2 requirement in csum.c.
 *
 * Lane accumulators and their reduction are those of the AVX-512 variant
 * (see csum_avx512.c): F wrapping word sums, H exact high-half sums,
 * L = F - (H << 32).
 */
#include "csum_impl.h"

/* x86-64 only (64-bit scalar moves out of vectors, _addcarry_u64 in the
 * scalar helpers); csum.h declares the variant only there. */
#if defined(__x86_64__)

#include "csum_avx2_loop.h"

/* Lane value L + H, as reduce512() in csum_avx512.c: a chunk gives a lane
 * at most 2^27 words, so the 4 lanes sum below 2^62. */
static inline uint64_t reduce256(__m256i f, __m256i h)
{
	__m256i t = _mm256_add_epi64(_mm256_sub_epi64(f, _mm256_slli_epi64(h, 32)), h);
	__m128i u = _mm_add_epi64(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));

	u = _mm_add_epi64(u, _mm_unpackhi_epi64(u, u));
	return (uint64_t)_mm_cvtsi128_si64(u);
}

/* The head of a chunk: the bytes of *sp (copied to *dp when dp is not
 * NULL) before the frame's first 32-byte boundary (the frame is *dp's when
 * copying, else *sp's), at most *np, an odd first byte as the high half of
 * its word. Returns their sum; *sp, *np (and *dp) move past them. */
static inline __attribute__((always_inline)) uint64_t
head32(unsigned char **dp, const unsigned char **sp, size_t *np)
{
	unsigned char *d = dp ? *dp : NULL;
	const unsigned char *s = *sp;
	size_t n = *np;
	uint64_t acc = 0;
	size_t head = (size_t)(-(uintptr_t)(dp ? d : s) & 31);

	if (head > n)
		head = n;
	if (head) {
		if ((uintptr_t)(dp ? d : s) & 1) {
			if (dp)
				*d++ = *s;
			acc = cn__csum_byte_odd(*s);
			s++;
			n--;
			head--;
		}
		acc = dp ? cn__csum_copy_scalar(d, s, head, acc) : cn__csum_scalar(s, head, acc);
		if (dp)
			d += head;
		s += head;
		n -= head;
	}
	if (dp)
		*dp = d;
	*sp = s;
	*np = n;
	return acc;
}

/* Address-frame sum of [p, p+n), n <= CN_CSUM_CHUNK_MAX. */
static inline __attribute__((always_inline)) uint64_t
sum_chunk(const unsigned char *p, size_t n)
{
	uint64_t acc = head32(NULL, &p, &n);

	if (n >= 32) {
		__m256i f0 = _mm256_setzero_si256(), h0 = f0, f1 = f0, h1 = f0;
		__m256i x, y, z, w;

		while (n >= 128) {
			x = cn__avx2_load32(p);
			y = cn__avx2_load32(p + 32);
			z = cn__avx2_load32(p + 64);
			w = cn__avx2_load32(p + 96);
			CN__AVX2_ACC(f0, h0, x);
			CN__AVX2_ACC(f1, h1, y);
			CN__AVX2_ACC(f0, h0, z);
			CN__AVX2_ACC(f1, h1, w);
			p += 128;
			n -= 128;
		}
		while (n >= 32) {
			x = cn__avx2_load32(p);
			CN__AVX2_ACC(f0, h0, x);
			p += 32;
			n -= 32;
		}
		/* The tail's chain does not wait for the lane reduction's
		 * (about ten dependent operations): summed from 0, added
		 * last. p is 32-byte aligned here: even, so frames agree. */
		uint64_t tail = cn__csum_scalar(p, n, 0);
		acc = cn__csum_add64(acc, reduce256(_mm256_add_epi64(f0, f1),
						    _mm256_add_epi64(h0, h1)));
		return cn__csum_add64(acc, tail);
	}
	/* p is 32-byte aligned here (or n is 0): even, so frames agree. */
	return cn__csum_scalar(p, n, acc);
}

/* Inputs above CN_CSUM_CHUNK_MAX, out of line (see csum_avx512.c). */
static __attribute__((noinline, cold)) uint64_t sum_huge(const unsigned char *p, size_t len)
{
	return cn__csum_pieces(p, len, CN_CSUM_CHUNK_MAX, sum_chunk);
}

uint32_t cn_csum_partial_avx2(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;
	uint64_t acc = __builtin_expect(len <= CN_CSUM_CHUNK_MAX, 1) ? sum_chunk(p, len)
								      : sum_huge(p, len);

	return cn__csum_finish(acc, (uintptr_t)p & 1, sum);
}

/* Copy: dst is aligned (aligned 32-byte stores), src read unaligned; the
 * frame is dst's address frame. */
static inline __attribute__((always_inline)) uint64_t
copy_chunk(unsigned char *d, const unsigned char *s, size_t n)
{
	uint64_t acc = head32(&d, &s, &n);

	if (n >= 32) {
		__m256i f0 = _mm256_setzero_si256(), h0 = f0, f1 = f0, h1 = f0;

		cn__avx2_copy_blocks(&d, &s, &n, &f0, &h0, &f1, &h1, 1);
		/* the tail off the reduction's chain, as in sum_chunk */
		uint64_t tail = n ? cn__csum_copy_scalar(d, s, n, 0) : 0;
		acc = cn__csum_add64(acc, reduce256(_mm256_add_epi64(f0, f1),
						    _mm256_add_epi64(h0, h1)));
		return cn__csum_add64(acc, tail);
	}
	return cn__csum_copy_scalar(d, s, n, acc);
}

static __attribute__((noinline, cold)) uint64_t
copy_huge(unsigned char *d, const unsigned char *s, size_t len)
{
	return cn__csum_copy_pieces(d, s, len, CN_CSUM_CHUNK_MAX, copy_chunk);
}

uint32_t cn_csum_copy_avx2(void *restrict dst, const void *restrict src, size_t len,
			   uint32_t sum)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	uint64_t acc = __builtin_expect(len <= CN_CSUM_CHUNK_MAX, 1) ? copy_chunk(d, s, len)
								      : copy_huge(d, s, len);

	return cn__csum_finish(acc, (uintptr_t)d & 1, sum);
}

#endif /* __x86_64__ */
