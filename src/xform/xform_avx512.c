/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX-512 variants (AVX512F + AVX512BW: byte-masked loads and stores,
 * 512-bit VPSHUFB). Compiled with -mavx512f/bw/vl/dq -mavx2 -mbmi -mbmi2 in
 * its own static library, so copy.c requires all of those.
 *
 * No VBMI: a byte swap never moves a byte out of its 16-byte lane, so the
 * in-lane VPSHUFB does the whole job, and PES is a 64-bit rotate plus one
 * VPTERNLOGQ.
 *
 * Loop: 256 bytes per iteration (four 64-byte loads, then four transforms and
 * four stores; loads before stores keep in place correct). Masked loads and
 * stores cover the head and the last partial vector, so there is no scalar
 * loop and nothing outside the buffer is touched (masked-off bytes are not
 * accessed and cannot fault). When the destination's misalignment is a
 * whole number of units, a masked head first brings it to a 64-byte
 * boundary, so every full store writes one cache line instead of two; the
 * loads stay unaligned (a split load costs less than a split store here).
 */
#include "xform_impl.h"

#if defined(__x86_64__)

#include <immintrin.h>

static inline __attribute__((always_inline)) __m512i xform(__m512i x, enum cn__xform_kind k)
{
	/* VPSHUFB controls, the same in each 16-byte lane. */
	const __m512i sh16 = _mm512_broadcast_i32x4(
		_mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
	const __m512i sh32 = _mm512_broadcast_i32x4(
		_mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12));

	switch (k) {
	case CN__BSWAP16:
		return _mm512_shuffle_epi8(x, sh16);
	case CN__BSWAP32:
		return _mm512_shuffle_epi8(x, sh32);
	case CN__PES:
	default:
		/* (x | ror64(x, 32)) & mask in one ternary op: imm 0xA8 is
		 * (A | B) & C over the truth-table columns A=0xF0, B=0xCC,
		 * C=0xAA. */
		return _mm512_ternarylogic_epi64(x, _mm512_ror_epi64(x, 32),
						 _mm512_set1_epi32((int)CN_PES_MASK), 0xA8);
	}
}

static inline __mmask64 mask_below(size_t n) /* bytes 0..n-1, 0 <= n <= 64 */
{
	return n ? _cvtu64_mask64(~0ull >> (64 - n)) : _cvtu64_mask64(0);
}

static inline __attribute__((always_inline)) void
run(unsigned char *d, const unsigned char *s, size_t len, enum cn__xform_kind k)
{
	const size_t unit = cn__xform_unit(k);
	size_t n = len - (len & (unit - 1)); /* whole units */
	size_t rest = len - n;
	size_t head = (size_t)(-(uintptr_t)d) & 63;

	if (len <= 64) {
		/* One block (headers, short frames): one masked load, the
		 * transform, the bytes past the last whole unit taken back
		 * unchanged, one masked store. Units start at the buffer, so
		 * they are whole lanes of the transform. */
		__mmask64 m = mask_below(len);
		__m512i x = _mm512_maskz_loadu_epi8(m, s), y = xform(x, k);
		if (rest)
			y = _mm512_mask_blend_epi8(mask_below(n), x, y);
		_mm512_mask_storeu_epi8(d, m, y);
		return;
	}
	if (head && (head & (unit - 1)) == 0 && n > 2 * 64) {
		__mmask64 m = mask_below(head);
		_mm512_mask_storeu_epi8(d, m, xform(_mm512_maskz_loadu_epi8(m, s), k));
		d += head;
		s += head;
		n -= head;
	}
	while (n >= 256) {
		__m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + 64);
		__m512i c = _mm512_loadu_si512(s + 128), e = _mm512_loadu_si512(s + 192);
		_mm512_storeu_si512(d, xform(a, k));
		_mm512_storeu_si512(d + 64, xform(b, k));
		_mm512_storeu_si512(d + 128, xform(c, k));
		_mm512_storeu_si512(d + 192, xform(e, k));
		d += 256;
		s += 256;
		n -= 256;
	}
	while (n >= 64) {
		_mm512_storeu_si512(d, xform(_mm512_loadu_si512(s), k));
		d += 64;
		s += 64;
		n -= 64;
	}
	if (n) {
		__mmask64 m = mask_below(n);
		_mm512_mask_storeu_epi8(d, m, xform(_mm512_maskz_loadu_epi8(m, s), k));
		d += n;
		s += n;
	}
	cn__copy_rest(d, s, rest);
}

CN_XFORM_KERNELS(avx512)

#endif /* __x86_64__ */
