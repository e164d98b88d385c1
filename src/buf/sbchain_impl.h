/* SPDX-License-Identifier: BSD-2-Clause */
/* The chain sockbuf's steps, shared by its product functions (sbchain.c)
 * and the laboratory's naive BSD variants (src/lab/buf/sbchain_naive.c),
 * which run the same steps without the tail and send pointers. Not
 * installed. The functions are static (one copy per file that includes
 * this header, compiled exactly as when they were local to sbchain.c):
 * the two libraries are separate shared objects, and the product exports
 * no internal names. Both must come from the same source version (the
 * laboratory reads the product's pool kind through buf_impl.h). */
#ifndef CN_BUF_SBCHAIN_IMPL_H
#define CN_BUF_SBCHAIN_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "buf_impl.h"
#include "cachenet/sockbuf.h"
#include "cn_internal.h"

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
	CN_LIST_APPEND(sb->head, sb->tail, n, n, next);
	sb->nmbufs++;
	sb->sb.cc += n->len;
}

/* sbcompress for one mbuf after the last one, @p t. */
static CN__UNUSED void append_one(struct cn_sbchain *sb, struct cn_mbuf *t, struct cn_mbuf *n)
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

/* Find the mbuf holding byte @p off (< cc), from the send pointer when it
 * is at or before off, else from the head (a retransmission). */
static CN__UNUSED struct cn_mbuf *locate(struct cn_sbchain *sb, uint32_t off, uint32_t *moff, bool naive)
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
static CN__UNUSED void advance(struct cn_sbchain *sb, uint32_t end)
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

static CN__UNUSED int chain_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg, bool naive)
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

static CN__UNUSED struct cn_mbuf *chain_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len, bool naive)
{
	struct cn_mbuf *m, *r;
	uint32_t moff;

	if (len == 0 || off >= sb->sb.cc || len > sb->sb.cc - off)
		return cn__fail(EINVAL);
	m = locate(sb, off, &moff, naive);
	r = cn_mbuf_copy_ref(m, moff, len);
	if (r != NULL && !naive)
		advance(sb, off + len);
	if (r != NULL)
		note_sent(sb, off + len);
	return r;
}

#endif
