/* SPDX-License-Identifier: BSD-2-Clause */
/* ICMP echo reply (RFC 792, RFC 1122 3.2.2.6): the request's data comes
 * back unchanged, so the reply references it instead of copying it: the
 * TX packet's payload piece points into the received frame, which the
 * packet holds (p->ref) until the device completes it. Only the type
 * changes, so the checksum is updated incrementally (RFC 1624) and the
 * payload is read once, by the verification of the request's checksum. */
#include <errno.h>

#include "conn_impl.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8
#define ICMP_HLEN 8
/* Replies with less data than this are copied into the header room:
 * cheaper than a reference, and the frame can be padded to 60 bytes. */
#define ICMP_COPY_MAX 64u

void cn__icmp_input(struct cn_conn *c, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	const uint8_t *f = m->data, *icmp = f + pi->l4_off;
	uint32_t plen, hl, fl;
	bool copy;
	struct cn_pkt *p;
	uint8_t *h, *r;
	uint16_t csum;

	if (CN_BE32_RAW(pi->daddr) != c->addr) { /* broadcast and multicast pings too */
		cn__conn_drop(c, CN_CONN_DROP_IP_NOT_US);
		goto drop;
	}
	if (pi->l4_len < ICMP_HLEN) {
		cn__conn_drop(c, CN_CONN_DROP_ICMP_TRUNC);
		goto drop;
	}
	if (cn_csum(icmp, pi->l4_len) != 0) {
		cn__conn_drop(c, CN_CONN_DROP_ICMP_CSUM);
		goto drop;
	}
	if (icmp[0] != ICMP_ECHO_REQUEST || icmp[1] != 0) {
		cn__conn_drop(c, CN_CONN_DROP_ICMP_TYPE);
		goto drop;
	}
	c->st.icmp_echo_in++;
	plen = pi->l4_len - ICMP_HLEN;
	hl = CN_ETH_HLEN + CN_IPV4_HLEN + ICMP_HLEN;
	copy = plen <= ICMP_COPY_MAX;
	p = cn__conn_pkt(c, copy ? hl + plen : hl, &h, &fl);
	if (!p)
		goto drop;
	r = cn_net_hdr_build(h, &(const struct cn_net_hdr_spec){
		.dmac = f + 6, /* back to the request's sender */
		.smac = c->mac,
		.saddr = CN_BE32_FROM_RAW(c->addr),
		.daddr = pi->saddr,
		.proto = CN_IPV4_PROTO_ICMP,
		.no_df = 1,
		.id = c->ip_id++,
		.l4_len = pi->l4_len,
	});
	memcpy(r, icmp, ICMP_HLEN); /* identifier and sequence number kept */
	r[0] = ICMP_ECHO_REPLY;
	memcpy(&csum, icmp + 2, 2);
	{
		uint16_t ow, nw;
		memcpy(&ow, icmp, 2);
		memcpy(&nw, r, 2);
		csum = cn_csum_update16(csum, ow, nw);
	}
	memcpy(r + 2, &csum, 2);
	if (copy) {
		memcpy(r + ICMP_HLEN, icmp + ICMP_HLEN, plen); /* padding already zero */
		cn_mbuf_free_chain(m);
	} else {
		p->piece[0].base = (uint8_t *)icmp + ICMP_HLEN;
		p->piece[0].len = plen;
		p->npieces = 1;
		p->pay_len = plen;
		p->ref = m; /* freed at TX completion */
	}
	/* On an error p, and m with it, are freed by the stack (counted). */
	if (cn__conn_xmit(c, p, h, copy ? fl : hl, CN_ETH_HLEN + CN_IPV4_HLEN) == 0)
		c->st.icmp_echo_out++;
	return;
drop:
	cn_mbuf_free_chain(m);
}
