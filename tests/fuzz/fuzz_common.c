/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"

/* ASan's defaults for these targets (ASAN_OPTIONS still overrides them):
 * a 16 MB quarantine instead of 256 MB. An input allocates and frees well
 * under a megabyte, so a use after free within an input, or a few inputs
 * later, is still caught; the default quarantine kept handing out cold,
 * freshly faulted memory, a tenth of a target's time. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16";
}

static struct cn_mbuf_pool *mp, *cp;
static struct cn_net *net;
static struct cn_mbuf_pool_stats a0, c0;
static uint8_t wire[16384];

struct cn_net *fz_net(struct cn_net_params *np, uint32_t nsmall, uint32_t nclust)
{
	if (net)
		return net;
	struct cn_mbuf_pool_params m = {.kind = CN_MBUF_POOL_SMALL, .count = nsmall};
	struct cn_mbuf_pool_params c = {.kind = CN_MBUF_POOL_CLUSTER, .count = nclust};
	mp = cn_mbuf_pool_create(&m);
	cp = cn_mbuf_pool_create(&c);
	if (!mp || !cp)
		abort();
	np->mpool = mp;
	np->cpool = cp;
	if (!np->xmit)
		np->xmit = fz_xmit;
	net = cn_net_create(np);
	if (!net)
		abort();
	return net;
}

struct cn_mbuf_pool *fz_mpool(void)
{
	return mp;
}

struct cn_mbuf_pool *fz_cpool(void)
{
	return cp;
}

int fz_xmit(void *arg, struct cn_pkt *p)
{
	(void)arg;
	if (cn_pkt_len(p) <= sizeof(wire))
		cn_pkt_gather(p, wire);
	cn_pkt_free(p);
	return 0;
}

void fz_fix_csums(uint8_t *f, uint32_t len)
{
	uint32_t ihl, tot;
	uint8_t *ip = f + 14;
	if (len < 34 || f[12] != 0x08 || f[13] != 0x00 || (ip[0] >> 4) != 4)
		return;
	ihl = (ip[0] & 0xfu) * 4u;
	tot = (uint32_t)ip[2] << 8 | ip[3];
	if (ihl < 20 || 14 + ihl > len)
		return;
	ip[10] = ip[11] = 0;
	uint16_t c = cn_csum_ipv4_hdr(ip, ihl);
	memcpy(ip + 10, &c, 2);
	if (tot < ihl || 14 + tot > len || (ip[6] & 0x3f) || ip[7])
		return; /* a fragment's L4 checksum covers more than it */
	uint32_t l4 = tot - ihl;
	uint32_t off = ip[9] == 6 ? 16 : ip[9] == 17 ? 6 : ip[9] == 1 ? 2 : 0;
	if (!off || l4 < off + 2)
		return;
	cn_be32_t sa, da;
	memcpy(&sa, ip + 12, 4);
	memcpy(&da, ip + 16, 4);
	ip[ihl + off] = ip[ihl + off + 1] = 0;
	uint32_t s0 = ip[9] == 1 ? 0 : cn_csum_pseudo_ipv4(sa, da, ip[9], (uint16_t)l4);
	c = (uint16_t)~cn_csum_fold(cn_csum_partial(ip + ihl, l4, s0));
	memcpy(ip + ihl + off, &c, 2);
}

struct cn_mbuf *fz_frame(const uint8_t *src, uint32_t *len, uint32_t headroom)
{
	struct cn_mbuf *m = cn_mbuf_get_cluster(mp, cp);
	if (!m)
		abort(); /* a leak exhausted the pool */
	if (*len > m->buf_len - headroom)
		*len = m->buf_len - headroom;
	m->data = m->buf + headroom;
	memcpy(m->data, src, *len);
	m->len = m->pkt_len = *len;
	return m;
}

struct cn_mbuf *fz_take(const uint8_t *data, size_t size, size_t *at, uint32_t *len,
			uint32_t headroom, bool fix)
{
	struct cn_mbuf *m;

	if (*len > size - *at)
		*len = (uint32_t)(size - *at);
	m = fz_frame(data + *at, len, headroom);
	*at += *len;
	if (fix)
		fz_fix_csums(m->data, *len);
	return m;
}

void fz_begin(void)
{
	cn_mbuf_pool_stats(mp, &a0);
	cn_mbuf_pool_stats(cp, &c0);
}

void fz_end(struct cn_net *n, bool from_zero)
{
	struct cn_mbuf_pool_stats a1, c1;
	uint32_t pkts = cn_net_pkts_out(n);

	cn_mbuf_pool_stats(mp, &a1);
	cn_mbuf_pool_stats(cp, &c1);
	uint32_t ma = from_zero ? 0 : a0.in_use, ca = from_zero ? 0 : c0.in_use;
	if (pkts || a1.in_use != ma || c1.in_use != ca) {
		fprintf(stderr, "leak: %u descriptors out, mbufs %u -> %u, clusters %u -> %u\n", pkts,
			ma, a1.in_use, ca, c1.in_use);
		abort();
	}
}
