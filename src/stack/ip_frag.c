/* SPDX-License-Identifier: BSD-2-Clause */
/* IPv4 fragmentation on output (RFC 791 3.2, RFC 1122 3.3.3).
 *
 * The datagram to fragment is a built TX packet (the parent): headers in
 * its room, payload in its pieces. Each fragment is a new descriptor with
 * a copy of the Ethernet and IPv4 headers and pieces that reference the
 * parent's bytes: its L4 header in the parent's header room, its payload
 * wherever the pieces point. Nothing is copied; the parent stays out of
 * the free list until the last fragment completes, and only then releases
 * what keeps those bytes alive (its ref, its done callback).
 *
 * While fragments are out, the parent's csum_off field counts them (plus
 * one while they are being built, so that a device completing fragments
 * synchronously cannot release the parent midway). csum_off is free by
 * then: the L4 checksum was computed before the first fragment left. */
#include <errno.h>

#include "ip_reass.h"
#include "net_impl.h"

/* The parent of a fragment: one fragment fewer out. */
static void frag_done(void *arg)
{
	struct cn_pkt *parent = arg;

	if (--parent->csum_off == 0)
		cn_pkt_free(parent);
}

/* The L4 checksum the device would have filled (cn_pkt_gather's rule). */
static void l4_csum_now(struct cn_pkt *p)
{
	uint8_t *l4 = p->hdr + p->l4_off;
	uint32_t s = cn_csum_partial(l4, p->hdr_len - p->l4_off, 0), at = p->hdr_len - p->l4_off;
	uint16_t c;

	for (uint32_t i = 0; i < p->npieces; i++) {
		s = cn_csum_combine(s, cn_csum_partial(p->piece[i].base, p->piece[i].len, 0), at);
		at += p->piece[i].len;
	}
	c = (uint16_t)~cn_csum_fold(s);
	if (c == 0 && (p->ol_flags & CN_PKT_TX_UDP))
		c = 0xffff;
	memcpy(l4 + p->csum_off, &c, 2);
	p->ol_flags = 0;
}

/* The datagram's bytes after the IPv4 header as a list of spans: the part
 * of the header room past the IPv4 header, then the pieces. Fills @p q's
 * pieces with [from, from + len); false when more than CN_PKT_PIECES
 * pieces are needed. */
static bool fill_pieces(const struct cn_pkt *p, uint32_t hoff, struct cn_pkt *q, uint32_t from,
			uint32_t len)
{
	uint32_t pos = 0, n = 0;

	for (int32_t i = -1; i < (int32_t)p->npieces && len; i++) {
		const uint8_t *base = i < 0 ? p->hdr + hoff : p->piece[i].base;
		uint32_t plen = i < 0 ? p->hdr_len - hoff : p->piece[i].len, a, k;

		if (from >= pos + plen) {
			pos += plen;
			continue;
		}
		if (n == CN_PKT_PIECES)
			return false;
		a = from - pos;
		k = plen - a < len ? plen - a : len;
		if (q) {
			q->piece[n].base = base + a;
			q->piece[n].len = k;
		}
		n++;
		from += k;
		len -= k;
		pos += plen;
	}
	if (q) {
		q->npieces = (uint16_t)n;
	}
	return true;
}

int cn__ip_frag_xmit(struct cn_net *net, struct cn_pkt *p)
{
	const uint8_t *h = p->hdr;
	const struct cn_ipv4_hdr *ip = (const struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);
	uint32_t ihl, hoff, dlen, fmax, off, sent = 0;
	int rc = -EMSGSIZE;

	if (p->l3_off != CN_ETH_HLEN || p->hdr_len < CN_ETH_HLEN + CN_IPV4_HLEN ||
	    cn__ld16(h + 12) != cn_hton16(CN_ETH_TYPE_IPV4) || (ip->ver_ihl >> 4) != 4)
		goto fail;
	ihl = (ip->ver_ihl & 0xfu) * 4u;
	hoff = CN_ETH_HLEN + ihl;
	if (ihl < CN_IPV4_HLEN || p->hdr_len < hoff || (ip->frag_off & cn_hton16(CN_IPV4_FLAG_DF)) ||
	    cn_pkt_len(p) - CN_ETH_HLEN > 65535u || net->p.mtu < ihl + 8u)
		goto fail;
	dlen = cn_pkt_len(p) - hoff;
	fmax = (net->p.mtu - ihl) & ~7u;
	for (off = 0; off < dlen; off += fmax)
		if (!fill_pieces(p, hoff, NULL, off, dlen - off < fmax ? dlen - off : fmax))
			goto fail;
	if (p->ol_flags & CN_PKT_TX_L4_CSUM)
		l4_csum_now(p);
	p->csum_off = 1; /* the builder's own count, dropped at the end */
	for (off = 0; off < dlen; off += fmax) {
		uint32_t flen = dlen - off < fmax ? dlen - off : fmax;
		struct cn_pkt *q = cn__pkt_get(net);
		struct cn_ipv4_hdr *qip;
		uint8_t *qh;

		if (!q) {
			rc = -ENOBUFS;
			break;
		}
		qh = q->room + CN_PKT_HDR_ROOM - hoff;
		memcpy(qh, h, hoff);
		qip = (struct cn_ipv4_hdr *)(qh + CN_ETH_HLEN);
		qip->total_len = cn_hton16((uint16_t)(ihl + flen));
		qip->frag_off = cn_hton16((uint16_t)((off / 8u) |
						      (off + flen < dlen ? CN_IPV4_FLAG_MF : 0)));
		qip->csum = 0;
		qip->csum = cn_csum_ipv4_hdr(qip, ihl);
		q->hdr = qh;
		q->hdr_len = (uint16_t)hoff;
		q->l3_off = CN_ETH_HLEN;
		q->l4_off = (uint16_t)hoff;
		q->csum_off = 0;
		(void)fill_pieces(p, hoff, q, off, flen);
		q->pay_len = flen;
		q->done = frag_done;
		q->done_arg = p;
		p->csum_off++;
		rc = cn__net_xmit(net, q, hoff + flen);
		if (rc < 0) {
			p->csum_off--; /* released without its callback */
			break;
		}
		sent++;
	}
	if (sent) {
		net->st.frag_out++;
		net->st.frag_frames += sent;
		frag_done(p); /* the builder's count */
		return 0;
	}
fail:
	p->done = NULL;
	cn_pkt_free(p);
	return rc;
}
