/* SPDX-License-Identifier: BSD-2-Clause */
/* mbuf operations: get/free, storage references, chains and surgery.
 * The contracts are in include/cachenet/mbuf.h; comments here say why. */
#include <errno.h>
#include <string.h>

#include "buf_dev.h"
#include "buf_impl.h"

/* ------------------------------------------------------------ storage refs */

/* Out of line: kept out of the inlined free fast path, whose registers
 * and stack frame it would otherwise set. */
/* Segment objects and external storage: out of line, off the cluster's
 * path. */
__attribute__((noinline)) static void storage_release_other(struct cn_mbuf_shared *sh)
{
	if (sh->kind == CN_MBUF_STORAGE_SEG) {
		/* Both descriptors are idle (each holds a reference while
		 * live): the whole object goes back. */
		if (CN_MBUF_DEBUG)
			cn__dbg_seg_put(sh);
		cn__pool_put1(sh->pool, cn__seg_mbuf(sh, 0));
	} else if (sh->free_cb != NULL) {
		sh->free_cb(sh->base, sh->opaque);
	}
}

/* The last reference gone: a cluster (every received frame's storage)
 * goes straight back to its pool's cache, inline. */
static inline void storage_release(struct cn_mbuf_shared *sh)
{
	if (CN_LIKELY(sh->kind == CN_MBUF_STORAGE_CLUSTER)) {
		if (CN_MBUF_DEBUG)
			cn__dbg_cluster_put(sh);
		cn__pool_put1(sh->pool, sh);
	} else {
		storage_release_other(sh);
	}
}

/* A holder of the only reference may use plain loads and stores: nobody
 * else can reach the count to race with it. The acquire pairs with the
 * release of the atomic decrement another holder did to bring it to 1, so
 * that holder's last accesses happen before we recycle the storage. */
static inline void storage_unref(struct cn_mbuf_shared *sh)
{
	if (__atomic_load_n(&sh->refcnt, __ATOMIC_ACQUIRE) == 1 ||
	    __atomic_sub_fetch(&sh->refcnt, 1, __ATOMIC_ACQ_REL) == 0) {
		__atomic_store_n(&sh->refcnt, 0, __ATOMIC_RELAXED);
		storage_release(sh);
	}
}

/* Taking a new reference from one we hold: at 1 we are the only holder,
 * so the increment cannot race either. */
static inline void storage_ref(struct cn_mbuf_shared *sh)
{
	if (__atomic_load_n(&sh->refcnt, __ATOMIC_RELAXED) == 1)
		__atomic_store_n(&sh->refcnt, 2, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&sh->refcnt, 1, __ATOMIC_RELAXED);
}

/* to refers to from's shared storage (one more reference), its data from
 * off bytes into from's. */
static inline void share_storage(struct cn_mbuf *to, const struct cn_mbuf *from, uint32_t off)
{
	storage_ref(from->shared);
	to->shared = from->shared;
	to->buf = from->buf;
	to->buf_len = from->buf_len;
	to->data = from->data + off;
}

/* ------------------------------------------------------------ get and free */

/* An mbuf as a get hands it out: empty at data, alone, no flags. */
static inline void mbuf_empty(struct cn_mbuf *m, uint8_t *data)
{
	m->data = data;
	m->next = NULL;
	m->len = 0;
	m->pkt_len = 0;
	m->flags = 0;
	m->nextpkt = NULL;
}

static inline void mbuf_reset(struct cn_mbuf *m)
{
	mbuf_empty(m, m->buf + m->pool_hdroom);
	if (CN_MBUF_DEBUG)
		cn__dbg_mbuf_got(m);
}

/* A segment object's data mbuf, as handed out by a get. Only data and the
 * chain fields move during its life; buf, shared and pool are fixed at
 * pool creation. */
static inline void seg_reset(struct cn_mbuf_pool *pool, struct cn_mbuf *m)
{
	struct cn_mbuf_shared *sh = cn__seg_shared(m);

	if (CN_MBUF_DEBUG) {
		cn__dbg_seg_got(sh);
		cn__dbg_embedded_got(m);
	}
	sh->refcnt = 1;
	mbuf_empty(m, sh->base + pool->headroom);
}

static struct cn_mbuf *seg_get(struct cn_mbuf_pool *pool)
{
	struct cn_mbuf *m;

	if (pool->kind != CN_MBUF_POOL_SEG)
		return cn__fail(EINVAL);
	m = cn__pool_get1(pool);
	if (m == NULL)
		return cn__fail(ENOBUFS);
	seg_reset(pool, m);
	return m;
}

struct cn_mbuf *cn_mbuf_get(struct cn_mbuf_pool *pool)
{
	struct cn_mbuf *m;

	if (CN_UNLIKELY(pool->kind != CN_MBUF_POOL_SMALL))
		return seg_get(pool);
	m = cn__pool_get1(pool);
	if (CN_UNLIKELY(m == NULL))
		return cn__fail(ENOBUFS);
	mbuf_reset(m);
	return m;
}

int cn_mbuf_get_bulk(struct cn_mbuf_pool *pool, struct cn_mbuf **m, unsigned n)
{
	int rc;

	if (pool->kind == CN_MBUF_POOL_CLUSTER)
		return -EINVAL;
	if (n == 0)
		return 0;
	rc = cn__pool_get_slow(pool, cn__tcache(pool), (void **)m, n);
	if (rc < 0)
		return rc;
	if (pool->kind == CN_MBUF_POOL_SEG) {
		for (unsigned i = 0; i < n; i++)
			seg_reset(pool, m[i]);
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		mbuf_reset(m[i]);
	return 0;
}

/* Release @p m's reference to its shared storage @p sh and give the
 * descriptor back its own inline storage. Returns false for a segment
 * object's own descriptor: it is released with its storage reference (the
 * object returns when the last one goes) and must not be put into a pool
 * by itself. */
static inline bool mbuf_release_shared(struct cn_mbuf *m, struct cn_mbuf_shared *sh)
{
	if (CN_UNLIKELY(sh->kind == CN_MBUF_STORAGE_SEG) && cn__seg_embedded(m)) {
		/* Mark it idle first: the unref may recycle the object. */
		if (CN_MBUF_DEBUG)
			cn__dbg_embedded_put(m);
		storage_unref(sh);
		return false;
	}
	storage_unref(sh);
	m->shared = NULL;
	m->buf = cn__mbuf_inline(m);
	m->buf_len = m->pool->data_size;
	return true;
}

/* Mark @p m free and give it back its inline storage (false: see
 * mbuf_release_shared). In every build, a free mbuf (CN_MBUF_F_FREE, on
 * the line the free touches anyway) is a double free and stops the
 * program with a message: the pool would otherwise hand it out twice. */
static inline bool mbuf_prefree(struct cn_mbuf *m)
{
	struct cn_mbuf_shared *sh = m->shared;

	if (CN_UNLIKELY(m->flags & CN_MBUF_F_FREE))
		cn__mbuf_bad_free(m, true);
	m->flags = CN_MBUF_F_FREE;
	if (sh != NULL && !mbuf_release_shared(m, sh))
		return false;
	if (CN_MBUF_DEBUG)
		cn__dbg_mbuf_put(m);
	return true;
}

/* An mbuf with shared storage (a cluster, a segment object, external
 * memory), marked free by the caller: mbuf_prefree's second half, then
 * the put. */
static __attribute__((noinline)) struct cn_mbuf *mbuf_free_shared(struct cn_mbuf *m,
								  struct cn_mbuf *next)
{
	if (mbuf_release_shared(m, m->shared)) {
		cn__mbuf_check_owner(m);
		cn__pool_put1(m->pool, m);
	}
	return next;
}

/* Any free, through mbuf_prefree (and in debug builds its hooks). */
static __attribute__((noinline)) struct cn_mbuf *mbuf_free_any(struct cn_mbuf *m)
{
	struct cn_mbuf *next = m->next;

	if (CN_LIKELY(mbuf_prefree(m))) {
		cn__mbuf_check_owner(m);
		cn__pool_put1(m->pool, m);
	}
	return next;
}

/* The put of a released mbuf whose pool is not one of this thread's two
 * most recent, or whose cache is at its flush threshold. */
static __attribute__((noinline)) struct cn_mbuf *mbuf_put_slow(struct cn_mbuf *m,
							       struct cn_mbuf *next)
{
	cn__pool_put1(m->pool, m);
	return next;
}

/* mbuf_prefree, cn__mbuf_check_owner and cn__pool_put1 with the common
 * free, a live mbuf with its inline storage into a cache of the MRU
 * table, as a leaf: everything else leaves by a tail call, so it saves no
 * register and sets up no frame. The double-free check (the flags word)
 * and the owner check run first on every free, in every build. */
struct cn_mbuf *cn_mbuf_free(struct cn_mbuf *m)
{
	struct cn_mbuf *next;
	struct cn_mbuf_pool *p;
	struct cn__mcache *c;

	if (m == NULL)
		return NULL;
	if (CN_MBUF_DEBUG || CN_UNLIKELY(m->flags & CN_MBUF_F_FREE))
		return mbuf_free_any(m); /* a double free stops there */
	m->flags = CN_MBUF_F_FREE;
	next = m->next;
	if (m->shared != NULL)
		return mbuf_free_shared(m, next);
	cn__mbuf_check_owner(m);
	p = m->pool;
	c = cn__tcache_mru(p);
	if (CN_UNLIKELY(c == NULL) || CN_UNLIKELY(!cn__mcache_push(p, c, m)))
		return mbuf_put_slow(m, next);
	return next;
}

void cn_mbuf_free_chain(struct cn_mbuf *m)
{
	while (m != NULL)
		m = cn_mbuf_free(m);
}

void cn_mbuf_free_bulk(struct cn_mbuf **m, unsigned n)
{
	void *run[64];
	struct cn_mbuf_pool *rp = NULL;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!mbuf_prefree(m[i]))
			continue;
		cn__mbuf_check_owner(m[i]);
		if (m[i]->pool != rp || k == 64) {
			if (k)
				cn__pool_put(rp, run, k);
			rp = m[i]->pool;
			k = 0;
		}
		run[k++] = m[i];
	}
	if (k)
		cn__pool_put(rp, run, k);
}

/* m (empty, no storage) takes the fresh cluster sh of cpool, whose
 * bytes are base[0, size), as its storage, the only reference to it. The
 * caller passes base and size: a device that names clusters by index
 * knows them without reading sh (buf_dev.h). */
static inline void cluster_attach(struct cn_mbuf *m, struct cn_mbuf_shared *sh, uint8_t *base,
				  uint32_t size, const struct cn_mbuf_pool *cpool)
{
	sh->refcnt = 1;
	m->shared = sh;
	m->buf = base;
	m->buf_len = size;
	m->data = base + cpool->headroom;
}

static inline void cluster_set(struct cn_mbuf *m, struct cn_mbuf_shared *sh,
			       const struct cn_mbuf_pool *cpool)
{
	if (CN_MBUF_DEBUG)
		cn__dbg_cluster_got(sh);
	cluster_attach(m, sh, sh->base, sh->size, cpool);
}

int cn_mbuf_attach_cluster(struct cn_mbuf *m, struct cn_mbuf_pool *cpool)
{
	struct cn_mbuf_shared *sh;

	if (m->len != 0 || m->shared != NULL || cpool->kind != CN_MBUF_POOL_CLUSTER)
		return -EINVAL;
	sh = cn__pool_get1(cpool);
	if (sh == NULL)
		return -ENOBUFS;
	cluster_set(m, sh, cpool);
	return 0;
}

struct cn_mbuf *cn_mbuf_get_cluster(struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool)
{
	struct cn_mbuf *m;
	struct cn_mbuf_shared *sh;
	int rc;

	if (cpool->kind != CN_MBUF_POOL_CLUSTER)
		return cn__fail(EINVAL);
	if (CN_LIKELY(mpool->kind == CN_MBUF_POOL_SMALL)) {
		/* The common pair (a driver's RX refill) in one pass: two
		 * cache pops and the fields a fresh mbuf with a fresh cluster
		 * has, no calls and no re-checks of what was just set. */
		m = cn__pool_get1(mpool);
		if (CN_UNLIKELY(m == NULL)) {
			errno = ENOBUFS;
			return NULL;
		}
		sh = cn__pool_get1(cpool);
		if (CN_UNLIKELY(sh == NULL)) {
			cn__pool_put1(mpool, m);
			errno = ENOBUFS;
			return NULL;
		}
		mbuf_reset(m);
		cluster_set(m, sh, cpool);
		return m;
	}
	m = cn_mbuf_get(mpool);
	if (m == NULL)
		return NULL;
	rc = cn_mbuf_attach_cluster(m, cpool);
	if (rc < 0) {
		cn_mbuf_free(m);
		errno = -rc;
		return NULL;
	}
	return m;
}

/* ------------------------------------------------------------ clusters by index (buf_dev.h) */

/* A pool over caller memory keeps only the storage headers, one per
 * object of this size (mbuf_pool.c): cluster i's header is at mem + i *
 * EXT_HDR. A constant, so an index costs a shift, not a division. */
#define EXT_HDR CN_CACHE_ROUND(sizeof(struct cn_mbuf_shared))

static inline struct cn_mbuf_shared *ext_shared(const struct cn_mbuf_pool *cpool, uint32_t i)
{
	return (struct cn_mbuf_shared *)(cpool->mem + (size_t)i * EXT_HDR);
}

unsigned cn__cluster_take(struct cn_mbuf_pool *cpool, uint32_t *idx, unsigned n)
{
	unsigned i;

	if (cpool->kind != CN_MBUF_POOL_CLUSTER || cpool->ext == NULL || cpool->obj_size != EXT_HDR)
		return 0;
	for (i = 0; i < n; i++) {
		struct cn_mbuf_shared *sh = cn__pool_get1(cpool);
		if (CN_UNLIKELY(sh == NULL))
			break;
		if (CN_MBUF_DEBUG)
			cn__dbg_cluster_got(sh);
		idx[i] = (uint32_t)(((uint8_t *)sh - cpool->mem) / EXT_HDR);
	}
	return i;
}

void cn__cluster_untake(struct cn_mbuf_pool *cpool, const uint32_t *idx, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct cn_mbuf_shared *sh = ext_shared(cpool, idx[i]);
		CN_ASSERT(idx[i] < cpool->count, "a cluster index the pool never had");
		if (CN_MBUF_DEBUG)
			cn__dbg_cluster_put(sh);
		cn__pool_put1(cpool, sh);
	}
}

unsigned cn__cluster_mbufs(struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool,
			   const uint32_t *idx, struct cn_mbuf **out, unsigned n)
{
	unsigned got = n;

	if (mpool->kind != CN_MBUF_POOL_SMALL || n == 0)
		return 0;
	/* the headers' lines were last touched at their free, a ring
	 * cycle ago: their stores below should not wait for them */
	for (unsigned i = 0; i < n; i++)
		__builtin_prefetch(ext_shared(cpool, idx[i]), 1, 3);
	if (cn__pool_get(mpool, (void **)out, n) < 0) {
		for (got = 0; got < n; got++)
			if ((out[got] = cn__pool_get1(mpool)) == NULL)
				break;
	}
	for (unsigned i = 0; i < got; i++) {
		CN_ASSERT(idx[i] < cpool->count, "a cluster index the pool never had");
		mbuf_reset(out[i]);
		cluster_attach(out[i], ext_shared(cpool, idx[i]),
			       cpool->ext + (size_t)idx[i] * cpool->ext_stride, cpool->data_size, cpool);
	}
	return got;
}

void cn_mbuf_ext_init(struct cn_mbuf_shared *sh, void *base, uint32_t size,
		      void (*free_cb)(void *base, void *opaque), void *opaque, bool rdonly)
{
	memset(sh, 0, sizeof(*sh));
	sh->kind = CN_MBUF_STORAGE_EXT;
	sh->flags = rdonly ? CN_MBUF_SHARED_RDONLY : 0;
	sh->base = base;
	sh->size = size;
	sh->free_cb = free_cb;
	sh->opaque = opaque;
}

int cn_mbuf_attach_ext(struct cn_mbuf *m, struct cn_mbuf_shared *sh, void *data, uint32_t len)
{
	uint8_t *d = data;

	if (m->len != 0 || m->shared != NULL || sh->kind != CN_MBUF_STORAGE_EXT ||
	    d < sh->base || d > sh->base + sh->size || len > (uint32_t)(sh->base + sh->size - d))
		return -EINVAL;
	if (sh->refcnt == 0)
		sh->refcnt = 1; /* the first attach owns the fresh descriptor */
	else
		storage_ref(sh);
	m->shared = sh;
	m->buf = sh->base;
	m->buf_len = sh->size;
	m->data = d;
	m->len = len;
	m->pkt_len += len;
	return 0;
}

/* ------------------------------------------------------------ views */

unsigned cn_mbuf_chain_count(const struct cn_mbuf *m)
{
	unsigned n = 0;

	for (; m != NULL; m = m->next)
		n++;
	return n;
}

struct cn_mbuf *cn_mbuf_at(struct cn_mbuf *m, uint32_t off, uint32_t *moff)
{
	while (m != NULL && off >= m->len) {
		off -= m->len;
		m = m->next;
	}
	if (m != NULL)
		*moff = off;
	return m;
}

static struct cn_mbuf *last_of(struct cn_mbuf *m)
{
	while (m->next != NULL)
		m = m->next;
	return m;
}

/* Metadata of line 1 that follows the packet when its head changes. */
static inline void move_meta(struct cn_mbuf *to, const struct cn_mbuf *from)
{
	to->udata64 = from->udata64;
	to->seq = from->seq;
	to->tstamp = from->tstamp;
	to->flags = from->flags;
	to->nextpkt = from->nextpkt;
}

/* ------------------------------------------------------------ surgery */

void *cn_mbuf_append(struct cn_mbuf *m, uint32_t len)
{
	struct cn_mbuf *t = last_of(m);
	uint8_t *p;

	if (cn_mbuf_tailroom(t) < len)
		return NULL;
	p = t->data + t->len;
	t->len += len;
	m->pkt_len += len;
	return p;
}

int cn_mbuf_append_copy(struct cn_mbuf *m, const void *src, uint32_t len,
			struct cn_mbuf_pool *cpool)
{
	struct cn_mbuf *t = last_of(m), *first_new = NULL, *last_new = NULL;
	const uint8_t *s = src;
	uint32_t room = cn_mbuf_tailroom(t), k, old_tlen = t->len;

	k = room < len ? room : len;
	memcpy(t->data + t->len, s, k);
	t->len += k;
	s += k;
	len -= k;
	while (len > 0) {
		struct cn_mbuf *n = !cpool ? cn_mbuf_get(m->pool)
				    : cpool->kind == CN_MBUF_POOL_SEG ? cn_mbuf_get(cpool)
				    : cn_mbuf_get_cluster(m->pool, cpool);
		if (n == NULL) {
			/* Undo: the packet must be as it was. */
			cn_mbuf_free_chain(first_new);
			t->len = old_tlen;
			return -ENOBUFS;
		}
		if (!cpool)
			n->data = n->buf; /* payload, no headers to come */
		k = cn_mbuf_tailroom(n);
		k = k < len ? k : len;
		memcpy(n->data, s, k);
		n->len = k;
		s += k;
		len -= k;
		if (last_new)
			last_new->next = n;
		else
			first_new = n;
		last_new = n;
	}
	t->next = first_new;
	m->pkt_len += (uint32_t)(s - (const uint8_t *)src);
	return 0;
}

void cn_mbuf_cat(struct cn_mbuf *m, struct cn_mbuf *tail)
{
	if (tail == NULL)
		return;
	last_of(m)->next = tail;
	m->pkt_len += tail->pkt_len;
}

/* A new first mbuf from m's pool for n bytes of m's packet (prepend,
 * pullup): NULL with errno EINVAL when n exceeds the pool's data size,
 * else cn_mbuf_get's answer. */
static struct cn_mbuf *new_head(struct cn_mbuf *m, uint32_t n)
{
	if (n > m->pool->data_size)
		return cn__fail(EINVAL);
	return cn_mbuf_get(m->pool);
}

struct cn_mbuf *cn_mbuf_prepend(struct cn_mbuf *m, uint32_t len)
{
	struct cn_mbuf *n;

	if (CN_LIKELY(cn_mbuf_headroom(m) >= len)) {
		m->data -= len;
		m->len += len;
		m->pkt_len += len;
		return m;
	}
	n = new_head(m, len);
	if (n == NULL)
		return NULL;
	n->data = n->buf + n->buf_len - len;
	n->len = len;
	n->pkt_len = m->pkt_len + len;
	n->next = m;
	move_meta(n, m);
	m->nextpkt = NULL;
	return n;
}

void cn_mbuf_adj(struct cn_mbuf *m, int32_t req)
{
	if (req >= 0) {
		uint32_t r = (uint32_t)req < m->pkt_len ? (uint32_t)req : m->pkt_len;
		m->pkt_len -= r;
		for (struct cn_mbuf *c = m; c != NULL && r > 0; c = c->next) {
			uint32_t k = c->len < r ? c->len : r;
			c->data += k;
			c->len -= k;
			r -= k;
		}
	} else {
		uint32_t cut = (uint32_t)-(int64_t)req;
		uint32_t keep = cut < m->pkt_len ? m->pkt_len - cut : 0, seen = 0;
		struct cn_mbuf *c = m;
		while (c->next != NULL && seen + c->len < keep) {
			seen += c->len;
			c = c->next;
		}
		c->len = keep - seen;
		cn_mbuf_free_chain(c->next);
		c->next = NULL;
		m->pkt_len = keep;
	}
}

/* Move @p need bytes from the chain starting at @p src to the end of dst's
 * data (dst has the room). Emptied source mbufs are freed; returns the
 * first source mbuf still holding bytes (or what follows the emptied). */
static struct cn_mbuf *gather(struct cn_mbuf *dst, struct cn_mbuf *src, uint32_t need)
{
	while (need > 0) {
		uint32_t k = src->len < need ? src->len : need;
		memcpy(dst->data + dst->len, src->data, k);
		dst->len += k;
		src->data += k;
		src->len -= k;
		need -= k;
		if (src->len == 0)
			src = cn_mbuf_free(src);
	}
	while (src != NULL && src->len == 0)
		src = cn_mbuf_free(src);
	return src;
}

struct cn_mbuf *cn_mbuf_pullup(struct cn_mbuf *m, uint32_t n)
{
	struct cn_mbuf *h;

	if (n > m->pkt_len)
		return cn__fail(EINVAL);
	if (m->len >= n)
		return m;
	if (cn_mbuf_writable(m) && m->buf_len >= n) {
		if ((uint32_t)(m->buf + m->buf_len - m->data) < n) {
			/* Slide down, keeping as much header room as fits. */
			uint8_t *to = m->buf + m->buf_len - n;
			memmove(to, m->data, m->len);
			m->data = to;
		}
		m->next = gather(m, m->next, n - m->len);
		return m;
	}
	h = new_head(m, n);
	if (h == NULL)
		return NULL;
	{
		uint32_t room = m->pool->data_size - n;
		h->data = h->buf + (h->pool_hdroom < room ? h->pool_hdroom : room);
	}
	h->pkt_len = m->pkt_len;
	move_meta(h, m);
	h->next = gather(h, m, n);
	return h;
}

struct cn_mbuf *cn_mbuf_split(struct cn_mbuf *m, uint32_t off)
{
	struct cn_mbuf *c = m, *prev = NULL, *t;
	uint32_t seen = 0, total = m->pkt_len;

	if (off == 0 || off >= total)
		return cn__fail(EINVAL);
	while (seen + c->len <= off) {
		seen += c->len;
		prev = c;
		c = c->next;
	}
	if (seen == off) {
		/* Cut between mbufs: nothing to allocate. */
		prev->next = NULL;
		t = c;
	} else {
		uint32_t in = off - seen, rest = c->len - in;
		if (c->shared != NULL) {
			t = cn_mbuf_get(c->pool);
			if (t == NULL)
				return NULL;
			share_storage(t, c, in);
		} else {
			t = cn_mbuf_get(c->pool);
			if (t == NULL)
				return NULL;
			if (rest > t->buf_len - t->pool_hdroom)
				t->data = t->buf;
			memcpy(t->data, c->data + in, rest);
		}
		t->len = rest;
		t->next = c->next;
		c->next = NULL;
		c->len = in;
	}
	t->pkt_len = total - off;
	m->pkt_len = off;
	return t;
}

struct cn_mbuf *cn_mbuf_copy_ref(struct cn_mbuf *m, uint32_t off, uint32_t len)
{
	struct cn_mbuf *head = NULL, *last = NULL, *src;
	uint32_t moff, left = len;

	if (len == 0 || (src = cn_mbuf_at(m, off, &moff)) == NULL)
		return cn__fail(EINVAL);
	while (left > 0) {
		struct cn_mbuf *n;
		uint32_t k;

		if (src == NULL) {
			cn_mbuf_free_chain(head);
			errno = EINVAL;
			return NULL;
		}
		k = src->len - moff < left ? src->len - moff : left;
		if (k == 0) {
			src = src->next;
			moff = 0;
			continue;
		}
		n = cn__pool_get1(src->pool);
		if (n == NULL) {
			cn_mbuf_free_chain(head);
			errno = ENOBUFS;
			return NULL;
		}
		n->next = NULL;
		n->pkt_len = 0;
		n->flags = 0;
		n->nextpkt = NULL;
		if (CN_MBUF_DEBUG)
			cn__dbg_mbuf_got(n);
		if (src->shared != NULL) {
			share_storage(n, src, moff);
		} else {
			n->data = n->buf + (k <= n->buf_len - n->pool_hdroom ? n->pool_hdroom : 0);
			memcpy(n->data, src->data + moff, k);
		}
		n->len = k;
		CN_LIST_APPEND(head, last, n, n, next);
		left -= k;
		src = src->next;
		moff = 0;
	}
	head->pkt_len = len;
	return head;
}

struct cn_mbuf *cn_mbuf_copy_ref_hdr(struct cn_mbuf *m, uint32_t off, uint32_t len, uint32_t hdr_len)
{
	struct cn_mbuf_shared *sh;
	struct cn_mbuf *src, *h, *r = NULL;
	uint32_t moff;

	if (len == 0 || (src = cn_mbuf_at(m, off, &moff)) == NULL)
		return cn__fail(EINVAL);
	sh = src->shared;
	/* refcnt 1 is src's own reference: nobody else sees the storage, so
	 * the bytes in front of src's data are ours to write the header
	 * into, and the companion (which would hold a reference) is idle.
	 * The acquire pairs with the release of whoever dropped to 1. */
	if (moff == 0 && sh != NULL && sh->kind == CN_MBUF_STORAGE_SEG && src == cn__seg_mbuf(sh, 0) &&
	    (uint32_t)(src->data - src->buf) >= hdr_len &&
	    __atomic_load_n(&sh->refcnt, __ATOMIC_ACQUIRE) == 1) {
		uint32_t first = src->len < len ? src->len : len;
		if (first < len && (r = cn_mbuf_copy_ref(src->next, 0, len - first)) == NULL)
			return NULL; /* errno set; nothing taken */
		h = cn__seg_mbuf(sh, 1);
		if (CN_MBUF_DEBUG)
			cn__dbg_embedded_got(h);
		__atomic_store_n(&sh->refcnt, 2, __ATOMIC_RELAXED);
		h->data = src->data - hdr_len;
		h->len = hdr_len + first;
		h->pkt_len = hdr_len + len;
		h->next = r;
		h->flags = 0;
		h->nextpkt = NULL;
		return h;
	}
	if (hdr_len > src->pool->data_size)
		return cn__fail(EINVAL);
	h = cn_mbuf_get(src->pool);
	if (h == NULL)
		return NULL;
	r = cn_mbuf_copy_ref(src, moff, len);
	if (r == NULL) {
		int e = errno;
		cn_mbuf_free(h);
		errno = e;
		return NULL;
	}
	h->data = h->buf + h->buf_len - hdr_len;
	h->len = hdr_len;
	h->pkt_len = hdr_len + len;
	h->next = r;
	return h;
}

int cn_mbuf_copy_out(const struct cn_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	uint8_t *d = dst;

	while (m != NULL && off >= m->len) {
		off -= m->len;
		m = m->next;
	}
	while (len > 0) {
		uint32_t k;
		if (m == NULL)
			return -EINVAL;
		k = m->len - off < len ? m->len - off : len;
		memcpy(d, m->data + off, k);
		d += k;
		len -= k;
		off = 0;
		m = m->next;
	}
	return 0;
}

int cn_mbuf_check(const struct cn_mbuf *m)
{
	uint64_t total = 0;

	for (const struct cn_mbuf *c = m; c != NULL; c = c->next) {
		if (c->data < c->buf || c->data + c->len > c->buf + c->buf_len)
			return -EBADMSG;
		if ((c->shared == NULL) != (c->buf == (const uint8_t *)(c + 1)))
			return -EBADMSG;
		if (c->shared != NULL && __atomic_load_n(&c->shared->refcnt, __ATOMIC_RELAXED) == 0)
			return -EBADMSG;
		if (CN_MBUF_DEBUG && c->cookie != CN__COOKIE_LIVE)
			return -EBADMSG;
		total += c->len;
	}
	return total == m->pkt_len ? 0 : -EBADMSG;
}
