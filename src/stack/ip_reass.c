/* SPDX-License-Identifier: BSD-2-Clause */
/* IPv4 reassembly, bounded.
 *
 * A datagram in progress is a queue of the received fragment frames
 * themselves (held by reference, no copy), sorted by offset and linked
 * through m->nextpkt; each frame's offset, payload length and header
 * length live in its mbuf's user words. Once the fragments cover the
 * datagram from 0 to the end the last one (MF clear) announced, they are
 * copied once into one buffer with the first fragment's headers in front,
 * and that frame goes through the stack's input again, as if it had come
 * whole: UDP, ICMP (the slow-path hook) and TCP take it like any other.
 *
 * Hostile input is bounded four ways, each counted per enum cn_drop:
 *  - overlap: a fragment that overlaps one held discards the whole
 *    datagram (RFC 5722's rule for IPv6, for the same reason here: the
 *    bytes that win an overlap differ between receivers, which is how
 *    filters are evaded). An exact duplicate (same offset and length) is
 *    what a network makes, not an attack: it alone is dropped;
 *  - memory: the bytes of the buffers held (mbuf descriptors plus their
 *    storage, what the pools really give up) stay within reass_mem overall
 *    and reass_mem_src per source address. A fragment that does not fit
 *    evicts whole datagrams, oldest first (of its own source first when
 *    that source is over its share), and is refused when nothing older is
 *    left to evict;
 *  - count: at most reass_max datagrams at once, the oldest evicted for a
 *    new one;
 *  - time: a datagram not complete reass_timeout ticks after its first
 *    fragment is discarded (the age list is in arrival order, so expiry
 *    looks at its head only).
 * Datagrams are found by a hash of (source, ID, protocol); each source's
 * memory and oldest datagram are kept in a record of its own: a fragment
 * costs O(1) plus what it evicts, even at the bounds. */
#include <errno.h>
#include <stdlib.h>

#include "agelist.h"
#include "ip_reass.h"
#include "net_impl.h"

/* Per fragment, in its mbuf's user words. */
#define F_OFF(m) ((m)->user[0])  /* payload offset in the datagram */
#define F_LEN(m) ((m)->user[1])  /* payload bytes */
#define F_HLEN(m) ((m)->user[2]) /* Ethernet + IPv4 header bytes in front */

/* The largest IPv4 payload: total length 65,535 minus a 20-byte header. */
#define REASS_PAY_MAX (65535u - CN_IPV4_HLEN)

struct reass_src;

struct reass_q {
	struct reass_q *older, *newer; /* age list; the free list via newer */
	struct reass_q *s_older, *s_newer; /* its source's age list */
	struct reass_q *hnext;     /* hash chain */
	struct reass_src *src;
	uint32_t saddr, daddr;     /* network order */
	uint16_t id;               /* network order */
	uint8_t proto;
	uint8_t have_last;         /* the MF-clear fragment arrived: total known */
	uint32_t total;            /* payload bytes of the datagram (have_last) */
	uint32_t have;             /* payload bytes held (no overlaps: a sum) */
	uint32_t mem;              /* buffer bytes held */
	uint64_t expire;
	struct cn_mbuf *frags;     /* by offset, via nextpkt */
};

/* A source address with datagrams in reassembly: its share of the memory
 * and its datagrams by age, so that neither needs a scan. */
struct reass_src {
	struct reass_src *hnext;   /* hash chain; the free list */
	uint32_t saddr;
	uint32_t mem, nq;
	struct reass_q *oldest, *newest;
};

struct cn_reass {
	uint32_t mem_max, mem_src_max, timeout, nq_max;
	uint32_t mem, nq;
	uint32_t hmask;            /* hash buckets - 1 (a power of two >= nq_max) */
	struct reass_q *oldest, *newest, *free;
	struct reass_src *src_free;
	struct reass_q **qhash;
	struct reass_src **shash;
	struct reass_q *q;         /* nq_max of them */
	struct reass_src *srcs;    /* nq_max: a datagram has one source */
};

static inline uint32_t hash32(uint32_t x)
{
	return (x * 0x9e3779b1u) >> 7;
}

static inline uint32_t q_bucket(const struct cn_reass *r, uint32_t saddr, uint16_t id,
				uint8_t proto)
{
	return hash32(saddr ^ ((uint32_t)id << 16 | proto)) & r->hmask;
}

struct cn_reass *cn__ip_reass_create(const struct cn_net_params *p)
{
	uint32_t n = p->reass_max ? p->reass_max : 64, nb = 1;
	struct cn_reass *r = calloc(1, sizeof(*r));

	while (nb < n)
		nb <<= 1;
	if (!r || !(r->q = calloc(n, sizeof(*r->q))) || !(r->srcs = calloc(n, sizeof(*r->srcs))) ||
	    !(r->qhash = calloc(nb, sizeof(*r->qhash))) || !(r->shash = calloc(nb, sizeof(*r->shash)))) {
		cn__ip_reass_destroy(r);
		errno = ENOMEM;
		return NULL;
	}
	r->mem_max = p->reass_mem;
	r->mem_src_max = p->reass_mem_src ? p->reass_mem_src : p->reass_mem / 4;
	r->timeout = p->reass_timeout ? p->reass_timeout : 30000;
	r->nq_max = n;
	r->hmask = nb - 1;
	for (uint32_t i = n; i-- > 0;) {
		r->q[i].newer = r->free;
		r->free = &r->q[i];
		r->srcs[i].hnext = r->src_free;
		r->src_free = &r->srcs[i];
	}
	return r;
}

uint32_t cn__ip_reass_entries(const struct cn_reass *r)
{
	return r ? r->nq : 0;
}

uint32_t cn__ip_reass_mem(const struct cn_reass *r)
{
	return r ? r->mem : 0;
}

/* What a frame costs the pools while held. */
static uint32_t truesize(const struct cn_mbuf *m)
{
	uint32_t t = 0;

	for (; m; m = m->next)
		t += (uint32_t)sizeof(struct cn_mbuf) + (m->shared ? m->buf_len : 0);
	return t;
}

static struct reass_src *src_find(const struct cn_reass *r, uint32_t saddr)
{
	struct reass_src *s = r->shash[hash32(saddr) & r->hmask];

	while (s && s->saddr != saddr)
		s = s->hnext;
	return s;
}

/* Unlink q from every list and put it on the free list, freeing its
 * fragments; each is counted under @p why unless why is CN_DROP_NONE. */
static void q_release(struct cn_net *net, struct cn_reass *r, struct reass_q *q, enum cn_drop why)
{
	struct reass_src *s = q->src;
	struct reass_q **pp;
	struct cn_mbuf *m, *n;

	for (m = q->frags; m; m = n) {
		n = m->nextpkt;
		m->nextpkt = NULL;
		if (why != CN_DROP_NONE)
			cn__drop(net, why);
		cn_mbuf_free_chain(m);
	}
	CN__AGE_UNLINK(r->oldest, r->newest, q, older, newer);
	CN__AGE_UNLINK(s->oldest, s->newest, q, s_older, s_newer);
	for (pp = &r->qhash[q_bucket(r, q->saddr, q->id, q->proto)]; *pp != q; pp = &(*pp)->hnext)
		;
	*pp = q->hnext;
	s->mem -= q->mem;
	if (--s->nq == 0) {
		struct reass_src **sp = &r->shash[hash32(s->saddr) & r->hmask];
		while (*sp != s)
			sp = &(*sp)->hnext;
		*sp = s->hnext;
		s->hnext = r->src_free;
		r->src_free = s;
	}
	r->mem -= q->mem;
	r->nq--;
	memset(q, 0, sizeof(*q));
	q->newer = r->free;
	r->free = q;
}

/* A new datagram, the newest, from a free slot (the caller made one). */
static struct reass_q *q_new(struct cn_reass *r, const struct cn_ipv4_hdr *ip, uint64_t now)
{
	struct reass_q *q = r->free;
	struct reass_src *s = src_find(r, CN_BE32_RAW(ip->src));
	uint32_t b;

	r->free = q->newer;
	memset(q, 0, sizeof(*q));
	if (!s) {
		/* there are as many source records as datagrams */
		s = r->src_free;
		r->src_free = s->hnext;
		memset(s, 0, sizeof(*s));
		s->saddr = CN_BE32_RAW(ip->src);
		b = hash32(s->saddr) & r->hmask;
		s->hnext = r->shash[b];
		r->shash[b] = s;
	}
	q->src = s;
	q->saddr = CN_BE32_RAW(ip->src);
	q->daddr = CN_BE32_RAW(ip->dst);
	q->id = ip->id;
	q->proto = ip->proto;
	q->expire = now + r->timeout;
	CN__AGE_PUSH(r->oldest, r->newest, q, older, newer);
	CN__AGE_PUSH(s->oldest, s->newest, q, s_older, s_newer);
	s->nq++;
	b = q_bucket(r, q->saddr, q->id, q->proto);
	q->hnext = r->qhash[b];
	r->qhash[b] = q;
	r->nq++;
	return q;
}

static struct reass_q *q_find(const struct cn_reass *r, const struct cn_ipv4_hdr *ip)
{
	struct reass_q *q = r->qhash[q_bucket(r, CN_BE32_RAW(ip->src), ip->id, ip->proto)];

	while (q && !(q->id == ip->id && q->saddr == CN_BE32_RAW(ip->src) &&
		      q->daddr == CN_BE32_RAW(ip->dst) &&
		      q->proto == ip->proto))
		q = q->hnext;
	return q;
}

/* Evict the oldest datagram other than @p keep: of source @p s only when
 * s is given; false when there is none. */
static bool evict_one(struct cn_net *net, struct cn_reass *r, const struct reass_q *keep,
		      struct reass_src *s)
{
	struct reass_q *q = s ? s->oldest : r->oldest;

	if (q == keep)
		q = s ? q->s_newer : q->newer;
	if (!q)
		return false;
	net->st.reass_evict++;
	q_release(net, r, q, CN_DROP_FRAG_MEM);
	return true;
}

void cn__ip_reass_timer(struct cn_net *net, uint64_t now)
{
	struct cn_reass *r = net->reass;

	while (r->oldest && now >= r->oldest->expire)
		q_release(net, r, r->oldest, CN_DROP_FRAG_TIMEOUT);
}

/* The end of the held data (the fragments do not overlap: the last one's). */
static uint32_t last_end(const struct reass_q *q)
{
	const struct cn_mbuf *m = q->frags;

	if (!m)
		return 0;
	while (m->nextpkt)
		m = m->nextpkt;
	return (uint32_t)(F_OFF(m) + F_LEN(m));
}

/* Drop the fragment @p m alone, counted. */
static enum cn_drop drop_frag(struct cn_net *net, struct cn_mbuf *m, enum cn_drop why)
{
	cn__drop(net, why);
	cn_mbuf_free_chain(m);
	return why;
}

/* Drop the fragment and its whole datagram. */
static enum cn_drop drop_all(struct cn_net *net, struct reass_q *q, struct cn_mbuf *m,
			     enum cn_drop why)
{
	q_release(net, net->reass, q, why);
	return drop_frag(net, m, why);
}

static void ext_free(void *base, void *opaque)
{
	(void)base;
	free(opaque);
}

/* The fragments of q cover the datagram: one frame of them, or NULL
 * (no memory; the caller drops the datagram). */
static struct cn_mbuf *q_join(struct cn_net *net, struct reass_q *q)
{
	const struct cn_mbuf *first = q->frags;
	uint32_t hlen = (uint32_t)F_HLEN(first), flen = hlen + q->total;
	/* The storage header, then the frame at a 64-byte boundary. */
	size_t room = (sizeof(struct cn_mbuf_shared) + 63) & ~(size_t)63;
	uint8_t *a = aligned_alloc(64, (room + flen + 63) & ~(size_t)63);
	struct cn_mbuf_shared *sh = (struct cn_mbuf_shared *)a;
	struct cn_mbuf *m;
	struct cn_ipv4_hdr *ip;
	uint8_t *d;

	if (!a)
		return NULL;
	m = cn_mbuf_get(net->p.mpool);
	if (!m) {
		free(a);
		return NULL;
	}
	d = a + room;
	cn_mbuf_ext_init(sh, d, flen, ext_free, a, false);
	if (cn_mbuf_attach_ext(m, sh, d, flen) != 0) {
		cn_mbuf_free(m); /* nothing attached: free(a) is ours */
		free(a);
		return NULL;
	}
	memcpy(d, first->data, hlen);
	for (const struct cn_mbuf *f = first; f; f = f->nextpkt)
		memcpy(d + hlen + F_OFF(f), f->data + F_HLEN(f), (size_t)F_LEN(f));
	ip = (struct cn_ipv4_hdr *)(d + CN_ETH_HLEN);
	ip->total_len = cn_hton16((uint16_t)(hlen - CN_ETH_HLEN + q->total));
	ip->frag_off = 0;
	ip->csum = 0;
	ip->csum = cn_csum_ipv4_hdr(ip, hlen - CN_ETH_HLEN);
	return m;
}

enum cn_drop cn__ip_reass_input(struct cn_net *net, struct cn_mbuf *m, uint64_t now,
				struct cn_mbuf **done)
{
	struct cn_reass *r = net->reass;
	const struct cn_ipv4_hdr *ip = (const struct cn_ipv4_hdr *)(m->data + CN_ETH_HLEN);
	uint32_t ihl = (ip->ver_ihl & 0xfu) * 4u, tot = cn_ntoh16(ip->total_len);
	uint16_t fo = cn_ntoh16(ip->frag_off);
	uint32_t off = (uint32_t)(fo & CN_IPV4_OFFMASK) * 8u, len = tot - ihl, end = off + len;
	bool mf = (fo & CN_IPV4_FLAG_MF) != 0;
	struct reass_q *q;
	struct cn_mbuf **pp, *prev = NULL;
	uint32_t ts;

	*done = NULL;
	cn__ip_reass_timer(net, now);
	if (!cn_be32_eq(ip->dst, net->p.addr))
		return drop_frag(net, m, CN_DROP_IP_NOT_US);
	/* Wrong on its own: empty, past the largest datagram, or a middle
	 * piece whose end would leave the next one misaligned. */
	if (len == 0 || end > REASS_PAY_MAX || (mf && (len & 7u)))
		return drop_frag(net, m, CN_DROP_FRAG_BAD);
	q = q_find(r, ip);
	ts = truesize(m);
	if (ts > r->mem_src_max || ts > r->mem_max)
		return drop_frag(net, m, CN_DROP_FRAG_MEM);
	if (!q) {
		if (!r->free) {
			net->st.reass_evict++;
			q_release(net, r, r->oldest, CN_DROP_FRAG_MEM);
		}
		q = q_new(r, ip, now);
	}
	/* Consistency with what is held: one end, nothing past it. */
	if (!mf) {
		if (q->have_last ? end != q->total
				 : last_end(q) > end)
			return drop_all(net, q, m, CN_DROP_FRAG_BAD);
	} else if (q->have_last && end > q->total) {
		return drop_all(net, q, m, CN_DROP_FRAG_BAD);
	}
	/* Its place by offset; any byte in common with a neighbour is an
	 * overlap, unless it is the very same piece again. */
	for (pp = &q->frags; *pp && F_OFF(*pp) < off; pp = &(*pp)->nextpkt)
		prev = *pp;
	if (*pp && F_OFF(*pp) == off && F_LEN(*pp) == len)
		return drop_frag(net, m, CN_DROP_FRAG_DUP);
	if ((prev && F_OFF(prev) + F_LEN(prev) > off) || (*pp && F_OFF(*pp) < end))
		return drop_all(net, q, m, CN_DROP_FRAG_OVERLAP);
	/* Memory: this source's share first, then the whole. Evictions take
	 * whole datagrams, never the one this fragment belongs to. */
	while (q->src->mem + ts > r->mem_src_max)
		if (!evict_one(net, r, q, q->src))
			goto nomem;
	while (r->mem + ts > r->mem_max)
		if (!evict_one(net, r, q, NULL))
			goto nomem;
	/* pp is still valid: evictions never touch q. */
	F_OFF(m) = off;
	F_LEN(m) = len;
	F_HLEN(m) = CN_ETH_HLEN + ihl;
	m->nextpkt = *pp;
	*pp = m;
	q->have += len;
	q->mem += ts;
	q->src->mem += ts;
	r->mem += ts;
	if (!mf) {
		q->have_last = 1;
		q->total = end;
	}
	if (!q->have_last || q->have != q->total)
		return CN_DROP_NONE;
	/* Complete: no overlaps and as many bytes as the datagram has means
	 * the pieces tile it, the first at offset 0. */
	if (F_HLEN(q->frags) - CN_ETH_HLEN + q->total > 65535u) {
		q_release(net, r, q, CN_DROP_FRAG_BAD);
		return CN_DROP_FRAG_BAD;
	}
	*done = q_join(net, q);
	if (!*done) {
		q_release(net, r, q, CN_DROP_NOBUFS);
		return CN_DROP_NOBUFS;
	}
	net->st.reass_ok++;
	q_release(net, r, q, CN_DROP_NONE);
	return CN_DROP_NONE;
nomem:
	/* Nothing else to evict: this datagram alone is over a bound, and
	 * it cannot complete within it. */
	return drop_all(net, q, m, CN_DROP_FRAG_MEM);
}

void cn__ip_reass_destroy(struct cn_reass *r)
{
	if (!r)
		return;
	for (struct reass_q *q = r->oldest; q; q = q->newer)
		for (struct cn_mbuf *m = q->frags, *n; m; m = n) {
			n = m->nextpkt;
			m->nextpkt = NULL;
			cn_mbuf_free_chain(m);
		}
	free(r->q);
	free(r->srcs);
	free(r->qhash);
	free(r->shash);
	free(r);
}
