/* SPDX-License-Identifier: BSD-2-Clause */
/* The stack context, the TX descriptor pool and the frame parser.
 *
 * The parser checks, in this order, exactly what the next step would
 * otherwise read out of bounds or misinterpret; each failure maps to one
 * drop reason, so a malformed frame is counted once, under the first
 * thing wrong with it. */
#include <errno.h>
#include <stdlib.h>

#include "ip_reass.h"
#include "net_impl.h"

CN_NAME_FN(cn_drop_name, enum cn_drop,
	[CN_DROP_NONE] = "none",
	[CN_DROP_ETH_TRUNC] = "eth_trunc",
	[CN_DROP_ETH_TYPE] = "eth_type",
	[CN_DROP_ETH_CHAIN] = "eth_chain",
	[CN_DROP_IP_TRUNC] = "ip_trunc",
	[CN_DROP_IP_VERSION] = "ip_version",
	[CN_DROP_IP_HLEN] = "ip_hlen",
	[CN_DROP_IP_LEN] = "ip_len",
	[CN_DROP_IP_CSUM] = "ip_csum",
	[CN_DROP_IP_FRAG] = "ip_frag",
	[CN_DROP_IP_NOT_US] = "ip_not_us",
	[CN_DROP_IP_PROTO] = "ip_proto",
	[CN_DROP_TCP_TRUNC] = "tcp_trunc",
	[CN_DROP_TCP_OFF] = "tcp_off",
	[CN_DROP_TCP_OPT] = "tcp_opt",
	[CN_DROP_TCP_CSUM] = "tcp_csum",
	[CN_DROP_TCP_NO_CONN] = "tcp_no_conn",
	[CN_DROP_TCP_FLAGS] = "tcp_flags",
	[CN_DROP_TCP_WINDOW] = "tcp_window",
	[CN_DROP_TCP_OOO] = "tcp_ooo",
	[CN_DROP_TCP_ACK] = "tcp_ack",
	[CN_DROP_TCP_PAWS] = "tcp_paws",
	[CN_DROP_UDP_TRUNC] = "udp_trunc",
	[CN_DROP_UDP_LEN] = "udp_len",
	[CN_DROP_UDP_CSUM] = "udp_csum",
	[CN_DROP_UDP_NO_PORT] = "udp_no_port",
	[CN_DROP_NOBUFS] = "nobufs",
	[CN_DROP_FRAG_OVERLAP] = "frag_overlap",
	[CN_DROP_FRAG_DUP] = "frag_dup",
	[CN_DROP_FRAG_BAD] = "frag_bad",
	[CN_DROP_FRAG_TIMEOUT] = "frag_timeout",
	[CN_DROP_FRAG_MEM] = "frag_mem",
)

/* ------------------------------------------------------------ parser */

/* The length each option of a fixed size must have (RFC 9293 3.2,
 * RFC 7323, RFC 2018); 0 for the kinds of no fixed size. */
static const uint8_t tcpopt_len[] = {
	[CN_TCPOPT_MSS] = 4,
	[CN_TCPOPT_WSCALE] = 3,
	[CN_TCPOPT_SACK_PERM] = 2,
	[CN_TCPOPT_TIMESTAMP] = 10,
};

/* TCP options between p and end (RFC 9293 3.2, RFC 7323). Unknown kinds are
 * skipped by their length; a length < 2 or past the end, or a known kind
 * at a length other than its own, is malformed. */
static enum cn_drop parse_tcp_opts(const uint8_t *p, const uint8_t *end, struct cn_pkt_info *pi)
{
	/* Fast path: the 12-byte NOP NOP TS block every segment of a
	 * timestamp connection carries (RFC 7323 appendix A layout). */
	if (end - p == CN_TCPOLEN_TSTAMP_APPA &&
	    cn__ld32(p) == cn_hton32(CN_TCPOPT_TSTAMP_APPA_HDR)) {
		cn__parse_ts(pi, p + 4);
		return CN_DROP_NONE;
	}
	while (p < end) {
		uint8_t kind = p[0], len;
		if (kind == CN_TCPOPT_EOL)
			break;
		if (kind == CN_TCPOPT_NOP) {
			p++;
			continue;
		}
		if (end - p < 2)
			return CN_DROP_TCP_OPT;
		len = p[1];
		if (len < 2 || len > end - p)
			return CN_DROP_TCP_OPT;
		if (kind < CN_ARRAY_LEN(tcpopt_len) && tcpopt_len[kind] && len != tcpopt_len[kind])
			return CN_DROP_TCP_OPT;
		switch (kind) {
		case CN_TCPOPT_MSS:
			pi->has_mss = 1;
			pi->mss = cn_ntoh16(cn__ld16(p + 2));
			break;
		case CN_TCPOPT_WSCALE:
			pi->has_ws = 1;
			pi->ws_clamped = p[2] > 14;
			pi->wscale = p[2] > 14 ? 14 : p[2]; /* RFC 7323 2.3 */
			break;
		case CN_TCPOPT_TIMESTAMP:
			cn__parse_ts(pi, p + 2);
			break;
		case CN_TCPOPT_SACK_PERM:
			pi->has_sack_perm = 1;
			break;
		case CN_TCPOPT_SACK:
			/* 1 to 4 blocks of two 32-bit edges (RFC 2018 3) */
			if (len < 10 || (len - 2) % 8 != 0)
				return CN_DROP_TCP_OPT;
			pi->nsack = (uint8_t)((len - 2) / 8);
			pi->sack = p + 2;
			break;
		default:
			break;
		}
		p += len;
	}
	return CN_DROP_NONE;
}

/* The parser's full branch (net_impl.h, "the parser"): a frame of @p len
 * bytes of which, with @p chain (a constant), only the first @p avail are
 * at @p frame (a chain's first mbuf); without, all of them.
 * Every length check is against len, so a drop has the same reason in
 * either shape; a header byte past avail returns CN_DROP_MAX ("headers
 * not in the first mbuf": the caller makes the frame contiguous). */
static inline __attribute__((always_inline)) enum cn_drop
parse(const uint8_t *f, uint32_t len, uint32_t avail, uint32_t flags, struct cn_pkt_info *pi,
      const bool chain)
{
	const struct cn_ipv4_hdr *ip;
	uint32_t ihl, tot;

	pi->frame = f;
	pi->frame_len = len;
	pi->flags = (uint8_t)flags;
	pi->has_ts = pi->has_mss = pi->has_ws = pi->ws_clamped = pi->has_sack_perm = 0;
	pi->nsack = 0;
	pi->sack = NULL;
	if (len < CN_ETH_HLEN)
		return CN_DROP_ETH_TRUNC;
	if (chain && avail < CN_ETH_HLEN)
		return CN_DROP_MAX;
	if (cn__ld16(f + 12) != cn_hton16(CN_ETH_TYPE_IPV4))
		return CN_DROP_ETH_TYPE;
	pi->l3_off = CN_ETH_HLEN;
	if (len < CN_ETH_HLEN + CN_IPV4_HLEN)
		return CN_DROP_IP_TRUNC;
	if (chain && avail < CN_ETH_HLEN + CN_IPV4_HLEN)
		return CN_DROP_MAX;
	ip = (const struct cn_ipv4_hdr *)(f + CN_ETH_HLEN);
	if ((ip->ver_ihl >> 4) != 4)
		return CN_DROP_IP_VERSION;
	ihl = (ip->ver_ihl & 0xfu) * 4u;
	if (ihl < CN_IPV4_HLEN)
		return CN_DROP_IP_HLEN;
	if (len < CN_ETH_HLEN + ihl)
		return CN_DROP_IP_TRUNC;
	if (chain && avail < CN_ETH_HLEN + ihl)
		return CN_DROP_MAX;
	tot = cn_ntoh16(ip->total_len);
	if (tot < ihl || tot > len - CN_ETH_HLEN)
		return CN_DROP_IP_LEN;
	if (!(flags & CN_PARSE_IP_CSUM_GOOD) && cn_csum_ipv4_hdr(ip, ihl) != 0)
		return CN_DROP_IP_CSUM;
	pi->saddr = ip->src;
	pi->daddr = ip->dst;
	pi->proto = ip->proto;
	pi->l4_off = (uint16_t)(CN_ETH_HLEN + ihl);
	pi->l4_len = (uint16_t)(tot - ihl);
	/* MF set or a non-zero offset: a fragment (DF alone is fine). */
	if (ip->frag_off & cn_hton16(CN_IPV4_FLAG_MF | CN_IPV4_OFFMASK))
		return CN_DROP_IP_FRAG;

	if (ip->proto == CN_IPV4_PROTO_TCP) {
		const struct cn_tcp_hdr *th;
		uint32_t doff;
		if (pi->l4_len < CN_TCP_HLEN)
			return CN_DROP_TCP_TRUNC;
		if (chain && avail < (uint32_t)pi->l4_off + CN_TCP_HLEN)
			return CN_DROP_MAX;
		th = (const struct cn_tcp_hdr *)(f + pi->l4_off);
		doff = (uint32_t)(th->off >> 4) * 4u;
		if (doff < CN_TCP_HLEN || doff > pi->l4_len)
			return CN_DROP_TCP_OFF;
		if (chain && avail < (uint32_t)pi->l4_off + doff)
			return CN_DROP_MAX;
		pi->sport = th->sport;
		pi->dport = th->dport;
		pi->tcp_flags = th->flags;
		pi->seq = cn_ntoh32(th->seq);
		pi->ack = cn_ntoh32(th->ack);
		pi->win = cn_ntoh16(th->win);
		pi->pay_off = (uint16_t)(pi->l4_off + doff);
		pi->pay_len = pi->l4_len - doff;
		pi->pay = f + pi->pay_off;
		if (doff > CN_TCP_HLEN) {
			const uint8_t *o = f + pi->l4_off + CN_TCP_HLEN;
			enum cn_drop r = parse_tcp_opts(o, o + doff - CN_TCP_HLEN, pi);
			if (r != CN_DROP_NONE)
				return r;
		}
		return CN_DROP_NONE;
	}
	if (ip->proto == CN_IPV4_PROTO_UDP) {
		const struct cn_udp_hdr *uh;
		if (pi->l4_len < CN_UDP_HLEN)
			return CN_DROP_UDP_TRUNC;
		if (chain && avail < (uint32_t)pi->l4_off + CN_UDP_HLEN)
			return CN_DROP_MAX;
		uh = (const struct cn_udp_hdr *)(f + pi->l4_off);
		if (cn_ntoh16(uh->len) != pi->l4_len)
			return CN_DROP_UDP_LEN;
		pi->sport = uh->sport;
		pi->dport = uh->dport;
		pi->tcp_flags = 0;
		pi->pay_off = (uint16_t)(pi->l4_off + CN_UDP_HLEN);
		pi->pay_len = pi->l4_len - CN_UDP_HLEN;
		pi->pay = f + pi->pay_off;
		return CN_DROP_NONE;
	}
	return CN_DROP_IP_PROTO;
}

enum cn_drop cn_net_parse(const void *frame, uint32_t len, uint32_t flags, struct cn_pkt_info *pi)
{
	if (cn__parse_fast(frame, len, flags, pi)) {
		cn__parse_fast_rest(pi, len);
		pi->pay = pi->frame + pi->pay_off;
		return CN_DROP_NONE;
	}
	return parse(frame, len, len, flags, pi, false);
}

uint32_t cn_net_l4_hdr_sum(const struct cn_pkt_info *pi)
{
	return cn__l4_hdr_sum(pi);
}

bool cn_net_l4_csum_ok(const struct cn_pkt_info *pi)
{
	uint32_t s;

	if (pi->flags & CN_PARSE_L4_CSUM_GOOD)
		return true;
	if (pi->proto == CN_IPV4_PROTO_UDP &&
	    cn__ld16(pi->frame + pi->l4_off + 6) == 0)
		return true; /* RFC 768: no checksum */
	/* The L4 header length is even (TCP: 4*doff, UDP: 8), so the payload
	 * sum needs no byte swap. */
	s = cn__l4_hdr_sum(pi);
	if (pi->pay_len)
		s = cn_csum_partial(pi->pay, pi->pay_len, s);
	return cn_csum_fold(s) == 0xffff;
}

/* ------------------------------------------------------------ TX packets */

uint8_t *cn_net_hdr_build(void *frame, const struct cn_net_hdr_spec *spec)
{
	uint8_t *f = frame;
	struct cn_ipv4_hdr ip = {
		.ver_ihl = 0x45,
		.frag_off = spec->no_df ? 0 : cn_hton16(CN_IPV4_FLAG_DF),
		.ttl = 64,
		.proto = spec->proto,
		.src = spec->saddr,
		.dst = spec->daddr,
	};
	uint16_t type = cn_hton16(CN_ETH_TYPE_IPV4);

	memcpy(f, spec->dmac, CN_ETH_ALEN);
	memcpy(f + CN_ETH_ALEN, spec->smac, CN_ETH_ALEN);
	memcpy(f + 2 * CN_ETH_ALEN, &type, 2);
	if (spec->l4_len) {
		ip.total_len = cn_hton16((uint16_t)(CN_IPV4_HLEN + spec->l4_len));
		ip.id = cn_hton16(spec->id);
		ip.csum = cn_csum_ipv4_hdr(&ip, CN_IPV4_HLEN);
	}
	memcpy(f + CN_ETH_HLEN, &ip, CN_IPV4_HLEN);
	return f + CN_ETH_HLEN + CN_IPV4_HLEN;
}

uint32_t cn_pkt_gather(const struct cn_pkt *p, void *dst)
{
	uint8_t *d = dst;
	uint32_t off = p->hdr_len;

	memcpy(d, p->hdr, p->hdr_len);
	if (p->ol_flags & CN_PKT_TX_L4_CSUM) {
		/* The field holds the folded pseudo-header sum; the header
		 * part is even-length, so pieces combine from there. */
		uint32_t s = cn_csum_partial(d + p->l4_off, p->hdr_len - p->l4_off, 0);
		uint32_t at = 0;
		for (uint32_t i = 0; i < p->npieces; i++) {
			uint32_t ps = cn_csum_copy(d + off, p->piece[i].base, p->piece[i].len, 0);
			s = cn_csum_combine(s, ps, at);
			at += p->piece[i].len;
			off += p->piece[i].len;
		}
		uint16_t c = (uint16_t)~cn_csum_fold(s);
		if (c == 0 && (p->ol_flags & CN_PKT_TX_UDP))
			c = 0xffff;
		memcpy(d + p->l4_off + p->csum_off, &c, 2);
		return off;
	}
	for (uint32_t i = 0; i < p->npieces; i++) {
		memcpy(d + off, p->piece[i].base, p->piece[i].len);
		off += p->piece[i].len;
	}
	return off;
}

void cn_pkt_free(struct cn_pkt *p)
{
	struct cn_net *net;

	if (!p)
		return;
	net = p->net;
	if (p->ref) {
		cn_mbuf_free_chain(p->ref);
		p->ref = NULL; /* free descriptors hold neither (cn__pkt_get) */
	}
	if (p->done) {
		void (*done)(void *) = p->done;
		p->done = NULL;
		done(p->done_arg);
	}
	p->next = net->pkt_free;
	net->pkt_free = p;
}

/* A descriptor holding neither references nor a callback: returning it is
 * a push onto its stack's free list. One test for the two pointers. */
static inline bool pkt_plain(const struct cn_pkt *p)
{
	return ((uintptr_t)p->ref | (uintptr_t)p->done) == 0;
}

void cn_pkt_free_bulk(struct cn_pkt *const *p, unsigned n)
{
	unsigned i = 0;

	while (i < n) {
		struct cn_pkt *first = p[i], *last;
		struct cn_net *net;
		unsigned j;

		if (CN_UNLIKELY(!pkt_plain(first))) {
			cn_pkt_free(first);
			i++;
			continue;
		}
		/* A run of plain descriptors of one stack is linked as it is
		 * and goes onto the free list in one step. */
		net = first->net;
		last = first;
		for (j = i + 1; j < n; j++) {
			struct cn_pkt *x = p[j];
			if (CN_UNLIKELY(!pkt_plain(x) || x->net != net))
				break;
			last->next = x;
			last = x;
		}
		last->next = net->pkt_free;
		net->pkt_free = first;
		i = j;
	}
}

/* ------------------------------------------------------------ stack */

/* The stack's tables and itself, what of them was allocated (NULL: none). */
static void net_free(struct cn_net *net)
{
	if (!net)
		return;
	free(net->pkts);
	free(net->hash);
	free(net->conns);
	free(net->udp);
	free(net);
}

struct cn_net *cn_net_create(const struct cn_net_params *p)
{
	struct cn_net_params q;
	struct cn_net *net;

	if (cn__params_copy(&q, sizeof(q), p) < 0 || !q.xmit || !q.mpool)
		return cn__fail(EINVAL);
	net = calloc(1, sizeof(*net));
	if (!net)
		goto nomem;
	net->p = q;
	CN_DEFAULT(net->p.tx_descs, 1024);
	CN_DEFAULT(net->p.max_conns, 64);
	CN_DEFAULT(net->p.max_udp, 16);
	net->npkts = net->p.tx_descs;
	net->pkts = aligned_alloc(CN_CACHE_LINE, sizeof(struct cn_pkt) * net->npkts);
	net->hash = calloc(CN_TCP_HASH, sizeof(*net->hash));
	net->conns = calloc(net->p.max_conns, sizeof(*net->conns));
	net->udp = calloc(net->p.max_udp, sizeof(*net->udp));
	if (!net->pkts || !net->hash || !net->conns || !net->udp)
		goto nomem;
	if (p->reass_mem && !(net->reass = cn__ip_reass_create(p)))
		goto nomem;
	/* Build the free list so that the first get hands out pkts[0]. */
	for (uint32_t i = net->npkts; i-- > 0;) {
		struct cn_pkt *k = &net->pkts[i];
		memset(k, 0, offsetof(struct cn_pkt, room));
		k->net = net;
		k->next = net->pkt_free;
		net->pkt_free = k;
	}
	return net;
nomem:
	net_free(net);
	return cn__fail(ENOMEM);
}

int cn_net_destroy(struct cn_net *net)
{
	int rc;

	if (!net)
		return 0;
	cn__tcp_free_all(net);
	cn__udp_free_all(net);
	cn__ip_reass_destroy(net->reass);
	rc = cn_net_pkts_out(net) ? -EBUSY : 0;
	net_free(net);
	return rc;
}

/* cn_net_input is TCP's input (tcp_input.c): every frame enters there
 * once; its general branch parses anything but an established stream's
 * segment with cn__net_rx_parse below, which keeps what is not TCP. */
_Static_assert(CN_MBUF_F_RX_IP_CSUM_GOOD == CN_PARSE_IP_CSUM_GOOD &&
		       CN_MBUF_F_RX_L4_CSUM_GOOD == CN_PARSE_L4_CSUM_GOOD,
	       "a frame's RX status bits are the parser's flags");

struct cn_mbuf *cn__net_join(struct cn_net *net, struct cn_mbuf *m)
{
	struct cn_mbuf *n = m->next;

	net->st.rx_chain_join++; /* taken back below on failure */

	/* A split frame: the payload's cluster has room for the headers in
	 * front of it (netdev.h): copy them back there. */
	if (n && !n->next && m->len <= cn_mbuf_headroom(n)) {
		n->data -= m->len;
		memcpy(n->data, m->data, m->len);
		n->len += m->len;
		n->pkt_len = n->len;
		m->next = NULL;
		cn_mbuf_free(m);
		return n;
	}
	n = cn_mbuf_pullup(m, m->pkt_len);
	if (!n)
		net->st.rx_chain_join--;
	return n;
}

/* A fragment to reassembly (made contiguous first). CN_DROP_NONE with
 * *mp set to the datagram it completed, CN_DROP_NONE with *mp NULL when
 * it is held, or the reason it was dropped (counted, freed). */
static enum cn_drop rx_frag(struct cn_net *net, struct cn_mbuf **mp, uint64_t now)
{
	struct cn_mbuf *m = *mp, *whole;
	enum cn_drop r;

	*mp = NULL;
	if (m->next) {
		struct cn_mbuf *h = cn__net_join(net, m);
		if (!h) {
			cn__drop(net, CN_DROP_ETH_CHAIN);
			cn_mbuf_free_chain(m);
			return CN_DROP_ETH_CHAIN;
		}
		m = h;
	}
	r = cn__ip_reass_input(net, m, now, &whole); /* counts its drops */
	if (r == CN_DROP_NONE)
		*mp = whole;
	return r;
}

/* The general branch's parse: chains, other shapes; UDP, the slow-path
 * hook and drops are dealt with here, a TCP segment to us handed back.
 * With reassembly on, a fragment is held, and the datagram it completes
 * parsed instead (its L4 checksum checked in software, whatever the
 * device said of the fragments). */
enum cn_drop cn__net_rx_parse(struct cn_net *net, struct cn_mbuf **mp, struct cn_pkt_info *pi,
			      uint64_t now)
{
	struct cn_mbuf *m = *mp;
	enum cn_drop r;
	uint32_t rxf = cn__rx_flags(net, m); /* the head's, before a join */

	if (m->next) {
		/* Received as it is when the first mbuf holds the headers and
		 * one mbuf the payload (net.h, "RX"); else made contiguous. */
		r = parse(m->data, m->pkt_len, m->len, rxf, pi, true);
		if (r == CN_DROP_NONE && !cn__chain_pay(m, pi))
			r = CN_DROP_MAX;
		if (r == CN_DROP_MAX) {
			struct cn_mbuf *h = cn__net_join(net, m);
			if (!h) {
				r = CN_DROP_ETH_CHAIN;
				goto drop;
			}
			*mp = m = h;
			r = parse(m->data, m->len, m->len, rxf, pi, false);
		} else if (r == CN_DROP_NONE) {
			net->st.rx_chain++;
		}
	} else {
		r = parse(m->data, m->len, m->len, rxf, pi, false);
	}
	if (r == CN_DROP_IP_FRAG && net->reass) {
		r = rx_frag(net, &m, now);
		if (r != CN_DROP_NONE || !m)
			return r; /* held, or dropped and counted */
		*mp = m;
		rxf &= ~(uint32_t)CN_PARSE_L4_CSUM_GOOD;
		r = parse(m->data, m->len, m->len, rxf, pi, false);
	}
	if (r != CN_DROP_NONE) {
		if (r == CN_DROP_IP_PROTO && !cn_be32_eq(pi->daddr, net->p.addr))
			r = CN_DROP_IP_NOT_US;
		else if (r == CN_DROP_ETH_TYPE || r == CN_DROP_IP_FRAG || r == CN_DROP_IP_PROTO)
			goto slow;
		goto drop;
	}
	if (!cn_be32_eq(pi->daddr, net->p.addr)) {
		r = CN_DROP_IP_NOT_US;
		goto drop;
	}
	if (pi->proto == CN_IPV4_PROTO_TCP) {
		net->st.rx_tcp++;
		return CN_DROP_MAX;
	}
	net->st.rx_udp++;
	return cn__udp_input(net, m, pi);
slow:
	if (cn__net_slow(net, &m, &r))
		return CN_DROP_NONE;
drop:
	cn__drop(net, r);
	cn_mbuf_free_chain(m);
	return r;
}

bool cn__net_slow(struct cn_net *net, struct cn_mbuf **mp, enum cn_drop *why)
{
	if (!net->p.slow)
		return false;
	if ((*mp)->next) {
		/* The hook is promised one contiguous frame. */
		struct cn_mbuf *h = cn__net_join(net, *mp);
		if (!h) {
			*why = CN_DROP_ETH_CHAIN;
			return false;
		}
		*mp = h;
	}
	if (!net->p.slow(net->p.slow_arg, *mp, *why))
		return false;
	net->st.rx_slow++;
	return true;
}

void cn_net_set_slow(struct cn_net *net, cn_net_slow_fn fn, void *arg)
{
	net->p.slow = fn;
	net->p.slow_arg = arg;
}

struct cn_pkt *cn_net_pkt_alloc(struct cn_net *net)
{
	struct cn_pkt *p = cn__pkt_get(net);

	if (p) {
		p->hdr = NULL;
		p->hdr_len = 0;
		p->l3_off = p->l4_off = p->csum_off = 0;
	}
	return p;
}

int cn_net_xmit(struct cn_net *net, struct cn_pkt *p)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < p->npieces && i < CN_PKT_PIECES; i++)
		sum += p->piece[i].len;
	if (!p->hdr || p->hdr_len == 0 || p->npieces > CN_PKT_PIECES || sum != p->pay_len) {
		p->done = NULL;
		cn_pkt_free(p);
		return -EINVAL;
	}
	if (net->p.mtu && cn_pkt_len(p) > CN_ETH_HLEN + net->p.mtu)
		return cn__ip_frag_xmit(net, p);
	return cn__net_xmit(net, p, cn_pkt_len(p));
}

const struct cn_net_stats *cn_net_stats(const struct cn_net *net)
{
	return &net->st;
}

uint64_t cn_net_drops(const struct cn_net *net)
{
	uint64_t n = 0;

	for (unsigned i = 1; i < CN_DROP_MAX; i++)
		n += net->st.drop[i];
	return n;
}

uint32_t cn_net_reass_entries(const struct cn_net *net)
{
	return cn__ip_reass_entries(net->reass);
}

uint32_t cn_net_reass_mem(const struct cn_net *net)
{
	return cn__ip_reass_mem(net->reass);
}

uint32_t cn_net_pkts_out(const struct cn_net *net)
{
	uint32_t nfree = 0;

	/* Counted here rather than on every get and free of the fast path. */
	for (const struct cn_pkt *p = net->pkt_free; p; p = p->next)
		nfree++;
	return net->npkts - nfree;
}

cn_be32_t cn_net_addr(const struct cn_net *net)
{
	return net->p.addr;
}

const uint8_t *cn_net_mac(const struct cn_net *net)
{
	return net->p.mac;
}

void cn_net_timer(struct cn_net *net, uint64_t now)
{
	for (uint32_t i = 0; i < net->nconns; i++)
		cn_tcp_timer(net->conns[i], now);
	if (net->reass)
		cn__ip_reass_timer(net, now);
}
