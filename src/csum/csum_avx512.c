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
 * Unaligned loads would split every block across two cache lines
 * (docs/performance.md, Checksum). The lanes therefore sum in
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

/* One block x into a lane pair: f += x, h += x >> 32 (see reduce512); the
 * step of every loop below. */
static inline __attribute__((always_inline)) void acc512(__m512i *f, __m512i *h, __m512i x)
{
	*f = _mm512_add_epi64(*f, x);
	*h = _mm512_add_epi64(*h, _mm512_srli_epi64(x, 32));
}

/* The four blocks of a 256-byte group, alternately into the two lane
 * pairs, so that consecutive adds do not wait on each other. The empty asm
 * keeps the four accumulators in registers as four chains: without it gcc
 * reassociates the adds across iterations and inserts register copies
 * (3-5% at 1460-9000 B). */
static inline __attribute__((always_inline)) void acc256(__m512i *f0, __m512i *h0, __m512i *f1,
							 __m512i *h1, __m512i x, __m512i y,
							 __m512i z, __m512i w)
{
	acc512(f0, h0, x);
	acc512(f1, h1, y);
	acc512(f0, h0, z);
	acc512(f1, h1, w);
	__asm__("" : "+v"(*f0), "+v"(*f1), "+v"(*h0), "+v"(*h1));
}

/* F and H (see reduce512) of a group of blocks. */
struct fh {
	__m512i f, h;
};

static inline __attribute__((always_inline)) struct fh fh_add(struct fh a, struct fh b)
{
	return (struct fh){ _mm512_add_epi64(a.f, b.f), _mm512_add_epi64(a.h, b.h) };
}

/*
 * The rest of a chunk after its first block: n bytes from s (64-byte
 * aligned unless copy) into the lane pairs (f0, h0) and (f1, h1), and with
 * copy (a constant) also stored to d (64-byte aligned). Whole 256-byte
 * groups (two pairs so that consecutive adds do not wait on each other;
 * 256 bytes per iteration amortise the loop branch), 64-byte blocks, then
 * a masked tail into (f1, h1).
 */
static inline __attribute__((always_inline)) void
acc_blocks(unsigned char *d, const unsigned char *s, size_t n, const bool copy, __m512i *f0,
	   __m512i *h0, __m512i *f1, __m512i *h1)
{
	__m512i x, y, z, w;

	while (n >= 256) {
		x = copy ? cn__loadu64(s) : cn__load64(s);
		y = copy ? cn__loadu64(s + 64) : cn__load64(s + 64);
		z = copy ? cn__loadu64(s + 128) : cn__load64(s + 128);
		w = copy ? cn__loadu64(s + 192) : cn__load64(s + 192);
		if (copy) {
			_mm512_store_si512(d, x);
			_mm512_store_si512(d + 64, y);
			_mm512_store_si512(d + 128, z);
			_mm512_store_si512(d + 192, w);
			d += 256;
		}
		acc256(f0, h0, f1, h1, x, y, z, w);
		s += 256;
		n -= 256;
	}
	while (n >= 64) {
		x = copy ? cn__loadu64(s) : cn__load64(s);
		if (copy) {
			_mm512_store_si512(d, x);
			d += 64;
		}
		acc512(f0, h0, x);
		s += 64;
		n -= 64;
	}
	if (n) {
		__mmask64 m = cn__mask_below(n);
		x = _mm512_maskz_loadu_epi8(m, s);
		if (copy)
			_mm512_mask_storeu_epi8(d, m, x);
		acc512(f1, h1, x);
	}
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
	__m512i x;

	if (n <= 64) {
		x = _mm512_maskz_loadu_epi8(m & cn__mask_below(n), p);
		return reduce512(x, _mm512_srli_epi64(x, 32));
	}
	x = _mm512_maskz_loadu_epi8(m, p);
	__m512i f0 = x, h0 = _mm512_srli_epi64(x, 32);
	__m512i f1 = _mm512_setzero_si512(), h1 = _mm512_setzero_si512();
	acc_blocks(NULL, p + 64, n - 64, false, &f0, &h0, &f1, &h1);
	/* F wraps anyway and H stays exact: pairs add lane-wise. */
	return reduce512(_mm512_add_epi64(f0, f1), _mm512_add_epi64(h0, h1));
}

/*
 * Sums that span 65..2047 bytes from the buffer's 64-byte block start:
 * straight-line code, no loop, built as copy_small below (whose comment
 * explains why at packet sizes). The masked first block starts the F/H
 * pair, so nothing is zeroed; the full blocks go in groups of 16, 8, 4, 2
 * and 1 taken by the bits of the remaining length, each summed as a tree
 * and added to the pair; then a masked tail.
 *
 * Figures, and the variants tried and rejected: docs/performance.md,
 * Checksum, "Partial sums of 65..2047 bytes".
 */
#define CN_CSUM_SMALL_MIN 65
#define CN_CSUM_SMALL_MAX 2047

/* One full block at p + o. Groups of 2^k blocks are summed as trees. */
static inline __attribute__((always_inline)) struct fh sum_1(const unsigned char *p, size_t o)
{
	__m512i x = cn__load64(p + o);

	return (struct fh){ x, _mm512_srli_epi64(x, 32) };
}

/*
 * Two blocks. With fold, the second is not loaded into a register: the add
 * to F and the shift for H each read it from memory, two instructions
 * where a load, an add and a shift are three (the block is read twice, from
 * L1). gcc 12 loads a value used twice once, hence the asm. In the groups of
 * 8 and fewer blocks this made 576 B faster; in the group of 16 it made
 * 1460 B slower (the comment above has the figures), so sum_16 does not fold.
 */
static inline __attribute__((always_inline)) struct fh sum_2(const unsigned char *p, size_t o,
							       bool fold)
{
	if (!fold)
		return fh_add(sum_1(p, o), sum_1(p, o + 64));

	__m512i x = cn__load64(p + o), f, hy;
	const __m512i *y = (const __m512i *)(p + o + 64);

	__asm__("vpaddq %2, %3, %0\n\tvpsrlq $32, %2, %1" : "=v"(f), "=v"(hy) : "m"(*y), "v"(x));
	return (struct fh){ f, _mm512_add_epi64(_mm512_srli_epi64(x, 32), hy) };
}

static inline __attribute__((always_inline)) struct fh sum_4(const unsigned char *p, size_t o,
							       bool fold)
{
	return fh_add(sum_2(p, o, fold), sum_2(p, o + 128, fold));
}

static inline __attribute__((always_inline)) struct fh sum_8(const unsigned char *p, size_t o,
							       bool fold)
{
	return fh_add(sum_4(p, o, fold), sum_4(p, o + 256, fold));
}

static inline __attribute__((always_inline)) struct fh sum_16(const unsigned char *p, size_t o)
{
	struct fh a = sum_8(p, o, false);

	/* As in copy_16: finish the first half before the second, or gcc 12
	 * issues all 16 loads first and spills sums to the stack. */
	__asm__("" : "+v"(a.f), "+v"(a.h));
	return fh_add(a, sum_8(p, o + 512, false));
}

/* An empty asm that takes the pair in registers and gives it back: placed
 * after each step of sum_small (taken or not), it makes every path leave the
 * pair in the same two registers. Without it gcc 12 leaves them in other
 * registers on one side of a branch and copies them across at the join (one
 * vmovdqa64 a step on the 576-byte path, objdump). */
static inline __attribute__((always_inline)) void fh_pin(struct fh *a)
{
	__asm__("" : "+v"(a->f), "+v"(a->h));
}

/* The bytes of m in the block at p (masked-off bytes are not read). */
static inline __attribute__((always_inline)) struct fh sum_masked(const unsigned char *p,
								    __mmask64 m)
{
	__m512i x = _mm512_maskz_loadu_epi8(m, p);

	return (struct fh){ x, _mm512_srli_epi64(x, 32) };
}

/* Address-frame sum of [buf, buf+len), CN_CSUM_SMALL_MIN <= (buf & 63) + len
 * <= CN_CSUM_SMALL_MAX. */
static inline __attribute__((always_inline)) uint64_t
sum_small(const unsigned char *buf, size_t len)
{
	size_t off = (uintptr_t)buf & 63;
	/* As in sum_chunk: only masked-off bytes lie before the object. */
	const unsigned char *p = (const unsigned char *)((uintptr_t)buf - off);
	size_t n = off + len - 64; /* after the first block: 1..1983 */
	struct fh a = sum_masked(p, cn__mask_from(off));

	fh_pin(&a);
	p += 64;
	/* Each group starts after the larger ones present, at the bits of n
	 * above its own. */
	if (n & 1024)
		a = fh_add(a, sum_16(p, 0));
	fh_pin(&a);
	if (n & 512)
		a = fh_add(a, sum_8(p, n & 1024, true));
	fh_pin(&a);
	if (n & 256)
		a = fh_add(a, sum_4(p, n & 1536, true));
	fh_pin(&a);
	if (n & 128)
		a = fh_add(a, sum_2(p, n & 1792, true));
	fh_pin(&a);
	if (n & 64)
		a = fh_add(a, sum_1(p, n & 1920));
	fh_pin(&a);
	/* Tail mask by BZHI (the bits below n & 63): mov, bzhi, kmov, where
	 * cn__mask_below's shift takes five instructions. */
	if (__builtin_expect(n & 63, 1))
		a = fh_add(a, sum_masked(p + (n & 1984), _cvtu64_mask64(_bzhi_u64(~0ull, n & 63))));
	fh_pin(&a);
	return reduce512(a.f, a.h);
}

/* 0 bytes or more than CN_CSUM_CHUNK_MAX, out of line: partial_chunk's
 * common path has a single inlined chunk and makes no call, so it saves no
 * registers and sets up no frame. Chunks are a power of two long, so each
 * starts at the same address parity and all of them sum in the same frame. */
static __attribute__((noinline, cold)) uint32_t
partial_long(const unsigned char *p, size_t len, uint32_t sum)
{
	return cn__csum_finish(cn__csum_pieces(p, len, CN_CSUM_CHUNK_MAX, sum_chunk),
			       (uintptr_t)p & 1, sum);
}

/* Inputs past sum_small's range, in a function of their own, which the
 * entry reaches by a jump: inlined beside sum_small, sum_chunk's loop gets
 * register copies (the comment above sum_small has the figures). */
static __attribute__((noinline)) uint32_t
partial_chunk(const unsigned char *p, size_t len, uint32_t sum)
{
	if (__builtin_expect(len - 1 < CN_CSUM_CHUNK_MAX, 1)) /* 1..CHUNK_MAX */
		return cn__csum_finish(sum_chunk(p, len), (uintptr_t)p & 1, sum);
	return partial_long(p, len, sum);
}

uint32_t cn_csum_partial_avx512(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t off = (uintptr_t)p & 63;
	/* Bytes from p's block start to its end; wraps only when n < 64 (as
	 * in cn_csum_copy_avx512), never into the small range. */
	size_t n = off + len;

	if (__builtin_expect(n - CN_CSUM_SMALL_MIN <= CN_CSUM_SMALL_MAX - CN_CSUM_SMALL_MIN, 1))
		return cn__csum_finish(sum_small(p, len), (uintptr_t)p & 1, sum);
	/* 1 <= len, n <= 64: one masked block, here rather than through
	 * partial_chunk (64 B: 5.2-5.4 ticks here, 6.1-6.3 there). */
	if (len - 1 < 64 - off) {
		struct fh b = sum_masked(p - off, cn__mask_from(off) & cn__mask_below(n));
		return cn__csum_finish(reduce512(b.f, b.h), (uintptr_t)p & 1, sum);
	}
	return partial_chunk(p, len, sum);
}

/* A copy's blocks: d is dst's 64-byte block start, s the same offset back
 * from src (only masked-off bytes are ever at addresses before the
 * objects), off = dst & 63, n = off + len the bytes from d to the end. */
struct copy_frame {
	unsigned char *d;
	const unsigned char *s;
	size_t off, n;
};

static inline __attribute__((always_inline)) struct copy_frame
copy_frame(unsigned char *dst, const unsigned char *src, size_t len)
{
	size_t off = (uintptr_t)dst & 63;

	return (struct copy_frame){ (unsigned char *)((uintptr_t)dst - off),
				    (const unsigned char *)((uintptr_t)src - off), off, off + len };
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
	struct copy_frame fr = copy_frame(dst, src, len);
	__m512i x;
	__m512i f0 = _mm512_setzero_si512(), h0 = f0, f1 = f0, h1 = f0;

	/* A destination that starts mid-line gets a masked first block; an
	 * aligned one goes straight to full stores (a masked store costs more
	 * than a plain one, and a 576-byte copy has only nine blocks). */
	if (fr.off) {
		__mmask64 m = cn__mask_from(fr.off);
		if (fr.n < 64)
			m &= cn__mask_below(fr.n);
		x = _mm512_maskz_loadu_epi8(m, fr.s);
		_mm512_mask_storeu_epi8(fr.d, m, x);
		f0 = x;
		h0 = _mm512_srli_epi64(x, 32);
		if (fr.n <= 64)
			goto reduce;
		fr.d += 64;
		fr.s += 64;
		fr.n -= 64;
	}
	acc_blocks(fr.d, fr.s, fr.n, true, &f0, &h0, &f1, &h1);
reduce:
	return reduce512(_mm512_add_epi64(f0, f1), _mm512_add_epi64(h0, h1));
}

/*
 * Copies that span 65..2047 bytes from dst's 64-byte block start (packets up
 * to the Ethernet MTU): straight-line code, no loop. After the optional
 * masked head block, the full blocks go in groups of 16, 8, 4, 2 and 1 taken
 * by the bits of the remaining length, then a masked tail; each group sums
 * its blocks as a tree and adds the result to one F/H pair, so a group adds
 * one add to the chain that the reduction waits on.
 *
 * Why not copy_chunk's loop: in a stream of calls each result waits on that
 * chain and on the reduction, and the core overlaps only a few calls, so at
 * these sizes per-call latency and instruction count set the rate. (In
 * the harness in docs/performance.md, Copy+checksum, ten dependent LEAs
 * after the result made a call 1.4 ticks slower, ten independent ones 0.3.)
 * Figures, the ceiling of fixed-length code and the variants tried:
 * docs/performance.md, Copy+checksum, "Copies of 65..2047 bytes".
 */
#define CN_CSUM_COPY_SMALL_MIN 65
#define CN_CSUM_COPY_SMALL_MAX 2047

/* The bytes of m: masked load from s, masked store to d (masked-off bytes
 * are neither read nor written). */
static inline __attribute__((always_inline)) struct fh
copy_masked(unsigned char *d, const unsigned char *s, __mmask64 m)
{
	__m512i x = _mm512_maskz_loadu_epi8(m, s);

	_mm512_mask_storeu_epi8(d, m, x);
	return (struct fh){ x, _mm512_srli_epi64(x, 32) };
}

/* One full block: load from s + o, aligned store to d + o. Groups of 2^k
 * blocks are summed as trees (pairs, then pairs of pairs). */
static inline __attribute__((always_inline)) struct fh
copy_1(unsigned char *d, const unsigned char *s, size_t o)
{
	__m512i x = cn__loadu64(s + o);

	_mm512_store_si512(d + o, x);
	return (struct fh){ x, _mm512_srli_epi64(x, 32) };
}

static inline __attribute__((always_inline)) struct fh
copy_2(unsigned char *d, const unsigned char *s, size_t o)
{
	return fh_add(copy_1(d, s, o), copy_1(d, s, o + 64));
}

static inline __attribute__((always_inline)) struct fh
copy_4(unsigned char *d, const unsigned char *s, size_t o)
{
	return fh_add(copy_2(d, s, o), copy_2(d, s, o + 128));
}

static inline __attribute__((always_inline)) struct fh
copy_8(unsigned char *d, const unsigned char *s, size_t o)
{
	return fh_add(copy_4(d, s, o), copy_4(d, s, o + 256));
}

static inline __attribute__((always_inline)) struct fh
copy_16(unsigned char *d, const unsigned char *s, size_t o)
{
	struct fh a = copy_8(d, s, o);

	/* Finish the first half before the second: gcc 12 otherwise issues
	 * all 16 loads first and spills sums to the stack. */
	__asm__("" : "+v"(a.f), "+v"(a.h));
	return fh_add(a, copy_8(d, s, o + 512));
}

/* Address-frame sum of a copy with CN_CSUM_COPY_SMALL_MIN <= (dst & 63) + len
 * <= CN_CSUM_COPY_SMALL_MAX. */
static inline __attribute__((always_inline)) uint64_t
copy_small(unsigned char *dst, const unsigned char *src, size_t len)
{
	struct copy_frame fr = copy_frame(dst, src, len);
	struct fh a;

	if (fr.off) {
		a = copy_masked(fr.d, fr.s, cn__mask_from(fr.off));
		fr.d += 64;
		fr.s += 64;
		fr.n -= 64;
	} else {
		a = (struct fh){ _mm512_setzero_si512(), _mm512_setzero_si512() };
	}
	/* fr.n < 2048 now. Each group starts after the larger ones present,
	 * at the bits of fr.n above its own. */
	if (fr.n & 1024)
		a = fh_add(a, copy_16(fr.d, fr.s, 0));
	if (fr.n & 512)
		a = fh_add(a, copy_8(fr.d, fr.s, fr.n & 1024));
	if (fr.n & 256)
		a = fh_add(a, copy_4(fr.d, fr.s, fr.n & 1536));
	if (fr.n & 128)
		a = fh_add(a, copy_2(fr.d, fr.s, fr.n & 1792));
	if (fr.n & 64)
		a = fh_add(a, copy_1(fr.d, fr.s, fr.n & 1920));
	if (fr.n & 63) {
		size_t o = fr.n & 1984;
		a = fh_add(a, copy_masked(fr.d + o, fr.s + o, cn__mask_below(fr.n & 63)));
	}
	return reduce512(a.f, a.h);
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
	size_t off = (uintptr_t)d & 63;
	/* Bytes from dst's block start to its end. off + len wraps only for
	 * len > SIZE_MAX - off, and then n < off < 64: never the small range. */
	size_t n = off + len;

	if (n - (CN_CSUM_COPY_SMALL_MIN) <= CN_CSUM_COPY_SMALL_MAX - CN_CSUM_COPY_SMALL_MIN)
		return cn__csum_finish(copy_small(d, s, len), (uintptr_t)d & 1, sum);
	/* 1 <= len, n <= 64: one masked block. Tested after the small range
	 * (in front of it, 576 B took 10.02 ticks instead of 9.33-9.44); on
	 * copy_chunk's path 64 B took 6.36-6.42, here 5.55-5.61. */
	if (len - 1 < 64 - off) {
		struct fh b = copy_masked(d - off, s - off, cn__mask_from(off) & cn__mask_below(n));
		return cn__csum_finish(reduce512(b.f, b.h), (uintptr_t)d & 1, sum);
	}
	if (__builtin_expect(len - 1 < CN_CSUM_CHUNK_MAX, 1))
		return cn__csum_finish(copy_chunk(d, s, len), (uintptr_t)d & 1, sum);
	return copy_long(d, s, len, sum);
}

#endif /* __x86_64__ */
