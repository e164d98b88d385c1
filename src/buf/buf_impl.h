/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals shared by the mbuf pool, the mbuf operations and the socket
 * buffers. Not installed. */
#ifndef CN_BUF_IMPL_H
#define CN_BUF_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cachenet/mbuf.h"
#include "cn_internal.h"

#ifndef NDEBUG
#define CN_MBUF_DEBUG 1
#else
#define CN_MBUF_DEBUG 0
#endif

#define CN__COOKIE_LIVE 0x6d627566u /* "mbuf" */
#define CN__COOKIE_FREE 0xf7eeb0ffu
#define CN__POISON 0x6b

/* One thread's cache of a pool. Only the owning thread writes it; stats
 * read len and the counters with relaxed loads (approximate while the
 * owner runs, exact when it is quiet). */
struct cn__mcache {
	uint32_t len;
	uint32_t owned;   /* 0 free slot, 1 claimed (CAS) */
	uint64_t gets, fails;
	void *objs[];     /* capacity: pool->cache_cap */
};

struct cn_mbuf_pool {
	/* line 0: what every get/put reads */
	uint64_t uid;           /* never reused: tells stale TLS entries apart */
	uint32_t kind;
	uint32_t cache_size;
	uint32_t flush_thresh;
	uint32_t cache_cap;
	uint32_t obj_size;
	uint32_t data_size;
	uint32_t headroom;
	uint32_t count;
	uint8_t *mem;           /* count * obj_size, 64-byte aligned */
	uint8_t *mem_end;

	/* shared pool: a LIFO stack under the lock */
	pthread_mutex_t lock __attribute__((aligned(CN_CACHE_LINE)));
	void **stk;
	uint32_t nfree;
	uint32_t high_water;
	uint64_t sh_gets, sh_fails;

	uint8_t *caches;        /* max_threads slots of cache_stride bytes */
	uint32_t cache_stride;
	uint32_t nslots;
	struct cn_mbuf_pool_params params;
	char name[32];
	/* cluster pools over caller memory (params.ext_mem): cluster i's
	 * bytes at ext + i * ext_stride, its header at mem + i * obj_size */
	uint8_t *ext;
	uint32_t ext_stride;
	uint64_t ext_iova;
};

void cn__mbuf_panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A free of an mbuf that is free already, or of a pointer that is not an
 * mbuf of its pool: a message naming it, then abort (every build). */
CN_INTERNAL void cn__mbuf_bad_free(const struct cn_mbuf *m, bool twice) __attribute__((noreturn, cold));

/* Pool object level (any kind). 0 or -ENOBUFS, all or nothing. */
int cn__pool_get(struct cn_mbuf_pool *p, void **objs, unsigned n);
void cn__pool_put(struct cn_mbuf_pool *p, void *const *objs, unsigned n);

static inline uint8_t *cn__mbuf_inline(struct cn_mbuf *m)
{
	return (uint8_t *)(m + 1);
}

/* Thread-local map pool uid -> this thread's cache. Behind the two MRU
 * entries below: direct-mapped (one compare), then probed. */
#define CN__TLS_N 16
struct cn__tls_ent {
	uint64_t uid;
	struct cn_mbuf_pool *pool;
	struct cn__mcache *c;
};
/* initial-exec: a fixed offset from the thread pointer, no __tls_get_addr
 * call on every get/free (the library is built PIC, whose default model
 * calls it). The table is 384 bytes, well inside glibc's static TLS
 * surplus, so even a dlopen()ed libcachenet gets it. */
extern __thread struct cn__tls_ent cn__tls[CN__TLS_N]
	__attribute__((visibility("hidden"), tls_model("initial-exec")));

/* The two pools this thread used last, most recent first, at fixed TLS
 * addresses. A free finds its pool through the mbuf (m->pool), so with
 * the direct-mapped table its cache pointer would wait for two dependent
 * loads (m->pool, then p->uid for the index) before c->len could even be
 * addressed; here the entries' loads do not depend on p at all, and p
 * only feeds a compare the branch predictor runs ahead of. The uid
 * compare keeps a pool created at a destroyed pool's address from
 * matching a stale entry. Two entries: a packet's work alternates between
 * a small pool and a cluster pool. */
extern __thread struct cn__tls_ent cn__tls_mru[2]
	__attribute__((visibility("hidden"), tls_model("initial-exec")));

struct cn__mcache *cn__tcache_slow(struct cn_mbuf_pool *p);
struct cn__mcache *cn__tcache_miss(struct cn_mbuf_pool *p);
int cn__pool_get_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void **objs, unsigned n);
void cn__pool_put_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void *const *objs, unsigned n);
void *cn__pool_get1_slow(struct cn_mbuf_pool *p, struct cn__mcache *c);
void cn__pool_put1_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void *o);

#define CN__RELAXED_ADD(x, v) __atomic_store_n(&(x), (x) + (v), __ATOMIC_RELAXED)

/* This thread's cache of @p p: one of the two MRU entries' if either is
 * p's, else with @p miss (a constant) the table's (cn__tcache_miss: NULL
 * when the pool has no cache), without it NULL. An MRU entry always has
 * a cache: telling the compiler so drops the NULL test from the callers'
 * fast paths. (The miss call stays in this function's own tail: behind a
 * NULL test in a wrapper, gcc keeps the free paths' values in
 * callee-saved registers, 4 instructions more per free.) */
static inline __attribute__((always_inline)) struct cn__mcache *
cn__tcache_lookup(struct cn_mbuf_pool *p, const bool miss)
{
	struct cn__mcache *c;

	if (CN_LIKELY(cn__tls_mru[0].pool == p && cn__tls_mru[0].uid == p->uid)) {
		c = cn__tls_mru[0].c;
		if (c == NULL)
			__builtin_unreachable();
		return c;
	}
	if (CN_LIKELY(cn__tls_mru[1].pool == p && cn__tls_mru[1].uid == p->uid)) {
		c = cn__tls_mru[1].c;
		if (c == NULL)
			__builtin_unreachable();
		return c;
	}
	return miss ? cn__tcache_miss(p) : NULL;
}

/* @p p's cache in the MRU entries, or NULL. */
static inline struct cn__mcache *cn__tcache_mru(struct cn_mbuf_pool *p)
{
	return cn__tcache_lookup(p, false);
}

/* @p p's cache (the MRU entries, then the table), NULL when the pool has
 * none. */
static inline struct cn__mcache *cn__tcache(struct cn_mbuf_pool *p)
{
	return cn__tcache_lookup(p, true);
}

/* One object: a cache hit is a pop from the LIFO, no lock, no atomic RMW.
 * len is read once: reading it back after the store would put a
 * store-to-load forwarding (~5 cycles) on the get -> free -> get chain. */
static inline void *cn__pool_get1(struct cn_mbuf_pool *p)
{
	struct cn__mcache *c = cn__tcache(p);

	if (CN_LIKELY(c != NULL)) {
		uint32_t n = c->len;
		if (CN_LIKELY(n > 0)) {
			void *o = c->objs[n - 1];
			__atomic_store_n(&c->len, n - 1, __ATOMIC_RELAXED);
			CN__RELAXED_ADD(c->gets, 1);
			if (o == NULL) /* caches hold objects only */
				__builtin_unreachable();
			return o;
		}
	}
	return cn__pool_get1_slow(p, c);
}

/* The mbuf being freed lies in its pool's memory (every build; the pool's
 * first line is read by the put anyway). Debug builds also check that it
 * starts an object. */
static inline void cn__mbuf_check_owner(const struct cn_mbuf *m)
{
	const struct cn_mbuf_pool *p = m->pool;

	if (CN_UNLIKELY(p == NULL || (const uint8_t *)m < p->mem || (const uint8_t *)m >= p->mem_end))
		cn__mbuf_bad_free(m, false);
}

/* @p o onto @p p's cache @p c: false, and nothing done, when c is at the
 * pool's flush threshold (the caller's slow path flushes). Puts are not
 * counted: puts == gets - in_use. */
static inline bool cn__mcache_push(const struct cn_mbuf_pool *p, struct cn__mcache *c, void *o)
{
	uint32_t n = c->len;

	if (CN_UNLIKELY(n >= p->flush_thresh))
		return false;
	c->objs[n] = o;
	__atomic_store_n(&c->len, n + 1, __ATOMIC_RELAXED);
	return true;
}

static inline void cn__pool_put1(struct cn_mbuf_pool *p, void *o)
{
	struct cn__mcache *c = cn__tcache(p);

	if (CN_LIKELY(c != NULL) && CN_LIKELY(cn__mcache_push(p, c, o)))
		return;
	cn__pool_put1_slow(p, c, o);
}

/* Segment objects (mbuf_core.h): [data mbuf][companion][shared][storage]. */
static inline struct cn_mbuf_shared *cn__seg_shared(struct cn_mbuf *m0)
{
	return (struct cn_mbuf_shared *)((uint8_t *)m0 + 2 * sizeof(struct cn_mbuf));
}

/* Descriptor @p i (0 data mbuf, 1 companion) of the segment object whose
 * storage header is @p sh. */
static inline struct cn_mbuf *cn__seg_mbuf(const struct cn_mbuf_shared *sh, unsigned i)
{
	return (struct cn_mbuf *)((uintptr_t)sh - 2 * sizeof(struct cn_mbuf)) + i;
}

/* True when @p m is one of the two descriptors embedded in its own
 * segment object (which never return to a pool by themselves). */
static inline bool cn__seg_embedded(const struct cn_mbuf *m)
{
	const struct cn_mbuf_shared *sh = m->shared;

	return sh != NULL && sh->kind == CN_MBUF_STORAGE_SEG &&
	       (m == cn__seg_mbuf(sh, 0) || m == cn__seg_mbuf(sh, 1));
}

/* Debug hooks; empty in release builds. */
void cn__dbg_mbuf_got(struct cn_mbuf *m);
void cn__dbg_mbuf_put(struct cn_mbuf *m);
void cn__dbg_cluster_got(struct cn_mbuf_shared *sh);
void cn__dbg_cluster_put(struct cn_mbuf_shared *sh);
void cn__dbg_seg_got(struct cn_mbuf_shared *sh);
void cn__dbg_seg_put(struct cn_mbuf_shared *sh);
void cn__dbg_embedded_got(struct cn_mbuf *m);
void cn__dbg_embedded_put(struct cn_mbuf *m);

#endif
