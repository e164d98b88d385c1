/* SPDX-License-Identifier: BSD-2-Clause */
/* The view both sockbufs share: tcp_output calls these and does not care
 * which kind it holds. */
#include <errno.h>
#include <stddef.h>

#include "buf_impl.h"
#include "cachenet/sockbuf.h"

uint32_t cn__sbring_drop(struct cn_sbring *sb, uint32_t len);

static struct cn_sbring *ring_of(struct cn_sockbuf *sb)
{
	/* struct cn_sockbuf is the first member of struct cn_sbring. */
	return (struct cn_sbring *)(void *)sb;
}

int cn_sockbuf_seg(struct cn_sockbuf *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	if (sb->kind == CN_SOCKBUF_CHAIN)
		return cn_sbchain_seg((struct cn_sbchain *)(void *)sb, off, max, seg);
	if (sb->kind == CN_SOCKBUF_RING)
		return cn_sbring_seg(ring_of(sb), off, max, seg);
	return -EINVAL;
}

uint32_t cn_sockbuf_drop(struct cn_sockbuf *sb, uint32_t len)
{
	if (sb->kind == CN_SOCKBUF_CHAIN)
		return cn_sbchain_drop((struct cn_sbchain *)(void *)sb, len);
	if (sb->kind == CN_SOCKBUF_RING)
		return cn__sbring_drop(ring_of(sb), len);
	return 0;
}
