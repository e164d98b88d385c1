/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file common.h
 * What every cachenet header shares: the language requirement, the
 * attributes that let the compiler check calls, big-endian value types, and
 * the rule for the `size` field of parameter structs.
 *
 * Language: C11 or later (gnu11 is fine), or C++11 or later. The headers
 * use static_assert, _Alignas-style attributes and anonymous unions;
 * an older compiler mode stops here with a message instead of an obscure
 * error further down.
 *
 * Byte order. Every IPv4 address and every TCP/UDP port in a cachenet
 * struct or argument is in network byte order and typed cn_be32_t or
 * cn_be16_t; every other number is in host order. cn_htobe16() and
 * friends convert; CN_BE16() and CN_BE32() do it in constant expressions
 * (static initialisers, case labels).
 *
 * Parameter structs (cn_net_params, cn_tcp_params, ...) start with
 * `uint32_t size`, and a struct that is all zero is valid: every zero field
 * means its documented default. `size` is sizeof the struct as the caller
 * was compiled, or 0 for "this header's size". A library newer than the
 * caller reads the fields the caller's size covers and takes the defaults
 * for the rest; a library older than the caller accepts the struct when
 * every byte past the end it knows is zero, and fails with EINVAL
 * otherwise.
 *
 * Thread safety: nothing here has state.
 */
#ifndef CACHENET_COMMON_H
#define CACHENET_COMMON_H

#if defined(__cplusplus)
#if __cplusplus < 201103L
#error "cachenet needs C++11 or later"
#endif
#elif !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "cachenet needs C11 or later: compile with -std=c11 or -std=gnu11 (or newer)"
#endif

#include <stdint.h>

/** @cond CN_INTERNAL */
#if defined(__GNUC__) || defined(__clang__)
#define CN_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#define CN_NONNULL_ALL __attribute__((nonnull))
#else
#define CN_NONNULL(...)
#define CN_NONNULL_ALL
#endif
/** @endcond */

/** A 16-bit value in network byte order (big-endian), as on the wire. */
typedef uint16_t cn_be16_t;
/** A 32-bit value in network byte order (big-endian), as on the wire. */
typedef uint32_t cn_be32_t;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/** @p x (host order) as a cn_be16_t, usable in constant expressions. */
#define CN_BE16(x) ((cn_be16_t)(x))
/** @p x (host order) as a cn_be32_t, usable in constant expressions. */
#define CN_BE32(x) ((cn_be32_t)(x))
#else
/** @p x (host order) as a cn_be16_t, usable in constant expressions. */
#define CN_BE16(x) ((cn_be16_t)((((uint16_t)(x) & 0xffu) << 8) | ((uint16_t)(x) >> 8)))
/** @p x (host order) as a cn_be32_t, usable in constant expressions. */
#define CN_BE32(x)                                                                        \
	((cn_be32_t)((((uint32_t)(x) & 0xffu) << 24) | (((uint32_t)(x) & 0xff00u) << 8) |  \
		     (((uint32_t)(x) >> 8) & 0xff00u) | ((uint32_t)(x) >> 24)))
#endif

/** Host order to network order, 16 bits. */
static inline cn_be16_t cn_htobe16(uint16_t x) { return CN_BE16(x); }
/** Network order to host order, 16 bits. */
static inline uint16_t cn_be16toh(cn_be16_t x) { return (uint16_t)CN_BE16(x); }
/** Host order to network order, 32 bits. */
static inline cn_be32_t cn_htobe32(uint32_t x) { return CN_BE32(x); }
/** Network order to host order, 32 bits. */
static inline uint32_t cn_be32toh(cn_be32_t x) { return (uint32_t)CN_BE32(x); }

/**
 * An IPv4 address a.b.c.d as a cn_be32_t, usable in constant expressions:
 * CN_IPV4(10, 0, 0, 1).
 */
#define CN_IPV4(a, b, c, d)                                                               \
	CN_BE32(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) |    \
		(uint32_t)(d))

#endif /* CACHENET_COMMON_H */
