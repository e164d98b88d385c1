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
 * cn_be16_t; every other number is in host order (wire.h's header
 * structs keep their other fields as the wire has them: cn_hton16()).
 * cn_htobe16() and friends convert; CN_BE16() and CN_BE32() do it in
 * constant expressions (static initialisers, case labels); cn_be16_eq()
 * compares. Define CN_STRICT_BYTE_ORDER before including any cachenet
 * header (C only) and the two types become one-member structs of the same
 * size and bits: assigning a host-order integer to one, or using one as a
 * number, is then a compile error. CN_BE16_RAW() and CN_BE16_FROM_RAW()
 * move the wire bits in and out unswapped (hashing, frame loads). Strict
 * mode is a checking build (CI, a developer's build): structs and frames
 * are laid out alike in both modes, but on x86-64 a 16-bit struct argument
 * is not promised zero-extended as a uint16_t one is (clang-built callees
 * rely on it), so ship code compiled in the default mode.
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
 * NULL. A pointer parameter that must not be NULL carries CN_NONNULL (the
 * nonnull attribute of gcc and clang): a NULL constant there draws
 * -Wnonnull, and the library does not check it at run time. Unmarked are
 * the pointers a call accepts as NULL (destructors, optional outputs,
 * constructors that fail with EINVAL: each call says so) and data pointers
 * paired with a length or count, which may be NULL when that is 0.
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

/* The byte swap of a host-order constant, as a plain integer. */
/** @cond CN_INTERNAL */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CN__SWAP16(x) ((uint16_t)(x))
#define CN__SWAP32(x) ((uint32_t)(x))
#else
#define CN__SWAP16(x) ((uint16_t)((((uint16_t)(x) & 0xffu) << 8) | ((uint16_t)(x) >> 8)))
#define CN__SWAP32(x)                                                                     \
	((uint32_t)((((uint32_t)(x) & 0xffu) << 24) | (((uint32_t)(x) & 0xff00u) << 8) |   \
		    (((uint32_t)(x) >> 8) & 0xff00u) | ((uint32_t)(x) >> 24)))
#endif
/** @endcond */

#if defined(CN_STRICT_BYTE_ORDER) && !defined(__cplusplus)
/* Strict mode (C only): the big-endian types are single-member structs,
 * so a host-order integer assigned to one, or one used as a number, is a
 * compile error. Same size, alignment and bits as the plain typedefs
 * below: code built either way links with the same library. */
typedef struct {
	uint16_t cn_be; /* the wire bytes, read as a host integer */
} cn_be16_t;
typedef struct {
	uint32_t cn_be; /* the wire bytes, read as a host integer */
} cn_be32_t;
#define CN_BE16(x) ((cn_be16_t){CN__SWAP16(x)})
#define CN_BE32(x) ((cn_be32_t){CN__SWAP32(x)})
#define CN_BE16_RAW(v) ((v).cn_be)
#define CN_BE32_RAW(v) ((v).cn_be)
#define CN_BE16_FROM_RAW(r) ((cn_be16_t){(uint16_t)(r)})
#define CN_BE32_FROM_RAW(r) ((cn_be32_t){(uint32_t)(r)})
#else
/** A 16-bit value in network byte order (big-endian), as on the wire.
 *  A plain integer by default; a struct when compiled with
 *  CN_STRICT_BYTE_ORDER defined (C), where mixing it with host-order
 *  integers fails to compile. */
typedef uint16_t cn_be16_t;
/** A 32-bit value in network byte order (big-endian), as on the wire
 *  (a struct under CN_STRICT_BYTE_ORDER, as cn_be16_t). */
typedef uint32_t cn_be32_t;
/** @p x (host order) as a cn_be16_t, usable in constant expressions
 *  (under CN_STRICT_BYTE_ORDER in initialisers only, not case labels). */
#define CN_BE16(x) ((cn_be16_t)CN__SWAP16(x))
/** @p x (host order) as a cn_be32_t, usable in constant expressions
 *  (under CN_STRICT_BYTE_ORDER in initialisers only, not case labels). */
#define CN_BE32(x) ((cn_be32_t)CN__SWAP32(x))
/** The wire bits of cn_be16_t @p v as a uint16_t, unswapped: for
 *  comparing, hashing or storing them into a byte buffer. */
#define CN_BE16_RAW(v) ((uint16_t)(v))
/** The wire bits of cn_be32_t @p v as a uint32_t, unswapped. */
#define CN_BE32_RAW(v) ((uint32_t)(v))
/** A cn_be16_t from wire bits @p r already in network order (a load
 *  from a frame), unswapped. */
#define CN_BE16_FROM_RAW(r) ((cn_be16_t)(r))
/** A cn_be32_t from wire bits @p r already in network order. */
#define CN_BE32_FROM_RAW(r) ((cn_be32_t)(r))
#endif

/** Host order to network order, 16 bits. */
static inline cn_be16_t cn_htobe16(uint16_t x) { return CN_BE16(x); }
/** Network order to host order, 16 bits. */
static inline uint16_t cn_be16toh(cn_be16_t x) { return CN__SWAP16(CN_BE16_RAW(x)); }
/** Host order to network order, 32 bits. */
static inline cn_be32_t cn_htobe32(uint32_t x) { return CN_BE32(x); }
/** Network order to host order, 32 bits. */
static inline uint32_t cn_be32toh(cn_be32_t x) { return CN__SWAP32(CN_BE32_RAW(x)); }
/** True when @p a and @p b hold the same value (either mode). */
static inline int cn_be16_eq(cn_be16_t a, cn_be16_t b) { return CN_BE16_RAW(a) == CN_BE16_RAW(b); }
/** True when @p a and @p b hold the same value (either mode). */
static inline int cn_be32_eq(cn_be32_t a, cn_be32_t b) { return CN_BE32_RAW(a) == CN_BE32_RAW(b); }

/**
 * An IPv4 address a.b.c.d as a cn_be32_t, usable in constant expressions:
 * CN_IPV4(10, 0, 0, 1).
 */
#define CN_IPV4(a, b, c, d)                                                               \
	CN_BE32(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) |    \
		(uint32_t)(d))

#endif /* CACHENET_COMMON_H */
