/* SPDX-License-Identifier: BSD-2-Clause */
/* UDP sockets: a template per socket, payload by reference. */
#include <errno.h>
#include <stdlib.h>

#include "ip_reass.h"
#include "net_impl.h"

#define UDP_HDRS (CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN)

struct cn_udp_sock *cn_udp_open(struct cn_net *net, const struct cn_udp_params *params)
{
	const struct cn_udp_params *p;
	struct cn_udp_params q;
	struct cn_udp_sock *s;
	struct cn_udp_hdr *uh;

	p = &q;
	if (cn__params_copy(&q, sizeof(q), params) < 0)
		return cn__fail(EINVAL);
	if (CN_BE16_RAW(q.lport) == 0) {
		/* the first free ephemeral port */
		for (uint32_t port = 49152; port <= 65535 && CN_BE16_RAW(q.lport) == 0; port++) {
			q.lport = cn_htobe16((uint16_t)port);
			for (uint32_t i = 0; i < net->nudp; i++)
				if (cn_be16_eq(net->udp[i]->p.lport, q.lport)) {
					q.lport = CN_BE16(0);
					break;
				}
		}
		if (CN_BE16_RAW(q.lport) == 0) {
			errno = EADDRINUSE;
			return NULL;
		}
	}
	for (uint32_t i = 0; i < net->nudp; i++)
		if (cn_be16_eq(net->udp[i]->p.lport, p->lport)) {
			errno = EADDRINUSE;
			return NULL;
		}
	if (net->nudp == net->p.max_udp)
		return cn__fail(ENOSPC);
	s = calloc(1, sizeof(*s));
	if (!s)
		return cn__fail(ENOMEM);
	s->net = net;
	s->p = *p;
	s->lport_n = CN_BE16_RAW(p->lport);
	uh = (struct cn_udp_hdr *)cn_net_hdr_build(s->tmpl, &(const struct cn_net_hdr_spec){
		.dmac = p->rmac,
		.smac = net->p.mac,
		.saddr = net->p.addr,
		.daddr = p->raddr,
		.proto = CN_IPV4_PROTO_UDP,
	});
	uh->sport = p->lport;
	uh->dport = p->rport;
	s->ip_sum0 = cn_csum_partial(s->tmpl + CN_ETH_HLEN, CN_IPV4_HLEN, 0);
	s->udp_sum0 = cn_csum_partial(uh, CN_UDP_HLEN,
				      cn_csum_pseudo_ipv4(net->p.addr, p->raddr, CN_IPV4_PROTO_UDP, 0));
	net->udp[net->nudp++] = s;
	return s;
}

void cn_udp_close(struct cn_udp_sock *s)
{
	struct cn_net *net;

	if (!s)
		return;
	net = s->net;
	CN_SWAP_REMOVE(net->udp, net->nudp, s);
	free(s);
}

void cn__udp_free_all(struct cn_net *net)
{
	while (net->nudp)
		cn_udp_close(net->udp[0]);
}

/* Where a datagram goes when it is not the socket's connected peer. */
struct udp_dest {
	cn_be32_t raddr;
	cn_be16_t rport_n;
	const uint8_t *rmac;
};

static int udp_xmit(struct cn_udp_sock *s, const struct udp_dest *d, const void *buf,
		    uint32_t len, void (*done)(void *arg), void *arg)
{
	struct cn_net *net = s->net;
	struct cn_pkt *p;
	uint8_t *h;
	struct cn_ipv4_hdr *ip;
	struct cn_udp_hdr *uh;
	uint16_t l4len, tot, id;
	uint32_t ip_sum0 = s->ip_sum0, udp_sum0 = s->udp_sum0;
	cn_be32_t raddr = s->p.raddr;
	bool frag;
	int rc;

	/* Without an MTU a datagram is one frame (at most a jumbo's); with
	 * one, anything IPv4 can carry, fragmented past the MTU. */
	if (len > (net->p.mtu ? 65535u : 9000u) - CN_IPV4_HLEN - CN_UDP_HLEN)
		return -EMSGSIZE;
	frag = net->p.mtu && CN_IPV4_HLEN + CN_UDP_HLEN + len > net->p.mtu;
	p = cn__pkt_get(net);
	if (!p)
		return -ENOBUFS;
	h = p->room + CN_PKT_HDR_ROOM - UDP_HDRS;
	memcpy(h, s->tmpl, UDP_HDRS);
	p->hdr = h;
	p->hdr_len = UDP_HDRS;
	p->l3_off = CN_ETH_HLEN;
	p->l4_off = CN_ETH_HLEN + CN_IPV4_HLEN;
	p->csum_off = 6;
	if (len) {
		p->piece[0].base = buf;
		p->piece[0].len = len;
		p->npieces = 1;
		p->pay_len = len;
	}
	ip = (struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);
	uh = (struct cn_udp_hdr *)(h + CN_ETH_HLEN + CN_IPV4_HLEN);
	if (d) {
		/* Another peer: patch the template and sum its constant
		 * words again (a few dozen instructions). */
		memcpy(((struct cn_eth_hdr *)h)->dst, d->rmac, CN_ETH_ALEN);
		ip->dst = raddr = d->raddr;
		uh->dport = d->rport_n;
		ip_sum0 = cn_csum_partial(ip, CN_IPV4_HLEN, 0);
		udp_sum0 = cn_csum_partial(uh, CN_UDP_HLEN,
					   cn_csum_pseudo_ipv4(net->p.addr, raddr, CN_IPV4_PROTO_UDP, 0));
	}
	l4len = (uint16_t)(CN_UDP_HLEN + len);
	tot = cn_hton16((uint16_t)(l4len + CN_IPV4_HLEN));
	id = cn_hton16(net->ip_id++);
	ip->total_len = tot;
	ip->id = id;
	ip->csum = (uint16_t)~cn_csum_fold((uint64_t)ip_sum0 + tot + id);
	uh->len = cn_hton16(l4len);
	if (!s->p.tx_csum) {
		uh->csum = 0;
	} else if (s->p.tx_offload) {
		uh->csum = cn_csum_fold(cn_csum_pseudo_ipv4(net->p.addr, raddr,
							    CN_IPV4_PROTO_UDP, l4len));
		p->ol_flags = CN_PKT_TX_L4_CSUM | CN_PKT_TX_UDP;
	} else {
		/* The length appears twice: in the pseudo-header and the header. */
		uint64_t sum = (uint64_t)udp_sum0 + 2u * cn__csum_be16(l4len);
		uint16_t c;
		sum += cn_csum_partial(buf, len, 0);
		c = (uint16_t)~cn_csum_fold(sum);
		uh->csum = c ? c : 0xffff; /* RFC 768: 0 means "none" */
	}
	p->done = done;
	p->done_arg = arg;
	if (CN_UNLIKELY(frag)) {
		ip->frag_off = 0; /* DF off; the fragments get their own checksums */
		rc = cn__ip_frag_xmit(net, p);
	} else {
		rc = cn__net_xmit(net, p, UDP_HDRS + len); /* on error: no completion */
	}
	if (rc < 0)
		return rc;
	s->st.tx_dgrams++;
	s->st.tx_bytes += len;
	return 0;
}

int cn_udp_send(struct cn_udp_sock *s, const void *buf, uint32_t len, void (*done)(void *arg),
		void *arg)
{
	return udp_xmit(s, NULL, buf, len, done, arg);
}

int cn_udp_sendto(struct cn_udp_sock *s, cn_be32_t raddr, cn_be16_t rport, const uint8_t *rmac,
		  const void *buf, uint32_t len, void (*done)(void *arg), void *arg)
{
	struct udp_dest d = {.raddr = raddr, .rport_n = rport, .rmac = rmac};

	if (CN_BE16_RAW(rport) == 0 || !rmac)
		return -EINVAL;
	return udp_xmit(s, &d, buf, len, done, arg);
}

enum cn_drop cn__udp_input(struct cn_net *net, struct cn_mbuf *m, struct cn_pkt_info *pi)
{
	struct cn_udp_sock *s = NULL;

	for (uint32_t i = 0; i < net->nudp; i++)
		if (net->udp[i]->lport_n == CN_BE16_RAW(pi->dport)) {
			s = net->udp[i];
			break;
		}
	if (!s) {
		cn__drop(net, CN_DROP_UDP_NO_PORT);
		cn_mbuf_free_chain(m);
		return CN_DROP_UDP_NO_PORT;
	}
	if (s->p.rx_csum && !cn_net_l4_csum_ok(pi)) {
		cn__drop(net, CN_DROP_UDP_CSUM);
		cn_mbuf_free_chain(m);
		return CN_DROP_UDP_CSUM;
	}
	s->st.rx_dgrams++;
	s->st.rx_bytes += pi->pay_len;
	if (m->next) {
		/* A split chain: the payload mbuf goes up by reference; the
		 * header mbuf lives until the callback, which may read
		 * pi->frame, returns. */
		struct cn_mbuf *hdr = NULL;
		uint32_t off;
		m = cn__pay_mbuf(m, pi, &off, &hdr);
		m->data += off;
		m->len = m->pkt_len = pi->pay_len;
		if (s->p.rx)
			s->p.rx(s->p.rx_arg, m, pi);
		else
			cn_mbuf_free_chain(m);
		cn_mbuf_free(hdr);
		return CN_DROP_NONE;
	}
	m->data += pi->pay_off;
	m->len = m->pkt_len = pi->pay_len;
	if (s->p.rx)
		s->p.rx(s->p.rx_arg, m, pi);
	else
		cn_mbuf_free_chain(m);
	return CN_DROP_NONE;
}

const struct cn_udp_stats *cn_udp_stats(const struct cn_udp_sock *s)
{
	return &s->st;
}
