/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The cord test program: a toy "packet path" of small hot functions laid
 * out as badly as we could manage.  Every hot function sits between large
 * cold ones, so in link order the ~10 KB of hot code is spread over ~300 KB
 * and collides with itself in a 16 KB direct-mapped I-cache.  A good order
 * packs the hot code into one span that fits.
 *
 * Every function is kept out of line and unclonable so that the call graph
 * the profilers see is the one written here (the tests check exact edge
 * counts), whatever the optimisation level.
 */
#ifndef CORDTEST_H
#define CORDTEST_H

#include <stdint.h>

#if defined(__clang__)
#define CT_KEEP __attribute__((noinline, used))
#else
#define CT_KEEP __attribute__((noinline, noclone, used))
#endif

/* One mixing step: a load, an xor, a multiply, an add — about 12 bytes of
 * x86 code that the compiler cannot fold away. */
#define CT_MIX(i) x = (x ^ p[(i) & 15]) * 0x9e3779b1u + (uint32_t)(i);
#define CT_MIX8(b) CT_MIX(b) CT_MIX(b + 1) CT_MIX(b + 2) CT_MIX(b + 3) \
	CT_MIX(b + 4) CT_MIX(b + 5) CT_MIX(b + 6) CT_MIX(b + 7)
#define CT_MIX32(b) CT_MIX8(b) CT_MIX8(b + 8) CT_MIX8(b + 16) CT_MIX8(b + 24)

/* A hot function body: 48 straight-line steps, ~600 bytes, so each call
 * fetches every one of its I-cache lines.  18 of them make ~11 KB of hot
 * code: it fits a 16 KB I-cache once packed, not an 8 KB one. */
#define CT_WORK(init) uint32_t x = (init); CT_MIX32(0) CT_MIX8(32) CT_MIX8(40)

/* A cold body: a little real work, then 12 KB of code that never runs (the
 * data makes the branch false).  `.skip` gives the size without making the
 * compiler chew through thousands of statements. */
#define CT_COLD_BODY(init) const volatile uint32_t *vp = p; \
	uint32_t x = (init); \
	if (vp[15] == 0) \
		__asm__ volatile(".skip 12288"); \
	{ const volatile uint32_t *p = vp; CT_MIX32(0) } \
	return x;

#define CT_COLD(name) CT_KEEP uint32_t name(const uint32_t *p) { CT_COLD_BODY(7) }
#define CT_HOT(name, k) CT_KEEP uint32_t name(const uint32_t *p, uint32_t s) \
	{ CT_WORK(s + (k)) return x; }

typedef uint32_t ct_hot_fn(const uint32_t *p, uint32_t s);
typedef uint32_t ct_cold_fn(const uint32_t *p);

/* main.c */
uint32_t ct_packet(const uint32_t *p, uint32_t i);
/* hot_a.c: receive side */
uint32_t rx_input(const uint32_t *p, uint32_t s);
uint32_t rx_cold(const uint32_t *p);
/* hot_b.c: send side */
uint32_t tx_output(const uint32_t *p, uint32_t s);
uint32_t tx_cold(const uint32_t *p);
/* hot_c.c: delivery and the rare slow path */
uint32_t dl_deliver(const uint32_t *p, uint32_t s);
uint32_t dl_slow(const uint32_t *p, uint32_t s);
uint32_t dl_cold(const uint32_t *p);
/* pad*.c: cold code only */
uint32_t pad0_a(const uint32_t *p);
uint32_t pad0_b(const uint32_t *p);
uint32_t pad1_a(const uint32_t *p);
uint32_t pad1_b(const uint32_t *p);
uint32_t pad2_a(const uint32_t *p);
uint32_t pad2_b(const uint32_t *p);

#endif
