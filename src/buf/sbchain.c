/* SPDX-License-Identifier: BSD-2-Clause */
/* The chain sockbuf: BSD's mbuf-list socket buffer with the two fixes Ang
 * asks for, a tail pointer (append in O(1)) and a cached send pointer
 * (the next segment's first mbuf in O(1)). The list never holds a
 * zero-length mbuf, so "the mbuf holding byte x" is always well defined. */
#include <errno.h>
#include <string.h>

#include "sbchain_impl.h"

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

void cn_sbchain_append(struct cn_sbchain *sb, struct cn_mbuf *m)
{
	while (m != NULL) {
		struct cn_mbuf *next = m->next;
		append_one(sb, sb->tail, m);
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
		CN_LIST_APPEND(first, last, n, n, next);
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
		CN_LIST_APPEND(sb->head, sb->tail, first, last, next);
		sb->nmbufs += nnew;
	}
	sb->sb.cc += added;
	return 0;
}

int cn_sbchain_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	return chain_seg(sb, off, max, seg, false);
}

struct cn_mbuf *cn_sbchain_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
{
	return chain_copy_ref(sb, off, len, false);
}

struct cn_mbuf *cn_sbchain_tx(struct cn_sbchain *sb, uint32_t off, uint32_t len, uint32_t hdr_len)
{
	struct cn_mbuf *m, *r;
	uint32_t moff;

	if (len == 0 || off >= sb->sb.cc || len > sb->sb.cc - off)
		return cn__fail(EINVAL);
	m = locate(sb, off, &moff, false);
	r = cn_mbuf_copy_ref_hdr(m, moff, len, hdr_len);
	if (r != NULL) {
		advance(sb, off + len);
		note_sent(sb, off + len);
	}
	return r;
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
