/* SPDX-License-Identifier: BSD-2-Clause */
/* The chain sockbuf's naive BSD behaviours, for the benchmarks: the same
 * steps as the product's cn_sbchain_* (sbchain_impl.h) without the tail
 * pointer (append walks the list) or the send pointer (every lookup
 * starts at the head). */
#include "../../buf/sbchain_impl.h"
#include "cachenet/lab/sockbuf_naive.h"

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

int cn_sbchain_naive_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	return chain_seg(sb, off, max, seg, true);
}

struct cn_mbuf *cn_sbchain_naive_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
{
	return chain_copy_ref(sb, off, len, true);
}
