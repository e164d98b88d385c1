/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zl: a small compression-library-shaped static library for the cord
 * tests, built the way third-party libraries often are: with
 * -fvisibility=hidden, only the API exported.  After a static link its
 * internal functions are LOCAL symbols listed after an empty STT_FILE
 * entry, which a tool that matches statics by source file name loses.
 *
 *   zl_pack    two hidden hot functions, zl_match and zl_emit, that
 *              alternate on every step; zl_spare (cold, ZL_GAP bytes of
 *              never-run code) sits between them so that in link order
 *              they are 16 KB apart and collide in a 16 KB direct-mapped
 *              I-cache
 *   zl_unpack  zl_inflate: few calls, a long loop each (most of the
 *              phase's instructions), beside zl_put, called on every byte
 *              (most of the calls, few instructions)
 */
#ifndef ZL_H
#define ZL_H

#include <stdint.h>

#define ZL_API __attribute__((visibility("default")))

ZL_API uint32_t zl_pack(const uint32_t *p, uint32_t n);
ZL_API uint32_t zl_unpack(const uint32_t *p, uint32_t n);

#if defined(__clang__)
#define ZL_KEEP __attribute__((noinline, used))
#else
#define ZL_KEEP __attribute__((noinline, noclone, used))
#define ZL_STR2(x) #x
#define ZL_STR(x) ZL_STR2(x)

#endif

/* ~12 bytes of code a step the compiler cannot fold away */
#define ZL_MIX(i) x = (x ^ p[(i) & 15]) * 0x9e3779b1u + (uint32_t)(i);
#define ZL_MIX8(b) ZL_MIX(b) ZL_MIX(b + 1) ZL_MIX(b + 2) ZL_MIX(b + 3) \
	ZL_MIX(b + 4) ZL_MIX(b + 5) ZL_MIX(b + 6) ZL_MIX(b + 7)
#define ZL_MIX32(b) ZL_MIX8(b) ZL_MIX8(b + 8) ZL_MIX8(b + 16) ZL_MIX8(b + 24)

/* internal (hidden after -fvisibility=hidden) */
uint32_t zl_match(const uint32_t *p, uint32_t s);
uint32_t zl_emit(const uint32_t *p, uint32_t s);
uint32_t zl_spare(const uint32_t *p);
uint32_t zl_inflate(const uint32_t *p, uint32_t s, uint32_t len);
uint32_t zl_put(uint32_t s, uint32_t b);
uint32_t zl_table(const uint32_t *p);

#define ZL_STR2(x) #x
#define ZL_STR(x) ZL_STR2(x)

#endif
