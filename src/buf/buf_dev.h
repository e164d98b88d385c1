/* SPDX-License-Identifier: BSD-2-Clause */
/* What a device backend uses of the buffers beyond mbuf.h: the clusters
 * of a pool over device memory (cn_mbuf_pool_params.ext_mem: an AF_XDP
 * UMEM) named by their index, so that a receive ring can hold bare
 * clusters and a received frame gets its mbuf only when it arrives: a
 * fresh one from the thread's cache, warm, instead of one built a ring
 * cycle earlier and cold by then. Not installed. */
#ifndef CN_BUF_DEV_H
#define CN_BUF_DEV_H

#include <stdint.h>

#include "cachenet/mbuf.h"
#include "cn_internal.h"

/* Take up to @p n free clusters of @p cpool (a cluster pool over caller
 * memory) out of it, their indices into @p idx (cluster i's bytes at
 * ext_mem + i * ext_stride). A taken cluster counts as in use and has no
 * reference yet; it goes back with cn__cluster_untake or lives on in an
 * mbuf from cn__cluster_mbufs. Reads the pool's cache only, never the
 * clusters' headers (debug builds check them).
 * @return clusters taken (fewer when the pool runs dry). */
CN_INTERNAL unsigned cn__cluster_take(struct cn_mbuf_pool *cpool, uint32_t *idx, unsigned n);

/* Give @p n taken clusters back to @p cpool unused. */
CN_INTERNAL void cn__cluster_untake(struct cn_mbuf_pool *cpool, const uint32_t *idx, unsigned n);

/* An mbuf of the small pool @p mpool for each taken cluster @p idx[i],
 * into @p out[i]: the cluster's storage with one reference, data at its
 * base plus the pool's header room, len 0 (as cn_mbuf_get_cluster hands
 * out). The headers' reference counts are written, not read.
 * @return mbufs made, the first ones of idx (fewer when mpool runs dry:
 *         the caller still owns the clusters left). */
CN_INTERNAL unsigned cn__cluster_mbufs(struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool,
				       const uint32_t *idx, struct cn_mbuf **out, unsigned n);

#endif /* CN_BUF_DEV_H */
