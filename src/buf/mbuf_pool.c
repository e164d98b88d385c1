/* SPDX-License-Identifier: BSD-2-Clause */
/* Fixed-size object pools with per-thread LIFO caches (the scheme of DPDK's
 * rte_mempool_do_generic_get/put, spelled our way): a shared stack under a
 * mutex, touched only in bulk, and per-thread caches that serve single gets
 * and frees without a lock or an atomic read-modify-write.
 *
 * Cache slots live in the pool; a thread finds its slot through a small
 * thread-local table keyed by the pool's never-reused uid, so a table entry
 * left behind by a destroyed pool can never match a new pool. Live pools
 * are kept in a registry so that a thread's exit (pthread key destructor)
 * can flush its caches back into pools that still exist. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buf_impl.h"

__thread struct cn__tls_ent cn__tls[CN__TLS_N] __attribute__((tls_model("initial-exec")));
__thread struct cn__tls_ent cn__tls_mru[2] __attribute__((tls_model("initial-exec")));

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cn_mbuf_pool **reg;
static unsigned reg_n, reg_cap;
static uint64_t next_uid = 1;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

void cn__mbuf_panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cachenet mbuf: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void cn__mbuf_bad_free(const struct cn_mbuf *m, bool twice)
{
	const struct cn_mbuf_pool *p = m->pool;
	bool ours = p != NULL && (const uint8_t *)m >= p->mem && (const uint8_t *)m < p->mem_end;

	if (twice)
		cn__mbuf_panic("double free of mbuf %p (pool \"%s\")", (const void *)m,
			       ours ? p->name : "?");
	cn__mbuf_panic("free of %p, which is not an mbuf of its pool %p", (const void *)m,
		       (const void *)p);
}

bool cn_mbuf_debug_enabled(void)
{
	return CN_MBUF_DEBUG;
}

static inline struct cn__mcache *slot(struct cn_mbuf_pool *p, unsigned i)
{
	return (struct cn__mcache *)(p->caches + (size_t)i * p->cache_stride);
}

static bool reg_has(const struct cn_mbuf_pool *p, uint64_t uid)
{
	for (unsigned i = 0; i < reg_n; i++)
		if (reg[i] == p && p->uid == uid)
			return true;
	return false;
}

/* A pool's object memory, @p len bytes (free()d at destroy). From 2 MiB
 * up it starts on a 2 MiB boundary and is advised onto transparent huge
 * pages (before the initialising loop first touches it): objects whose
 * inline storage spaces their headers a page or more apart would
 * otherwise cost a data-TLB miss per header touched, and under nested
 * paging each walk is dozens of dependent loads. Refused advice leaves
 * small pages. */
static uint8_t *pool_mem(size_t len)
{
	const size_t huge = (size_t)2 << 20;
	void *m;

	if (posix_memalign(&m, len >= huge ? huge : CN_CACHE_LINE, len) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (len >= huge)
		(void)madvise(m, len & ~(huge - 1), MADV_HUGEPAGE);
#endif
	return m;
}

/* ------------------------------------------------------------ shared stack */

/* Caller holds p->lock. */
static void sample_high_water(struct cn_mbuf_pool *p)
{
	uint32_t out = p->count - p->nfree;

	if (out > p->high_water)
		p->high_water = out;
}

static void cache_flush_locked(struct cn_mbuf_pool *p, struct cn__mcache *c, uint32_t keep)
{
	uint32_t n = c->len - keep;

	memcpy(&p->stk[p->nfree], &c->objs[keep], n * sizeof(void *));
	p->nfree += n;
	__atomic_store_n(&c->len, keep, __ATOMIC_RELAXED);
}

int cn__pool_get_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void **objs, unsigned n)
{
	if (c != NULL && n <= c->len) {
		for (unsigned i = 0; i < n; i++)
			objs[i] = c->objs[c->len - 1 - i];
		__atomic_store_n(&c->len, c->len - n, __ATOMIC_RELAXED);
		CN__RELAXED_ADD(c->gets, n);
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	if (c != NULL && n <= p->cache_size) {
		/* Refill: enough for this request plus a full cache, so the
		 * next cache_size gets take no lock. */
		uint32_t want = p->cache_size + n - c->len;
		uint32_t take = want <= p->nfree ? want : p->nfree;
		if (c->len + take >= n) {
			p->nfree -= take;
			memcpy(&c->objs[c->len], &p->stk[p->nfree], take * sizeof(void *));
			__atomic_store_n(&c->len, c->len + take, __ATOMIC_RELAXED);
			sample_high_water(p);
			pthread_mutex_unlock(&p->lock);
			for (unsigned i = 0; i < n; i++)
				objs[i] = c->objs[c->len - 1 - i];
			__atomic_store_n(&c->len, c->len - n, __ATOMIC_RELAXED);
			CN__RELAXED_ADD(c->gets, n);
			return 0;
		}
	} else if (n <= p->nfree) {
		for (unsigned i = 0; i < n; i++)
			objs[i] = p->stk[p->nfree - 1 - i];
		p->nfree -= n;
		p->sh_gets += n;
		sample_high_water(p);
		pthread_mutex_unlock(&p->lock);
		return 0;
	} else if (c != NULL && c->len + p->nfree >= n) {
		/* A bulk larger than the cache: drain both. */
		uint32_t from_cache = c->len;
		for (unsigned i = 0; i < from_cache; i++)
			objs[i] = c->objs[c->len - 1 - i];
		__atomic_store_n(&c->len, 0, __ATOMIC_RELAXED);
		CN__RELAXED_ADD(c->gets, from_cache);
		for (unsigned i = from_cache; i < n; i++)
			objs[i] = p->stk[--p->nfree];
		p->sh_gets += n - from_cache;
		sample_high_water(p);
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	p->sh_fails++;
	pthread_mutex_unlock(&p->lock);
	return -ENOBUFS;
}

void cn__pool_put_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void *const *objs, unsigned n)
{
	if (c != NULL && n <= p->cache_size) {
		memcpy(&c->objs[c->len], objs, n * sizeof(void *));
		__atomic_store_n(&c->len, c->len + n, __ATOMIC_RELAXED);
		if (c->len > p->flush_thresh) {
			/* Flush the newest objects above cache_size: the
			 * ones left are still the most recently used. */
			pthread_mutex_lock(&p->lock);
			cache_flush_locked(p, c, p->cache_size);
			pthread_mutex_unlock(&p->lock);
		}
		return;
	}
	pthread_mutex_lock(&p->lock);
	memcpy(&p->stk[p->nfree], objs, n * sizeof(void *));
	p->nfree += n;
	pthread_mutex_unlock(&p->lock);
}

/* Out of line, so that the inlined fast paths need no stack frame. */
__attribute__((noinline)) void *cn__pool_get1_slow(struct cn_mbuf_pool *p, struct cn__mcache *c)
{
	void *o;

	if (cn__pool_get_slow(p, c, &o, 1) < 0)
		return NULL;
	return o;
}

__attribute__((noinline)) void cn__pool_put1_slow(struct cn_mbuf_pool *p, struct cn__mcache *c, void *o)
{
	cn__pool_put_slow(p, c, &o, 1);
}

/* Forget @p uid in the MRU pair (its pool is going away from this thread). */
static void mru_forget(uint64_t uid)
{
	for (unsigned i = 0; i < 2; i++)
		if (cn__tls_mru[i].uid == uid) {
			cn__tls_mru[i].uid = 0;
			cn__tls_mru[i].pool = NULL;
		}
}

/* Neither MRU entry: the direct-mapped table (then the probe), and the
 * pool becomes the most recent. */
__attribute__((noinline)) struct cn__mcache *cn__tcache_miss(struct cn_mbuf_pool *p)
{
	struct cn__tls_ent *e = &cn__tls[p->uid & (CN__TLS_N - 1)];
	struct cn__mcache *c;

	if (CN_LIKELY(e->uid == p->uid))
		c = e->c;
	else if (p->cache_size == 0 || (c = cn__tcache_slow(p)) == NULL)
		return NULL;
	cn__tls_mru[1] = cn__tls_mru[0];
	cn__tls_mru[0].uid = p->uid;
	cn__tls_mru[0].pool = p;
	cn__tls_mru[0].c = c;
	return c;
}

int cn__pool_get(struct cn_mbuf_pool *p, void **objs, unsigned n)
{
	struct cn__mcache *c = cn__tcache(p);

	if (n == 1) {
		void *o = cn__pool_get1(p);
		if (o == NULL)
			return -ENOBUFS;
		objs[0] = o;
		return 0;
	}
	return cn__pool_get_slow(p, c, objs, n);
}

void cn__pool_put(struct cn_mbuf_pool *p, void *const *objs, unsigned n)
{
	if (n == 1) {
		cn__pool_put1(p, objs[0]);
		return;
	}
	cn__pool_put_slow(p, cn__tcache(p), objs, n);
}

/* ------------------------------------------------------------ thread caches */

static void release_slot(struct cn_mbuf_pool *p, struct cn__mcache *c)
{
	pthread_mutex_lock(&p->lock);
	p->sh_gets += c->gets;
	p->sh_fails += c->fails;
	c->gets = c->fails = 0;
	cache_flush_locked(p, c, 0);
	pthread_mutex_unlock(&p->lock);
	__atomic_store_n(&c->owned, 0, __ATOMIC_RELEASE);
}

/* At thread exit: give every cache back to its pool if the pool lives. */
static void thread_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < CN__TLS_N; i++) {
		struct cn__tls_ent *e = &cn__tls[i];
		if (e->uid != 0 && reg_has(e->pool, e->uid))
			release_slot(e->pool, e->c);
		e->uid = 0;
	}
	memset(cn__tls_mru, 0, sizeof(cn__tls_mru));
	pthread_mutex_unlock(&reg_lock);
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		cn__mbuf_panic("pthread_key_create failed");
}

struct cn__mcache *cn__tcache_slow(struct cn_mbuf_pool *p)
{
	struct cn__tls_ent *free_e = NULL;

	for (unsigned i = 0; i < CN__TLS_N; i++) {
		struct cn__tls_ent *e = &cn__tls[(p->uid + i) & (CN__TLS_N - 1)];
		if (e->uid == p->uid)
			return e->c;
		if (e->uid == 0 && free_e == NULL)
			free_e = e;
	}
	if (free_e == NULL) {
		/* Full: forget entries of pools destroyed since. */
		pthread_mutex_lock(&reg_lock);
		for (unsigned i = 0; i < CN__TLS_N; i++)
			if (!reg_has(cn__tls[i].pool, cn__tls[i].uid)) {
				mru_forget(cn__tls[i].uid);
				cn__tls[i].uid = 0;
			}
		pthread_mutex_unlock(&reg_lock);
		for (unsigned i = 0; i < CN__TLS_N && free_e == NULL; i++)
			if (cn__tls[(p->uid + i) & (CN__TLS_N - 1)].uid == 0)
				free_e = &cn__tls[(p->uid + i) & (CN__TLS_N - 1)];
		if (free_e == NULL)
			return NULL; /* 16 live pools in use by this thread: go uncached */
	}
	for (unsigned i = 0; i < p->nslots; i++) {
		struct cn__mcache *c = slot(p, i);
		uint32_t zero = 0;
		if (__atomic_load_n(&c->owned, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&c->owned, &zero, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			pthread_once(&exit_once, make_key);
			pthread_setspecific(exit_key, (void *)1);
			free_e->pool = p;
			free_e->c = c;
			free_e->uid = p->uid;
			return c;
		}
	}
	return NULL; /* all slots taken: this thread works uncached */
}

void cn_mbuf_pool_thread_flush(struct cn_mbuf_pool *p)
{
	for (unsigned i = 0; i < CN__TLS_N; i++) {
		struct cn__tls_ent *e = &cn__tls[i];
		if (e->uid == p->uid) {
			release_slot(p, e->c);
			e->uid = 0;
		}
	}
	mru_forget(p->uid);
}

/* ------------------------------------------------------------ create/destroy */

/* The pool's memory, what of it was allocated (a zeroed pool holds NULLs). */
static void pool_free(struct cn_mbuf_pool *p)
{
	free(p->caches);
	free(p->mem);
	free(p->stk);
	free(p);
}

struct cn_mbuf_pool *cn_mbuf_pool_create(const struct cn_mbuf_pool_params *pp)
{
	struct cn_mbuf_pool *p;
	struct cn_mbuf_pool_params q;
	size_t hdr;

	if (pp == NULL || cn__params_copy(&q, sizeof(q), pp) < 0)
		return cn__fail(EINVAL);
	if (q.kind == CN_MBUF_POOL_DEFAULT)
		q.kind = CN_MBUF_POOL_SMALL;
	if (q.count == 0)
		q.count = CN_MBUF_POOL_COUNT_DEFAULT;
	pp = &q;
	if ((pp->kind != CN_MBUF_POOL_SMALL && pp->kind != CN_MBUF_POOL_CLUSTER &&
	     pp->kind != CN_MBUF_POOL_SEG) ||
	    (pp->kind == CN_MBUF_POOL_SEG && (pp->small == NULL || pp->small->kind != CN_MBUF_POOL_SMALL)))
		return cn__fail(EINVAL);
	if (q.kind != CN_MBUF_POOL_SEG)
		q.small = NULL;
	if (q.data_size == 0)
		q.data_size = q.kind == CN_MBUF_POOL_SMALL ? CN_MBUF_SMALL_DATA
			      : q.kind == CN_MBUF_POOL_SEG ? CN_MBUF_SEG_DATA : CN_MBUF_CLUSTER_SIZE;
	if (q.headroom == 0 && q.kind != CN_MBUF_POOL_CLUSTER)
		q.headroom = CN_MBUF_SMALL_HEADROOM < q.data_size ? CN_MBUF_SMALL_HEADROOM : 0;
	if (q.headroom == CN_MBUF_NO_HEADROOM)
		q.headroom = 0;
	if (q.max_threads == 0)
		q.max_threads = CN_MBUF_MAX_THREADS;
	if (q.headroom >= q.data_size || q.cache_size > q.count || q.data_size > (1u << 30) ||
	    q.headroom > UINT16_MAX)
		return cn__fail(EINVAL);
	if (q.ext_mem != NULL) {
		if (q.ext_stride == 0)
			q.ext_stride = q.data_size;
		/* the region's last byte and its last I/O address must exist */
		if (q.kind != CN_MBUF_POOL_CLUSTER || q.ext_stride < q.data_size ||
		    (uint64_t)q.count * q.ext_stride > (uint64_t)(UINTPTR_MAX - (uintptr_t)q.ext_mem) ||
		    (uint64_t)q.count * q.ext_stride > UINT64_MAX - 1 - q.ext_iova)
			return cn__fail(EINVAL);
	} else {
		q.ext_stride = 0;
		q.ext_iova = 0;
	}
	hdr = q.kind == CN_MBUF_POOL_SMALL ? sizeof(struct cn_mbuf)
	      : q.kind == CN_MBUF_POOL_SEG ? CN_MBUF_SEG_HDR_BYTES : sizeof(struct cn_mbuf_shared);

	p = cn__zalloc_lines(sizeof(*p));
	if (p == NULL)
		return NULL;
	p->kind = q.kind;
	p->count = q.count;
	p->data_size = q.data_size;
	p->headroom = q.headroom;
	/* over caller memory an object is its storage header alone */
	p->obj_size = (uint32_t)CN_CACHE_ROUND(hdr + (q.ext_mem ? 0 : q.data_size));
	p->ext = q.ext_mem;
	p->ext_stride = q.ext_stride;
	p->ext_iova = q.ext_iova;
	p->cache_size = q.cache_size;
	p->flush_thresh = q.cache_size + q.cache_size / 2;
	p->cache_cap = p->flush_thresh + q.cache_size + 1;
	p->nslots = q.cache_size ? q.max_threads : 0;
	p->cache_stride = (uint32_t)CN_CACHE_ROUND(sizeof(struct cn__mcache) + p->cache_cap * sizeof(void *));
	snprintf(p->name, sizeof(p->name), "%s", q.name ? q.name : "mbuf");
	q.name = p->name;
	p->params = q;
	pthread_mutex_init(&p->lock, NULL);

	size_t memlen = (size_t)p->count * p->obj_size;
	p->stk = malloc((size_t)p->count * sizeof(void *));
	if (p->stk == NULL || (p->mem = pool_mem(memlen)) == NULL)
		goto nomem;
	p->mem_end = p->mem + memlen;
	if (p->nslots) {
		if (posix_memalign((void **)&p->caches, CN_CACHE_LINE, (size_t)p->nslots * p->cache_stride) != 0)
			goto nomem;
		memset(p->caches, 0, (size_t)p->nslots * p->cache_stride);
	}

	for (uint32_t i = 0; i < p->count; i++) {
		uint8_t *o = p->mem + (size_t)i * p->obj_size;
		if (q.kind == CN_MBUF_POOL_SMALL) {
			struct cn_mbuf *m = (struct cn_mbuf *)o;
			memset(m, 0, sizeof(*m));
			m->buf = cn__mbuf_inline(m);
			m->buf_len = p->data_size;
			m->pool_hdroom = (uint16_t)p->headroom;
			m->pool = p;
			m->flags = CN_MBUF_F_FREE;
			m->cookie = CN__COOKIE_FREE;
			if (CN_MBUF_DEBUG)
				memset(m->buf, CN__POISON, p->data_size);
		} else if (q.kind == CN_MBUF_POOL_SEG) {
			struct cn_mbuf_shared *sh = cn__seg_shared((struct cn_mbuf *)o);
			memset(o, 0, CN_MBUF_SEG_HDR_BYTES);
			sh->kind = CN_MBUF_STORAGE_SEG;
			sh->size = p->data_size;
			sh->base = o + CN_MBUF_SEG_HDR_BYTES;
			sh->pool = p;
			sh->cookie = CN__COOKIE_FREE;
			for (unsigned k = 0; k < 2; k++) {
				struct cn_mbuf *m = cn__seg_mbuf(sh, k);
				/* Derived mbufs come from the small pool. */
				m->pool = q.small;
				m->pool_hdroom = (uint16_t)q.small->headroom;
				m->shared = sh;
				m->buf = sh->base;
				m->buf_len = p->data_size;
				m->flags = CN_MBUF_F_FREE;
				m->cookie = CN__COOKIE_FREE;
			}
			if (CN_MBUF_DEBUG)
				memset(sh->base, CN__POISON, p->data_size);
		} else {
			struct cn_mbuf_shared *sh = (struct cn_mbuf_shared *)o;
			memset(sh, 0, sizeof(*sh));
			sh->kind = CN_MBUF_STORAGE_CLUSTER;
			sh->size = p->data_size;
			sh->base = p->ext ? p->ext + (size_t)i * p->ext_stride : o + sizeof(*sh);
			sh->pool = p;
			sh->cookie = CN__COOKIE_FREE;
			if (CN_MBUF_DEBUG)
				memset(sh->base, CN__POISON, p->data_size);
		}
		/* Highest address at the bottom: the first gets come out in
		 * address order, which prefetchers like. */
		p->stk[p->count - 1 - i] = o;
	}
	p->nfree = p->count;

	pthread_mutex_lock(&reg_lock);
	p->uid = next_uid++;
	if (reg_n == reg_cap) {
		unsigned nc = reg_cap ? reg_cap * 2 : 16;
		struct cn_mbuf_pool **nr = realloc(reg, nc * sizeof(*nr));
		if (nr == NULL) {
			pthread_mutex_unlock(&reg_lock);
			goto nomem;
		}
		reg = nr;
		reg_cap = nc;
	}
	reg[reg_n++] = p;
	pthread_mutex_unlock(&reg_lock);
	return p;
nomem:
	pool_free(p);
	return cn__fail(ENOMEM);
}

int cn_mbuf_pool_destroy(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;

	if (p == NULL)
		return 0;
	pthread_mutex_lock(&reg_lock);
	CN_SWAP_REMOVE(reg, reg_n, p);
	pthread_mutex_unlock(&reg_lock);
	for (unsigned i = 0; i < CN__TLS_N; i++)
		if (cn__tls[i].uid == p->uid)
			cn__tls[i].uid = 0;
	mru_forget(p->uid);
	cn_mbuf_pool_stats(p, &st);
	pthread_mutex_destroy(&p->lock);
	pool_free(p);
	return st.in_use ? -EBUSY : 0;
}

void cn_mbuf_pool_stats(const struct cn_mbuf_pool *cp, struct cn_mbuf_pool_stats *st)
{
	struct cn_mbuf_pool *p = (struct cn_mbuf_pool *)cp;
	uint64_t gets, fails;
	uint32_t cached = 0;

	pthread_mutex_lock(&p->lock);
	gets = p->sh_gets;
	fails = p->sh_fails;
	for (unsigned i = 0; i < p->nslots; i++) {
		struct cn__mcache *c = slot(p, i);
		cached += __atomic_load_n(&c->len, __ATOMIC_RELAXED);
		gets += __atomic_load_n(&c->gets, __ATOMIC_RELAXED);
		fails += __atomic_load_n(&c->fails, __ATOMIC_RELAXED);
	}
	st->count = p->count;
	st->avail = p->nfree;
	st->cached = cached;
	st->in_use = p->count - p->nfree - cached;
	st->high_water = p->high_water;
	st->gets = gets;
	st->puts = gets - st->in_use;
	st->fails = fails;
	pthread_mutex_unlock(&p->lock);
}

const struct cn_mbuf_pool_params *cn_mbuf_pool_params(const struct cn_mbuf_pool *p)
{
	return &p->params;
}

/* ------------------------------------------------------------ I/O addresses */

/* Storage bytes of object i start at base(i) and run data_size bytes. */
static uint8_t *obj_bytes(const struct cn_mbuf_pool *p, uint32_t i)
{
	uint8_t *o = p->mem + (size_t)i * p->obj_size;

	if (p->ext)
		return p->ext + (size_t)i * p->ext_stride;
	return p->kind == CN_MBUF_POOL_SMALL ? o + sizeof(struct cn_mbuf)
	       : p->kind == CN_MBUF_POOL_SEG ? o + CN_MBUF_SEG_HDR_BYTES
					     : o + sizeof(struct cn_mbuf_shared);
}

uint64_t cn_mbuf_pool_iova(const struct cn_mbuf_pool *p, const void *addr)
{
	const uint8_t *a = addr;
	const uint8_t *lo = p->ext ? p->ext : p->mem;
	uint32_t stride = p->ext ? p->ext_stride : p->obj_size;
	uint64_t i;

	if (a < lo)
		return UINT64_MAX;
	i = (uint64_t)(a - lo) / stride;
	if (i >= p->count || a >= obj_bytes(p, (uint32_t)i) + p->data_size ||
	    a < obj_bytes(p, (uint32_t)i))
		return UINT64_MAX;
	return p->ext ? p->ext_iova + (uint64_t)(a - p->ext) : (uint64_t)(uintptr_t)a;
}

struct cn_mbuf_shared *cn_mbuf_pool_cluster_at(const struct cn_mbuf_pool *p, uint64_t iova,
					       uint32_t *off)
{
	uint64_t rel, i;
	uint8_t *b;

	if (p->kind != CN_MBUF_POOL_CLUSTER)
		return NULL;
	if (p->ext) {
		if (iova < p->ext_iova)
			return NULL;
		rel = iova - p->ext_iova;
		i = rel / p->ext_stride;
		if (i >= p->count || rel - i * p->ext_stride >= p->data_size)
			return NULL;
		if (off)
			*off = (uint32_t)(rel - i * p->ext_stride);
		return (struct cn_mbuf_shared *)(p->mem + (size_t)i * p->obj_size);
	}
	if (iova < (uintptr_t)p->mem)
		return NULL;
	rel = iova - (uintptr_t)p->mem;
	i = rel / p->obj_size;
	if (i >= p->count)
		return NULL;
	b = obj_bytes(p, (uint32_t)i);
	if (iova < (uintptr_t)b || iova >= (uintptr_t)b + p->data_size)
		return NULL;
	if (off)
		*off = (uint32_t)(iova - (uintptr_t)b);
	return (struct cn_mbuf_shared *)(p->mem + (size_t)i * p->obj_size);
}

uint64_t cn_mbuf_iova(const struct cn_mbuf *m)
{
	if (m->shared && m->shared->kind == CN_MBUF_STORAGE_CLUSTER)
		return cn_mbuf_pool_iova(m->shared->pool, m->data);
	return (uint64_t)(uintptr_t)m->data;
}

/* ------------------------------------------------------------ debug checks */

static void check_owner(struct cn_mbuf_pool *p, const void *o, const char *what)
{
	const uint8_t *b = o;

	if (p == NULL || b < p->mem || b >= p->mem_end || (size_t)(b - p->mem) % p->obj_size)
		cn__mbuf_panic("%s %p is not an object of its pool", what, o);
}

/* Every byte of a freed object still the poison? Eight at a time, one
 * test at the end: this runs on every get of a debug build, over 2 KB for
 * a cluster, and byte compares each traced by a fuzzer's coverage
 * instrumentation made it most of a fuzz target's time (not traced). */
#if defined(__clang__)
__attribute__((no_sanitize("coverage")))
#endif
static void check_poison(const uint8_t *b, size_t n, const char *what, const void *o)
{
	const uint64_t pat = 0x0101010101010101ull * (uint8_t)CN__POISON;
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		acc |= w ^ pat;
	}
	for (; i < n; i++)
		acc |= (uint64_t)(uint8_t)(b[i] ^ (uint8_t)CN__POISON);
	if (!acc)
		return;
	for (i = 0; i < n; i++)
		if (b[i] != CN__POISON)
			cn__mbuf_panic("%s %p was written after it was freed (byte %zu)", what, o, i);
}

void cn__dbg_mbuf_got(struct cn_mbuf *m)
{
	if (m->cookie != CN__COOKIE_FREE)
		cn__mbuf_panic("mbuf %p handed out but not marked free (corrupted pool)", (void *)m);
	check_poison(cn__mbuf_inline(m), m->pool->data_size, "mbuf", m);
	m->cookie = CN__COOKIE_LIVE;
}

void cn__dbg_mbuf_put(struct cn_mbuf *m)
{
	/* The release build's ownership check first, so that a foreign
	 * pointer is reported with the same message in every build. */
	cn__mbuf_check_owner(m);
	if (m->cookie == CN__COOKIE_FREE)
		cn__mbuf_panic("double free of mbuf %p", (void *)m);
	if (m->cookie != CN__COOKIE_LIVE)
		cn__mbuf_panic("free of %p, which is not a live mbuf", (void *)m);
	check_owner(m->pool, m, "mbuf");
	m->cookie = CN__COOKIE_FREE;
	memset(cn__mbuf_inline(m), CN__POISON, m->pool->data_size);
}

/* A cluster's or a segment's storage (what names it) handed out: free and
 * still poisoned, now live. */
static void shared_got(struct cn_mbuf_shared *sh, const char *what)
{
	if (sh->cookie != CN__COOKIE_FREE)
		cn__mbuf_panic("%s %p handed out but not marked free (corrupted pool)", what, (void *)sh);
	check_poison(sh->base, sh->size, what, sh);
	sh->cookie = CN__COOKIE_LIVE;
}

/* A cluster's or a segment's storage coming back: live, and owned (o, the
 * pointer its pool handed out) by the pool it names. */
static void shared_put(struct cn_mbuf_shared *sh, const char *what, const void *o)
{
	if (sh->cookie == CN__COOKIE_FREE)
		cn__mbuf_panic("double free of %s %p", what, (void *)sh);
	if (sh->cookie != CN__COOKIE_LIVE)
		cn__mbuf_panic("free of %s %p, which is not live", what, (void *)sh);
	check_owner(sh->pool, o, what);
}

void cn__dbg_cluster_got(struct cn_mbuf_shared *sh)
{
	shared_got(sh, "cluster");
}

void cn__dbg_cluster_put(struct cn_mbuf_shared *sh)
{
	shared_put(sh, "cluster", sh);
	sh->cookie = CN__COOKIE_FREE;
	memset(sh->base, CN__POISON, sh->size);
}

void cn__dbg_seg_got(struct cn_mbuf_shared *sh)
{
	shared_got(sh, "segment");
}

void cn__dbg_seg_put(struct cn_mbuf_shared *sh)
{
	shared_put(sh, "segment", cn__seg_mbuf(sh, 0));
	for (unsigned k = 0; k < 2; k++)
		if (cn__seg_mbuf(sh, k)->cookie != CN__COOKIE_FREE)
			cn__mbuf_panic("segment %p returns to its pool with descriptor %u still live "
				       "(reference count wrong)", (void *)sh, k);
	sh->cookie = CN__COOKIE_FREE;
	memset(sh->base, CN__POISON, sh->size);
}

void cn__dbg_embedded_got(struct cn_mbuf *m)
{
	if (m->cookie != CN__COOKIE_FREE)
		cn__mbuf_panic("segment descriptor %p taken while live", (void *)m);
	m->cookie = CN__COOKIE_LIVE;
}

void cn__dbg_embedded_put(struct cn_mbuf *m)
{
	if (m->cookie == CN__COOKIE_FREE)
		cn__mbuf_panic("double free of mbuf %p (segment descriptor)", (void *)m);
	if (m->cookie != CN__COOKIE_LIVE)
		cn__mbuf_panic("free of %p, which is not a live mbuf", (void *)m);
	m->cookie = CN__COOKIE_FREE;
}
