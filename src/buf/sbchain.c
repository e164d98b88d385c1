/* SPDX-License-Identifier: BSD-2-Clause */
/* The chain sockbuf: BSD's mbuf-list socket buffer with the two fixes Ang
 * asks for, a tail pointer (append in O(1)) and a cached send pointer
 * (the next segment's first mbuf in O(1)). The list never holds a
 * zero-length mbuf, so "the mbuf holding byte x" is always well defined. */
#include <errno.h>
#include <string.h>

#include "buf_impl.h"
#include "cachenet/sockbuf.h"

void cn_sbchain_init(struct cn_sbchain *sb, struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool)
{
	memset(sb, 0, sizeof(*sb));
	sb->sb.kind = CN_SOCKBUF_CHAIN;
	sb->mpool = mpool;
	sb->cpool = cpool;
}

void cn_sbchain_flush(struct cn_sbchain *sb)
{
	cn_mbuf_free_chain(sb->head);
	sb->head = sb->tail = sb->snd_m = NULL;
	sb->snd_m_off = 0;
	sb->nmbufs = 0;
	sb->sb.cc = 0;
	sb->sent_hi = 0;
}

/* May copy-in add bytes to the tail @p t? Over segment objects, not once
 * any of its bytes went out: the next segment must start at an object's
 * first byte for cn_sbchain_tx to send it without allocating. */
static inline bool tail_open(const struct cn_sbchain *sb, const struct cn_mbuf *t)
{
	return sb->cpool == NULL || sb->cpool->kind != CN_MBUF_POOL_SEG || sb->sent_hi <= sb->sb.cc - t->len;
}

static inline void note_sent(struct cn_sbchain *sb, uint32_t end)
{
	if (end > sb->sent_hi)
		sb->sent_hi = end;
}

static inline void link_tail(struct cn_sbchain *sb, struct cn_mbuf *n)
{
	n->next = NULL;
	if (sb->tail)
		sb->tail->next = n;
	else
		sb->head = n;
	sb->tail = n;
	sb->nmbufs++;
	sb->sb.cc += n->len;
}

/* sbcompress for one mbuf after the last one, @p t. */
static void append_one(struct cn_sbchain *sb, struct cn_mbuf *t, struct cn_mbuf *n)
{
	if (n->len == 0) {
		cn_mbuf_free(n);
		return;
	}
	if (t != NULL && n->len <= CN_SBCHAIN_COMPRESS_MAX && cn_mbuf_tailroom(t) >= n->len &&
	    tail_open(sb, t)) {
		memcpy(t->data + t->len, n->data, n->len);
		t->len += n->len;
		sb->sb.cc += n->len;
		cn_mbuf_free(n);
		return;
	}
	link_tail(sb, n);
}

void cn_sbchain_append(struct cn_sbchain *sb, struct cn_mbuf *m)
{
	while (m != NULL) {
		struct cn_mbuf *next = m->next;
		append_one(sb, sb->tail, m);
		m = next;
	}
}

void cn_sbchain_naive_append(struct cn_sbchain *sb, struct cn_mbuf *m)
{
	while (m != NULL) {
		struct cn_mbuf *next = m->next, *t = sb->head;
		/* BSD sbappend: find the last mbuf by walking the list. */
		while (t != NULL && t->next != NULL)
			t = t->next;
		sb->sb.walks += sb->nmbufs;
		append_one(sb, t, m);
		m = next;
	}
}

int cn_sbchain_append_copy(struct cn_sbchain *sb, const void *src, uint32_t len)
{
	const uint8_t *s = src;
	struct cn_mbuf *t = sb->tail, *first = NULL, *last = NULL;
	uint32_t k = 0, rest, nnew = 0, added;

	if (t != NULL && tail_open(sb, t)) {
		k = cn_mbuf_tailroom(t);
		k = k < len ? k : len;
	}
	rest = len - k;
	while (rest > 0) {
		struct cn_mbuf *n;
		uint32_t room;
		if (sb->cpool != NULL && sb->cpool->kind == CN_MBUF_POOL_SEG)
			n = cn_mbuf_get(sb->cpool); /* one get: mbuf and storage */
		else if (sb->cpool != NULL && rest > sb->mpool->data_size)
			n = cn_mbuf_get_cluster(sb->mpool, sb->cpool);
		else
			n = cn_mbuf_get(sb->mpool);
		if (n == NULL) {
			cn_mbuf_free_chain(first);
			return -ENOBUFS;
		}
		if (n->shared == NULL)
			n->data = n->buf; /* payload: headers go elsewhere */
		room = n->buf + n->buf_len - n->data;
		n->len = room < rest ? room : rest;
		rest -= n->len;
		if (last)
			last->next = n;
		else
			first = n;
		last = n;
		nnew++;
	}
	/* Everything allocated: now copy, so failure above left no trace. */
	if (k) {
		memcpy(t->data + t->len, s, k);
		t->len += k;
		s += k;
	}
	added = k;
	for (struct cn_mbuf *n = first; n != NULL; n = n->next) {
		memcpy(n->data, s, n->len);
		s += n->len;
		added += n->len;
	}
	if (first != NULL) {
		if (sb->tail)
			sb->tail->next = first;
		else
			sb->head = first;
		sb->tail = last;
		sb->nmbufs += nnew;
	}
	sb->sb.cc += added;
	return 0;
}

/* Find the mbuf holding byte @p off (< cc), from the send pointer when it
 * is at or before off, else from the head (a retransmission). */
static struct cn_mbuf *locate(struct cn_sbchain *sb, uint32_t off, uint32_t *moff, bool naive)
{
	struct cn_mbuf *m;
	uint32_t base;

	if (!naive && sb->snd_m != NULL && off >= sb->snd_m_off) {
		m = sb->snd_m;
		base = sb->snd_m_off;
	} else {
		m = sb->head;
		base = 0;
	}
	while (off - base >= m->len) {
		base += m->len;
		m = m->next;
		sb->sb.walks++;
	}
	*moff = off - base;
	if (!naive) {
		sb->snd_m = m;
		sb->snd_m_off = base;
	}
	return m;
}

/* After sending [off, end): leave the pointer on the mbuf holding end. */
static void advance(struct cn_sbchain *sb, uint32_t end)
{
	struct cn_mbuf *m = sb->snd_m;
	uint32_t base = sb->snd_m_off;

	while (m->next != NULL && end - base >= m->len) {
		base += m->len;
		m = m->next;
	}
	sb->snd_m = m;
	sb->snd_m_off = base;
}

static int chain_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg, bool naive)
{
	uint32_t moff, left;
	struct cn_mbuf *m;

	if (off > sb->sb.cc)
		return -EINVAL;
	seg->off = off;
	seg->len = 0;
	seg->seq = 0;
	seg->npieces = 0;
	seg->csum_valid = false;
	seg->csum = 0;
	seg->m = NULL;
	seg->moff = 0;
	left = sb->sb.cc - off < max ? sb->sb.cc - off : max;
	if (left == 0)
		return 0;
	m = locate(sb, off, &moff, naive);
	seg->m = m;
	seg->moff = moff;
	while (left > 0 && seg->npieces < CN_SB_SEG_PIECES) {
		uint32_t k = m->len - moff < left ? m->len - moff : left;
		seg->piece[seg->npieces].base = m->data + moff;
		seg->piece[seg->npieces].len = k;
		seg->npieces++;
		seg->len += k;
		left -= k;
		moff = 0;
		m = m->next;
	}
	if (!naive)
		advance(sb, off + seg->len);
	return 0;
}

int cn_sbchain_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	return chain_seg(sb, off, max, seg, false);
}

int cn_sbchain_naive_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	return chain_seg(sb, off, max, seg, true);
}

static struct cn_mbuf *chain_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len, bool naive)
{
	struct cn_mbuf *m, *r;
	uint32_t moff;

	if (len == 0 || off >= sb->sb.cc || len > sb->sb.cc - off) {
		errno = EINVAL;
		return NULL;
	}
	m = locate(sb, off, &moff, naive);
	r = cn_mbuf_copy_ref(m, moff, len);
	if (r != NULL && !naive)
		advance(sb, off + len);
	if (r != NULL)
		note_sent(sb, off + len);
	return r;
}

struct cn_mbuf *cn_sbchain_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
{
	return chain_copy_ref(sb, off, len, false);
}

struct cn_mbuf *cn_sbchain_tx(struct cn_sbchain *sb, uint32_t off, uint32_t len, uint32_t hdr_len)
{
	struct cn_mbuf *m, *r;
	uint32_t moff;

	if (len == 0 || off >= sb->sb.cc || len > sb->sb.cc - off) {
		errno = EINVAL;
		return NULL;
	}
	m = locate(sb, off, &moff, false);
	r = cn_mbuf_copy_ref_hdr(m, moff, len, hdr_len);
	if (r != NULL) {
		advance(sb, off + len);
		note_sent(sb, off + len);
	}
	return r;
}

struct cn_mbuf *cn_sbchain_naive_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
{
	return chain_copy_ref(sb, off, len, true);
}

uint32_t cn_sbchain_drop(struct cn_sbchain *sb, uint32_t len)
{
	uint32_t dropped = len < sb->sb.cc ? len : sb->sb.cc, r = dropped;
	bool snd_gone = false;

	while (r > 0) {
		struct cn_mbuf *m = sb->head;
		if (m->len <= r) {
			r -= m->len;
			if (m == sb->snd_m)
				snd_gone = true;
			sb->head = cn_mbuf_free(m);
			sb->nmbufs--;
		} else {
			m->data += r;
			m->len -= r;
			r = 0;
		}
	}
	if (sb->head == NULL)
		sb->tail = NULL;
	sb->sb.cc -= dropped;
	sb->sent_hi = sb->sent_hi > dropped ? sb->sent_hi - dropped : 0;
	if (snd_gone || sb->snd_m == NULL || sb->snd_m == sb->head) {
		sb->snd_m = sb->head;
		sb->snd_m_off = 0;
	} else {
		sb->snd_m_off -= dropped;
	}
	return dropped;
}
