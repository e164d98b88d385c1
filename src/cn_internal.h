/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by every src/ module; never installed. */
#ifndef CN_INTERNAL_H
#define CN_INTERNAL_H

/* Functions named cn__* cross files (and ISA libraries) inside the library
 * but are not part of the ABI: hidden, so the shared object does not export
 * them although they match the version script's cn_* pattern. */
#define CN_INTERNAL __attribute__((visibility("hidden")))

/* A static function in a private header that not every includer calls
 * (such headers are how the laboratory library runs product code without
 * the product exporting internal names: src/dev/impair.h,
 * src/buf/sbchain_impl.h). */
#define CN__UNUSED __attribute__((unused))

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Branch hints for the per-packet paths: the hot case of a test that goes
 * one way on nearly every packet. */
#define CN_LIKELY(c) __builtin_expect(!!(c), 1)
#define CN_UNLIKELY(c) __builtin_expect(!!(c), 0)

/* Debug checks on the library's own invariants, never on input (input is
 * validated, counted and dropped): compiled out with NDEBUG. @p msg says
 * what broke, for the reader of the failure. */
#ifdef NDEBUG
#define CN_ASSERT(c, msg) ((void)0)
#else
#include <stdio.h>
#include <stdlib.h>
#define CN_ASSERT(c, msg)                                                                 \
	do {                                                                              \
		if (CN_UNLIKELY(!(c))) {                                                  \
			fprintf(stderr, "%s:%d: %s: assertion %s failed: %s\n", __FILE__, \
				__LINE__, __func__, #c, msg);                             \
			abort();                                                          \
		}                                                                         \
	} while (0)
#endif

/* Little-endian aarch64, where the Advanced SIMD (NEON) variants are built
 * (the public headers spell the same condition out). */
#if defined(__aarch64__) && defined(__AARCH64EL__)
#define CN_NEON 1
#endif

/* The cache line of every CPU the library targets (x86-64 and the Arm
 * cores it is built for): the unit of the hot structs' layout and of
 * aligned allocations. */
#define CN_CACHE_LINE 64
/* @p n rounded up to whole cache lines (aligned_alloc wants a multiple). */
#define CN_CACHE_ROUND(n) (((size_t)(n) + CN_CACHE_LINE - 1) & ~(size_t)(CN_CACHE_LINE - 1))

/* A caller's parameter struct (first member `uint32_t size`, common.h) into
 * dst, which has the library's size cur: size 0 means cur; a smaller size
 * (an older caller) copies what it covers and zeroes the rest; a larger one
 * (a newer caller) is accepted only when every byte past cur is zero.
 * Returns 0 or -EINVAL (size below 4, or unknown non-zero bytes). */
static inline int cn__params_copy(void *dst, size_t cur, const void *src)
{
	const unsigned char *s = src;
	uint32_t n;
	size_t i;

	/* The bytes past cur belong to a newer caller's larger struct; hide
	 * the pointer's origin so gcc's -Warray-bounds does not judge them
	 * against the older type it can see at an inlined call site. */
	__asm__("" : "+r"(s));
	memcpy(&n, s, sizeof(n));
	if (n == 0)
		n = (uint32_t)cur;
	if (n < sizeof(uint32_t))
		return -EINVAL;
	for (i = cur; i < n; i++)
		if (s[i])
			return -EINVAL;
	memset(dst, 0, cur);
	memcpy(dst, s, n < cur ? n : cur);
	return 0;
}

/* A constructor's refusal in one statement, `return cn__fail(EINVAL);`:
 * errno = @p err, and the NULL the constructor returns. */
static inline void *cn__fail(int err)
{
	errno = err;
	return NULL;
}

/* A constructor's object whose struct documents its cache lines: @p size
 * bytes rounded up to whole lines, starting on a line, zeroed. Returns it
 * (release with free()) or NULL with errno ENOMEM. */
static inline void *cn__zalloc_lines(size_t size)
{
	void *o = aligned_alloc(CN_CACHE_LINE, CN_CACHE_ROUND(size));

	if (!o)
		return cn__fail(ENOMEM);
	return memset(o, 0, size);
}

/* Takes @p x out of the unordered array @p arr of @p n entries: its slot
 * gets the last entry and @p n drops by one; nothing when @p x is absent.
 * @p arr and @p n are evaluated more than once. Cost: a scan of @p n. */
#define CN_SWAP_REMOVE(arr, n, x)                                                         \
	do {                                                                              \
		for (size_t cn__sr_i = 0; cn__sr_i < (n); cn__sr_i++)                     \
			if ((arr)[cn__sr_i] == (x)) {                                     \
				(arr)[cn__sr_i] = (arr)[--(n)];                           \
				break;                                                    \
			}                                                                 \
	} while (0)

/* Links the chain @p first .. @p last (already joined through the field
 * @p link; @p last's @p link is left as it is) after the end of the singly
 * linked list @p head .. @p tail (both NULL when empty). @p tail is
 * evaluated more than once. Cost: O(1). */
#define CN_LIST_APPEND(head, tail, first, last, link)                                     \
	do {                                                                              \
		if (tail)                                                                 \
			(tail)->link = (first);                                           \
		else                                                                      \
			(head) = (first);                                                 \
		(tail) = (last);                                                          \
	} while (0)

/* The number of elements of array @p a (an array, not a pointer). */
#define CN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Sets @p lv to @p def when it is 0: a parameter left 0 takes its
 * default. @p lv is evaluated more than once. */
#define CN_DEFAULT(lv, def)             \
	do {                            \
		if (!(lv))              \
			(lv) = (def);   \
	} while (0)

/* The name of @p i in a table of @p n names indexed by an enum's values,
 * "?" past its end or for a value the table leaves out. */
static inline const char *cn__name_of(const char *const *names, unsigned n, unsigned i)
{
	return i < n && names[i] ? names[i] : "?";
}

/* Defines `const char *fn(type v)`, an enum's name function: the name
 * the designated initializers that follow give v (`[CN_X] = "x", ...`),
 * "?" for a value they leave out (cn__name_of). */
#define CN_NAME_FN(fn, type, ...)                                                  \
	const char *fn(type v)                                                     \
	{                                                                          \
		static const char *const names_[] = { __VA_ARGS__ };               \
		return cn__name_of(names_, CN_ARRAY_LEN(names_), (unsigned)v);     \
	}

/* Loads from wire data at any alignment, in memory order (no swap). */
static inline uint16_t cn__ld16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t cn__ld32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

#endif
