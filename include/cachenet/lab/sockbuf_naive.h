/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file sockbuf_naive.h
 * The chain sockbuf (cachenet/sockbuf.h) as BSD's code runs it, without
 * the tail pointer and the cached send pointer: the benchmarks set these
 * beside cn_sbchain_append, cn_sbchain_copy_ref and cn_sbchain_seg to
 * show what the two pointers save. They work on an ordinary struct
 * cn_sbchain and may be mixed with the product calls; each walk step is
 * counted in the sockbuf's `walks`.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: as the chain sockbuf (one thread at a time).
 */
#ifndef CACHENET_LAB_SOCKBUF_NAIVE_H
#define CACHENET_LAB_SOCKBUF_NAIVE_H

#include "cachenet/common.h"

#include <stdint.h>

#include "cachenet/sockbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** BSD's sbappend: walk from the head to the last mbuf before appending
 *  each mbuf of @p m (ignores the tail pointer); otherwise as
 *  cn_sbchain_append (NULL @p m appends nothing). Cost: O(queued mbufs) per appended mbuf. */
void cn_sbchain_naive_append(struct cn_sbchain *sb, struct cn_mbuf *m) CN_NONNULL(1);

/** BSD's m_copy from the sockbuf: cn_sbchain_copy_ref walking from the
 *  head to @p off every time (the send pointer is neither used nor moved).
 *  @return as cn_sbchain_copy_ref (NULL with errno EINVAL or ENOBUFS).
 *  Cost: O(mbufs before off). */
struct cn_mbuf *cn_sbchain_naive_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
	CN_NONNULL_ALL;

/** cn_sbchain_seg without the send pointer: the lookup starts at the head.
 *  @return as cn_sbchain_seg (0, or -EINVAL when off > queued bytes).
 *  Cost: O(mbufs before off). */
int cn_sbchain_naive_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
	CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_LAB_SOCKBUF_NAIVE_H */
