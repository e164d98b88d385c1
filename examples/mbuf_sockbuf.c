/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbufs and socket buffers: a pool of small mbufs and one of clusters, a
 * packet built from two mbufs, a chain socket buffer that queues it and
 * copies application bytes in, one MSS-sized segment taken by reference
 * (no payload copy), the bytes acknowledged and dropped; then the same
 * stream in a contiguous ring socket buffer. Every pool is empty again at
 * the end.
 *
 *   cc mbuf_sockbuf.c $(pkg-config --cflags --libs cachenet)
 */
#include <stdio.h>
#include <string.h>

#include <cachenet/mbuf.h>
#include <cachenet/sockbuf.h>

#define MSS 1460

static int in_use(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;

	cn_mbuf_pool_thread_flush(p);
	cn_mbuf_pool_stats(p, &st);
	return (int)st.in_use;
}

int main(void)
{
	struct cn_mbuf_pool_params mp = {.name = "small", .kind = CN_MBUF_POOL_SMALL, .count = 256};
	struct cn_mbuf_pool_params cp = {.name = "clusters", .kind = CN_MBUF_POOL_CLUSTER, .count = 64};
	struct cn_mbuf_pool *small = cn_mbuf_pool_create(&mp);
	struct cn_mbuf_pool *clusters = cn_mbuf_pool_create(&cp);
	static uint8_t app[8000];

	if (!small || !clusters)
		return 1;
	for (unsigned i = 0; i < sizeof(app); i++)
		app[i] = (uint8_t)i;

	/* A packet of two mbufs: 40 bytes inline (a small mbuf keeps 128 of
	 * its 192 bytes as header room), then 1060 in a cluster. */
	struct cn_mbuf *m = cn_mbuf_get(small);
	struct cn_mbuf *c = cn_mbuf_get_cluster(small, clusters);
	if (!m || !c)
		return 1;
	uint8_t *p1 = cn_mbuf_append(m, 40), *p2 = cn_mbuf_append(c, 1060);
	if (!p1 || !p2)
		return 1;
	memcpy(p1, app, 40);
	memcpy(p2, app + 40, 1060);
	m->next = c;
	m->pkt_len = m->len + c->len;
	printf("packet: %u bytes in %u mbufs\n", m->pkt_len, cn_mbuf_chain_count(m));

	/* Chain socket buffer: append the packet (ownership passes), then
	 * copy the rest of the application's bytes in. */
	struct cn_sbchain sb;
	cn_sbchain_init(&sb, small, clusters);
	cn_sbchain_append(&sb, m);
	if (cn_sbchain_append_copy(&sb, app + 1100, sizeof(app) - 1100) != 0)
		return 1;
	printf("chain sockbuf: %u bytes queued\n", cn_sockbuf_len(&sb.sb));

	/* tcp_output's view: the next segment as references to the queued
	 * bytes (clusters shared, not copied), freed when "transmitted". */
	struct cn_mbuf *seg = cn_sbchain_copy_ref(&sb, 0, MSS);
	if (!seg || seg->pkt_len != MSS)
		return 1;
	uint8_t check[MSS];
	if (cn_mbuf_copy_out(seg, 0, MSS, check) != 0 || memcmp(check, app, MSS) != 0)
		return 1;
	cn_mbuf_free_chain(seg);

	/* The peer acknowledged 3000 bytes: drop them. */
	cn_sockbuf_drop(&sb.sb, 3000);
	printf("after the ACK: %u bytes queued\n", cn_sockbuf_len(&sb.sb));
	cn_sbchain_flush(&sb);

	/* Ring socket buffer: one contiguous power-of-two ring, copy-in fused
	 * with the checksum, and a segment described by pointers into it. */
	struct cn_sbring_params rp = {.bytes = 16384, .mss = MSS, .copy = CN_SBRING_COPY_CSUM,
				      .anchors = 8};
	struct cn_sbring *ring = cn_sbring_create(&rp);
	if (!ring || cn_sbring_write(ring, app, sizeof(app)) != sizeof(app))
		return 1;
	struct cn_sb_seg s;
	if (cn_sbring_seg(ring, MSS, MSS, &s) != 0 || s.len != MSS ||
	    memcmp(s.piece[0].base, app + MSS, s.piece[0].len) != 0)
		return 1;
	printf("ring sockbuf: segment 2 is %u bytes in %u piece(s), checksum %s\n", s.len,
	       s.npieces, s.csum_valid ? "stored at copy-in" : "not stored");
	cn_sockbuf_drop(cn_sbring_sockbuf(ring), 3000);
	cn_sbring_destroy(ring);

	printf("mbufs in use: %d small, %d clusters\n", in_use(small), in_use(clusters));
	if (in_use(small) || in_use(clusters))
		return 1;
	cn_mbuf_pool_destroy(clusters);
	cn_mbuf_pool_destroy(small);
	return 0;
}
